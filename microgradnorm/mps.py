"""``mg.mps``, ``torch.mps``: Apple's GPU backend, which this package has none of. Its
questions are answered as torch's build without MPS answers them: ``is_available()`` False,
``device_count()`` 0, ``manual_seed`` taken and dropped, and what needs the device raises
torch's RuntimeError (``mg.backends.mps`` holds the build flags)."""

__all__ = ["Event", "current_allocated_memory", "device_count", "driver_allocated_memory",
           "empty_cache", "get_rng_state", "is_available", "manual_seed",
           "recommended_max_memory", "seed", "set_per_process_memory_fraction",
           "set_rng_state", "synchronize"]


def is_available():
    """False: no MPS backend here (``torch.mps.is_available``)."""
    return False


def device_count():
    """0 (``torch.mps.device_count``)."""
    return 0


def manual_seed(seed):
    """Seed the MPS generator (``torch.mps.manual_seed``): checked (``int(seed)``) and
    dropped, as torch's build without MPS."""
    int(seed)


def _missing(name, call):
    def refuse(*args, **kwargs):
        raise RuntimeError(f"mg.mps.{name}(): Cannot execute {call}() without MPS backend.")
    refuse.__name__ = name
    refuse.__doc__ = (f"``torch.mps.{name}``: needs the MPS backend, so RuntimeError here, "
                      "as torch's build without it.")
    return refuse


synchronize = _missing("synchronize", "deviceSynchronize")
empty_cache = _missing("empty_cache", "emptyCache")
current_allocated_memory = _missing("current_allocated_memory", "getCurrentAllocatedMemory")
driver_allocated_memory = _missing("driver_allocated_memory", "getDriverAllocatedMemory")
recommended_max_memory = _missing("recommended_max_memory", "getRecommendedMaxMemory")
set_per_process_memory_fraction = _missing("set_per_process_memory_fraction",
                                           "setMemoryFraction")
get_rng_state = _missing("get_rng_state", "getDefaultGenerator")
set_rng_state = _missing("set_rng_state", "getDefaultGenerator")
seed = _missing("seed", "getDefaultGenerator")


class Event:
    """An MPS event (``torch.mps.Event``): constructing one raises torch's RuntimeError,
    as there is no MPS backend."""

    def __init__(self, enable_timing=False):
        raise RuntimeError("mg.mps.Event(): Cannot execute acquireEvent() without MPS "
                           "backend.")
