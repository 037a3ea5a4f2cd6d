"""Which parts of PyTorch's API does public code use, and which of them does microgradnorm
have and test against PyTorch?

    python benchmarks/torch_coverage.py FILE_OR_DIR ... [--markdown] [--min-repos N] [--json OUT]

The tool reads Python files and the code cells of notebooks with the standard library's
``ast`` (nothing is run) and lists every PyTorch name they use, with the files and
repositories that use it, whether microgradnorm has it ("here") and whether a test compares
it with PyTorch ("tested"). The rules, each a deliberate simplification:

* **Files.** A directory is searched for ``*.py`` and ``*.ipynb``. In a notebook, lines
  starting with ``%`` or ``!`` (IPython magics, shell) are dropped, a cell that still does
  not parse is skipped and counted, and the remaining cells are read as one module.
* **Repositories.** A file's repository is the first folder below the directory named on
  the command line (``CORPUS/owner__repo/...``), or the name given for that folder in
  ``CORPUS/MANIFEST.json`` (``{"files": [{"local": ..., "repository": ...}]}``); a file
  named on its own belongs to its parent folder.
* **Module names.** Imports of ``torch`` and its submodules are resolved, at any depth of
  the file, so that each use gets its full name: ``F.softmax`` after
  ``from torch.nn import functional as F`` is ``torch.nn.functional.softmax``,
  ``DataLoader(...)`` after ``from torch.utils.data import DataLoader`` is
  ``torch.utils.data.DataLoader``. A name is counted where it is used, not where it is
  imported; a bare module (``nn``) is not a use.
* **Modules and other objects.** ``self.NAME`` inside a class deriving from a ``torch.nn``
  class (or from such a class of the same file) is ``torch.nn.Module.NAME`` when
  ``nn.Module`` has that attribute; any other ``self.NAME`` is a submodule or a plain
  attribute and is not counted. A variable assigned the result of calling a class
  (``optimizer = torch.optim.AdamW(...)``, ``model = Net()`` for such a module class; the
  first assignment in the file wins) gives ``optimizer.step`` the name
  ``torch.optim.AdamW.step``; so does a call of the class itself
  (``torch.Generator().manual_seed``).
* **Tensor methods.** Types are not known statically: any other ``x.NAME`` counts as
  ``torch.Tensor.NAME`` when ``torch.Tensor`` has an attribute NAME, except the names in
  ``BUILTIN_LIKELY``, where a list, dict, set or str method is far more likely
  (``values``, ``index``, ``sort``, ``add``; ``split`` is counted, it is a Tensor method
  too). Without torch installed the list of Tensor attributes is microgradnorm's
  ``Tensor`` plus ``FALLBACK_TENSOR_NAMES``, and nn.Module's likewise.
* **Operators.** ``+ - * / // % ** @ & | ^ << >>``, unary ``-``, ``+`` and ``~``, the
  comparisons ``== != < <= > >=``, augmented assignments (``+=`` is ``__iadd__``) and
  subscripts (``x[i]`` is ``__getitem__``, ``x[i] = v`` is ``__setitem__``) count as the
  ``torch.Tensor`` dunder method, unless an operand is a string literal or a container
  display (``[0] * n``, ``'%d' % n``) or every operand is a number literal (``2 ** 10``):
  a coarse filter, so integer arithmetic on variables is counted too. Type annotations
  (``Optional[int]``) are not operator uses.
* **Here.** ``torch.nn.functional.X`` is looked up as ``microgradnorm.functional.X``, every
  other ``torch.A.B`` as ``microgradnorm.A.B`` (``torch.Tensor.view`` as
  ``microgradnorm.Tensor.view``), with ``getattr`` and, for submodules, ``import``, at the
  time the tool runs.
* **Tested.** A name counts as tested when a test file under ``tests/`` that imports torch
  mentions its last component: an attribute or a name (``.unbind``, ``F.one_hot``,
  ``nn.Conv2d``), or for a dunder method the operator itself. This tool's own test is left
  out. A mention is not proof of a comparison; it finds what is certainly untested.
"""

