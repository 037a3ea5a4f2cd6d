"""PyTorch's CPU random stream, ``torch.Generator``: a Mersenne Twister seeded as torch
seeds it, its state in torch's layout, and ``fill``, which writes draws in torch's order.

The same seed gives the same values as PyTorch on an x86-64 CPU, bit for bit: ``rand``,
``randn``, ``randint``, ``randperm``, ``multinomial``, ``normal_``, ``uniform_``,
``random_``, ``bernoulli_`` and ``exponential_`` in float32 and float64 (the exceptions, and
why, are in docs/pytorch.md: PyTorch's own values depend on the CPU it runs on there).

The engine is MT19937 seeded as PyTorch seeds it: word 0 is the low 32 bits of the seed,
word j is ``1812433253 * (w ^ (w >> 30)) + j`` of the word before (mod 2**32), and the
first draw twists all 624 words. NumPy's ``MT19937`` bit generator runs the same recurrence
and tempering, so it is the engine here (a twist of 624 words at a time, in C); this module
only writes and reads its state. ``random()`` is one 32-bit word; ``random64()`` is two,
the first one the high half.

The samplers that turn the words into values are in ``sampling.py``; ``fill`` writes them
into an array in PyTorch's element order.

Example:
    >>> g = Generator().manual_seed(0)
    >>> g.random(), g.random()            # the first two 32-bit words of the stream
    (2357136044, 2546248239)
"""

import functools
import secrets
import struct

import numpy as np

from . import backend, dtypes

__all__ = ["DEFAULT_SEED", "Generator", "check_generator", "default_generator", "fill",
           "fill_order"]

DEFAULT_SEED = 67280421310721        # torch.Generator()'s seed (default_rng_seed_val)
_N = 624                             # MT19937's words
_STATE_BYTES = 5056                  # torch.get_rng_state().numel()
_MASK64 = (1 << 64) - 1


def _seed_words(seed):
    return _expanded(seed & 0xFFFFFFFF)


@functools.lru_cache(maxsize=16)
def _expanded(word):
    # PyTorch's (and Matsumoto-Nishimura's init_genrand) expansion of the low 32 bits; a
    # loop of 624 Python steps (0.2 ms), kept for the few seeds a program reuses. Read-only:
    # the engine's state setter copies it
    key = np.empty(_N, np.uint32)
    key[0] = word
    for j in range(1, _N):
        word = (1812433253 * (word ^ (word >> 30)) + j) & 0xFFFFFFFF
        key[j] = word
    key.flags.writeable = False
    return key


class SeedError(RuntimeError, TypeError):
    """A seed that is no int (``Generator.manual_seed(1.5)``): torch's RuntimeError, and a
    TypeError."""


class StateError(RuntimeError, ValueError):
    """A generator state of the wrong size or contents: torch's RuntimeError, and a
    ValueError."""


def _check_seed(where, seed):
    # torch takes a seed in [-2**63, 2**64): a negative one counts modulo 2**64
    try:
        dtypes.check_number(where, "seed", seed, integer=True)
    except TypeError as error:
        raise SeedError(str(error)) from None
    seed = int(seed)
    if not -(1 << 63) <= seed <= _MASK64:
        raise ValueError(f"{where}: seed must be in [-2**63, 2**64) (a negative seed counts "
                         f"modulo 2**64, as in torch), got {seed}")
    return seed & _MASK64


# the tensor layer makes ``get_state``'s Tensor (factories.py sets it; the generator sits
# below tensors): until then, the array itself
def state_tensor(array):
    return array


