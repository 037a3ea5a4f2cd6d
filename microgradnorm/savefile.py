"""``.npz`` files written atomically (temporary file + ``os.replace``) and read back with
every header checked first; bfloat16 stored as uint16 bits named in ``__dtypes__``
(docs/training.md, "Saves that survive being killed")."""

import contextlib
import errno
import json
import math
import os
import shutil
import stat
import tempfile
import zipfile
import zlib

import numpy as np
from numpy.lib import format as np_format

from . import dtypes

__all__ = ["DTYPES_KEY", "as_path", "atomic_savez", "available_memory", "load_npz", "npz_path",
           "path_error", "read_npz"]

DTYPES_KEY = "__dtypes__"
NUMERIC_KINDS = "biuf"
_NPY_MAGIC = b"\x93NUMPY"


def npz_path(path, where="save"):
    """``path`` as a string with the ``.npz`` suffix that ``np.savez`` would add."""
    path = as_path(path, where)
    return path if path.endswith(".npz") else path + ".npz"


def as_path(path, where):
    """``path`` (str, bytes or os.PathLike) as a str; anything else, an int file descriptor
    included, is a TypeError naming ``where``."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"{where}: the path must be a str or os.PathLike, got "
                        f"{type(path).__name__}")
    return os.fsdecode(path)


def check_writable(path):
    """Raise a ValueError naming ``path`` unless a ``.npz`` can be written there."""
    final = npz_path(path)
    directory = os.path.dirname(os.path.abspath(final))
    if os.path.isdir(final):
        raise ValueError(f"{final}: is a directory, not a file to save to")
    if not os.path.isdir(directory):
        raise ValueError(f"{final}: the folder {directory} does not exist or is not a folder")
    if not os.access(directory, os.W_OK):
        raise ValueError(f"{final}: the folder {directory} is not writable")
    if os.path.exists(final) and not os.access(final, os.W_OK):
        raise ValueError(f"{final}: the file is read-only")
    return final


def atomic_savez(path, arrays, where=None):
    """Save ``arrays`` ({name: array}) as an uncompressed ``.npz`` at ``path`` atomically;
    returns the path written. Any name is an array's (``file``, ``allow_pickle`` too).

    As ``np.save`` and ``torch.save``, it writes through what is on disk: a symbolic link's
    target is replaced (atomically), a file with other hard links is rewritten in place so
    that every link sees it, and an existing file keeps its permission bits. An OSError
    keeps its class and errno and names ``path`` (``where``, the caller, in its note)."""
    final = npz_path(path, where or "atomic_savez")
    arrays = encode_arrays(arrays)
    target = os.path.realpath(final) if os.path.islink(final) else final
    directory = os.path.dirname(os.path.abspath(target))
    try:
        existing = os.stat(target)
    except OSError:
        existing = None
    if existing is not None and not os.access(target, os.W_OK):   # as open(target, "wb")
        raise path_error(PermissionError(errno.EACCES, os.strerror(errno.EACCES)), final,
                         where)
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.",
                                         suffix=".tmp", dir=directory)
    except OSError as error:
        raise path_error(error, final, where) from None
    try:
        with os.fdopen(fd, "wb") as file:
            _write_npz(file, arrays)
            file.flush()
            os.fsync(file.fileno())
        if existing is not None and stat.S_ISREG(existing.st_mode) and existing.st_nlink > 1:
            shutil.copyfile(temporary, target)     # in place: every hard link sees it
            os.unlink(temporary)
        else:
            os.chmod(temporary, _mode_of(existing))
            os.replace(temporary, target)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise path_error(error, final, where) from None
        raise
    _fsync_directory(directory)
    return final


def _write_npz(file, arrays):
    # np.savez's layout (one ``<name>.npy`` member per array, zip64), without its keyword
    # arguments: ``np.savez(f, file=a)`` fails and ``allow_pickle=a`` is taken as a flag.
    # On an exception nothing is finalised, so a Ctrl-C stays the KeyboardInterrupt (zipfile
    # would raise its own ValueError closing a half-written member).
    archive = zipfile.ZipFile(file, "w", allowZip64=True)
    try:
        for name, value in arrays.items():
            member = archive.open(name + ".npy", "w", force_zip64=True)
            np_format.write_array(member, np.asanyarray(value), allow_pickle=False)
            member.close()
        archive.close()
    except BaseException:
        archive.fp = None                          # the caller closes and removes the file
        raise


def _mode_of(existing):
    # the permission bits an existing file has, or what open() would give a new one
    if existing is not None:
        return stat.S_IMODE(existing.st_mode)
    umask = os.umask(0o022)                        # read it (the only way), and put it back
    os.umask(umask)
    return 0o666 & ~umask


def path_error(error, path, where):
    """``error`` (an OSError) of the same class and errno naming ``path``, the file asked
    for (not a temporary one); ``where``: the caller, in its note."""
    if error.errno is None:
        return error
    named = type(error)(error.errno, error.strerror, os.fspath(path))
    if where is not None:
        named.add_note(f"in {where}")
    return named


def encode_arrays(arrays):
    # {name: array} for ``np.savez``: bfloat16 as its uint16 bits, named in ``__dtypes__``
    if DTYPES_KEY in arrays:
        raise ValueError(f"atomic_savez: {DTYPES_KEY!r} is a reserved name")
    encoded, recorded = {}, {}
    for name, value in arrays.items():
        array = np.asarray(value)
        if dtypes.bfloat16 is not None and array.dtype == dtypes.bfloat16:
            encoded[name] = array.view(np.uint16)
            recorded[name] = "bfloat16"
        else:
            encoded[name] = value
    if recorded:
        encoded[DTYPES_KEY] = np.array(json.dumps(recorded))
    return encoded


def load_npz(path):
    """{name: NumPy array} of an ``.npz`` by ``atomic_savez``, bfloat16 restored; no pickles."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {key: archive[key] for key in archive.files}
    recorded = json.loads(str(arrays.pop(DTYPES_KEY))) if DTYPES_KEY in arrays else {}
    if not isinstance(recorded, dict):
        raise ValueError(f"load_npz: {path}: the {DTYPES_KEY} record is not a mapping")
    for name, dtype in recorded.items():
        if dtype != "bfloat16" or arrays.get(name, np.empty(0)).dtype != np.uint16:
            raise ValueError(f"load_npz: {path}: the {DTYPES_KEY} record names {name!r} as "
                             f"{dtype!r}; only uint16 arrays recorded as 'bfloat16' are known")
        arrays[name] = arrays[name].view(dtypes.as_dtype(dtype))
    return arrays


