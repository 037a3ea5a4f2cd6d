"""Utilities on modules and parameters: gradient clipping, save and load."""

import math
import zipfile
import zlib
from collections.abc import Mapping

import numpy as np
from numpy.lib import format as np_format

from .. import backend
from ..dtypes import is_numeric
from ..savefile import DTYPES_KEY, atomic_savez, load_npz
from ..tensor import Tensor
from .module import Module


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    r"""Scale the gradients of ``parameters`` in place so that their joint norm is at most
    ``max_norm`` (``torch.nn.utils.clip_grad_norm_``): with total norm
    :math:`n = \lVert (\lVert g_1\rVert, \lVert g_2\rVert, \dots)\rVert`, every gradient is
    multiplied by :math:`\min(1, \text{max\_norm} / (n + 10^{-6}))`.

    Returns:
        the total norm before clipping, a float.
    """
    # A list first: a generator would be used up by the norm and leave nothing to scale.
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    norm_type = float(norm_type)
    if norm_type == math.inf:
        total = max(float(abs(g).max()) for g in grads)
    else:
        total = sum(float((abs(g) ** norm_type).sum()) for g in grads) ** (1.0 / norm_type)
    scale = max_norm / (total + 1e-6)
    if scale < 1:
        for p in parameters:
            if p.grad is not None:
                p.grad = p.grad * scale
    return total


def save(module_or_state, path):
    """Write a module's ``state_dict()`` (or a state dict) to a ``.npz`` file (NumPy adds
    the suffix if ``path`` lacks it). Arrays only: no pickled objects; a value that is not a
    numeric (bool, int or float) array is refused before anything is written. The file is
    written atomically: an interrupted save leaves the previous file at ``path`` intact.
    Every dtype comes back as saved: bfloat16, which ``.npz`` lacks, is stored as its
    uint16 bits with a dtype record (``savefile.load_npz``).

    Example:
        >>> nn.save(model, "gpt.npz"); model.load_state_dict(nn.load("gpt.npz"))
    """
    arrays = _numeric_arrays(module_or_state)
    try:
        # through a temporary file and os.replace: an interrupted save keeps the previous file
        atomic_savez(path, arrays)
    except OSError as error:
        raise _path_error("save", "write", path, error) from None


def _numeric_arrays(module_or_state):
    """{name: NumPy array} from a Module or a mapping, each checked to be numeric."""
    if isinstance(module_or_state, Module):
        state = module_or_state.state_dict()
    elif isinstance(module_or_state, Mapping):
        state = dict(module_or_state)
    else:
        raise TypeError(f"nn.save: expected a Module or a state dict (a mapping of names to "
                        f"arrays), got {type(module_or_state).__name__}")
    arrays = {}
    for key, value in state.items():
        if not isinstance(key, str):
            raise TypeError(f"nn.save: state dict keys must be strings, got {key!r}")
        array = backend.to_numpy(value.data if isinstance(value, Tensor) else value)
        array = np.asarray(array)
        if not is_numeric(array.dtype):
            raise TypeError(f"nn.save: {key!r} must be a numeric (bool, int or float) array, "
                            f"got dtype {array.dtype} (state files hold numbers only: no pickles)")
        arrays[key] = array
    return arrays


NUMERIC_KINDS = "biuf"
_NPY_MAGIC = b"\x93NUMPY"


def load(path):
    """Read a state dict saved by ``save``: {name: NumPy array}, with
    ``allow_pickle=False``, each in the dtype it was saved in (bfloat16 included). Load it
    with ``model.load_state_dict(nn.load(path))``.

    The file is checked before any array is read: it must be a complete ``.npz`` archive
    of numeric arrays whose headers agree with the bytes stored (a header that claims a
    100000 x 100000 array in a small file is refused before memory is allocated). Any
    problem is one ValueError naming the file; a file that cannot be opened is an OSError
    naming it.
    """
    try:
        with open(path, "rb") as file:
            start = file.read(len(_NPY_MAGIC))
            file.seek(0)
            if start == _NPY_MAGIC:
                raise ValueError(f"nn.load: {path} is a .npy file (one array), not a .npz "
                                 "state dict; write state dicts with nn.save")
            if not zipfile.is_zipfile(file):
                raise ValueError(f"nn.load: {path} is not a complete .npz archive (it is "
                                 "truncated, corrupt or not made by nn.save)")
            _check_members(path, file)
        return load_npz(path)
    except OSError as error:
        raise _path_error("load", "read", path, error) from None
    except (zipfile.BadZipFile, EOFError, zlib.error, KeyError) as error:
        raise ValueError(f"nn.load: {path} is truncated or corrupt ({error})") from None
    except ValueError as error:
        if str(error).startswith("nn.load"):
            raise
        raise ValueError(f"nn.load: {path} is truncated or corrupt ({error})") from None


def _check_members(path, file):
    # Every member's .npy header, read with numpy.lib.format from the archive without
    # loading the array: numeric dtype, and no more data claimed than is stored.
    with zipfile.ZipFile(file) as archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                raise ValueError(f"nn.load: {path} holds {info.filename!r}, which is not an "
                                 "array; not a state dict made by nn.save")
            with archive.open(info) as member:
                version = np_format.read_magic(member)
                if version == (1, 0):
                    shape, _, dtype = np_format.read_array_header_1_0(member)
                else:
                    shape, _, dtype = np_format.read_array_header_2_0(member)
                header = member.tell()
            name = info.filename[:-4]
            if name == DTYPES_KEY and dtype.kind == "U":       # the bfloat16 record
                continue
            if dtype.kind not in NUMERIC_KINDS or dtype.hasobject:
                raise ValueError(f"nn.load: {path}: {name!r} has dtype {dtype}, not a "
                                 "numeric array (nn.save never writes one)")
            claimed = math.prod(shape) * dtype.itemsize
            stored = info.file_size - header
            if claimed > stored:
                raise ValueError(f"nn.load: {path}: {name!r} claims shape {tuple(shape)} "
                                 f"{dtype} ({claimed:,} bytes) but stores {max(stored, 0):,} "
                                 "bytes; the file is truncated or corrupt")


def _path_error(function, verb, path, error):
    """The OSError ``error`` as one line naming ``path``, of the same class."""
    reason = error.strerror or str(error)
    return type(error)(f"nn.{function}: cannot {verb} {path}: {reason}")