import argparse
import ast
import functools
import importlib
import json
import pathlib
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
OWN_TEST = TESTS / "tools" / "test_torch_coverage.py"

BINARY = {ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__", ast.Div: "__truediv__",
          ast.FloorDiv: "__floordiv__", ast.Mod: "__mod__", ast.Pow: "__pow__",
          ast.MatMult: "__matmul__", ast.BitAnd: "__and__", ast.BitOr: "__or__",
          ast.BitXor: "__xor__", ast.LShift: "__lshift__", ast.RShift: "__rshift__"}
UNARY = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__"}
COMPARE = {ast.Eq: "__eq__", ast.NotEq: "__ne__", ast.Lt: "__lt__", ast.LtE: "__le__",
           ast.Gt: "__gt__", ast.GtE: "__ge__"}
CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
              ast.GeneratorExp, ast.JoinedStr)

# Tensor attributes that are far more often a method of a builtin type in user code.
BUILTIN_LIKELY = {"values", "index", "sort", "add", "count", "append", "extend", "items", "keys",
                  "get", "pop", "update", "join", "format", "strip", "replace", "copy"}
# Used without torch: common Tensor attributes microgradnorm may not have yet.
FALLBACK_TENSOR_NAMES = {
    "view", "view_as", "reshape", "transpose", "permute", "contiguous", "masked_fill", "item",
    "tolist", "float", "double", "half", "long", "int", "bool", "type_as", "to", "cuda", "cpu",
    "unbind", "flatten", "unsqueeze", "squeeze", "expand", "repeat", "repeat_interleave", "split",
    "chunk", "size", "shape", "dtype", "device", "ndim", "numel", "nelement", "data", "grad",
    "requires_grad", "detach", "clone", "backward", "retain_grad", "pin_memory", "sum", "mean",
    "max", "min", "argmax", "softmax", "exp", "log", "pow", "sqrt", "rsqrt", "abs", "sin", "cos",
    "tanh", "norm", "var", "std", "eq", "normal_", "zero_", "fill_", "uniform_", "copy_", "T"}
FALLBACK_MODULE_NAMES = {
    "register_buffer", "register_parameter", "parameters", "named_parameters", "buffers",
    "modules", "named_modules", "children", "state_dict", "load_state_dict", "apply", "to",
    "train", "eval", "zero_grad", "forward", "requires_grad_", "get_submodule", "cuda", "cpu"}
# A torch name ending in one of these is a module, not a use.
MODULE_NAMES = {"torch", "nn", "functional", "optim", "utils", "data", "cuda", "distributed",
                "amp", "backends", "init", "lr_scheduler", "parallel", "autograd", "fft",
                "linalg", "special", "jit", "tensorboard", "cudnn", "dataloader", "modules"}


# ---------------------------------------------------------------------------------------
# Reading files


def notebook_cells(text):
    """The code cells of a notebook (its JSON text), IPython ``%``/``!`` lines dropped."""
    cells = []
    for cell in json.loads(text).get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        lines = [line for line in source.splitlines()
                 if not line.lstrip().startswith(("%", "!"))]
        cells.append("\n".join(lines))
    return cells


def parse_file(path):
    """``(module, skipped)``: the file's syntax tree and how many cells (or whole files) did
    not parse; a notebook's parsed cells are read as one module."""
    text = pathlib.Path(path).read_text(encoding="utf-8", errors="replace")
    sources = notebook_cells(text) if str(path).endswith(".ipynb") else [text]
    body, skipped = [], 0
    for source in sources:
        try:
            body.extend(ast.parse(source).body)
        except SyntaxError:
            skipped += 1
    return ast.Module(body=body, type_ignores=[]), skipped


# ---------------------------------------------------------------------------------------
# What exists in torch (or, without it, in microgradnorm plus the lists above)


