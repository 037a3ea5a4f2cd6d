"""torch's keyword names of arguments (``input=``, ``other=``, ``mat2=``, ``dim=``, ...).

For each case (a function and sample arguments, given by position) the names are read
from torch at test time: the schemas of its native functions (``self`` is ``input`` for a
function, dropped for a method), or the Python signature of a Python function. The names
torch takes are the first list under which torch accepts every argument by keyword; the
same call, every argument by keyword, is made here and the values compared. A sweep over
torch's namespaces (arguments drawn by type) checks that no function here refuses a
keyword torch takes, but for the few listed with their reasons."""

import inspect
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import microgradnorm as mg                          # noqa: E402
import microgradnorm.nn.functional as MF            # noqa: E402

NAMESPACES = {"torch": (torch, mg, ""), "F": (F, MF, ""),
              "linalg": (torch.linalg, mg.linalg, "linalg_"),
              "special": (torch.special, mg.special, "special_"),
              "fft": (torch.fft, mg.fft, "fft_"), "Tensor": (torch.Tensor, mg.Tensor, "")}


# ----- torch's names, read at test time ---------------------------------------------------
def _schema_names(aten, method):
    lists = []
    for schema in torch._C._jit_get_schemas_for_operator("aten::" + aten):
        arguments = list(schema.arguments)
        if not arguments or schema.overload_name.endswith("out"):
            continue
        names = []
        for a in arguments:
            if a.name == "out" or (a.kwarg_only and a.alias_info is not None
                                   and a.alias_info.is_write):
                continue
            if a.name == "self":
                if method:
                    continue
                names.append("input")
            else:
                names.append(a.name)
        lists.append(tuple(names))
    return lists


def torch_name_lists(namespace, name):
    """Every list of argument names torch has for ``namespace.name`` (one per overload)."""
    module, _, prefix = NAMESPACES[namespace]
    function = getattr(module, name)
    method = namespace == "Tensor"
    if inspect.isfunction(function):
        parameters = list(inspect.signature(function).parameters.values())
        names = [p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL,
                                                                 p.VAR_KEYWORD)]
        return [tuple(names[1:] if method and names[:1] == ["self"] else names)]
    aten = getattr(function, "__name__", name)
    if prefix and not aten.startswith(prefix):
        aten = prefix + aten
    lists = _schema_names(aten, method)
    doc = (function.__doc__ or "").strip().split("\n")[0]        # the docstring's first line
    if "(" in doc:
        inside = doc[doc.index("(") + 1:doc.rindex(")")] if ")" in doc else ""
        names = [p.split("=")[0].strip() for p in inside.split(",")]
        lists.append(tuple(n for n in names if n.isidentifier()))
    return lists


def to_mg(value):
    if isinstance(value, torch.Tensor):
        return mg.tensor(value.detach().resolve_conj().numpy().copy())
    if isinstance(value, (list, tuple)):
        return type(value)(to_mg(v) for v in value)
    return value


def assert_same(got, want, pick=None):
    if pick is not None:
        got, want = pick(got), pick(want)
    if isinstance(want, torch.Tensor):
        assert isinstance(got, mg.Tensor), type(got)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().resolve_conj().numpy(),
                                   rtol=1e-7, atol=1e-9, equal_nan=True)
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, torch.dtype):
        assert str(got) == str(want)
    else:
        assert got == want


