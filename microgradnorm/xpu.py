"""``mg.xpu``, ``torch.xpu``: Intel's GPU backend, which this package has none of. Its
questions are answered as torch's build without XPU answers them: ``is_available()`` False,
``device_count()`` 0, the seeds taken and dropped, the memory counts 0, ``empty_cache()``
nothing, and what needs the device raises torch's AssertionError (``Event()`` and
``Stream()``: its RuntimeError)."""

__all__ = ["Event", "Stream", "current_device", "current_stream", "device_count",
           "empty_cache", "get_device_capability", "get_device_name", "get_device_properties",
           "get_rng_state", "initial_seed", "is_available", "is_bf16_supported",
           "is_initialized", "manual_seed", "manual_seed_all", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "seed", "seed_all", "set_device", "set_rng_state", "synchronize"]


def is_available():
    """False: no XPU backend here (``torch.xpu.is_available``)."""
    return False


def device_count():
    """0 (``torch.xpu.device_count``)."""
    return 0


def is_initialized():
    """False (``torch.xpu.is_initialized``)."""
    return False


def is_bf16_supported(including_emulation=True):
    """False: no XPU to compute bfloat16 on (``torch.xpu.is_bf16_supported``)."""
    return False


def manual_seed(seed):
    """Seed the XPU generator (``torch.xpu.manual_seed``): checked (``int(seed)``) and
    dropped."""
    int(seed)


def manual_seed_all(seed):
    """``manual_seed`` for every XPU (``torch.xpu.manual_seed_all``)."""
    int(seed)


def seed():
    """Nothing to seed (``torch.xpu.seed``)."""


def seed_all():
    """Nothing to seed (``torch.xpu.seed_all``)."""


def set_rng_state(new_state, device="xpu"):
    """Taken and dropped, as torch's build without XPU (``torch.xpu.set_rng_state``)."""


def empty_cache():
    """Nothing to free (``torch.xpu.empty_cache``)."""


def memory_stats(device=None):
    """Empty (``torch.xpu.memory_stats``)."""
    return {}


def _zero(name):
    def count(device=None):
        return 0
    count.__name__ = name
    count.__doc__ = f"0: no XPU memory (``torch.xpu.{name}``)."
    return count


memory_allocated, memory_reserved, max_memory_allocated, max_memory_reserved = (
    _zero(name) for name in ("memory_allocated", "memory_reserved", "max_memory_allocated",
                             "max_memory_reserved"))


def _missing(name):
    def refuse(*args, **kwargs):
        raise AssertionError(f"mg.xpu.{name}(): no XPU backend here (torch: Torch not "
                             "compiled with XPU enabled)")
    refuse.__name__ = name
    refuse.__doc__ = (f"``torch.xpu.{name}``: needs an XPU, so AssertionError here, as "
                      "torch's build without one.")
    return refuse


(synchronize, current_device, get_device_name, get_device_properties, get_device_capability,
 current_stream, get_rng_state, initial_seed, set_device) = (
    _missing(name) for name in ("synchronize", "current_device", "get_device_name",
                                "get_device_properties", "get_device_capability",
                                "current_stream", "get_rng_state", "initial_seed",
                                "set_device"))


class Event:
    """An XPU event (``torch.xpu.Event``): constructing one raises torch's RuntimeError."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event: no XPU backend here")


class Stream:
    """An XPU stream (``torch.xpu.Stream``): constructing one raises torch's RuntimeError."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Stream: no XPU backend "
                           "here")
