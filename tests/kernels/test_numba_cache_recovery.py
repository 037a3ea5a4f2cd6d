"""A numba cache file that cannot be read is a cache miss with one warning (the kernel is
compiled afresh), not an error on every fused call."""

import pytest

numba_jit = pytest.importorskip("microgradnorm.kernels.numba_jit")
from microgradnorm.kernels import numba_activations, numba_cpu, numba_gelu  # noqa: E402


class _DamagedCache:
    def __init__(self):
        self.flushed = 0

    def load_overload(self, signature, context):
        raise ValueError("invalid literal for int() with base 10: 'arbage'")

    def flush(self):
        self.flushed += 1


class _Dispatcher:
    __name__ = "_layer_norm_rows"

    def __init__(self):
        self._cache = _DamagedCache()


def test_a_damaged_cache_reads_as_a_miss_with_one_warning_and_is_flushed():
    dispatcher = _Dispatcher()
    numba_jit._recover_from_a_bad_cache(dispatcher)
    with pytest.warns(RuntimeWarning, match="_layer_norm_rows could not be read.*afresh"):
        assert dispatcher._cache.load_overload("sig", "context") is None
    assert dispatcher._cache.flushed == 1


@pytest.mark.parametrize("module", [numba_cpu, numba_activations, numba_gelu])
def test_every_compiled_kernel_reads_its_cache_through_the_guard(module):
    guarded = [name for name, value in vars(module).items()        # the cached ones
               if hasattr(value, "py_func") and type(getattr(value, "_cache", None)).__name__
               not in ("NullCache", "NoneType")]
    assert guarded, "no numba dispatchers found"
    for name in guarded:
        load = vars(module)[name]._cache.load_overload
        assert getattr(load, "__name__", "") == "load_or_recompile", name


_KERNEL_SOURCE = '''
from microgradnorm.kernels.numba_jit import _jit


@_jit
def double(x, out):
    for i in range(x.size):
        out[i] = 2 * x[i]
'''


def _cached_kernel_module(tmp_path, name):
    """A module of one cached kernel in tmp_path (its cache in tmp_path/__pycache__)."""
    import importlib.util
    path = tmp_path / f"{name}.py"
    path.write_text(_KERNEL_SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_index_naming_another_signatures_file_reads_as_a_miss(tmp_path):
    # What two processes compiling one kernel at once can leave: the index maps the float32
    # arguments to the file that holds the float64 version. Loaded as is, every float32 call
    # raised "can't unbox array from PyObject into native value".
    import numpy as np
    from numba import types
    module = _cached_kernel_module(tmp_path, "raced_kernel")
    x64 = np.arange(3.0)
    module.double(x64, np.empty_like(x64))                 # compiled and written to disk
    index = module.double._cache._cache_file
    (key, data_name), = index._load_index().items()
    float32 = types.Array(types.float32, 1, "C")
    index._save_index({((float32, float32),) + key[1:]: data_name})
    x32 = np.arange(3, dtype=np.float32)
    out = np.empty_like(x32)
    module.double(x32, out)
    assert out.tolist() == [0.0, 2.0, 4.0]
    assert module.double.stats.cache_misses, "the float32 call compiled afresh"


def test_a_matching_cache_entry_still_loads(tmp_path):
    import subprocess
    import sys
    script = ("import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import kept_kernel as k;"
              " x = np.arange(3.0); k.double(x, np.empty_like(x));"
              " print(sum(k.double.stats.cache_hits.values()))")
    (tmp_path / "kept_kernel.py").write_text(_KERNEL_SOURCE)
    runs = [subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                           text=True, check=True).stdout.strip() for _ in range(2)]
    assert runs == ["0", "1"]            # compiled by the first process, loaded by the second


def test_a_signature_given_as_a_string_is_checked_too(tmp_path):
    # compile("...") keys the cache by the string; the race can pair it with another's file
    module = _cached_kernel_module(tmp_path, "string_signature_kernel")
    module.double.compile("void(float64[::1], float64[::1])")    # written to the cache
    index = module.double._cache._cache_file
    (key, data_name), = index._load_index().items()
    index._save_index({("void(float32[::1], float32[::1])",) + key[1:]: data_name})
    fresh = _cached_kernel_module(tmp_path, "string_signature_kernel")
    fresh.double.compile("void(float32[::1], float32[::1])")
    assert fresh.double.stats.cache_misses, "another signature's code was loaded"
