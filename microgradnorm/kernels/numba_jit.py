"""How the numba kernel modules compile: the fastmath flags, the error model, the dtypes the
loops take and ``_jit``, numba.njit cached on disk with recovery from a damaged cache file.
``numba_cpu`` (the norms), ``numba_activations`` (softmax rows), ``numba_gelu``, ``numba_attention``
and ``numba_optim`` (Adam's update) compile through it; importing it raises ImportError
where numba is missing. numba's disk cache checks only each kernel's own file: after
editing the flags here, delete the ``.nbi``/``.nbc`` files in ``kernels/__pycache__``.

Importing it also lets LLVM use 512-bit vectors on the Intel cores whose AVX-512 runs at
full speed (``wide_vectors``): numba's choice, process-wide, for every kernel it compiles
after."""

import os
import warnings

import numpy as np

try:
    import numba
except ImportError as error:          # the selection API turns this into its own message
    raise ImportError('the numba CPU kernels need numba: pip install "microgradnorm[numba]"'
                      ) from error

__all__ = ["DTYPES", "EXACT_OPTIONS", "FASTMATH", "IEEE_OPTIONS", "OPTIONS", "WIDE_CPUS",
           "dense", "wide_vectors"]

# ----- vector width -------------------------------------------------------------------------
# LLVM tunes Intel's AVX-512 cores to prefer 256-bit vectors ("prefer-256-bit"), against the
# clock drop 512-bit instructions cost on Skylake-X and Cascade Lake. From Ice Lake on that
# drop is gone or small, and the kernels' exp- and polynomial-bound loops run 16 float32 (8
# float64) lanes wide at once, not 8 (4): on an Emerald Rapids Xeon, one thread, ms per forward
# + backward at benchmarks/activations.py's sizes, 256 -> 512-bit: exact GELU float32 0.76 ->
# 0.55, float64 4.45 -> 3.56, GELU-tanh 0.53 -> 0.43, causal attention float32 1.63 -> 1.47;
# the tiny GPT's training step 4-8 % faster (bench --train, d_model 64, fused: 17.05 -> 15.92
# ms; the nanoGPT-style file in float32 17.34 -> 16.68). AMD's Zen 4 and 5
# (double-pumped or full 512-bit units) are left as LLVM tunes them: not measured here.
WIDE_CPUS = frozenset(("icelake-client", "icelake-server", "tigerlake", "rocketlake",
                       "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d",
                       "diamondrapids"))


def wide_vectors():
    """On a CPU of WIDE_CPUS (LLVM's name of the host), set numba's target features to the
    host's without "prefer-256-bit", so that LLVM vectorizes 512 bits wide; returns whether
    it did. Not where numba's features are already set (``NUMBA_CPU_FEATURES``), where numba
    has compiled something already (its code generator is made once), or where
    ``MICROGRADNORM_WIDE_VECTORS=0``. numba's setting is process-wide: every numba function
    compiled afterwards, the user's too, gets it. numba's disk cache keys each kernel by the
    features, so code compiled either way is never mixed."""
    if os.environ.get("MICROGRADNORM_WIDE_VECTORS", "1") == "0" or \
            numba.config.CPU_FEATURES is not None:
        return False
    try:
        import llvmlite.binding as llvm
        from numba.core import registry
    except ImportError:                 # numba's internals moved: its own choice stands
        return False
    target = registry.cpu_target
    if "_toplevel_target_context" in vars(target) or llvm.get_host_cpu_name() not in WIDE_CPUS:
        return False
    numba.config.CPU_FEATURES = llvm.get_host_cpu_features().flatten() + ",-prefer-256-bit"
    return True


WIDE = wide_vectors()               # before this package's first kernel is compiled


# never "nnan" or "ninf"; nor "arcp": a row's few divisions by D must round as IEEE's, so
# that a constant row's mean correction and variance come out exactly 0 (no loop divides)
FASTMATH = {"reassoc", "contract", "nsz"}
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))           # what the kernels take


def dense(array):
    """``array`` C-contiguous where it is a float32/float64 NumPy array that is not (a view:
    the broadcast ones of a sum's backward as a gradient, a transposed input), so that the
    compiled loops take it: one copy costs one pass, the fallback's NumPy passes several
    (GELU's exact form twenty times the loop's time). Anything else as it is."""
    if type(array) is np.ndarray and array.dtype in DTYPES and not array.flags.c_contiguous:
        return np.ascontiguousarray(array)
    return array


