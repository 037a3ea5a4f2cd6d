"""torch's NumPy spellings of two argument names: ``axis`` for ``dim`` and ``keepdims`` for
``keepdim``, which torch's argument parser takes for every native function
(``torch.cumprod(x, axis=0)``, ``x.logsumexp(axis=-1, keepdims=True)``). The reductions
take both names in their own signatures (``sum``, ``mean``, ``max``, ``std``, ...), and so
do the hot ones (``gather``, ``index_select``, ``cumsum``, ``prod``, ``logsumexp``, ``sort``,
``argsort``, ``topk``, ``select``, ``narrow``, ``unbind``, read by ``numpy_dim``): no
wrapper on their calls. The functions named in ``NUMPY_NAMED`` take only torch's, and
``install`` puts each, wrapped by ``accept_numpy_names``, in the namespace and on Tensor
once at import. Python-level torch
functions (``split``, ``unique``, ``norm``) refuse ``axis``, and so do their forms here.

torch's parser also takes ``x``, ``a`` or ``x1`` for an argument named ``input`` and ``x2`` for
one named ``other`` (``torch.add(x=a, x2=b)``, ``torch.exp(x=t)``, ``t.add(x2=u)``; a method's
``self`` has no other name). ``install`` wraps, by the same ``accept_numpy_names``, every
public function of the namespace whose parameters name ``input`` or ``other`` and every Tensor
method whose parameters name ``other``, once at import, after ``out=`` is installed (so the
wrapper is the outermost). The torch functions written in Python (``PYTHON_LEVEL``: ``norm``,
``stft``, ``unique``, ...) take no such names, and neither do theirs here; every function of
torch.linalg and torch.special is native, so each takes ``x`` for ``input`` and ``axis`` and
``keepdims`` where it has ``dim`` or ``keepdim`` (``torch.linalg.norm(x=t, keepdims=True)``).
The wrapper costs one call on a call without keywords, so the hottest, ``add``, ``sub``,
``subtract`` and their methods, read the spellings in their own signatures instead
(``**numpy_names``, read by ``numpy_operands``), and the operators (``a + b``) take none."""

import functools
import inspect
import os
import sys

NUMPY_NAMED = (
    "aminmax", "count_nonzero", "cross", "cummax", "cummin", "cumprod",
    "cumulative_trapezoid", "diff", "gradient", "index_add", "index_copy",
    "index_fill", "index_reduce", "kthvalue", "logcumsumexp",
    "median", "mode", "nanmean", "nanmedian", "nanquantile", "nansum", "narrow_copy",
    "quantile", "renorm", "repeat_interleave", "scatter", "scatter_add",
    "scatter_reduce", "select_scatter", "slice_scatter",
    "split_with_sizes_copy", "squeeze_copy", "std_mean", "take_along_dim", "tensor_split",
    "trapezoid", "trapz", "unbind_copy", "unflatten", "unsafe_chunk",
    "unsafe_split", "unsafe_split_with_sizes", "unsqueeze_copy", "var_mean")

_RENAMED = (("axis", "dim"), ("keepdims", "keepdim"))
# torch's other names of ``input`` and ``other`` (its parser's NumPy spellings)
_INPUT_NAMES, _OTHER_NAMES = ("x", "a", "x1"), ("x2",)
# the torch functions written in Python, whose parameters have no second spelling
PYTHON_LEVEL = ("norm", "stft", "istft", "unique", "unique_consecutive", "split", "lu",
                "cdist", "tensordot", "einsum", "chain_matmul", "block_diag", "meshgrid",
                "broadcast_tensors", "cartesian_prod", "atleast_1d", "atleast_2d",
                "atleast_3d", "unravel_index", "lu_unpack", "pca_lowrank", "svd_lowrank",
                "lobpcg", "align_tensors", "is_tensor", "is_storage")


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_stacklevel():
    """The ``stacklevel`` with which a ``warnings.warn`` in the calling function names the
    first line outside this package: the user's call, past the wrappers between (these, and
    ``out=``'s, compiled as ``"<out= of ...>"``), whichever path reached the op.

    Example:
        >>> warnings.warn("deprecated", UserWarning, stacklevel=user_stacklevel())
    """
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith((_PACKAGE, "<out= of")):
        frame, level = frame.f_back, level + 1
    return level


