"""A numba cache file that cannot be read is a cache miss with one warning (the kernel is
compiled afresh), not an error on every fused call."""

import pytest

numba_jit = pytest.importorskip("microgradnorm.kernels.numba_jit")
from microgradnorm.kernels import numba_activations, numba_cpu  # noqa: E402  (after the skip)


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


@pytest.mark.parametrize("module", [numba_cpu, numba_activations])
def test_every_compiled_kernel_reads_its_cache_through_the_guard(module):
    guarded = [name for name, value in vars(module).items()        # the cached ones
               if hasattr(value, "py_func") and type(getattr(value, "_cache", None)).__name__
               not in ("NullCache", "NoneType")]
    assert guarded, "no numba dispatchers found"
    for name in guarded:
        load = vars(module)[name]._cache.load_overload
        assert getattr(load, "__name__", "") == "load_or_recompile", name
