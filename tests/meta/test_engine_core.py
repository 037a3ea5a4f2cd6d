"""The engine's core stays one sitting's read: Function and Context, grad mode, the
topological order and backward, at most 400 lines together; the extras (hooks, observers,
module scopes, freed graphs and in-place history, graph capture) live beside it."""

import pathlib

import microgradnorm

AUTOGRAD = pathlib.Path(microgradnorm.__file__).parent / "autograd"
CORE = ("function.py", "engine.py", "grad_mode.py")
BUDGET = 400


def test_the_core_fits_one_sitting():
    lines = {name: len((AUTOGRAD / name).read_text().splitlines()) for name in CORE}
    assert sum(lines.values()) <= BUDGET, f"the autograd core is {lines}: over {BUDGET} lines"


def test_the_version_counter_moves_in_one_place():
    """Every in-place change counts through ``Tensor._bump_version``; no module bumps the
    shared counter by hand."""
    package = AUTOGRAD.parent
    writers = [str(path.relative_to(package)) for path in package.rglob("*.py")
               if "_version_box[0] +=" in path.read_text()]
    assert writers == ["tensor.py"]