class Generator:
    """A random stream with ``torch.Generator``'s interface: MT19937 seeded and drawn as
    PyTorch's CPU generator, so a seed gives torch's values (module docstring).

    Args:
        device: ``"cpu"``, the only kind; tensors on ``"cuda"`` draw from this stream on
            the CPU and are copied (torch's CUDA generator is another algorithm, Philox).

    Example:
        >>> g = mg.Generator().manual_seed(42)
        >>> x = mg.randn(3, generator=g)           # torch.randn(3, generator=g) bit for bit
        >>> state = g.get_state(); y = mg.rand(2, generator=g)
        >>> g.set_state(state); z = mg.rand(2, generator=g)    # z == y: the stream replayed
    """

    def __init__(self, device="cpu"):
        if str(device) != "cpu":
            raise backend.DeviceError(f"Generator: device must be 'cpu' (tensors on cuda draw "
                                      f"from the CPU stream), got {device!r}")
        self._engine = np.random.MT19937(0)    # its state is replaced by manual_seed
        self.manual_seed(DEFAULT_SEED)

    @property
    def device(self):
        """``"cpu"``."""
        return "cpu"

    def manual_seed(self, seed):
        """Restart the stream from ``seed`` (an int in [-2**63, 2**64)); returns the
        generator. The cached normal samples are dropped, as in torch."""
        seed = _check_seed("manual_seed", seed)
        self._set(seed, _seed_words(seed), _N, 0, None, None)
        return self

    def seed(self):
        """Reseed from the operating system's entropy and return the new seed (64 bits)."""
        seed = secrets.randbits(64)
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        """The seed the stream started from (the last ``manual_seed`` or ``seed``)."""
        return self._seed

    def _set(self, seed, key, pos, idle_next, next_double, next_float):
        self._engine.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._seed = seed
        # torch's "next" index while the engine waits to twist: 0 after seeding, 624 after
        # the last word of a block (get_state reports it)
        self._idle_next = idle_next
        self.next_double_normal_sample = next_double
        self.next_float_normal_sample = next_float

    def get_state(self):
        """The state as torch's byte layout, a uint8 Tensor of 5056 values
        (``torch.Generator.get_state``): seed, engine position, the 624 words, the cached
        normal samples. Feed it to ``set_state`` here or to ``torch.Generator.set_state``."""
        return state_tensor(self.state_array())

    def state_array(self):
        """``get_state``'s bytes as a NumPy uint8 array (what the library keeps and
        compares)."""
        state = self._engine.state["state"]
        pos = int(state["pos"])
        nxt, left = (self._idle_next, 1) if pos == _N else (pos, _N - pos + 1)
        out = bytearray(_STATE_BYTES)
        struct.pack_into("<QiiQ", out, 0, self._seed, left, 1, nxt)
        out[24:24 + 8 * _N] = state["key"].astype("<u8").tobytes()
        if self.next_double_normal_sample is not None:
            struct.pack_into("<d", out, 5024, self.next_double_normal_sample)
            struct.pack_into("<i", out, 5040, 1)
        if self.next_float_normal_sample is not None:
            struct.pack_into("<f?", out, 5048, self.next_float_normal_sample, True)
        return np.frombuffer(bytes(out), np.uint8).copy()

    def set_state(self, state):
        """Restore a state from ``get_state`` (here or torch's: a uint8 array, Tensor or
        bytes of 5056 values); returns the generator. A bad state changes nothing."""
        raw = np.asarray(state) if not isinstance(state, (bytes, bytearray)) else \
            np.frombuffer(bytes(state), np.uint8)
        if raw.dtype != np.uint8:
            raise TypeError(f"set_state: state must be a uint8 array (get_state's), got "
                            f"dtype {raw.dtype}")
        if raw.size != _STATE_BYTES:
            raise StateError(f"set_state: expected a state of {_STATE_BYTES} bytes, got "
                             f"{raw.size}")
        data = raw.tobytes()
        seed, left, seeded, nxt = struct.unpack_from("<QiiQ", data, 0)
        key = np.frombuffer(data, "<u8", _N, 24)
        # torch's own states keep left + next == 625 (or left == 1 before a twist)
        if not seeded or not 0 < left <= _N or nxt > _N or (left != 1 and left + nxt != _N + 1) \
                or (key > 0xFFFFFFFF).any():
            raise StateError("set_state: invalid mt19937 state")
        (normal_y,) = struct.unpack_from("<d", data, 5024)
        (valid,) = struct.unpack_from("<i", data, 5040)
        next_float, float_valid = struct.unpack_from("<f?", data, 5048)
        self._set(seed, key.astype(np.uint32), _N if left == 1 else nxt, nxt,
                  normal_y if valid else None,
                  float(next_float) if float_valid else None)
        return self

    def clone_state(self):
        """A new Generator at this one's state (seed, position, cached normals): both then
        draw the same values (``torch.Generator.clone_state``)."""
        return Generator().set_state(self.state_array())

    def get_offset(self):
        """Refused, as torch's CPU generator: only Philox (CUDA) counts an offset."""
        raise RuntimeError("get_offset: CPU Generator does not use offset")

    def set_offset(self, offset):
        """Refused, as torch's CPU generator: only Philox (CUDA) counts an offset."""
        raise RuntimeError("set_offset: CPU Generator does not use offset")

    def graphsafe_get_state(self):
        """Refused, as torch's CPU generator (CUDA graphs only)."""
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        """Refused, as torch's CPU generator (CUDA graphs only)."""
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def _words(self, n):
        # n 32-bit words (PyTorch's random()), as uint64
        if n:
            self._idle_next = _N
        return self._engine.random_raw(n)

    def _words64(self, n):
        # n 64-bit draws (PyTorch's random64()): two words each, the first the high half
        pairs = self._words(2 * n).reshape(n, 2)
        return (pairs[:, 0] << np.uint64(32)) | pairs[:, 1]

    def random(self):
        """One 32-bit draw, an int (PyTorch's ``CPUGeneratorImpl::random``)."""
        return int(self._words(1)[0])

    def random64(self):
        """One 64-bit draw, an int: two words, the first the high half (``random64``)."""
        return int(self._words64(1)[0])

    def __repr__(self):
        return f"Generator(device='cpu', initial_seed={self._seed})"