# error_model "numpy": a float division by zero is IEEE's (1/0 = inf, 0/0 = NaN), as in
# the reference, not numba's default Python ZeroDivisionError (eps = 0 on a constant row).
OPTIONS = {"fastmath": FASTMATH, "error_model": "numpy"}
# Without "reassoc", for the few functions whose rounding order is the algorithm (an exp's
# ln 2 split in two parts, Horner's rule): reassociated, x - k·ln2_hi - k·ln2_lo becomes
# x - k·ln2 and the exp loses 5 ulp. Fast-math flags sit on each instruction, so these keep
# theirs when LLVM inlines them into a loop compiled with OPTIONS.
EXACT_OPTIONS = {"fastmath": FASTMATH - {"reassoc"}, "error_model": "numpy"}
# No fast-math at all: each operation rounds as NumPy's does, none contracted into a fused
# multiply-add, for a kernel that must equal its reference bit for bit (numba_optim)
IEEE_OPTIONS = {"error_model": "numpy"}


def _jit(function=None, *, options=OPTIONS):
    """numba.njit with ``options`` (OPTIONS above by default), cached on disk where a cache
    directory is writable (numba raises at decoration time when none is); a cache file that
    cannot be read is dropped and the kernel compiled afresh (``_recover_from_a_bad_cache``).
    ``@_jit`` or ``@_jit(options=...)``."""
    if function is None:
        return lambda function: _jit(function, options=options)
    try:
        dispatcher = numba.njit(cache=True, **options)(function)
    except RuntimeError:
        return numba.njit(**options)(function)
    _recover_from_a_bad_cache(dispatcher)
    return dispatcher


def _any_layout(signature):
    """``_jit`` for a kernel that reads its arrays through their strides whatever numba knows
    of their layout (BLAS's leading dimensions): compiled, at its first call, for
    ``signature(dtype)`` (numba's argument types, the arrays as any-layout 'A' ones) of
    each of DTYPES, and for nothing else. Arrays of any layout then pass as those: numba
    would otherwise compile one version per combination of C-contiguous, strided,
    Fortran-ordered and read-only arguments (the attention kernels met 13 in the test
    suite, 2-5 s of CPU each). Returns the function that calls the kernel."""
    def decorate(function):
        dispatcher = _jit(function)
        compiled = []

        def call(*args):
            if not compiled:
                for dtype in DTYPES:
                    dispatcher.compile(signature(numba.from_dtype(dtype)))
                dispatcher.disable_compile()
                compiled.append(True)
            return dispatcher(*args)
        call.__doc__, call.__name__, call.dispatcher = function.__doc__, function.__name__, \
            dispatcher
        return call
    return decorate


def _recover_from_a_bad_cache(dispatcher):
    # Two cases make numba's load wrong, each read as a cache miss (numba then compiles and
    # writes a fresh entry):
    # - a corrupt or truncated file makes the load raise on every call of the kernel (one
    #   warning);
    # - processes compiling one kernel at once (pytest-xdist workers, a pool's workers on a
    #   fresh cache) race on its index: each picks the first free data file name for its
    #   own signature and writes the index and then the data, so the index can name, for
    #   float32 arguments, a file holding the float64 version. Loaded as is, that version
    #   cannot unbox the arguments (TypeError on every call of the process). A loaded
    #   version whose argument types are not the ones asked for is dropped, silently.
    # numba's cache object is internal: without it, nothing is changed.
    cache = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "load_overload", None)
    if load is None:
        return

    def load_or_recompile(signature, *args, **kwargs):
        try:
            loaded = load(signature, *args, **kwargs)
        except Exception as error:          # what a damaged file raises varies: any of them
            warnings.warn(f"numba's on-disk cache of {dispatcher.__name__} could not be read "
                          f"({type(error).__name__}: {error}); compiling it afresh",
                          RuntimeWarning, stacklevel=2)
            try:
                cache.flush()               # the index goes; the fresh compile writes anew
            except OSError:
                pass
            return None
        if loaded is not None and not _compiled_for(loaded, signature):
            return None                     # another signature's code under this key
        return loaded
    cache.load_overload = load_or_recompile


def _compiled_for(loaded, signature):
    """Whether a loaded compile result takes ``signature``'s argument types (the types'
    tuple a call compiles for, a Signature or a string given to ``compile``); True where
    either cannot be read."""
    compiled = getattr(getattr(loaded, "signature", None), "args", None)
    if isinstance(signature, str):
        signature = numba.core.sigutils.normalize_signature(signature)[0]
    asked = getattr(signature, "args", signature)
    if not isinstance(compiled, tuple) or not isinstance(asked, (tuple, list)):
        return True
    return compiled == tuple(asked)
