"""``.npz`` archives written atomically (temporary file + ``os.replace``) and read back with
every member's header checked first (docs/training.md, "Saves that survive being killed").
``nn.serialization`` builds ``mg.save``'s format on these; files from before it kept bfloat16
as uint16 bits named in ``__dtypes__``, which ``decode_dtypes`` restores."""

import contextlib
import errno
import io
import json
import math
import os
import re
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib

import numpy as np
from numpy.lib import format as np_format

from . import dtypes

__all__ = ["DTYPES_KEY", "DamagedFileError", "NpzReader", "as_path", "atomic_write",
           "available_memory", "check_writable", "decode_dtypes", "path_error", "write_arrays"]

DTYPES_KEY = "__dtypes__"
NUMERIC_KINDS = "biuf"
_NPY_MAGIC = b"\x93NUMPY"


class DamagedFileError(ValueError, RuntimeError):
    """A file truncated or corrupt: a ValueError naming it, and a RuntimeError as well, the
    class ``torch.load`` raises for a damaged archive, so code catching either catches it."""


def as_path(path, where):
    """``path`` (str, bytes or os.PathLike) as a str; anything else, an int file descriptor
    included, is a TypeError naming ``where``."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"{where}: the path must be a str or os.PathLike, got "
                        f"{type(path).__name__}")
    return os.fsdecode(path)


def check_writable(path):
    """Raise a ValueError naming ``path`` unless a file can be written there (the path as
    given: nothing is added to it, as ``mg.save``); returns it as a str.

    Args:
        path: str, bytes or os.PathLike.

    Example:
        >>> check_writable("run.npz")
        'run.npz'
    """
    final = as_path(path, "check_writable")
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


def atomic_write(path, write, where):
    """Call ``write(file)`` on a new temporary file next to ``path``, then move it over
    ``path`` atomically; returns ``path`` (as given: no suffix is added) as a str.

    As ``np.save`` and ``torch.save``, it writes through what is on disk: a symbolic link's
    target is replaced (atomically), a file with other hard links is rewritten in place so
    that every link sees it, and an existing file keeps its permission bits. An OSError
    keeps its class and errno and names ``path`` (``where``, the caller, in its note); any
    exception (Ctrl-C too) removes the temporary file and leaves ``path`` as it was.

    Args:
        path: str, bytes or os.PathLike; where: the caller, for the errors.
        write: a function of a binary file open for writing.

    Example:
        >>> atomic_write("m.npz", lambda file: write_arrays(file, {"w": w}), "mine")
        'm.npz'
    """
    final = as_path(path, where)
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
            write(file)
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


def write_arrays(file, arrays):
    """Write ``arrays`` ({name: NumPy array}, in order) to ``file`` (binary, open for
    writing) as an uncompressed ``.npz``: np.savez's layout, one ``<name>.npy`` per array.

    Args:
        file: a binary file object; arrays: {str: np.ndarray}, numeric (no pickles).

    Example:
        >>> write_arrays(io.BytesIO(), {"w": np.ones(2)})
    """
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


def decode_dtypes(arrays, where, label):
    """``arrays`` ({name: array} of a file from before ``mg.save``'s format) with its
    ``__dtypes__`` record applied and removed: the uint16 bits it names become bfloat16.

    Args:
        arrays: {name: np.ndarray}, changed in place; where, label: the caller and the file,
            first in the errors.

    Example:
        >>> decode_dtypes({"w": bits, "__dtypes__": np.array('{"w": "bfloat16"}')}, "me", "f")
    """
    if DTYPES_KEY not in arrays:
        return arrays
    recorded = parse_json(str(arrays.pop(DTYPES_KEY)), where, label, f"{DTYPES_KEY} record")
    if not isinstance(recorded, dict):
        raise ValueError(f"{where}: {label}: the {DTYPES_KEY} record is not a mapping")
    for name, dtype in recorded.items():
        if dtype != "bfloat16" or arrays.get(name, np.empty(0)).dtype != np.uint16:
            raise ValueError(f"{where}: {label}: the {DTYPES_KEY} record names {name!r} as "
                             f"{dtype!r}; only uint16 arrays recorded as 'bfloat16' are known")
        if dtypes.bfloat16 is None:
            raise ValueError(f"{where}: {label}: {name!r} is bfloat16, which needs ml_dtypes "
                             "(pip install ml_dtypes)")
        arrays[name] = arrays[name].view(dtypes.bfloat16)
    return arrays


MAX_JSON_BYTES = 64 << 20     # a structure record larger than this is refused, saved or read
MAX_JSON_DEPTH = 400          # nesting of JSON arrays and objects, far below the recursion limit
# a JSON string, or an unterminated one running to the end: every opening quote matches,
# so the scan never backtracks (linear in the size, whatever the bytes)
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)


def parse_json(data, where, label, what, max_depth=MAX_JSON_DEPTH):
    """``json.loads`` of ``data`` (str or UTF-8 bytes) from a file, bounded: no more than
    ``MAX_JSON_BYTES``, nesting no deeper than ``max_depth`` (checked by a linear scan first,
    so a hostile record is a ValueError, never a RecursionError).

    Args:
        data: str or bytes; where, label: the caller and the file; what: the record's name.

    Example:
        >>> parse_json(b'{"a": [1, 2]}', "mg.load", "m.pt", "structure")
        {'a': [1, 2]}
    """
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > MAX_JSON_BYTES:
        raise ValueError(f"{where}: {label}: its {what} is {len(data):,} bytes of JSON, more "
                         f"than the {MAX_JSON_BYTES:,} read")
    depth = _json_depth(data)
    if depth > max_depth:
        raise ValueError(f"{where}: {label}: its {what} nests {depth:,} deep, more than the "
                         f"{max_depth} read")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:       # ValueError: UnicodeDecodeError too
        raise ValueError(f"{where}: {label}: its {what} is not valid JSON ({error})") from None


def _json_depth(data):
    # the deepest nesting of [ and { outside strings, counted a chunk at a time (bounded
    # memory for any size)
    codes = np.frombuffer(_JSON_STRING.sub(b'""', data), np.uint8)
    depth = peak = 0
    for start in range(0, codes.size, 1 << 20):
        chunk = codes[start:start + (1 << 20)]
        steps = ((chunk == ord("[")).astype(np.int32) + (chunk == ord("{"))
                 - (chunk == ord("]")) - (chunk == ord("}")))
        running = np.cumsum(steps) + depth
        peak, depth = max(peak, int(running.max())), int(running[-1])
    return peak


class NpzReader:
    """An ``.npz`` (a path or a binary file object) opened for reading, with every member's
    header checked before any array is read: each member a ``.npy`` of a numeric dtype (or
    a string member named in ``text``), no name twice, no more bytes claimed than stored,
    and all of them, as the zip directory declares them, within the memory available.
    ``headers`` maps each name (without ``.npy``) to its (shape, dtype); ``read(name)``
    gives its array. No pickles, ever. A truncated, corrupt or foreign file is a ValueError
    that starts with ``where`` and names the file; an OSError keeps its class and errno and
    names the path; a FIFO or device is refused before it is opened.

    Args:
        f: str, bytes, os.PathLike, or a binary file object open for reading.
        where: the caller, first in every error; text: names of string members allowed.

    Example:
        >>> with NpzReader("m.npz", "mine") as reader:
        ...     arrays = {name: reader.read(name) for name in reader.headers}
    """

    def __init__(self, f, where, text=()):
        self.where, self.path, self._own = where, None, None
        if isinstance(f, (str, bytes, os.PathLike)):
            self.path = self.label = os.fsdecode(f)
        elif not callable(getattr(f, "read", None)):
            raise TypeError(f"{where}: f must be a path (str, bytes or os.PathLike) or a binary "
                            f"file object open for reading, got {type(f).__name__}")
        elif isinstance(f, io.TextIOBase):
            raise TypeError(f"{where}: the file is open in text mode; open it with 'rb'")
        else:
            name = getattr(f, "name", None)
            self.label = name if isinstance(name, str) else f"the {type(f).__name__}"
        with self.errors():
            if self.path is not None:
                _check_regular(where, self.path)
                f = self._own = open(self.path, "rb")
            elif not (callable(getattr(f, "seekable", None)) and f.seekable()):
                f = io.BytesIO(f.read())         # zipfile seeks to the directory at the end
            try:
                self._archive = self._open(f, text)
            except BaseException:
                self.close()
                raise

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def close(self):
        """Close the archive (and the file, when it was opened from a path)."""
        with contextlib.suppress(AttributeError):
            self._archive.close()
        if self._own is not None:
            self._own.close()

    @contextlib.contextmanager
    def errors(self):
        """Turn what reading a damaged file raises into one ValueError naming it."""
        try:
            yield
        except OSError as error:
            if error.errno == errno.EINVAL:      # a seek before the start: a corrupt offset
                raise DamagedFileError(f"{self.where}: {self.label} is truncated or corrupt (an "
                                 "offset points outside the file)") from None
            if self.path is None or isinstance(error, io.UnsupportedOperation):
                raise
            raise path_error(error, self.path, self.where) from None
        except (zipfile.BadZipFile, EOFError, zlib.error, KeyError, struct.error,
                OverflowError) as error:
            raise DamagedFileError(f"{self.where}: {self.label} is truncated or corrupt "
                             f"({error})") from None
        except DamagedFileError:
            raise
        except (NotImplementedError, RuntimeError) as error:   # encrypted, unknown method
            raise ValueError(f"{self.where}: {self.label} can't be read ({error})") from None
        except ValueError as error:
            if str(error).startswith(self.where):
                raise
            raise DamagedFileError(f"{self.where}: {self.label} is truncated or corrupt "
                             f"({error})") from None

    def _open(self, file, text):
        where, label = self.where, self.label
        start = file.tell()
        head = file.read(len(_NPY_MAGIC))
        file.seek(start)
        if head == _NPY_MAGIC:
            raise ValueError(f"{where}: {label} is a .npy file (one array), not a .npz archive")
        if not zipfile.is_zipfile(file):
            raise DamagedFileError(f"{where}: {label} is not a complete .npz archive (it is "
                             "truncated, corrupt or made by something else)")
        file.seek(start)
        archive = zipfile.ZipFile(file)
        try:
            self._infos, self.headers = _check_members(where, label, archive, text)
        except BaseException:
            archive.close()
            raise
        return archive

    def read(self, name):
        """The array of member ``name`` (without ``.npy``) as NumPy reads it, no pickles."""
        with self.errors():
            with self._archive.open(self._infos[name]) as member:
                array = np_format.read_array(member, allow_pickle=False)
                member.read()                    # to the end: zipfile checks the CRC there
        return array


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


def _check_members(where, path, archive, text):
    # each member's .npy header, read without loading the array; what the members unpack
    # to (declared in the zip directory, which zipfile holds a member to) must fit in memory.
    # Returns ({name: ZipInfo}, {name: (shape, dtype)}), names without ".npy".
    checked, headers = {}, {}
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
        checked[name], headers[name] = info, (tuple(shape), dtype)
    return checked, headers


def _fsync_directory(directory):
    # make the rename itself durable (POSIX); a no-op where folders cannot be opened
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
