"""benchmarks/torch_coverage.py: the names it finds in small sources written here are real
PyTorch names (checked against torch itself), its rules hold on each construct they speak
of, and the table committed in docs/pytorch.md still says what the library and the tests
are now."""

import ast
import importlib.util
import json
import pathlib
import re

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("torch_coverage",
                                              ROOT / "benchmarks" / "torch_coverage.py")
coverage = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(coverage)


def names_of(source):
    return coverage.names_in(ast.parse(source))


def in_torch(name):
    """Whether torch has ``name``, on the class or, for a Tensor, on an instance."""
    if coverage.resolve(name) is not None:
        return True
    owner, _, attr = name.rpartition(".")
    return owner == "torch.Tensor" and hasattr(torch.ones(1, requires_grad=True), attr)


ALIASES = """
import torch
import torch.nn as nn
import torch.nn.functional as F2
from torch.nn import functional as F
from torch import nn as tnn, Tensor
from torch.utils.data import DataLoader
from torch.optim.lr_scheduler import StepLR

def f(x: Tensor, opt):
    y = torch.cat([F.softmax(x, dim=-1), F2.relu(x)])
    layer = tnn.Linear(3, 4)
    loader = DataLoader([1, 2])
    return StepLR(opt, 1), torch.optim.AdamW, torch.cuda.is_available(), torch.float32, nn
"""


def test_imports_resolve_to_full_torch_names():
    names = names_of(ALIASES)
    expected = {"torch.cat", "torch.nn.functional.softmax", "torch.nn.functional.relu",
                "torch.nn.Linear", "torch.utils.data.DataLoader", "torch.Tensor",
                "torch.optim.lr_scheduler.StepLR", "torch.optim.AdamW",
                "torch.cuda.is_available", "torch.float32"}
    assert expected <= names
    assert "torch.nn" not in names and "torch" not in names      # bare modules are no use
    assert all(in_torch(name) for name in names), sorted(n for n in names if not in_torch(n))


def test_notebook_cells_drop_magics_and_skip_what_does_not_parse(tmp_path):
    cells = [{"cell_type": "markdown", "source": ["x.view(1)"]},
             {"cell_type": "code", "source": ["import torch\n", "%matplotlib inline\n",
                                              "!pip install torch\n", "w = torch.randn(3)"]},
             {"cell_type": "code", "source": "def broken(:\n    pass"},
             {"cell_type": "code", "source": ["w.unbind(0)"]}]
    path = tmp_path / "lecture.ipynb"
    path.write_text(json.dumps({"cells": cells, "nbformat": 4}))
    tree, skipped = coverage.parse_file(path)
    assert skipped == 1
    names = coverage.names_in(tree)
    assert {"torch.randn", "torch.Tensor.unbind"} <= names       # aliases cross cells
    assert "torch.Tensor.view" not in names                      # markdown is not code
    assert all(in_torch(name) for name in names)


OPERATORS = """
def f(a, b, n):
    c = a @ b + 1
    d = -a, -1, ~a
    e = a[0]
    a[1] = b
    a += b
    g = a < b <= 3
    h = 2 ** 10
    i = [0] * n
    j = '%d' % n
    k = n // 2
    return c, d, e, g, h, i, j, k
"""


def test_operators_count_unless_an_operand_is_a_literal_of_another_type():
    ops = {name.split(".")[-1] for name in names_of(OPERATORS)
           if name.startswith("torch.Tensor.__")}
    assert ops == {"__matmul__", "__add__", "__neg__", "__invert__", "__getitem__",
                   "__setitem__", "__iadd__", "__lt__", "__le__", "__floordiv__"}
    assert all(hasattr(torch.Tensor, op) for op in ops)
    annotated = names_of("from typing import Optional\nx: Optional[int] = None\n"
                         "def f(y: dict[str, int]) -> list[int]:\n    return []")
    assert annotated == set()


MODULES = """
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mask", torch.ones(2))
        self.norm = nn.LayerNorm(2)

    def forward(self, x):
        return self.norm(x).view(-1)

class Deeper(Net):
    def forward(self, x):
        return self.parameters()

class Plain:
    def norm(self):
        return self.parameters()

model = Net()
model.eval()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.step()
g = torch.Generator().manual_seed(0)
"""


def test_modules_self_and_constructed_objects():
    names = names_of(MODULES)
    assert {"torch.nn.Module", "torch.nn.Module.register_buffer", "torch.nn.Module.parameters",
            "torch.nn.Module.eval", "torch.optim.SGD.step", "torch.Generator.manual_seed",
            "torch.Tensor.view"} <= names
    assert "torch.Tensor.norm" not in names          # self.norm is a submodule
    assert "torch.Tensor.__init__" not in names      # super().__init__ is no Tensor use
    assert all(in_torch(name) for name in names), sorted(n for n in names if not in_torch(n))


