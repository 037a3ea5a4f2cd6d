"""The package with its optional extras absent, as the README's first command installs it.

``pip install -e ".[numba]"`` brings NumPy, graphviz, tqdm, threadpoolctl, numba and SciPy;
``pip install -e .`` the first four. The test environment has every extra, so each case hides
the ones a user would not have (an entry of None in ``sys.modules`` makes ``import`` raise
ImportError, as for a package never installed) and runs the package in a subprocess: the
import, the demo, and the clear error of what needs a missing extra.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

# every optional package the code imports somewhere (pyproject's extras and torch)
EXTRAS_OF_THE_TEST_ENVIRONMENT = ["ml_dtypes", "torch", "matplotlib", "cupy", "tensorboard",
                                  "nbformat", "nbclient", "hypothesis"]
WITH_NUMBA = EXTRAS_OF_THE_TEST_ENVIRONMENT             # README's first command
CORE_ONLY = EXTRAS_OF_THE_TEST_ENVIRONMENT + ["numba", "scipy", "llvmlite"]


def run_without(hidden, body, cwd):
    script = textwrap.dedent(f"""
        import sys
        sys.modules.update(dict.fromkeys({hidden!r}))
    """) + textwrap.dedent(body)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=env)


@pytest.mark.slow
@pytest.mark.parametrize("hidden", [WITH_NUMBA, CORE_ONLY], ids=["numba", "core"])
def test_the_demo_runs_without_the_optional_extras(hidden, tmp_path):
    result = run_without(hidden, """
        import runpy
        sys.argv = ["microgradnorm", "demo", "--quick", "--shape", "2,3,4",
                    "--train-steps", "2"]
        runpy.run_module("microgradnorm", run_name="__main__")
    """, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert (tmp_path / "out" / "demo" / "report.md").exists()


@pytest.mark.parametrize("hidden", [WITH_NUMBA, CORE_ONLY], ids=["numba", "core"])
def test_what_needs_a_missing_extra_says_which(hidden, tmp_path):
    result = run_without(hidden, """
        import microgradnorm as mg
        x = mg.randn(4, 8, requires_grad=True)
        mg.nn.functional.layer_norm(x, (8,)).sum().backward()
        assert x.grad.shape == (4, 8)
        assert not isinstance(x, mg.BFloat16Tensor) and isinstance(x, mg.FloatTensor)
        for make in (lambda: mg.BFloat16Tensor(2, 3), lambda: x.to(mg.bfloat16 or "bfloat16"),
                     lambda: mg.zeros(2, dtype="bfloat16")):
            try:
                make()
            except TypeError as error:
                print("TypeError:", error)
            else:
                raise AssertionError("bfloat16 made without ml_dtypes")
    """, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    messages = result.stdout.splitlines()
    assert len(messages) == 3 and all("ml_dtypes" in line for line in messages), messages
