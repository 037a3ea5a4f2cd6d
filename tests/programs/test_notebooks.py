"""The notebooks in notebooks/: each runs in a fresh kernel, and each committed .ipynb has
the cells of its .py (jupytext percent format) and their outputs."""

import importlib.util
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("jupytext")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).parents[2]
spec = importlib.util.spec_from_file_location("execute", ROOT / "notebooks" / "execute.py")
execute = importlib.util.module_from_spec(spec)
spec.loader.exec_module(execute)
SOURCES = execute.notebook_sources()


def test_there_are_at_least_four_notebooks_each_with_its_ipynb():
    assert len(SOURCES) >= 4
    for source in SOURCES:
        assert source.with_suffix(".ipynb").exists(), source.name


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_ipynb_has_the_cells_of_its_py_with_outputs(source):
    import jupytext
    committed = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    assert execute.cells_of(committed) == execute.cells_of(jupytext.read(source))
    code = [cell for cell in committed.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code), "run notebooks/execute.py"
    assert not [o for cell in code for o in cell.outputs if o.output_type == "error"]


@pytest.mark.slow
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_notebook_runs_in_a_fresh_kernel(source):
    start = time.perf_counter()
    notebook, _ = execute.execute(source)       # raises CellExecutionError on any error
    assert time.perf_counter() - start < 60
    committed = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    assert rich_outputs(notebook) == rich_outputs(committed)   # same pictures and values
    pictures = [o for cell in notebook.cells for o in cell.get("outputs", [])
                if "image/svg+xml" in o.get("data", {}) or "image/png" in o.get("data", {})]
    assert pictures or source.stem.startswith("02"), "the graphs display inline"


def rich_outputs(notebook):
    """Per cell, the MIME types of its displayed results (printed text left out: warnings
    on stderr vary between machines)."""
    return [[sorted(o["data"]) for o in cell.get("outputs", []) if "data" in o]
            for cell in notebook.cells]
