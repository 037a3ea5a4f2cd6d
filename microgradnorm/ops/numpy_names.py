"""torch's NumPy spellings of two argument names: ``axis`` for ``dim`` and ``keepdims`` for
``keepdim``, which torch's argument parser takes for every native function
(``torch.cumprod(x, axis=0)``, ``x.logsumexp(axis=-1, keepdims=True)``). The reductions
take both names in their own signatures (``sum``, ``mean``, ``max``, ``std``, ...), and so
do the hot ones (``gather``, ``index_select``, ``cumsum``, ``prod``, ``logsumexp``, ``sort``,
``argsort``, ``topk``, ``select``, ``narrow``, ``unbind``, read by ``numpy_dim``): no
wrapper on their calls. The functions named in ``NUMPY_NAMED`` take only torch's, and
``install`` puts each, wrapped by ``accept_numpy_names``, in the namespace and on Tensor
once at import. Python-level torch
functions (``split``, ``unique``, ``norm``) refuse ``axis``, and so do their forms here."""

import functools

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


def accept_numpy_names(fn):
    """``fn`` taking ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=`` as torch's
    native functions do; both spellings of one argument given is a TypeError, as torch's.

    Args:
        fn: a function whose arguments are named ``dim`` and ``keepdim``.

    Example:
        >>> accept_numpy_names(mg.ops.pointwise.cumsum)(mg.ones(2, 3), axis=1)   # cumsum over 1
    """
    @functools.wraps(fn)
    def numpy_named(*args, **kwargs):
        if kwargs:
            for numpy_name, torch_name in _RENAMED:
                if numpy_name in kwargs:
                    if torch_name in kwargs:
                        raise TypeError(f"{fn.__name__}() got multiple values for argument "
                                        f"'{torch_name}'")
                    kwargs[torch_name] = kwargs.pop(numpy_name)
        return fn(*args, **kwargs)
    return numpy_named


def install(namespace, tensor_class):
    """Wrap each function of ``NUMPY_NAMED`` in ``namespace`` (a module's globals) and on
    ``tensor_class`` (the method, wrapped once where it is the same function)."""
    for name in NUMPY_NAMED:
        function = namespace.get(name)
        method = getattr(tensor_class, name, None)
        wrapped = accept_numpy_names(function) if callable(function) else None
        if wrapped is not None:
            namespace[name] = wrapped
        if callable(method) and not isinstance(method, type):
            setattr(tensor_class, name,
                    wrapped if method is function else accept_numpy_names(method))
