"""``backend.keep_freed_memory``: freed arrays' memory is reused without page faults, from
the first ``backward()`` on unless ``$MICROGRADNORM_KEEP_FREED_MEMORY`` is 0."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from microgradnorm import backend

ROOT = Path(__file__).parents[2]

# Rounds of ten 8 MiB arrays, created (and so touched) then all freed; prints the page
# faults of the last five rounds. glibc's defaults hand the freed memory back to the
# operating system each round, so each round faults it in again.
SCRIPT = """
import resource, sys
import numpy as np
from microgradnorm import backend
if sys.argv[1] == "keep":
    assert backend.keep_freed_memory()
if sys.argv[1] == "backward":                      # the library's default, on first use
    import microgradnorm as mg
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
def one_round():
    arrays = [np.ones(2**20) for _ in range(10)]
    del arrays
for _ in range(3):
    one_round()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    one_round()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def page_faults(mode, **variables):
    env = {**os.environ, "PYTHONPATH": str(ROOT), **variables}
    result = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True,
                            text=True, timeout=120, env=env, check=False)
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_kept_memory_is_reused_without_page_faults():
    kept = page_faults("keep")
    default = page_faults("default")
    # 5 rounds x 80 MiB = 102,400 pages of 4 KiB if all were faulted in again
    assert kept < 1000 and default > 10 * max(kept, 100), (kept, default)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_the_first_backward_keeps_freed_memory_unless_the_variable_says_0():
    kept = page_faults("backward")
    left = page_faults("backward", MICROGRADNORM_KEEP_FREED_MEMORY="0")
    assert kept < 1000 and left > 10 * max(kept, 100), (kept, left)


def test_keep_freed_memory_rejects_a_bad_threshold():
    with pytest.raises(ValueError, match="trim_threshold must be an int"):
        backend.keep_freed_memory(-1)
    with pytest.raises(ValueError, match="trim_threshold must be an int"):
        backend.keep_freed_memory(2.5)


def test_the_command_line_honours_the_variable(monkeypatch, capsys):
    # the CLI asked for kept memory unconditionally: MICROGRADNORM_KEEP_FREED_MEMORY=0 was lost
    import importlib
    cli = importlib.import_module("microgradnorm.cli.main")
    calls = []
    monkeypatch.setattr(backend, "allocator_setting", [])
    monkeypatch.setattr(backend, "keep_freed_memory", lambda *a: calls.append(a) or True)
    monkeypatch.setenv("MICROGRADNORM_KEEP_FREED_MEMORY", "0")
    monkeypatch.setattr(cli, "build_parser", _parser_running(lambda args: None))
    assert cli.main(["noop"]) == 0
    assert calls == [] and backend.allocator_setting == ["left"]


def _parser_running(run):
    # a parser of one command, "noop", whose run does nothing
    import argparse

    def build():
        parser = argparse.ArgumentParser(prog="microgradnorm")
        parser.commands = parser.add_subparsers(dest="command")
        parser.commands.add_parser("noop").set_defaults(run=run)
        return parser
    return build
