"""Compile CUDA source exactly as ``cupy.RawModule`` does, on a machine without a GPU.

``RawModule`` asks the device for its compute capability and keeps its module cache per
device, so it cannot compile without a GPU. Below it, CuPy's compile path
(``cupy._core.raw._get_raw_module`` -> ``cupy._core.core.compile_with_cache`` ->
``cupy.cuda.compiler``) adds the include directories, ``--std=c++17``, ``-ftz=true``,
``-arch=sm_XX`` and ``--device-as-default-execution-space`` to the caller's options and hands
them to NVRTC through ``cupy.cuda.compiler._NVRTCProgram``, which needs no device.

``rawmodule_compile`` runs that very path with the device queries replaced by a given
architecture, catches the NVRTC program on its way (so the options are the ones CuPy built,
not a copy of them kept here) and returns its result before CuPy would load the binary onto
a device.

PRIVATE CUPY API. Everything this file touches (``_get_raw_module``, ``_NVRTCProgram``,
``_get_arch``, ``_get_arch_for_options_for_nvrtc``) is private to CuPy and is confined to this
one function. It was written against CuPy 14; ``SUPPORTED_CUPY`` names the major versions it
has been checked with, and another version is a test failure asking for a re-check, not a
silent pass.
"""

import contextlib
import os

SUPPORTED_CUPY = (14,)


class _Compiled(Exception):
    """Raised by the intercepted NVRTC program once it has compiled: stops CuPy before it
    loads the binary onto a (missing) device."""

    def __init__(self, options, binary, mapping):
        super().__init__("compiled")
        self.options, self.binary, self.mapping = options, binary, mapping


def cupy_or_none():
    """The ``cupy`` module, or None when it is not installed."""
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def check_version(cupy):
    """None when this helper supports the installed CuPy, else the reason it does not."""
    major = int(cupy.__version__.split(".")[0])
    if major not in SUPPORTED_CUPY:
        return (f"tests/helpers/cupy_compile.py drives CuPy's private compile path and was checked "
                f"with CuPy {SUPPORTED_CUPY}; CuPy {cupy.__version__} is installed: re-check "
                f"it against cupy/cuda/compiler.py and cupy/_core/raw.pyx")
    return None


@contextlib.contextmanager
def _patched(module, name, value):
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


@contextlib.contextmanager
def _environment(name, value):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def rawmodule_compile(code, options, name_expressions, arch, ptx=False):
    """Compile ``code`` as ``cupy.RawModule(code=code, options=options,
    name_expressions=name_expressions)`` would on a GPU of compute capability ``arch``
    ("80", "90"). Returns (options CuPy passed to NVRTC, the cubin bytes, {name expression:
    lowered name}). ``ptx``: as CuPy does under ``CUPY_COMPILE_WITH_PTX=1``, PTX for
    ``compute_<arch>`` (NVRTC's front end and optimizer, without ptxas: half the time), the
    PTX text returned. A compile error raises CuPy's ``CompileException`` with NVRTC's log."""
    import cupy
    from cupy._core import raw
    from cupy.cuda import compiler

    reason = check_version(cupy)
    if reason:
        raise RuntimeError(reason)

    class Program(compiler._NVRTCProgram):
        def compile(self, options=(), log_stream=None):
            result = super().compile(options, log_stream)
            if self.name_expressions:           # the module itself, not CuPy's empty probe
                raise _Compiled(tuple(options), result[0], result[1])
            return result

    build = raw._get_raw_module.__wrapped__       # the per-device memoization left out
    arch_options = compiler._get_arch_for_options_for_nvrtc.__wrapped__
    stack = contextlib.ExitStack()
    with stack:
        stack.enter_context(_patched(compiler, "_NVRTCProgram", Program))
        stack.enter_context(_patched(compiler, "_get_arch", lambda: arch))
        stack.enter_context(_patched(compiler, "_get_arch_for_options_for_nvrtc",
                                     arch_options))
        stack.enter_context(_patched(compiler, "_use_ptx", bool(ptx)))
        # No on-disk cache: a cached binary would be loaded onto the device, not compiled.
        stack.enter_context(_environment("CUPY_CACHE_IN_MEMORY", "1"))
        try:
            build(code, None, tuple(options), "nvrtc", False, False, False,
                  tuple(name_expressions), None)
        except _Compiled as compiled:
            return compiled.options, compiled.binary, compiled.mapping
    raise RuntimeError("CuPy's compile path never reached NVRTC: re-check this helper")