default_generator = Generator()
default_generator.seed()             # torch seeds its default CPU generator from entropy


def check_generator(where, generator):
    """``generator`` itself, or the default generator for None; a TypeError naming the
    argument for anything else (a ``numpy.random.Generator`` included)."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{where}: generator must be a microgradnorm.Generator (or None), got "
                        f"{type(generator).__module__}.{type(generator).__name__}")
    return generator


# ----- writing draws into an array in PyTorch's element order ------------------------------
def _order(target):
    # None for a contiguous array, else its axes by decreasing stride (PyTorch's iterator
    # walks memory: the largest stride outermost)
    if target.flags.c_contiguous:
        return None
    return sorted(range(target.ndim), key=lambda d: -abs(target.strides[d]))


def empty_like(source, dtype):
    """An uninitialised NumPy array of ``source``'s shape, laid out in memory as torch's
    ``empty_like`` lays out a tensor of ``source``'s strides, so ``fill`` writes it in
    torch's order: dense sources keep their layout; others get dense strides in the order
    of theirs (torch's ``infer_dense_strides``: an insertion sort by stride, the smallest
    innermost, ties to the smaller size, a 0 stride (an expanded dim) compared with none).

    Example:
        >>> empty_like(np.empty((4, 6))[:, ::2].T, np.float32).strides      # (3, 4) view
        (4, 12)
    """
    if backend.is_meta_array(source):
        return backend.meta_array(source.shape, dtype)     # a meta draw's: never filled
    outer_first = dense_order(source.shape, source.strides)
    array = np.empty([source.shape[d] for d in outer_first], dtype)
    return array.transpose(np.argsort(outer_first))


def dense_order(shape, strides):
    """The dims of an array of ``shape`` and ``strides`` (in any unit), outermost first, in
    the order torch's ``infer_dense_strides`` lays out a dense copy of it (``empty_like``'s
    rule).

    Example:
        >>> dense_order((2, 3), (1, 2))                     # a transpose: dim 0 innermost
        [1, 0]
    """
    strides = [abs(s) for s in strides]
    ndim = len(shape)
    perm = list(range(ndim - 1, -1, -1))                    # innermost first

    def should_swap(a, b):
        # torch's comparison of two dims: 1 to move b inward of a, -1 to stop, 0 unknown
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] != strides[b]:
            return 1 if strides[a] > strides[b] else -1
        return 1 if shape[a] > shape[b] else 0

    for i in range(1, ndim):
        moving = i
        for before in range(i - 1, -1, -1):
            comparison = should_swap(perm[before], perm[moving])
            if comparison > 0:
                perm[before], perm[moving] = perm[moving], perm[before]
                moving = before
            elif comparison < 0:
                break
    return perm[::-1]


def fill_order(target, values):
    """``values`` broadcast to ``target``'s shape and flattened in the order ``fill``
    writes ``target`` (for per-element parameters such as bernoulli's p).

    Example:
        >>> fill_order(np.empty((3, 2)).T, np.arange(6).reshape(2, 3)).tolist()
        [0, 3, 1, 4, 2, 5]
    """
    order = _order(target)
    view = np.broadcast_to(values, target.shape)
    return np.ascontiguousarray(view if order is None else view.transpose(order)).ravel()


def fill(target, draw):
    """Write ``draw(n, contiguous)`` (n values in PyTorch's element order) into ``target``,
    a NumPy or CuPy array, in place; returns ``target``.

    A contiguous array is filled in row-major order; any other in the order of its memory
    (PyTorch's iterator walks the largest stride outermost), so a transposed view gets the
    values its contiguous base would.

    Example:
        >>> a = np.empty((2, 3), np.float32)
        >>> fill(a, lambda n, c: np.arange(n)).tolist()
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    """
    if backend.is_meta_array(target):
        return target                 # a meta tensor's draw: none, the stream stays (torch's)
    order = _order(target)
    view = target if order is None else target.transpose(order)
    values = np.asarray(draw(target.size, order is None)).reshape(view.shape)
    view[...] = backend.to_device(values.astype(target.dtype, copy=False),
                                  backend.device_of(target))
    return target