class _Required:
    # the default of an argument a function reads in its own signature under two names
    def __repr__(self):
        return "<required>"


REQUIRED = _Required()


def numpy_operands(fn, input, other, numpy_names, method=False):
    """``(input, other)`` of a function that takes torch's NumPy spellings in its own
    signature (``add``, ``sub``, ``subtract`` and their methods: no wrapper on their calls),
    ``numpy_names`` its ``**numpy_names``: ``x``, ``a`` or ``x1`` for ``input`` (not a
    method's ``self``), ``x2`` for ``other``; one argument given twice, another name, or a
    required argument absent (``REQUIRED``, their default) is torch's TypeError."""
    names = dict(numpy_names)
    for alias, torch_name in ((() if method else tuple((a, "input") for a in _INPUT_NAMES))
                              + tuple((a, "other") for a in _OTHER_NAMES)):
        if alias in names:
            if (input if torch_name == "input" else other) is not REQUIRED:
                raise TypeError(f"{fn}() got multiple values for argument '{torch_name}'")
            if torch_name == "input":
                input = names.pop(alias)
            else:
                other = names.pop(alias)
    if names:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(names))}'")
    for name, value in (("input", input), ("other", other)):
        if value is REQUIRED:
            raise TypeError(f"{fn}() missing 1 required positional argument: '{name}'")
    return input, other


def numpy_dim(fn, dim, axis, missing=False, default=None):
    """``dim``, or ``axis`` given for it, in a function that takes both in its signature
    (``gather``, ``sort``, ``select``, ...: no wrapper on their calls), or ``default`` where
    neither is given; both given, or neither where ``dim`` is required (no ``default``), or
    ``missing`` (another required argument absent), is torch's TypeError."""
    if axis is not None and dim is not None:
        raise TypeError(f"{fn}() got multiple values for argument 'dim'")
    if missing or (axis is None and dim is None and default is None):
        raise TypeError(f"{fn}() missing a required positional argument")
    return default if axis is None and dim is None else dim if axis is None else axis


def _input_refused(fn, args, kwargs, error):
    # torch's parser refuses an ``input`` that is not a Tensor (or an ``other``, the second
    # parameter, neither a Tensor nor a number) before the call; here a list, None or a
    # string reaches the function, which fails on it deep inside (an AttributeError naming
    # an internal attribute): that failure, as torch's TypeError naming the argument
    from numbers import Number

    from .shape_arguments import tensor_argument
    for position, name in ((1, "input"), (2, "other")):
        given = args[position - 1] if len(args) >= position else kwargs.get(name, Number)
        if given is Number or name == "other" and (isinstance(given, Number)
                                                   or _second(fn) != "other"):
            continue                # (an ``other`` may be a number: the failure is not it)
        try:
            tensor_argument(fn.__name__, name, given, position if len(args) >= position
                            else None)
        except TypeError as refused:
            raise refused from error
    raise error


def accept_numpy_names(fn, renamed=_RENAMED, input_tensor=False):
    """``fn`` taking torch's NumPy spellings of its arguments: by default ``axis=`` for
    ``dim=`` and ``keepdims=`` for ``keepdim=``, as torch's native functions do; both
    spellings of one argument given is a TypeError, as torch's.

    Args:
        fn: a function whose arguments carry torch's names (``dim``, ``keepdim``, ``input``,
            ``other``).
        renamed: the ``(numpy_name, torch_name)`` pairs ``fn`` takes (``("x2", "other")``).
        input_tensor: ``fn``'s first parameter is a Tensor ``input``: an AttributeError from
            a call whose ``input`` (or ``other``, where it is the second parameter) is
            neither a Tensor nor a number (a list, None, a string) is raised as torch's
            TypeError naming the argument.

    Example:
        >>> accept_numpy_names(mg.ops.pointwise.cumsum)(mg.ones(2, 3), axis=1)   # cumsum over 1
        >>> accept_numpy_names(mg.ops.binary.mul, (("x", "input"), ("x2", "other")))(
        ...     x=mg.ones(2), x2=mg.ones(2))                                   # tensor([1., 1.])
    """
    numpy_names = frozenset(numpy_name for numpy_name, _ in renamed)

    @functools.wraps(fn)
    def numpy_named(*args, **kwargs):
        if kwargs and not numpy_names.isdisjoint(kwargs):
            for numpy_name, torch_name in renamed:
                if numpy_name in kwargs:
                    if torch_name in kwargs:
                        raise TypeError(f"{fn.__name__}() got multiple values for argument "
                                        f"'{torch_name}'")
                    kwargs[torch_name] = kwargs.pop(numpy_name)
        if not input_tensor:
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        except AttributeError as error:
            _input_refused(fn, args, kwargs, error)
    return numpy_named


