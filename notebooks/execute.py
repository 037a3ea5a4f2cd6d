"""Build each notebook's ``.ipynb`` from its ``.py`` (jupytext percent format), run it in a
fresh kernel and write it with its outputs, so that it reads on GitHub without running.

    python notebooks/execute.py                 # every notebook
    python notebooks/execute.py 02_norm_backward.py

The ``.py`` files are the source (reviewable in diffs); edit them, then run this. The test
(``tests/programs/test_notebooks.py``) executes every notebook the same way and checks that each
``.ipynb`` has the cells of its ``.py``.
"""

import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def notebook_sources():
    """The ``NN_*.py`` notebooks, in order."""
    return sorted(HERE.glob("[0-9][0-9]_*.py"))


def cells_of(notebook):
    """(cell type, source) of every cell: what a ``.py`` and its ``.ipynb`` must share."""
    return [(cell.cell_type, cell.source.strip()) for cell in notebook.cells]


def execute(source, timeout=120):
    """Read ``source`` (a ``.py``), run it in a fresh kernel started in ``notebooks/`` with
    the repository first on ``PYTHONPATH``; returns the executed notebook and seconds."""
    import jupytext
    from nbclient import NotebookClient

    notebook = jupytext.read(source)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    start = time.perf_counter()
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(HERE)}}).execute()
    return notebook, time.perf_counter() - start


def main(names):
    """Execute and write the named notebooks (all when none are named)."""
    import nbformat

    sources = [HERE / n for n in names] if names else notebook_sources()
    for source in sources:
        notebook, seconds = execute(source)
        target = source.with_suffix(".ipynb")
        nbformat.write(notebook, target)
        print(f"{target.relative_to(ROOT)}: executed in {seconds:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