def call_by_keyword(namespace, name, args, pick=None):
    """Call torch's and this library's ``name`` with every argument of ``args`` by keyword,
    under the first of torch's name lists torch accepts; compare the results."""
    module, ours_module, _ = NAMESPACES[namespace]
    method = namespace == "Tensor"
    self, args = (args[0], args[1:]) if method else (None, args)
    tried = []
    for names in torch_name_lists(namespace, name):
        if len(names) < len(args):
            continue
        kwargs = dict(zip(names, args))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if method:
                    want = getattr(self.clone(), name)(**kwargs)
                else:
                    want = getattr(module, name)(**kwargs)
        except (TypeError, RuntimeError, ValueError) as error:
            tried.append(f"{names}: {type(error).__name__}")
            continue
        mine = {k: to_mg(v) for k, v in kwargs.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                if method:
                    got = getattr(to_mg(self), name)(**mine)
                else:
                    got = getattr(ours_module, name)(**mine)
            except TypeError as error:
                pytest.fail(f"{namespace}.{name}(**{sorted(kwargs)}) refused here, taken by "
                            f"torch: {error}")
        assert_same(got, want, pick)
        return sorted(kwargs)
    pytest.fail(f"torch takes {namespace}.{name} by no keyword list: {tried}")


# ----- the sample arguments ---------------------------------------------------------------
def m(*shape, seed=0, low=0.5):
    """A float64 tensor of ``shape``, values in [low, low + 1)."""
    return torch.from_numpy(np.random.default_rng(seed).random(shape) + low)


def spd(n=3):
    a = m(n, n)
    return a @ a.T + n * torch.eye(n, dtype=torch.float64)


def lu_args():
    a = m(3, 3) + 3 * torch.eye(3, dtype=torch.float64)
    lu, pivots = torch.linalg.lu_factor(a)
    return (m(3, 2, seed=1), lu, pivots)


def qr_args():
    reflectors, tau = torch.geqrf(m(3, 3))
    return reflectors, tau


def long(*values):
    return torch.tensor(values, dtype=torch.long)


FIRST = 0                                               # compare only the first output
CASES = [
    # top-level functions: input=, other=, mat2=, tensor=, vec2=, condition=, ...
    ("torch", "matmul", lambda: (m(3, 3), m(3, 2, seed=1)), None),
    ("torch", "mm", lambda: (m(2, 3), m(3, 4, seed=1)), None),
    ("torch", "bmm", lambda: (m(2, 2, 3), m(2, 3, 2, seed=1)), None),
    ("torch", "mv", lambda: (m(2, 3), m(3, seed=1)), None),
    ("torch", "dot", lambda: (m(3), m(3, seed=1)), None),
    ("torch", "outer", lambda: (m(3), m(2, seed=1)), None),
    ("torch", "ger", lambda: (m(3), m(2, seed=1)), None),
    ("torch", "maximum", lambda: (m(3), m(3, seed=1)), None),
    ("torch", "minimum", lambda: (m(3), m(3, seed=1)), None),
    ("torch", "where", lambda: (m(3) > 1, m(3), m(3, seed=1)), None),
    ("torch", "clamp", lambda: (m(4), 0.8, 1.2), None),
    ("torch", "clip", lambda: (m(4), 0.8), None),
    ("torch", "max", lambda: (m(3, 3),), None),
    ("torch", "max", lambda: (m(3, 3), 1, True), None),
    ("torch", "min", lambda: (m(3, 3), 0), None),
    ("torch", "sum", lambda: (m(3, 3), 1, True), None),
    ("torch", "mean", lambda: (m(3, 3), 0), None),
    ("torch", "amax", lambda: (m(3, 3), 1), None),
    ("torch", "amin", lambda: (m(3, 3), 1), None),
    ("torch", "aminmax", lambda: (m(3, 3),), None),
    ("torch", "argmax", lambda: (m(3, 3), 1), None),
    ("torch", "argmin", lambda: (m(3, 3), 0, True), None),
    ("torch", "var", lambda: (m(3, 3), 1), None),
    ("torch", "std", lambda: (m(3, 3), 0), None),
    ("torch", "prod", lambda: (m(3, 3), 1), None),
    ("torch", "cumsum", lambda: (m(3, 3), 1), None),
    ("torch", "cumprod", lambda: (m(3, 3), 0), None),
    ("torch", "diff", lambda: (m(5),), None),
    ("torch", "norm", lambda: (m(3, 3), 2, 1), None),
    ("torch", "all", lambda: (m(3, 3) > 1,), None),
    ("torch", "any", lambda: (m(3, 3) > 1, 1), None),
    ("torch", "sort", lambda: (m(5), 0, True), None),
    ("torch", "argsort", lambda: (m(5), 0, True), None),
    ("torch", "topk", lambda: (m(5), 2), None),
    ("torch", "kthvalue", lambda: (m(5), 2), None),
    ("torch", "mode", lambda: (long(1, 2, 2, 3),), None),
    ("torch", "isnan", lambda: (m(3),), None),
    ("torch", "isinf", lambda: (m(3),), None),
    ("torch", "isfinite", lambda: (m(3),), None),
    ("torch", "isposinf", lambda: (m(3),), None),
    ("torch", "isneginf", lambda: (m(3),), None),
    ("torch", "isreal", lambda: (m(3),), None),
    ("torch", "nonzero", lambda: (long(0, 1, 0, 2),), None),
    ("torch", "logical_not", lambda: (m(3) > 1,), None),
    ("torch", "bitwise_not", lambda: (long(0, 1, 5),), None),
    ("torch", "ceil", lambda: (m(3),), None),
    ("torch", "floor", lambda: (m(3),), None),
    ("torch", "frac", lambda: (m(3),), None),
    ("torch", "round", lambda: (m(3), 1), None),
    ("torch", "real", lambda: (m(3),), None),
    ("torch", "angle", lambda: (m(3),), None),
    ("torch", "conj", lambda: (m(3),), None),
    ("torch", "view_as_complex", lambda: (m(3, 2),), None),
    ("torch", "is_complex", lambda: (m(3),), None),
    ("torch", "is_floating_point", lambda: (m(3),), None),
    ("torch", "numel", lambda: (m(2, 3),), None),
    ("torch", "detach", lambda: (m(3),), None),
    ("torch", "clone", lambda: (m(3),), None),
    ("torch", "t", lambda: (m(2, 3),), None),
    ("torch", "reshape", lambda: (m(2, 3), (3, 2)), None),
    ("torch", "flatten", lambda: (m(2, 3, 2), 1), None),
    ("torch", "permute", lambda: (m(2, 3, 4), (2, 0, 1)), None),
    ("torch", "squeeze", lambda: (m(2, 1, 3), 1), None),
    ("torch", "unsqueeze", lambda: (m(2, 3), 0), None),
    ("torch", "movedim", lambda: (m(2, 3, 4), 0, 2), None),
    ("torch", "moveaxis", lambda: (m(2, 3, 4), 0, 2), None),
    ("torch", "narrow", lambda: (m(4, 3), 0, 1, 2), None),
    ("torch", "chunk", lambda: (m(4, 3), 2), None),
    ("torch", "split", lambda: (m(4, 3), 2), None),
    ("torch", "flip", lambda: (m(2, 3), (0,)), None),
    ("torch", "roll", lambda: (m(2, 3), 1, 1), None),
    ("torch", "ravel", lambda: (m(2, 3),), None),
    ("torch", "tril", lambda: (m(3, 3), -1), None),
    ("torch", "triu", lambda: (m(3, 3), 1), None),
    ("torch", "repeat_interleave", lambda: (m(3), 2), None),
    ("torch", "repeat_interleave", lambda: (long(1, 0, 2),), None),
    ("torch", "masked_fill", lambda: (m(3), m(3) > 1, 0.0), None),
    ("torch", "gather", lambda: (m(3, 3), 1, long(0, 2, 1).reshape(3, 1)), None),
    ("torch", "index_select", lambda: (m(3, 3), 0, long(2, 0)), None),
    ("torch", "ones_like", lambda: (m(2, 3),), None),
    ("torch", "zeros_like", lambda: (m(2, 3),), None),
    ("torch", "isin", lambda: (long(1, 2, 3), long(2, 5)), None),
    ("torch", "isin", lambda: (long(1, 2, 3), 2), None),
    ("torch", "result_type", lambda: (m(3), 1.0), None),
    ("torch", "result_type", lambda: (2, m(3)), None),
    ("torch", "hsplit", lambda: (m(2, 4), 2), None),
    ("torch", "vsplit", lambda: (m(4, 2), [1, 3]), None),
    ("torch", "lu_solve", lu_args, None),
    ("torch", "triangular_solve", lambda: (m(3, 2), torch.triu(m(3, 3, seed=2))), None),
    ("torch", "orgqr", qr_args, None),
    ("torch", "ormqr", lambda: (*qr_args(), m(3, 2, seed=3)), None),
    ("torch", "softmax", lambda: (m(2, 3), 1), None),
    ("torch", "log_softmax", lambda: (m(2, 3), 0), None),
    # torch.nn.functional
    ("F", "gelu", lambda: (m(3),), None),
    ("F", "softmax", lambda: (m(2, 3), 1), None),
    ("F", "log_softmax", lambda: (m(2, 3), 1), None),
    ("F", "dropout", lambda: (m(3), 0.5, False), None),
    ("F", "one_hot", lambda: (long(0, 2, 1), 3), None),
    ("F", "normalize", lambda: (m(2, 3),), None),
    ("F", "relu", lambda: (m(3) - 1,), None),
    ("F", "linear", lambda: (m(2, 3), m(4, 3, seed=1)), None),
    ("F", "layer_norm", lambda: (m(2, 3), (3,)), None),
    # torch.linalg
    ("linalg", "matmul", lambda: (m(3, 3), m(3, 2, seed=1)), None),
    ("linalg", "det", lambda: (m(3, 3),), None),
    ("linalg", "norm", lambda: (m(3, 3),), None),
    ("linalg", "vector_norm", lambda: (m(3, 3), 1), None),
    ("linalg", "matrix_norm", lambda: (m(3, 3),), None),
    ("linalg", "cond", lambda: (spd(),), None),
    ("linalg", "pinv", lambda: (m(3, 2),), None),
    ("linalg", "matrix_rank", lambda: (m(3, 3),), None),
    ("linalg", "cholesky", lambda: (spd(),), None),
    ("linalg", "cholesky_ex", lambda: (spd(),), FIRST),
    ("linalg", "eigh", lambda: (spd(),), FIRST),
    ("linalg", "eigvalsh", lambda: (spd(),), None),
    ("linalg", "eigvals", lambda: (spd(),), None),
    ("linalg", "lstsq", lambda: (m(4, 3), m(4, 2, seed=1)), FIRST),
    ("linalg", "solve_triangular", lambda: (torch.triu(spd()), m(3, 2), True), None),
    ("linalg", "householder_product", qr_args, None),
    ("linalg", "tensorinv", lambda: (spd(4).reshape(4, 2, 2), 1), None),
    ("linalg", "tensorsolve", lambda: (spd(4).reshape(4, 2, 2), m(4)), None),
    # torch.special
    ("special", "chebyshev_polynomial_t", lambda: (m(3) - 1, 3), None),
    ("special", "hermite_polynomial_h", lambda: (m(3), 2), None),
    ("special", "legendre_polynomial_p", lambda: (m(3) - 1, 2), None),
    ("special", "spherical_bessel_j0", lambda: (m(3),), None),
    ("special", "round", lambda: (m(3),), None),
    ("special", "softmax", lambda: (m(2, 3), 1), None),
    # Tensor methods: x.add(other=y), x.div(other=2), x.gather(dim=, index=), ...
    ("Tensor", "add", lambda: (m(3), m(3, seed=1), 2), None),
    ("Tensor", "div", lambda: (m(3), 2), None),
    ("Tensor", "matmul", lambda: (m(2, 3), m(3, 2, seed=1)), None),
    ("Tensor", "mm", lambda: (m(2, 3), m(3, 2, seed=1)), None),
    ("Tensor", "bmm", lambda: (m(2, 2, 3), m(2, 3, 2, seed=1)), None),
    ("Tensor", "dot", lambda: (m(3), m(3, seed=1)), None),
    ("Tensor", "outer", lambda: (m(3), m(2, seed=1)), None),
    ("Tensor", "ger", lambda: (m(3), m(2, seed=1)), None),
    ("Tensor", "gather", lambda: (m(3, 3), 1, long(0, 2, 1).reshape(3, 1)), None),
    ("Tensor", "max", lambda: (m(3), m(3, seed=1)), None),
    ("Tensor", "min", lambda: (m(3, 3), 1), None),
    ("Tensor", "maximum", lambda: (m(3), m(3, seed=1)), None),
    ("Tensor", "minimum", lambda: (m(3), m(3, seed=1)), None),
    ("Tensor", "eq_", lambda: (m(3), m(3)), None),
    ("Tensor", "lt_", lambda: (m(3), m(3, seed=1)), None),
    ("Tensor", "logical_and_", lambda: (m(3) > 1, m(3, seed=1) > 1), None),
    ("Tensor", "hsplit", lambda: (m(2, 4), 2), None),
    ("Tensor", "orgqr", qr_args, None),
    ("Tensor", "sum", lambda: (m(3, 3), 1), None),
    ("Tensor", "softmax", lambda: (m(2, 3), 1), None),
]


@pytest.mark.parametrize("namespace, name, make, pick", CASES,
                         ids=[f"{c[0]}.{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_every_argument_by_torchs_keyword(namespace, name, make, pick):
    pick = (lambda r: r[0]) if pick is FIRST else pick
    names = call_by_keyword(namespace, name, make(), pick)
    assert names                                            # at least one keyword passed


def test_max_and_min_take_the_keywords_of_every_overload():
    x, y = m(3, 3), m(3, 3, seed=1)
    for kwargs in ({"input": x}, {"input": x, "dim": 1}, {"input": x, "dim": 0, "keepdim": True},
                   {"input": x, "other": y}):
        for name in ("max", "min"):
            want = getattr(torch, name)(**kwargs)
            assert_same(getattr(mg, name)(**{k: to_mg(v) for k, v in kwargs.items()}), want)
    with pytest.raises(TypeError):
        torch.max(x, dim=0, other=y)
    with pytest.raises(TypeError):
        mg.max(to_mg(x), dim=0, other=to_mg(y))


def test_numpy_spellings_still_taken():
    x = m(3, 4)
    for name, kwargs in (("sum", {"axis": 1, "keepdims": True}), ("mean", {"axis": 0}),
                         ("amax", {"axis": 1, "keepdims": True}), ("cumsum", {"axis": 1}),
                         ("max", {"axis": 1}), ("argmax", {"axis": 0})):
        want = getattr(torch, name)(input=x, **kwargs)
        assert_same(getattr(mg, name)(input=to_mg(x), **kwargs), want)


def test_uniform_takes_from_and_to():
    torch.manual_seed(3)
    mg.manual_seed(3)
    want = torch.empty(5, dtype=torch.float64).uniform_(**{"from": -2.0, "to": 3.0})
    got = mg.empty(5, dtype=mg.float64).uniform_(**{"from": -2.0, "to": 3.0})
    assert_same(got, want)


ERROR_CALLS = [
    ("matmul", lambda lib, a, b: lib.matmul(input=a, othr=b)),     # an unknown keyword
    ("matmul", lambda lib, a, b: lib.matmul(a=a, b=b)),             # the old names
    ("mm", lambda lib, a, b: lib.mm(input=a, other=b)),             # mm's is mat2
    ("sum", lambda lib, a, b: lib.sum(a, input=a)),                 # input twice
    ("F.softmax", lambda lib, a, b: (F if lib is torch else MF).softmax(x=a, dim=1)),
    ("where", lambda lib, a, b: lib.where(a > 1, a=a, b=b)),
    ("add", lambda lib, a, b: a.add(othr=b)),
    ("gather", lambda lib, a, b: a.gather(1, indices=b.long())),
    ("hsplit", lambda lib, a, b: lib.hsplit(a)),                    # no sections or indices
    ("split", lambda lib, a, b: lib.split(x=a, split_size_or_sections=1)),
    ("linalg.det", lambda lib, a, b: lib.linalg.det(input=a)),       # linalg's is A
]


@pytest.mark.parametrize("name, call", ERROR_CALLS, ids=[c[0] for c in ERROR_CALLS])
def test_a_keyword_torch_refuses_is_refused(name, call):
    a, b = m(2, 2), m(2, 2, seed=1)
    with pytest.raises(TypeError):
        call(torch, a, b)
    with pytest.raises(TypeError):
        call(mg, to_mg(a), to_mg(b))


# ----- the sweep: every keyword torch takes, arguments drawn by type -----------------------
# what remains refused here, with the reason: arguments of features this library does not
# have, or torch's private ones (left out of the sweep's calls, at their defaults)
KNOWN = {
    "layout": "dense strided tensors only: no layout argument on the factories",
    "pin_memory": "no pinned memory on NumPy",
    "generator": "rrelu draws from the global generator",
    "out": "torch.norm's out= (a Python function of torch)",
    "scale": "F.elu_'s private scale and input_scale of the native kernel",
    "input_scale": "F.elu_'s private scale and input_scale of the native kernel",
}
KNOWN_FUNCTIONS = {"chalf": "no complex32 on NumPy"}
SHAPES = ((3, 3), (2, 3, 3), (3,))


def _draw(name, kind, shape):
    kind = kind.replace("?", "")
    if kind.startswith("Tensor") and "[]" not in kind:
        if name in ("condition", "mask"):
            return torch.ones(shape, dtype=torch.bool)
        if name in ("index", "indices"):
            return torch.zeros(shape, dtype=torch.long)
        return m(*shape)
    return {"int": 1, "SymInt": 1, "Scalar": 2.0, "float": 2.0, "bool": False, "int[]": [-1],
            "SymInt[]": [-1], "int[1]": [-1]}.get(kind)


_PYTHON_KINDS = {"input": "Tensor", "tensor": "Tensor", "other": "Tensor", "dim": "int"}


def _python_arguments(function):
    # a Python function of torch: its parameters, the kind of a required one from its name
    parameters = inspect.signature(function).parameters.values()
    return [(p.name, _PYTHON_KINDS.get(p.name, "?"), p.default is not p.empty, p.default)
            for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _sweep_cases(namespace):
    """(name, [(keyword, kind, has a default, default)]) for each overload torch has."""
    module, ours, prefix = NAMESPACES[namespace]
    method = namespace == "Tensor"
    for name in sorted(dir(module)):
        function = getattr(module, name, None)
        if name.startswith("_") or not callable(getattr(ours, name, None)) \
                or inspect.isclass(function) or not callable(function):
            continue
        if inspect.isfunction(function):
            arguments = _python_arguments(function)
            if arguments and arguments[0][1] == "Tensor" and not method:
                yield name, arguments
            continue
        aten = getattr(function, "__name__", name)
        aten = aten if not prefix or aten.startswith(prefix) else prefix + aten
        for schema in torch._C._jit_get_schemas_for_operator("aten::" + aten):
            arguments = [a for a in schema.arguments if a.name != "out" and not (
                a.kwarg_only and a.alias_info is not None and a.alias_info.is_write)]
            if schema.overload_name.endswith("out") or not arguments \
                    or arguments[0].name != "self" or str(arguments[0].type) != "Tensor":
                continue
            yield name, [("input" if a.name == "self" else a.name, str(a.type),
                          a.has_default_value(),
                          a.default_value if a.has_default_value() else None)
                         for a in arguments[method:]]


def _keywords(arguments, shape):
    # every argument by keyword: a default as it is (where a plain value), a required one
    # drawn by its kind; None where one cannot be drawn
    kwargs = {}
    for key, kind, has_default, default in arguments:
        if has_default:
            if default is None or isinstance(default, (bool, int, float, str)):
                kwargs[key] = default
            continue
        kwargs[key] = _draw(key, kind, shape)
        if kwargs[key] is None:
            return None
    return kwargs


def _sweep(namespace):
    """The calls torch takes with every argument by keyword that are refused here."""
    module, ours, _ = NAMESPACES[namespace]
    method = namespace == "Tensor"
    refused = {}
    for name, arguments in _sweep_cases(namespace):
        for shape in SHAPES:
            kwargs = _keywords(arguments, shape)
            if kwargs is None:
                break
            target = m(*shape)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if method:
                        getattr(target.clone(), name)(**kwargs)
                    else:
                        getattr(module, name)(**kwargs)
            except Exception:                   # not a call torch takes: the next shape
                continue
            # the KNOWN keywords (their defaults) left out, every other one passed
            mine = {k: to_mg(v) for k, v in kwargs.items() if k not in KNOWN}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if method:
                        getattr(to_mg(target), name)(**mine)
                    else:
                        getattr(ours, name)(**mine)
            except TypeError as error:
                if name not in KNOWN_FUNCTIONS:
                    refused[name] = f"{sorted(mine)}: {error}"
            except Exception:                   # a value this library refuses: not a name
                pass
            break
    return refused


@pytest.mark.parametrize("namespace", ["torch", "F", "linalg", "special", "fft", "Tensor"])
def test_no_keyword_torch_takes_is_refused(namespace):
    assert _sweep(namespace) == {}


DEVICE_CALLS = {
    "type(dtype, non_blocking=)": lambda lib, x: x.type(lib.float64, non_blocking=True),
    "type(dtype, True)": lambda lib, x: x.type(lib.float64, True),
    "type(foo=)": lambda lib, x: x.type(lib.float64, foo=1),
    "cpu(memory_format=)": lambda lib, x: x.cpu(memory_format=lib.preserve_format),
    "cpu(format) positional": lambda lib, x: x.cpu(lib.contiguous_format),
    "cpu(channels_last)": lambda lib, x: x.reshape(1, 2, 1, 2).cpu(memory_format=lib.channels_last),
}


@pytest.mark.parametrize("name", DEVICE_CALLS)
def test_type_and_cpu_take_torchs_flags(name):
    """``x.type(dtype, non_blocking=True)`` and ``x.cpu(memory_format=...)``, as torch code
    moving data writes them: taken (or refused) as torch's, with torch's dtype and strides."""
    x, tx = mg.arange(4.0), torch.arange(4.0)
    try:
        theirs = DEVICE_CALLS[name](torch, tx)
    except TypeError:
        with pytest.raises(TypeError):
            DEVICE_CALLS[name](mg, x)
        return
    mine = DEVICE_CALLS[name](mg, x)
    assert str(mine.dtype) == str(theirs.dtype)
    assert mine.stride() == theirs.stride()
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_cuda_takes_a_device_and_non_blocking():
    # without a GPU both refuse, torch with an AssertionError or a RuntimeError, here with
    # NoGPUError (both)
    for call in (lambda lib: lib.ones(1).cuda(0), lambda lib: lib.ones(1).cuda(non_blocking=True),
                 lambda lib: lib.ones(1).cuda("cuda:0", True)):
        if torch.cuda.is_available():
            pytest.skip("a GPU: the calls succeed")
        with pytest.raises((AssertionError, RuntimeError)) as theirs:
            call(torch)
        with pytest.raises(type(theirs.value)):      # torch's class, not a TypeError
            call(mg)