@functools.cache
def _torch():
    try:
        return importlib.import_module("torch")
    except ImportError:
        return None


@functools.cache
def tensor_names():
    """Attribute names of ``torch.Tensor``; without torch, microgradnorm's and a list."""
    torch = _torch()
    if torch is not None:
        return frozenset(dir(torch.Tensor))
    import microgradnorm
    return frozenset(dir(microgradnorm.Tensor)) | FALLBACK_TENSOR_NAMES


@functools.cache
def module_names():
    """Attribute names of ``torch.nn.Module``; without torch, microgradnorm's and a list."""
    torch = _torch()
    if torch is not None:
        return frozenset(dir(torch.nn.Module))
    import microgradnorm.nn
    return frozenset(dir(microgradnorm.nn.Module)) | FALLBACK_MODULE_NAMES


def resolve(dotted):
    """The object named ``dotted`` ("microgradnorm.optim.lr_scheduler.StepLR"), reached by
    ``getattr`` and, for submodules, ``import``; None when it does not exist."""
    parts = dotted.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except ImportError:
        return None
    for part in parts[1:]:
        if hasattr(obj, part):
            obj = getattr(obj, part)
        elif isinstance(obj, types.ModuleType):
            try:
                obj = importlib.import_module(f"{obj.__name__}.{part}")
            except ImportError:
                return None
        else:
            return None
    return obj


def class_has(class_name, attr):
    """Whether the torch class ``class_name`` has ``attr`` (always True without torch)."""
    if _torch() is None:
        return not attr.startswith("_")
    cls = resolve(class_name)
    return cls is not None and hasattr(cls, attr)


# ---------------------------------------------------------------------------------------
# Finding the uses in one file


