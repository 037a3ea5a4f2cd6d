"""The kernels of meta arrays (the "meta" device): each is ``blocked``'s, run on the one
element a meta array holds, broadcast (a plain NumPy array, strides 0), its array results
given back as meta arrays of their shapes and dtypes. The kernels themselves see NumPy arrays
only; the values computed are dropped (torch runs shape functions: the same shapes and
dtypes, here at the cost of one transient pass)."""

import functools

from .. import meta_arrays
from . import blocked


@functools.lru_cache(maxsize=None)
def __getattr__(name):
    """``blocked``'s kernel ``name`` on stand-ins, its arrays returned as meta arrays."""
    kernel = getattr(blocked, name)
    if not callable(kernel):
        return kernel

    @functools.wraps(kernel)
    def on_meta(*args, **kwargs):
        return meta_arrays.as_meta(kernel(*meta_arrays.stand_in(args),
                                             **meta_arrays.stand_in(kwargs)))
    return on_meta
