"""``mg.random``, ``torch.random``: the default generator's seed and state, and
``fork_rng``, which restores its state when a block ends. There is one generator here,
PyTorch's CPU Mersenne Twister (``generator.py``); tensors on a GPU draw from it too, so
forking it forks every device's stream."""

import contextlib

from . import generator as streams
from .factories import get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .generator import Generator, default_generator

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """A block whose draws leave the default generator as they found it
    (``torch.random.fork_rng``): its state is saved on entry and restored on exit, an
    exception included. ``devices`` and ``device_type`` are taken: the one generator here
    serves every device. ``enabled=False`` forks nothing.

    Example:
        >>> with mg.random.fork_rng():
        ...     noise = mg.randn(3)          # the stream after the block is the one before it
    """
    if not enabled or device_type == "meta":
        yield
        return
    state = streams.default_generator.state_array()
    try:
        yield
    finally:
        streams.default_generator.set_state(state)