def import_aliases(tree):
    """``{local name: full torch name}`` for every import of torch in ``tree``."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "torch":
                    continue
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:                                   # `import torch.nn` binds `torch`
                    aliases["torch"] = "torch"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "torch":
                for alias in node.names:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def is_literal(node):
    """Whether ``node`` is a number, string, or container display."""
    return isinstance(node, ast.Constant) or isinstance(node, CONTAINERS)


def counts_as_operator(*operands):
    """The coarse filter of the module docstring: no string or container operand, and not
    every operand a number literal."""
    if any(isinstance(op, ast.Constant) and isinstance(op.value, (str, bytes))
           or isinstance(op, CONTAINERS) for op in operands):
        return False
    return not all(is_literal(op) for op in operands)


class UseCollector(ast.NodeVisitor):
    """Collects the full torch names used in one module (``self.names``)."""

    def __init__(self, tree):
        self.aliases = import_aliases(tree)
        self.module_classes = self._module_classes(tree)
        self.variables = self._class_variables(tree)
        self.names = set()
        self.class_stack = []                           # is each enclosing class a Module?
        self.in_annotation = False

    # -- what names refer to --------------------------------------------------------------

    def dotted(self, node):
        """The full torch name of a ``Name`` or ``Attribute`` chain rooted at an import,
        else None."""
        attrs = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(attrs)])

    def class_of_call(self, node):
        """The class a call constructs: a torch class (its name capitalised) or, for a
        Module class of this file, ``torch.nn.Module``."""
        if not isinstance(node, ast.Call):
            return None
        if isinstance(node.func, ast.Name) and node.func.id in self.module_classes:
            return "torch.nn.Module"
        name = self.dotted(node.func)
        if name and name.rsplit(".", 1)[-1][:1].isupper():
            return name
        return None

    def _module_classes(self, tree):
        classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
        found, grew = set(), True
        while grew:                                     # a class may derive from a later one
            grew = False
            for cls in classes:
                if cls.name not in found and any(self._is_module_base(b, found)
                                                 for b in cls.bases):
                    found.add(cls.name)
                    grew = True
        return found

    def _is_module_base(self, base, found):
        if isinstance(base, ast.Name) and base.id in found:
            return True
        name = self.dotted(base)
        return bool(name) and name.startswith("torch.nn.")

    def _class_variables(self, tree):
        variables = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                cls = self.class_of_call(node.value)
                if cls:
                    variables.setdefault(node.targets[0].id, cls)
        return variables

    def is_tensor_method(self, attr):
        """Whether ``x.attr`` on an unknown ``x`` counts as a Tensor method (dunders are
        counted by their operators: ``super().__init__`` is no Tensor use)."""
        return (not self.in_annotation and not attr.startswith("_")
                and attr in tensor_names() and attr not in BUILTIN_LIKELY)

    def record(self, name):
        """Adds ``name`` unless it is a bare module."""
        if name.rsplit(".", 1)[-1] not in MODULE_NAMES:
            self.names.add(name)

    def record_operator(self, dunder, *operands):
        """Adds ``torch.Tensor.<dunder>`` when the operands pass the coarse filter."""
        if not self.in_annotation and counts_as_operator(*operands):
            self.names.add(f"torch.Tensor.{dunder}")

    # -- classes, functions and annotations -----------------------------------------------

    def visit_ClassDef(self, node):
        """Visits the class body knowing whether ``self`` is an ``nn.Module``."""
        self.class_stack.append(node.name in self.module_classes)
        self.generic_visit(node)
        self.class_stack.pop()

    def visit_arg(self, node):
        """An argument's annotation is a type, not an expression of tensors."""
        self.visit_annotation(node.annotation)

    def visit_FunctionDef(self, node):
        """Visits a function with its return annotation read as a type."""
        self.visit_annotation(node.returns)
        for field in ("decorator_list", "body"):
            for child in getattr(node, field):
                self.visit(child)
        self.visit(node.args)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node):
        """``x: T = value``: T is a type."""
        self.visit_annotation(node.annotation)
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_annotation(self, node):
        """Records the torch names of a type annotation, but no operators."""
        if node is None:
            return
        outer, self.in_annotation = self.in_annotation, True
        self.visit(node)
        self.in_annotation = outer

    # -- names and attributes -------------------------------------------------------------

    def visit_Name(self, node):
        """A name imported from torch (``DataLoader``, ``Tensor``)."""
        if isinstance(node.ctx, ast.Load) and node.id in self.aliases:
            self.record(self.aliases[node.id])

    def visit_Attribute(self, node):
        """``a.b``: a torch name, a Module or class attribute, or a Tensor method."""
        name = self.dotted(node)
        if name is not None:
            self.record(name)
            return
        value, attr = node.value, node.attr
        if isinstance(value, ast.Name) and value.id == "self":
            if self.class_stack and self.class_stack[-1] and attr in module_names():
                self.names.add(f"torch.nn.Module.{attr}")
            return
        owner = self.variables.get(value.id) if isinstance(value, ast.Name) else None
        owner = owner or self.class_of_call(value)
        if owner:
            if class_has(owner, attr):
                self.names.add(f"{owner}.{attr}")
        elif self.is_tensor_method(attr):
            self.names.add(f"torch.Tensor.{attr}")
        self.visit(value)

    # -- operators ------------------------------------------------------------------------

    def visit_BinOp(self, node):
        """``a + b`` and the other binary operators."""
        self.record_operator(BINARY[type(node.op)], node.left, node.right)
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        """``-x``, ``+x``, ``~x`` (``not x`` is no Tensor method)."""
        if type(node.op) in UNARY:
            self.record_operator(UNARY[type(node.op)], node.operand)
        self.generic_visit(node)

    def visit_Compare(self, node):
        """Each comparison of a chain ``a < b <= c``; ``is`` and ``in`` are not counted."""
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            if type(op) in COMPARE:
                self.record_operator(COMPARE[type(op)], left, right)
            left = right
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        """``a += b`` is ``__iadd__``."""
        dunder = BINARY[type(node.op)].replace("__", "__i", 1)
        self.record_operator(dunder, node.target, node.value)
        self.generic_visit(node)

    def visit_Subscript(self, node):
        """``x[i]`` reads (``__getitem__``), ``x[i] = v`` writes (``__setitem__``)."""
        if isinstance(node.ctx, (ast.Load, ast.Store)):
            dunder = "__getitem__" if isinstance(node.ctx, ast.Load) else "__setitem__"
            self.record_operator(dunder, node.value)
        self.generic_visit(node)


