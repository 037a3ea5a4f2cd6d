"""The backward engine's settings that PyTorch code sets and reads: multithreaded backward
(``set_multithreading_enabled``, ``is_multithreading_enabled``) and view replay
(``is_view_replay_enabled``). This engine runs every backward on the calling thread and
replays no views, so the settings are recorded, per thread as torch's, and change nothing.
"""

import functools
import threading

__all__ = ["is_multithreading_enabled", "is_view_replay_enabled", "set_multithreading_enabled"]

_local = threading.local()          # .multithreading: this thread's setting, True unset


def is_multithreading_enabled():
    """Whether this thread's backward may run on worker threads
    (``torch.autograd.is_multithreading_enabled``): True unless ``set_multithreading_enabled
    (False)`` is in force on this thread."""
    return getattr(_local, "multithreading", True)


def is_view_replay_enabled():
    """Whether views are replayed in place of ``as_strided`` in backward
    (``torch.autograd.is_view_replay_enabled``): False, as torch's default."""
    return False


class set_multithreading_enabled:
    """Enable or disable multithreaded backward on this thread
    (``torch.autograd.set_multithreading_enabled``), a function or a context manager, as
    torch's: the setting takes effect when the object is made, and leaving the block (or
    returning from a decorated function) restores the one found then. Recorded only: this
    engine runs backward on the calling thread.

    Args:
        mode (bool): True (the default state) or False.

    Example:
        >>> with mg.autograd.set_multithreading_enabled(False):
        ...     mg.autograd.is_multithreading_enabled()
        False
    """

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_multithreading_enabled(): argument 'enabled' (position 1) "
                            f"must be bool, not {type(mode).__name__}")
        self.prev = is_multithreading_enabled()
        _local.multithreading = mode
        self.mode = mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _local.multithreading = self.prev
        return False

    def clone(self):
        """A new context manager of the same mode (set now, as when made)."""
        return self.__class__(self.mode)

    def __call__(self, fn):
        # each call runs in a fresh copy, as torch's _DecoratorContextManager
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper
