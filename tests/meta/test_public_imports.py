"""Every import of microgradnorm written in the README, the docs and the examples works.

The layout of the package may change; the paths users copy from its text may not. Each
``import microgradnorm...`` / ``from microgradnorm... import ...`` statement found in those
files is run on its own.
"""

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXTS = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md"),
                *(ROOT / "examples").glob("*.py"), *(ROOT / "benchmarks").glob("*.py"),
                *(ROOT / "notebooks").glob("*.py")])
IMPORT = re.compile(r"^\s*(from microgradnorm[\w.]* import [^#\n]+|import microgradnorm[\w.]*"
                    r"(?: as \w+)?)", re.MULTILINE)


def import_statements():
    found = {}
    for path in TEXTS:
        if not path.exists():
            continue
        for match in IMPORT.finditer(path.read_text()):
            statement = match.group(1).strip().rstrip("\\").strip()
            if statement.endswith("("):                 # a parenthesised list: not parsed
                continue
            found.setdefault(statement, path.relative_to(ROOT))
    return sorted(found.items())


STATEMENTS = import_statements()


def test_the_texts_have_imports_to_check():
    assert len(STATEMENTS) >= 10, STATEMENTS


@pytest.mark.parametrize("statement, where", STATEMENTS, ids=[s for s, _ in STATEMENTS])
def test_documented_import_works(statement, where):
    ast.parse(statement)
    try:
        exec(statement, {})
    except ImportError as error:
        pytest.fail(f"{where}: `{statement}` fails: {error}")


def test_the_public_faces_list_what_exists():
    import microgradnorm as mg
    from microgradnorm import checks, cli, nn
    for module in (mg, nn, checks, cli):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], f"{module.__name__}.__all__ names {missing}"