def names_in(tree):
    """The set of full torch names used in a syntax tree."""
    collector = UseCollector(tree)
    collector.visit(tree)
    return collector.names


# ---------------------------------------------------------------------------------------
# A corpus: many files, grouped by repository


def source_files(argument):
    """``(file, repository)`` for each Python file or notebook named by one argument."""
    path = pathlib.Path(argument)
    if path.is_file():
        return [(path, path.resolve().parent.name)]
    manifest = path / "MANIFEST.json"
    known = {}
    if manifest.exists():
        known = {entry["local"]: entry["repository"]
                 for entry in json.loads(manifest.read_text())["files"]}
    found = []
    for file in sorted(path.rglob("*")):
        relative = file.relative_to(path)
        if file.suffix not in (".py", ".ipynb") or any(part.startswith(".")
                                                       for part in relative.parts):
            continue
        repository = relative.parts[0] if len(relative.parts) > 1 else path.resolve().name
        found.append((file, known.get(relative.as_posix(), repository)))
    return found


def scan(arguments):
    """``(uses, skipped)``: ``{name: {"files": set, "repos": set}}`` over every file the
    arguments name, and how many cells or files did not parse."""
    uses, skipped = {}, 0
    for argument in arguments:
        for file, repository in source_files(argument):
            tree, bad = parse_file(file)
            skipped += bad
            for name in names_in(tree):
                entry = uses.setdefault(name, {"files": set(), "repos": set()})
                entry["files"].add(str(file))
                entry["repos"].add(repository)
    return uses, skipped


# ---------------------------------------------------------------------------------------
# Here and tested


def microgradnorm_name(name):
    """The microgradnorm name a torch name is looked up as."""
    prefix = "torch.nn.functional."
    if name.startswith(prefix):
        return "microgradnorm.functional." + name[len(prefix):]
    return "microgradnorm" + name[len("torch"):]


@functools.cache
def example_instances():
    """Instances whose attributes are set in ``__init__`` (a Tensor's ``requires_grad``, a
    Module's ``training``), by the name of their class."""
    import microgradnorm
    return {"microgradnorm.Tensor": microgradnorm.ones(1),
            "microgradnorm.nn.Module": microgradnorm.nn.Module()}


def is_here(name):
    """Whether microgradnorm has the counterpart of the torch name ``name`` right now: the
    name resolves, or it is an instance attribute of a Tensor or a Module."""
    target = microgradnorm_name(name)
    if resolve(target) is not None:
        return True
    owner, _, attr = target.rpartition(".")
    instance = example_instances().get(owner)
    return instance is not None and hasattr(instance, attr)


def imports_torch(tree):
    """Whether a syntax tree imports torch (anywhere in the file)."""
    return bool(import_aliases(tree))