def read_npz(path, where, text=()):
    """``load_npz`` for a file from outside, every member's header checked first (numeric,
    or a string member named in ``text``; no more bytes claimed than stored).

    Raises:
        ValueError: a truncated, corrupt or foreign file; OSError: one line naming ``path``.
    """
    path = as_path(path, where)
    try:
        _check_regular(where, path)
        with open(path, "rb") as file:
            start = file.read(len(_NPY_MAGIC))
            file.seek(0)
            if start == _NPY_MAGIC:
                raise ValueError(f"{where}: {path} is a .npy file (one array), not a .npz "
                                 "archive")
            if not zipfile.is_zipfile(file):
                raise ValueError(f"{where}: {path} is not a complete .npz archive (it is "
                                 "truncated, corrupt or made by something else)")
            _check_members(where, path, file, text)
        return load_npz(path)
    except OSError as error:
        raise path_error(error, path, where) from None
    except (zipfile.BadZipFile, EOFError, zlib.error, KeyError) as error:
        raise ValueError(f"{where}: {path} is truncated or corrupt ({error})") from None
    except ValueError as error:
        if str(error).startswith(where):
            raise
        raise ValueError(f"{where}: {path} is truncated or corrupt ({error})") from None


def _check_regular(where, path):
    # a directory, FIFO or device would be read until memory runs out (/dev/zero) or block
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
    if not stat.S_ISREG(mode):
        raise ValueError(f"{where}: {path} is not a regular file (a FIFO, socket or "
                         "device: it might never end)")


def available_memory():
    """Bytes of memory this process can use: MemAvailable from /proc/meminfo, else the
    machine's physical memory (None if neither is known)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _check_members(where, path, file, text):
    # each member's .npy header, read without loading the array; what the members unpack
    # to (declared in the zip directory, which zipfile holds a member to) must fit in memory
    with zipfile.ZipFile(file) as archive:
        infos = archive.infolist()
        available = available_memory()
        largest = max(infos, key=lambda info: info.file_size, default=None)
        total = sum(info.file_size for info in infos)
        if available is not None and largest is not None and total > available:
            raise ValueError(f"{where}: {path}: its members unpack to {total:,} bytes (the "
                             f"largest, {largest.filename!r}, {largest.file_size:,} bytes from "
                             f"{largest.compress_size:,} stored), more than the {available:,} "
                             "bytes of memory available")
        names = [info.filename for info in infos]
        if len(set(names)) != len(names):
            raise ValueError(f"{where}: {path} holds a member name twice")
        for info in infos:
            if not info.filename.endswith(".npy"):
                raise ValueError(f"{where}: {path} holds {info.filename!r}, which is not an "
                                 "array")
            with archive.open(info) as member:
                version = np_format.read_magic(member)
                if version == (1, 0):
                    shape, _, dtype = np_format.read_array_header_1_0(member)
                else:
                    shape, _, dtype = np_format.read_array_header_2_0(member)
                header = member.tell()
            name = info.filename[:-4]
            is_text = (name == DTYPES_KEY or name in text) and dtype.kind == "U"
            if not is_text and (dtype.kind not in NUMERIC_KINDS or dtype.hasobject):
                raise ValueError(f"{where}: {path}: {name!r} has dtype {dtype}, not a "
                                 "numeric array")
            claimed = math.prod(shape) * dtype.itemsize
            stored = info.file_size - header
            if claimed > stored:
                raise ValueError(f"{where}: {path}: {name!r} claims shape {tuple(shape)} "
                                 f"{dtype} ({claimed:,} bytes) but stores {max(stored, 0):,} "
                                 "bytes; the file is truncated or corrupt")


def _fsync_directory(directory):
    # make the rename itself durable (POSIX); a no-op where folders cannot be opened
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