def test_tensor_methods_leave_out_the_likely_builtin_ones():
    names = names_of("def f(d, s, x):\n    return d.values(), d.items(), s.split(','), "
                     "x.masked_fill(x > 0, 0.0), x.no_such_method()")
    methods = {name for name in names if not name.startswith("torch.Tensor.__")}
    assert methods == {"torch.Tensor.split", "torch.Tensor.masked_fill"}


def test_without_torch_the_names_come_from_microgradnorm_and_the_fallback(monkeypatch):
    for cached in (coverage._torch, coverage.tensor_names, coverage.module_names):
        cached.cache_clear()
    monkeypatch.setattr(coverage, "_torch", lambda: None)
    try:
        names = names_of(MODULES)
        assert {"torch.Tensor.view", "torch.nn.Module.register_buffer"} <= names
        assert "view" in coverage.tensor_names() and "eval" in coverage.module_names()
    finally:
        coverage.tensor_names.cache_clear()
        coverage.module_names.cache_clear()


def test_here_looks_names_up_in_microgradnorm():
    assert coverage.microgradnorm_name("torch.nn.functional.softmax") == \
        "microgradnorm.functional.softmax"
    assert coverage.microgradnorm_name("torch.Tensor.view") == "microgradnorm.Tensor.view"
    assert coverage.is_here("torch.cat") and coverage.is_here("torch.nn.Linear")
    assert coverage.is_here("torch.Tensor.requires_grad")      # set on each instance
    assert coverage.is_here("torch.optim.lr_scheduler.LambdaLR")
    assert in_torch("torch.onnx.export")
    assert not coverage.is_here("torch.onnx.export")


def test_tested_means_mentioned_by_a_test_that_imports_torch(tmp_path):
    (tmp_path / "test_a.py").write_text("import torch\ndef test():\n    torch.ones(2).unbind(0)"
                                        "\n    x = 1 % 2\n")
    (tmp_path / "test_b.py").write_text("def test():\n    y.only_here_without_torch()\n")
    mentioned = coverage.tested_mentions(tmp_path)
    assert coverage.is_tested("torch.Tensor.unbind", mentioned)
    assert coverage.is_tested("torch.Tensor.__mod__", mentioned)
    assert not coverage.is_tested("torch.Tensor.only_here_without_torch", mentioned)
    assert not coverage.is_tested("torch.Tensor.__matmul__", mentioned)


def test_command_line_sorts_filters_and_sums_up(tmp_path, capsys):
    for repo, body in (("alice__one", "x = torch.cat([a])\ny = torch.tril(torch.no_such_thing)"),
                       ("bob__two", "x = torch.cat([a])\ny = torch.no_such_thing(a)\n"),
                       ("carol__three", "y = torch.no_such_thing(a) + a\n")):
        (tmp_path / repo).mkdir()
        (tmp_path / repo / "m.py").write_text("import torch\n" + body)
    out = tmp_path / "uses.json"
    assert coverage.main([str(tmp_path), "--markdown", "--min-repos", "2",
                          "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = coverage.parse_markdown(printed)
    assert [row[:3] for row in rows] == [("torch.no_such_thing", 3, 3), ("torch.cat", 2, 2)]
    assert [row[3] for row in rows] == [False, True]
    assert "4 names used; 2 used by >= 2 repositories, of which 1 here (50 %)" in printed
    data = json.loads(out.read_text())
    assert data["torch.tril"]["repos"] == ["alice__one"]
    assert data["torch.Tensor.__add__"]["repos"] == ["carol__three"]


def test_missing_path_is_an_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        coverage.main([str(tmp_path / "nowhere")])
    assert "no such file or directory" in capsys.readouterr().err


def committed_table():
    text = (ROOT / "docs" / "pytorch.md").read_text()
    match = re.search(r"<!-- torch-coverage:start -->\n(.*?)<!-- torch-coverage:end -->",
                      text, flags=re.DOTALL)
    assert match, "docs/pytorch.md lost its torch-coverage markers"
    return match.group(1)


def test_committed_table_matches_the_library_and_the_tests():
    block = committed_table()
    rows = coverage.parse_markdown(block)
    assert len(rows) > 50 and all(repos >= 2 for _, repos, _, _, _ in rows)
    assert rows == sorted(rows, key=lambda row: (-row[1], row[0]))
    mentioned = coverage.tested_mentions()
    stale = [(name, here, coverage.is_here(name), tested, coverage.is_tested(name, mentioned))
             for name, _, _, here, tested in rows
             if (here, tested) != (coverage.is_here(name), coverage.is_tested(name, mentioned))]
    assert not stale, ("docs/pytorch.md's coverage table is out of date (name, here then "
                       f"and now, tested then and now); regenerate it: {stale}")
    total = int(re.search(r"(\d+) names used", block).group(1))
    assert coverage.summary(total, rows) in block
