"""Array kernels, free of graphs. Every module has every kernel of ``reference`` with its
signature: a kernel a backend does not define itself is the reference's (``__getattr__ =
reference.fallback(__name__)``, no alias lines). ``reference`` (NumPy/CuPy, the textbook
formulas) is the oracle; ``numba_cpu``
(numba-compiled loops, the fastest) runs NumPy arrays by default when numba is installed;
``blocked`` (NumPy over cache-sized row blocks) runs them otherwise, and takes what
``numba_cpu`` does not (half precision, mixed dtypes, views); ``cuda`` (CuPy RawKernels
from ``norms.cu``) runs CuPy arrays.

Which kernels NumPy arrays get is a process-wide choice: "numba" (``numba_cpu``) or
"numpy" (``blocked``), whichever ``default_cpu_kernels`` finds, or "reference", set by
``set_cpu_kernels``, the ``cpu_kernels`` context manager, or the environment variable
``MICROGRADNORM_CPU_KERNELS`` read on first use.
"""

import contextlib
import os

from .. import fma
from ..meta_arrays import MetaArray
from . import blocked, reference

__all__ = ["CASTINGS", "CPU_KERNELS", "blocked", "cpu_kernels", "default_cpu_kernels",
           "defines", "for_array", "get_cpu_kernels", "reference", "set_cpu_kernels"]

CASTINGS = ("llama", "gemma", "none")   # RMSNorm's casting modes (``reference``'s docstring)
CPU_KERNELS = ("numpy", "numba", "reference")
ENVIRONMENT_VARIABLE = "MICROGRADNORM_CPU_KERNELS"
_cpu = {}          # {"name": the selected CPU kernels, "module": their module}, once chosen
_cuda = []         # [kernels.cuda] once a CuPy array has asked for it


def _module_named(name, argument):
    """The kernel module for CPU kernels ``name``, checked: ValueError for an unknown
    name (``argument`` says where it came from), RuntimeError when numba is missing."""
    if name not in CPU_KERNELS:
        raise ValueError(f"{argument} must be one of {', '.join(map(repr, CPU_KERNELS))}, "
                         f"got {name!r}")
    if name != "numba":
        return blocked if name == "numpy" else reference
    try:
        from . import numba_cpu
    except ImportError as error:
        raise RuntimeError(f'CPU kernels "numba" need numba: pip install '
                           f'"microgradnorm[numba]" ({error.__cause__ or error})') from None
    return numba_cpu


def default_cpu_kernels():
    """The CPU kernels used until one is chosen: "numba" when numba imports (the compiled
    kernels, 2-4x the NumPy ones' speed for LayerNorm, docs/benchmarks.md), else "numpy"."""
    try:
        _module_named("numba", "")
    except RuntimeError:
        return "numpy"
    return "numba"


def set_cpu_kernels(name):
    """Choose the kernels the fused norms run on NumPy arrays, for the whole process.

    "numba" (the default when numba is installed) is the row norms compiled with numba,
    "numpy" (the default without it) ``kernels.blocked``, "reference" the slower textbook
    formulas every other kernel is checked against (docs/benchmarks.md). They agree to
    rounding, a few units in the last place of each output's scale. CuPy arrays are not
    affected. A graph node's backward runs the kernels its forward ran, whatever is
    selected by then.

    Args:
        name (str): "numpy", "numba" or "reference".

    Raises:
        ValueError: ``name`` is not one of them (nothing changes).
        RuntimeError: "numba" without numba installed (``pip install
            "microgradnorm[numba]"``; nothing changes).

    Example::

        >>> import microgradnorm as mg
        >>> mg.set_cpu_kernels("numba")        # doctest: +SKIP
        >>> mg.get_cpu_kernels()               # doctest: +SKIP
        'numba'
    """
    module = _module_named(name, "set_cpu_kernels: name")
    _cpu.update(name=name, module=module)


def get_cpu_kernels():
    """The name of the kernels the fused norms run on NumPy arrays (``CPU_KERNELS``).

    Until ``set_cpu_kernels`` is called this is ``$MICROGRADNORM_CPU_KERNELS`` if set,
    else ``default_cpu_kernels()``.

    Example::

        >>> import microgradnorm as mg
        >>> mg.get_cpu_kernels() in mg.kernels.CPU_KERNELS
        True
    """
    if not _cpu:
        name = os.environ.get(ENVIRONMENT_VARIABLE, "").strip() or default_cpu_kernels()
        module = _module_named(name, f"the environment variable {ENVIRONMENT_VARIABLE}")
        _cpu.update(name=name, module=module)
    return _cpu["name"]


@contextlib.contextmanager
def cpu_kernels(name):
    """Run the fused norms on NumPy arrays with kernels ``name`` inside the block; the
    previous choice comes back on leaving it, also after an exception. The choice is the
    process's, not the thread's: other threads see it while the block runs.

    Args:
        name (str): as ``set_cpu_kernels`` (a bad name raises before the block runs and
            changes nothing).

    Example::

        >>> import microgradnorm as mg
        >>> with mg.cpu_kernels("reference"):
        ...     mg.get_cpu_kernels()
        'reference'
    """
    previous = get_cpu_kernels()
    set_cpu_kernels(name)
    try:
        yield
    finally:
        set_cpu_kernels(previous)


def defines(module, names):
    """Whether the kernel ``module`` has its own version of each kernel in ``names``, not
    the reference's it falls back to (``defines(cuda, ("layer_norm_forward",))``)."""
    return all(name in vars(module) for name in names)


def for_array(array):
    """The kernel module for ``array``: ``cuda`` for a CuPy array; for a NumPy one the
    selected CPU kernels' (``numba_cpu`` or ``blocked`` by default). Every module has every
    kernel: one it does not define is the reference's."""
    if type(array).__module__.startswith("cupy"):      # is_cupy_array, inlined: every call
        if not _cuda:
            from . import cuda  # imports no CuPy by itself, but keep it lazy
            _cuda.append(cuda)
        return _cuda[0]
    if array.__class__ is MetaArray:                   # the meta device's: shapes only
        from . import meta
        return meta
    if not _cpu:
        get_cpu_kernels()
    return _cpu["module"]


def _compiled_fused_multiply_add():
    """``numba_fma``'s fused multiply-add where numba imports and the environment does not
    choose NumPy or the reference for the CPU kernels; None otherwise (``fma.py`` then
    computes in NumPy, with the same bits)."""
    if os.environ.get(ENVIRONMENT_VARIABLE, "numba") != "numba":
        return None
    try:
        from . import numba_fma
    except ImportError:
        return None
    return numba_fma.fused_multiply_add


fma.compiled_loader = _compiled_fused_multiply_add     # loaded on the first call, not here
