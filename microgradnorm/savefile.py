"""Write ``.npz`` files so that an interrupted save never destroys the previous file.

``np.savez(path, ...)`` truncates ``path`` and then writes into it: a Ctrl-C, a full disk or
a killed process in between leaves neither the old file nor the new one. Here the arrays go
to a temporary file in the same directory, which is flushed to disk and then renamed over
``path`` with ``os.replace`` (atomic on POSIX and Windows when both are on one file
system). A reader sees the old file or the complete new one, never a partial one.
"""

import contextlib
import os
import tempfile

import numpy as np

__all__ = ["atomic_savez", "npz_path"]


def npz_path(path):
    """``path`` as a string with the ``.npz`` suffix that ``np.savez`` would add."""
    path = os.fspath(path)
    return path if path.endswith(".npz") else path + ".npz"


def atomic_savez(path, arrays):
    """Save ``arrays`` ({name: array}) as an uncompressed ``.npz`` at ``path`` atomically.

    The temporary file is named ``.<name>.<random>.tmp`` next to the target; it is removed
    if the save fails or is interrupted by an exception (a SIGKILL leaves it behind, and
    the previous file intact).

    Returns:
        the path written (with ``.npz`` added when ``path`` lacks it).

    Example:
        >>> atomic_savez("ckpt.npz", {"w": np.ones(3)})
        'ckpt.npz'
    """
    final = npz_path(path)
    directory = os.path.dirname(os.path.abspath(final))
    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(final)}.", suffix=".tmp",
                                     dir=directory)
    try:
        with os.fdopen(fd, "wb") as file:
            np.savez(file, **arrays)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o666 & ~_umask())     # mkstemp's 0600 -> what open() would give
        os.replace(temporary, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(directory)
    return final


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_directory(directory):
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