def _parameter_names(fn):
    # the names of fn's parameters and of those of the functions it wraps (``__wrapped__``:
    # a wrapper's own are ``*args, **kwargs``); read from the code, once at import
    names = set()
    while fn is not None:
        code = getattr(fn, "__code__", None)
        if code is not None:
            names.update(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        fn = getattr(fn, "__wrapped__", None)
    return names


def _first(fn, which=0):
    # the name of the first (``which``: another) positional parameter of fn, or of the
    # function it wraps (``__wrapped__``)
    while fn is not None:
        code = getattr(fn, "__code__", None)
        if code is not None and code.co_argcount:
            return code.co_varnames[which] if which < code.co_argcount else None
        fn = getattr(fn, "__wrapped__", None)
    return None


def _second(fn):
    return _first(fn, 1)


def _renamed(fn, name, method, native=False):
    # the pairs fn takes: axis/keepdims where named in NUMPY_NAMED (or ``native``, a function
    # of torch.linalg or torch.special, where it names dim or keepdim); x/a/x1 for ``input``
    # (a function's, not a method's: its ``self``) and x2 for ``other``, where named so and
    # not in PYTHON_LEVEL (unless ``native``); none where fn reads them in its own signature
    # (``**numpy_names``: numpy_operands)
    names = _parameter_names(fn)
    code = getattr(fn, "__code__", None)
    if code is not None and code.co_flags & inspect.CO_VARKEYWORDS \
            and code.co_varnames[code.co_argcount + code.co_kwonlyargcount
                                 + bool(code.co_flags & inspect.CO_VARARGS)] == "numpy_names":
        return ()
    pairs = list(_RENAMED) if name in NUMPY_NAMED or native and {"dim", "keepdim"} & names \
        else []
    if native or name not in PYTHON_LEVEL:
        if "input" in names and not method:
            pairs += [(alias, "input") for alias in _INPUT_NAMES if alias not in names]
        if "other" in names:
            pairs += [(alias, "other") for alias in _OTHER_NAMES if alias not in names]
    return tuple(pairs)


def install(namespace, tensor_class, others=()):
    """Wrap, by ``accept_numpy_names``, each public function of ``namespace`` (a module's
    globals) and of the ``others`` (torch.special's, torch.linalg's, whose parser takes the
    same spellings) that takes one of torch's NumPy spellings (``NUMPY_NAMED``, a parameter
    named ``input`` or ``other``), and each such method of ``tensor_class``; a function bound
    to several names (``special.gammainc`` is ``igamma``; a method with the same spellings)
    is wrapped once, so such names stay one object."""
    wrapped = {}

    def wrap(where, method, native=False):
        # where's callables that take a spelling, each replaced by its (shared) wrapper
        for name, function in list(where.items()):
            if name.startswith("_") or not callable(function) or isinstance(function, type) \
                    or not hasattr(function, "__code__") and not hasattr(function, "__wrapped__"):
                continue
            renamed = _renamed(function, name, method=method, native=native)
            if renamed:
                if (id(function), renamed) not in wrapped:
                    wrapped[id(function), renamed] = accept_numpy_names(
                        function, renamed, input_tensor=not method and _first(function) == "input")
                yield name, wrapped[id(function), renamed]

    namespace.update(dict(wrap(namespace, method=False)))
    for space in others:          # torch.special's and torch.linalg's are native: linalg.norm
        space.update(dict(wrap(space, method=False, native=True)))
    for name, method in list(wrap(vars(tensor_class), method=True)):
        setattr(tensor_class, name, method)
    for function in {id(f): f for f in wrapped.values()}.values():   # pickled by reference:
        if namespace.get(function.__qualname__) is function and "__name__" in namespace:
            function.__module__ = namespace["__name__"]      # under the namespace's name