def mentions(tree):
    """Attribute and name identifiers of a tree, and the dunders of its operators."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, (ast.BinOp, ast.AugAssign)):
            dunder = BINARY[type(node.op)]
            found.update({dunder, dunder.replace("__", "__i", 1)})
        elif isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
            found.add(UNARY[type(node.op)])
        elif isinstance(node, ast.Compare):
            found.update(COMPARE[type(op)] for op in node.ops if type(op) in COMPARE)
        elif isinstance(node, ast.Subscript):
            found.add("__setitem__" if isinstance(node.ctx, ast.Store) else "__getitem__")
    return found


@functools.cache
def tested_mentions(tests=TESTS):
    """What the test files that import torch mention (see ``mentions``), this tool's own
    test left out."""
    found = set()
    for file in sorted(pathlib.Path(tests).rglob("*.py")):
        if file.resolve() == OWN_TEST.resolve() or "torch" not in file.read_text():
            continue                                    # the text test saves most parses
        tree, skipped = parse_file(file)
        if not skipped and imports_torch(tree):
            found |= mentions(tree)
    return found


def is_tested(name, mentioned):
    """Whether the last component of ``name`` is among the ``mentioned`` identifiers."""
    return name.rsplit(".", 1)[-1] in mentioned


# ---------------------------------------------------------------------------------------
# The table


def table_rows(uses, mentioned, min_repos=1):
    """``(name, repositories, files, here, tested)`` sorted by repositories (most first)
    then name, for the names used by at least ``min_repos`` repositories."""
    rows = [(name, len(entry["repos"]), len(entry["files"]), is_here(name),
             is_tested(name, mentioned))
            for name, entry in uses.items() if len(entry["repos"]) >= min_repos]
    return sorted(rows, key=lambda row: (-row[1], row[0]))


def percent(part, whole):
    """``part`` as a whole percentage of ``whole`` (0 of nothing)."""
    return round(100 * part / whole) if whole else 0


def summary(total, rows):
    """The summary line: names used, names used by at least two repositories, of those
    present here, present and tested. ``rows`` are the table rows of those names."""
    common = len(rows)
    here = sum(1 for row in rows if row[3])
    tested = sum(1 for row in rows if row[3] and row[4])
    return (f"{total} names used; {common} used by >= 2 repositories, of which "
            f"{here} here ({percent(here, common)} %), {tested} here and tested "
            f"({percent(tested, common)} %)")


def yes_no(flag):
    """``"yes"`` or ``"no"``."""
    return "yes" if flag else "no"


def format_text(rows):
    """The rows as an aligned plain-text table."""
    width = max([len("name"), *(len(row[0]) for row in rows)])
    lines = [f"{'name':<{width}}  repos  files  here  tested"]
    lines += [f"{name:<{width}}  {repos:>5}  {files:>5}  {yes_no(here):<4}  {yes_no(tested)}"
              for name, repos, files, here, tested in rows]
    return "\n".join(lines)


def format_markdown(rows):
    """The rows as a markdown table (names in backticks)."""
    lines = ["| name | repositories | files | here | tested |", "|---|---|---|---|---|"]
    lines += [f"| `{name}` | {repos} | {files} | {yes_no(here)} | {yes_no(tested)} |"
              for name, repos, files, here, tested in rows]
    return "\n".join(lines)


def parse_markdown(text):
    """The rows ``(name, repositories, files, here, tested)`` of a table that
    ``format_markdown`` wrote, read back from ``text``."""
    rows = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            name, repos, files, here, tested = cells
            rows.append((name.strip("`"), int(repos), int(files), here == "yes",
                         tested == "yes"))
    return rows


def main(argv=None):
    """The command line: scan, print the table and the summary, optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--min-repos", type=int, default=1, metavar="N",
                        help="list only names used by at least N repositories")
    parser.add_argument("--json", metavar="OUT", help="write every name's uses to OUT")
    args = parser.parse_args(argv)
    missing = [path for path in args.paths if not pathlib.Path(path).exists()]
    if missing:
        parser.error(f"no such file or directory: {', '.join(missing)}")
    uses, skipped = scan(args.paths)
    mentioned = tested_mentions()
    rows = table_rows(uses, mentioned, args.min_repos)
    print(format_markdown(rows) if args.markdown else format_text(rows))
    print()
    print(summary(len(uses), table_rows(uses, mentioned, 2)))
    if skipped:
        print(f"{skipped} notebook cells or files did not parse and were skipped")
    if args.json:
        data = {name: {"files": sorted(entry["files"]), "repos": sorted(entry["repos"]),
                       "here": is_here(name), "tested": is_tested(name, mentioned)}
                for name, entry in sorted(uses.items())}
        pathlib.Path(args.json).write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
