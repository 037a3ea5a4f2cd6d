"""The import direction of docs/architecture.md, checked on every module of the package.

Each module belongs to a layer; a module may import from its own layer and the layers
below it, never from a layer above. Two groups share the core layer but stay apart: the
kernels (array functions) never import the graph (tensor, autograd, ops), and the graph
never imports the kernels. Nothing in the library imports the programs in ``cli/``.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "microgradnorm"

# Lowest first. A module's layer is found by its dotted name's longest matching prefix.
LAYERS = (
    ("backend", ("backend", "fma", "meta_arrays", "dtypes", "float8", "tensor_data", "savefile",
                 "generator", "sampling", "printing", "cuda", "amp", "backends", "cpu",
                 "distributed", "__future__", "version", "accelerator", "mps", "xpu",
                 "multiprocessing")),
    ("core", ("tensor", "autograd", "ops", "factories", "kernels", "torch_misc",
              "random", "profiler", "poisson", "compiler", "_dynamo", "_inductor",
              "overrides")),
    ("norms", ("fused", "norms")),
    ("functional", ("functional", "convolution", "convolution_more", "convolution_3d",
                    "losses", "loss_nodes", "losses_more", "activations", "activation_nodes",
                    "vision", "padding", "linalg", "fft", "special", "signal", "embedding_bag",
                    "losses_ctc", "vision_grid", "lp_pool", "attention_forward", "sparse",
                    "torch_functional", "spectral", "lowrank", "fractional_pool",
                    "special_bessel", "native_norms")),
    ("model", ("nn", "optim", "layers", "utils", "distributions", "func", "func_transforms",
               "func_jvp", "jit", "ao")),
    ("look", ("checks", "viz", "train", "checkpoint", "capture", "testing")),
    ("apps", ("cli", "__main__")),
)
RANK = {prefix: rank for rank, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes}
GRAPH = {"tensor", "autograd", "ops", "factories"}
# inside the graph, one way too: the engine knows no Tensor class (tensor.py registers it),
# the tensor no op (ops binds its methods): autograd -> tensor -> ops and factories
GRAPH_RANK = {"autograd": 0, "tensor": 1, "ops": 2, "factories": 2}
KERNELS = {"kernels"}


def layer_of(module):
    """The rank of ``module`` (a name relative to the package: "nn.module"), or None for
    the package's ``__init__``, which re-exports the public names of every library layer."""
    head = module.split(".")[0]
    if head == "":
        return None
    if head not in RANK:
        raise KeyError(f"microgradnorm.{module} has no layer: add it to LAYERS and to "
                       "docs/architecture.md")
    return RANK[head]


def module_name(path):
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(source, module, is_package):
    """Names (relative to the package) that ``source`` imports from the package, at any
    depth: module level and inside functions alike."""
    package_parts = module.split(".") if module else []
    if not is_package:
        package_parts = package_parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "microgradnorm":
                    found.add(alias.name.partition(".")[2])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if (node.module or "").split(".")[0] != "microgradnorm":
                    continue
                base = node.module.split(".")[1:]
            else:
                base = package_parts[:len(package_parts) - (node.level - 1)]
                base = base + (node.module.split(".") if node.module else [])
            if node.module is None or (node.level == 0 and node.module == "microgradnorm"):
                found.update(".".join(base + [alias.name]) for alias in node.names)
            else:
                found.add(".".join(base))
    return found


def violations(module, imported):
    """Why ``module`` may not import each of ``imported`` (empty when all is well)."""
    own = layer_of(module)
    problems = []
    for name in sorted(imported):
        target = layer_of(name)
        if name.split(".")[0] == "cli" and module.split(".")[0] not in ("cli", "__main__"):
            problems.append(f"{module} imports the program package {name}")
        elif own is None or target is None:
            continue
        elif target > own:
            problems.append(f"{module} ({LAYERS[own][0]}) imports {name} "
                            f"({LAYERS[target][0]}), a higher layer")
        else:
            head, other = module.split(".")[0], name.split(".")[0]
            if (head in KERNELS and other in GRAPH) or (head in GRAPH and other in KERNELS):
                problems.append(f"{module} imports {name}: kernels and the graph stay apart")
            elif GRAPH_RANK.get(other, -1) > GRAPH_RANK.get(head, 9):
                problems.append(f"{module} imports {name}: the graph's order is autograd, "
                                "tensor, ops")
    return problems


def all_modules():
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", all_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_imports_only_lower_layers(path):
    module = module_name(path)
    imported = imports_of(path.read_text(), module, path.name == "__init__.py")
    assert violations(module, imported) == []


def test_every_module_has_a_layer():
    for path in all_modules():
        module = module_name(path)
        if module:
            layer_of(module)          # raises for a module nobody placed


def test_the_checker_sees_a_violation():
    """The checker itself can fail: an upward import, a function-level import of the
    programs, and a kernel that reaches for the graph are each reported."""
    source = ("from ..nn import Linear\n"
              "def f():\n    from ..cli import main\n")
    imported = imports_of(source, "norms.layer_norm", is_package=False)
    assert imported == {"nn", "cli"}
    problems = violations("norms.layer_norm", imported)
    assert any("higher layer" in p for p in problems)
    assert any("program package" in p for p in problems)
    kernel = imports_of("from ..tensor import Tensor\n", "kernels.cuda", is_package=False)
    assert any("stay apart" in p for p in violations("kernels.cuda", kernel))
    for module, source in (("autograd.engine", "from .. import tensor as _tensor\n"),
                           ("tensor", "from .ops import base\n")):
        imported = imports_of(source, module, is_package=False)
        assert any("the graph's order" in p for p in violations(module, imported))


def test_relative_imports_resolve_from_packages_and_modules():
    assert imports_of("from . import reference\n", "kernels", is_package=True) == \
        {"kernels.reference"}
    assert imports_of("from .. import functional as F\n", "nn.linear", is_package=False) == \
        {"functional"}
    assert imports_of("from .module import Module\n", "nn.linear", is_package=False) == \
        {"nn.module"}
    assert imports_of("import microgradnorm.functional as F\n", "viz", is_package=False) == \
        {"functional"}


def test_every_module_reads_in_one_sitting():
    """A file is readable in one sitting: at most 700 lines (what grows past it splits by
    subject into a module of its own layer)."""
    long = {str(path.relative_to(PACKAGE)): n for path in PACKAGE.rglob("*.py")
            if (n := len(path.read_text().splitlines())) > 700}
    assert not long, f"over 700 lines: {long}"
