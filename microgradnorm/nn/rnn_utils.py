"""Variable-length sequences for the recurrent layers, ``torch.nn.utils.rnn``'s (reached as
``nn.utils.rnn``): ``pad_sequence`` and ``unpad_sequence``, ``PackedSequence`` with
``pack_padded_sequence``, ``pad_packed_sequence``, ``pack_sequence``, ``unpack_sequence``
and ``invert_permutation``.

A packed batch keeps only the real steps, time-major: ``data`` holds step 0 of every
sequence, then step 1 of those at least 2 long, ...; ``batch_sizes[t]`` counts the sequences
still running at step t. The sequences are sorted longest first (``sorted_indices`` is that
order; ``unsorted_indices`` its inverse). Every function here is a few graph nodes (one
``index_select``, a ``cat``): gradients reach the padded or packed input.
"""

import numbers
from collections import namedtuple

import numpy as np

from .. import backend, ops
from ..dtypes import check_bool
from ..ops.base import constant, fitted
from ..tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices",
                                                    "unsorted_indices"])):
    """A batch of sequences of different lengths, packed (torch's
    ``nn.utils.rnn.PackedSequence``): a named tuple ``(data, batch_sizes, sorted_indices,
    unsorted_indices)`` that ``nn.RNN``, ``nn.LSTM`` and ``nn.GRU`` take in place of a
    padded input and give back as their output. Build it with ``pack_padded_sequence`` or
    ``pack_sequence``; ``unsorted_indices`` defaults to the inverse of ``sorted_indices``.

    Shape:
        data (sum(lengths), *), batch_sizes (max(lengths),) int64, the indices (batch,)
        int64 or None.

    Example:
        >>> packed = nn.utils.rnn.pack_sequence([mg.ones(3, 2), mg.ones(1, 2)])
        >>> packed.batch_sizes                        # tensor([2, 1, 1])
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:                     # torch's PackedSequence((data, sizes))
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        if isinstance(batch_sizes, Tensor) and batch_sizes.device != "cpu":
            raise ValueError("batch_sizes should always be on CPU; build a PackedSequence "
                             "with pack_padded_sequence or pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The same sequences with ``data.to(...)`` (dtype and/or device), the indices moved
        with it; ``self`` when nothing changes. ``batch_sizes`` stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        def moved(index):
            return None if index is None else index.to(data.device)
        return type(self)(data, self.batch_sizes, moved(self.sorted_indices),
                          moved(self.unsorted_indices))

    def cpu(self):
        """``to("cpu")``."""
        return self.to("cpu")

    def cuda(self):
        """``to("cuda")`` (needs CuPy and a GPU)."""
        return self.to("cuda")

    def double(self):
        """``data`` as float64."""
        return self.to(dtype=np.dtype("float64"))

    def float(self):
        """``data`` as float32."""
        return self.to(dtype=np.dtype("float32"))

    def half(self):
        """``data`` as float16."""
        return self.to(dtype=np.dtype("float16"))

    def long(self):
        """``data`` as int64."""
        return self.to(dtype=np.dtype("int64"))

    def int(self):
        """``data`` as int32."""
        return self.to(dtype=np.dtype("int32"))

    def short(self):
        """``data`` as int16."""
        return self.to(dtype=np.dtype("int16"))

    def char(self):
        """``data`` as int8."""
        return self.to(dtype=np.dtype("int8"))

    def byte(self):
        """``data`` as uint8."""
        return self.to(dtype=np.dtype("uint8"))

    @property
    def is_cuda(self):
        """Whether ``data`` is on a CUDA device."""
        return self.data.device != "cpu"

    def is_pinned(self):
        """Whether ``data`` sits in pinned memory (``Tensor.is_pinned``)."""
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The inverse permutation: ``out[permutation[i]] = i``; None for None.

    Example:
        >>> nn.utils.rnn.invert_permutation(mg.tensor([2, 0, 1]))      # tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    order = _ints(permutation)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size, dtype=order.dtype)
    return _int_tensor(inverse, _device(permutation))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (torch's ``pack_padded_sequence``): keep steps ``0 .. length - 1``
    of each sequence, time-major. With ``enforce_sorted`` the lengths must decrease (torch's
    ONNX-exportable order); otherwise the batch is sorted longest first here (ties keep
    their order) and ``sorted_indices`` records it.

    Args:
        input: (T, B, *), or (B, T, *) with ``batch_first``.
        lengths: B lengths, each in 1 .. T (a list or a 1-D integer tensor).

    Shape:
        returns a PackedSequence with data (sum(lengths), *).

    Example:
        >>> packed = pack_padded_sequence(x, [3, 1])          # x (3, 2, 5): data (4, 5)
    """
    check_bool("pack_padded_sequence()", "batch_first", batch_first)
    lengths = _lengths(lengths)
    if input.ndim < 2:
        raise IndexError(f"pack_padded_sequence: input must have at least 2 dims (time and "
                         f"batch), got shape {input.shape}")
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lengths, kind="stable")           # longest first, ties in order
        lengths = lengths[order]
        sorted_indices = _int_tensor(order, input.device)
        input = ops.index_select(input, 0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)                         # (T, B, *)
    steps, batch = input.shape[:2]
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lengths.size != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lengths.size} (batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(lengths[1:] > lengths[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if lengths[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a length of {int(lengths[0])} is longer "
                           f"than the input's {steps} steps")
    batch_sizes = (lengths[None, :] > np.arange(lengths[0])[:, None]).sum(axis=1)
    # row t·B + b of the (T·B, *) input, for each step t and each sequence b still running
    rows = np.concatenate([t * batch + np.arange(size) for t, size in enumerate(batch_sizes)])
    flat = input.reshape((steps * batch,) + input.shape[2:])
    data = ops.index_select(flat, 0, _int_tensor(rows, input.device))
    return PackedSequence(data, _int_tensor(batch_sizes, "cpu"), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence`` (torch's ``pad_packed_sequence``): the padded batch in
    the original order, and the lengths.

    Args:
        sequence: a PackedSequence. padding_value: the value of the steps past a length.
        total_length: pad to this many steps (at least the longest length); None: the
            longest length.

    Shape:
        returns (T, B, *) (``batch_first``: (B, T, *)) and lengths (B,) int64.

    Example:
        >>> padded, lengths = pad_packed_sequence(packed, batch_first=True)
    """
    check_bool("pad_packed_sequence()", "batch_first", batch_first)
    data, batch_sizes = sequence.data, _ints(sequence.batch_sizes)
    steps = batch_sizes.size
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    batch = int(batch_sizes[0])
    lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(axis=1)     # (B,)
    # each (t, b) of the padded (T, B) grid reads its packed row, or the padding row N
    starts = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]])
    rows = np.full((steps, batch), data.shape[0], np.int64)
    for t, (start, size) in enumerate(zip(starts, batch_sizes)):
        rows[t, :size] = start + np.arange(size)
    # torch's Scalar fill: checked against the dtype, an int wrapped (-1 is 255 in uint8)
    padding_value = fitted("pad_packed_sequence", padding_value, data.dtype)
    padding = constant(data.xp.full((1,) + data.shape[1:], padding_value, data.dtype))
    padded = ops.index_select(ops.cat([data, padding]), 0, _int_tensor(rows.reshape(-1),
                                                                       data.device))
    padded = padded.reshape((steps, batch) + data.shape[1:])
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = _int_tensor(lengths, "cpu")
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        padded = ops.index_select(padded, 0 if batch_first else 1, unsorted)
        lengths = _int_tensor(_ints(lengths)[_ints(unsorted)], "cpu")
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of different lengths, each padded to the longest (torch's
    ``pad_sequence``), in the first sequence's dtype.

    Args:
        sequences: an iterable of tensors (L_i, *) whose trailing dims broadcast to the
            first's (a tensor: its rows).
        padding_value: the value of the padded steps. padding_side: "right" (after each
            sequence) or "left".

    Shape:
        (L_max, B, *), or (B, L_max, *) with ``batch_first``.

    Example:
        >>> pad_sequence([mg.ones(3), mg.ones(1)], batch_first=True)    # (2, 3)
    """
    try:
        sequences = tuple(sequences)
    except TypeError:
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}") from None
    check_bool("pad_sequence()", "batch_first", batch_first)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    for i, seq in enumerate(sequences):
        if not isinstance(seq, Tensor):
            raise TypeError(f"pad_sequence: sequences[{i}] must be a Tensor, got "
                            f"{type(seq).__name__}")
        if seq.ndim == 0:
            raise RuntimeError(f"pad_sequence: sequences[{i}] is 0-d; each sequence needs a "
                               "first (time) dim")
    first = sequences[0]
    trailing, longest = first.shape[1:], max(seq.shape[0] for seq in sequences)
    # torch's fill is a double checked against the dtype: -1 does not fit uint8, NaN no int
    if isinstance(padding_value, numbers.Real):
        padding_value = float(padding_value)
    padding_value = fitted("pad_sequence", padding_value, first.dtype)
    padded = [_padded_to(seq, longest, trailing, first.dtype, padding_value, padding_side)
              for seq in sequences]
    return ops.stack(padded, dim=0 if batch_first else 1)


def _padded_to(seq, longest, trailing, dtype, padding_value, padding_side):
    # one sequence (L, *) as (longest, *trailing) in dtype, the padding on its side
    if seq.shape[1:] != trailing:
        try:
            seq = seq.expand((seq.shape[0],) + trailing)
        except (ValueError, RuntimeError):
            raise RuntimeError(f"pad_sequence: a sequence of shape {seq.shape} does not "
                               f"broadcast to the first's trailing dims {trailing}") from None
    seq = seq.to(dtype=dtype)
    if seq.shape[0] == longest:
        return seq
    fill = seq.xp.full((longest - seq.shape[0],) + trailing, padding_value, dtype)
    pieces = [seq, constant(fill)]
    return ops.cat(pieces if padding_side == "right" else pieces[::-1])


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The sequences of a padded batch, each cut to its length (torch's ``unpad_sequence``;
    the input is left as it is).

    Shape:
        padded_sequences (T, B, *) (``batch_first``: (B, T, *)), lengths (B,); returns B
        tensors (length_i, *).

    Example:
        >>> seqs = unpad_sequence(pad_sequence([a, b]), mg.tensor([len(a), len(b)]))
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    if isinstance(lengths, Tensor):
        lengths = backend.to_numpy(lengths._array)
    lengths = np.asarray(lengths)
    if lengths.size != padded_sequences.shape[0]:
        raise ValueError(f"unpad_sequence: {lengths.size} lengths for a batch of "
                         f"{padded_sequences.shape[0]}")
    # torch's mask arange(T) < length: 2.5 keeps 3 steps, NaN or a negative none, inf all
    counts = (np.arange(padded_sequences.shape[1]) < lengths.reshape(-1, 1)).sum(axis=1)
    return [padded_sequences[b, :int(count)] for b, count in enumerate(counts)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack tensors (L_i, *) of different lengths (torch's ``pack_sequence``):
    ``pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=...)``.

    Shape:
        returns a PackedSequence with data (sum(L_i), *).

    Example:
        >>> packed = pack_sequence([mg.ones(3, 2), mg.ones(2, 2)])
    """
    lengths = [seq.shape[0] for seq in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The tensors a PackedSequence holds, in their original order (torch's
    ``unpack_sequence``).

    Shape:
        returns B tensors (L_i, *).

    Example:
        >>> a, b = unpack_sequence(pack_sequence([a, b], enforce_sorted=False))
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def _lengths(lengths):
    # torch's: a list made an int64 tensor, a tensor cast to int64; a 1-D array here
    if isinstance(lengths, Tensor):
        if lengths.device != "cpu" or lengths.ndim != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.ndim}D {lengths.device} {lengths.dtype} tensor")
        return _ints(lengths, "lengths")
    lengths = np.asarray(lengths)
    if lengths.ndim != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.ndim}D cpu {lengths.dtype} tensor")
    return _ints(lengths, "lengths")


def _ints(value, name="value"):
    # a Tensor or a sequence of integers as a NumPy int64 array; floats truncated, as torch's
    # cast, but NaN, inf and what int64 cannot hold refused (torch's overflow RuntimeError)
    if isinstance(value, Tensor):
        value = backend.to_numpy(value._array)
    value = np.asarray(value)
    if value.dtype.kind == "f":
        fits = (value >= -2.0 ** 63) & (value < 2.0 ** 63)            # False for NaN
        if not fits.all():
            raise RuntimeError(f"{name}: value {value[~fits][0]} cannot be converted to type "
                               "int64 without overflow")
    return value.astype(np.int64)


def _device(value):
    return value.device if isinstance(value, Tensor) else "cpu"


def _int_tensor(array, device):
    return constant(backend.to_device(np.ascontiguousarray(array, np.int64), device))
