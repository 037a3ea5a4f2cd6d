"""Random fills in place, ``Tensor.uniform_``, ``normal_``, ``random_``, ``bernoulli_``,
``exponential_``, ``cauchy_``, ``log_normal_`` and ``geometric_``: the values of PyTorch's
CPU generator for the same seed (generator.py draws them, in torch's element order). In a
graph a fill is recorded as a constant: the gradient through it is zero, as in torch."""

from .. import backend
from .. import generator as streams
from .. import sampling
from .. import tensor as _tensor
from . import elementwise


def _fill_random(x, fn, generator, draw):
    # draw(generator, n, contiguous) -> the n values in PyTorch's element order
    # (generator.py); recorded in a graph as a constant (zero gradient), as in torch
    gen = streams.check_generator(fn, generator)
    _tensor.check_writable(x._array)      # before any draw: refused, the stream is untouched

    def fresh(before, _):
        values = streams.fill(backend.empty_array(x.shape, x.dtype, x.device),
                              lambda n, c: draw(gen, n, c))
        return elementwise.where(True, _tensor.Tensor._from_op(x.xp.asarray(values), None),
                                 before)
    return x._inplace(lambda d: streams.fill(d, lambda n, c: draw(gen, n, c)), fresh)


def uniform_(x, a=0.0, to=1.0, *, generator=None, **bounds):
    r"""Fill in place with draws from U[a, to) (``torch.Tensor.uniform_``; the values of
    torch's CPU generator for the same seed).

    Formula:
        :math:`\mathrm{fma}(x, to - a, a)`, x a float32 (or float64) uniform of the
        generator's words (generator.py).

    Args:
        a, to: the bounds, a <= to; by keyword ``from=`` and ``to=``, torch's names.
        generator: a ``mg.Generator`` (default: the global).

    Example:
        >>> w = mg.empty(4, 3); w.uniform_(-0.5, 0.5)
    """
    if bounds:                                  # ``from``, a Python keyword, by keyword only
        unknown = [k for k in bounds if k != "from"]
        if unknown:
            raise TypeError(f"uniform_() got an unexpected keyword argument '{unknown[0]}'")
        a = bounds["from"]
    return _fill_random(x, "uniform_", generator,
                             lambda g, n, c: sampling.uniform(g, n, x.dtype, a, to))


def normal_(x, mean=0.0, std=1.0, *, generator=None):
    r"""Fill in place with draws from N(mean, std²) (``torch.Tensor.normal_``, its CPU
    algorithm: Box-Muller by blocks of 16 for 16 elements or more of a contiguous
    tensor, cached pairs otherwise).

    Args:
        mean, std: the distribution, std >= 0. generator: a ``mg.Generator``.

    Example:
        >>> w = mg.empty(768, 768); w.normal_(0.0, 0.02)
    """
    return _fill_random(x, "normal_", generator, lambda g, n, c: sampling.normal(
        g, n, x.dtype, mean, std, contiguous=c))


def random_(x, *bounds, generator=None, **names):
    r"""Fill in place with random integers (``torch.Tensor.random_``): ``random_()``
    any value the dtype holds exactly, ``random_(to)`` [0, to), ``random_(from, to)``
    [from, to), ``random_(from, None)`` [from, the dtype's max]; ``from`` and ``to``
    may also be keywords.

    Formula:
        :math:`(w \bmod (\text{to} - \text{from})) + \text{from}`, w one 32-bit word
        (a 64-bit draw for a range of :math:`2^{28}` or more).

    Example:
        >>> ids = mg.empty(8, dtype=mg.int64).random_(0, 100)
    """
    if len(bounds) > 2 or set(names) - {"from", "to"}:
        raise TypeError(f"random_: expected random_(), random_(to) or random_(from, to), "
                        f"got {len(bounds)} positional arguments and {sorted(names)}")
    if len(bounds) == 2:
        low, high = bounds
    elif len(bounds) == 1 and "to" in names:
        low, high = bounds[0], names["to"]
    elif len(bounds) == 1:
        low, high = names.get("from", 0), bounds[0]
    else:
        low, high = names.get("from"), names.get("to")
        low = 0 if low is None and high is not None else low
    return _fill_random(x, "random_", generator, lambda g, n, c: sampling.random_integers(
        g, n, x.dtype, low, high))


def bernoulli_(x, p=0.5, *, generator=None):
    """Fill in place with 1 with probability ``p`` (a number, or a floating Tensor
    broadcast to this shape), else 0 (``torch.Tensor.bernoulli_``).

    Formula:
        ``u < p``: u a float64 uniform for a number or float64 p, a float32 uniform for
        float32 (float16, bfloat16) p, as torch's CPU kernel.

    Example:
        >>> mask = mg.empty(4, 4).bernoulli_(0.9)
    """
    probs = streams.fill_order(x._array, backend.to_numpy(p._array)) \
        if isinstance(p, _tensor.Tensor) else p
    return _fill_random(x, "bernoulli_", generator,
                             lambda g, n, c: sampling.bernoulli(g, n, x.dtype, probs))


def exponential_(x, lambd=1.0, *, generator=None):
    r"""Fill in place with draws from Exp(lambd) (``torch.Tensor.exponential_``).

    Formula:
        :math:`-\mathrm{log1p}(-u) / \lambda`, u a float64 uniform.

    Example:
        >>> waits = mg.empty(5).exponential_(2.0)
    """
    return _fill_random(x, "exponential_", generator, lambda g, n, c: sampling.exponential(
        g, n, x.dtype, lambd))


def cauchy_(x, median=0.0, sigma=1.0, *, generator=None):
    r"""Fill in place with draws from the Cauchy distribution (``torch.Tensor.cauchy_``),
    density :math:`\frac{1}{\pi}\frac{\sigma}{(x - \text{median})^2 + \sigma^2}`.

    Formula:
        :math:`\text{median} + \sigma \tan(\pi (u - \tfrac12))`, u a float64 uniform.

    Args:
        median: the location. sigma: the scale, > 0. generator: a ``mg.Generator``.

    Example:
        >>> heavy = mg.empty(5).cauchy_()
    """
    return _fill_random(x, "cauchy_", generator, lambda g, n, c: sampling.cauchy(
        g, n, x.dtype, median, sigma))


def log_normal_(x, mean=1.0, std=2.0, *, generator=None):
    r"""Fill in place with draws whose logarithm is N(mean, std²)
    (``torch.Tensor.log_normal_``; ``mean`` and ``std`` are the normal's, not the draws').

    Formula:
        :math:`\exp(z\,\text{std} + \text{mean})`, z a standard normal of torch's scalar
        path (cached float64 Box-Muller pairs), whatever the size.

    Args:
        mean, std: the underlying normal, std > 0. generator: a ``mg.Generator``.

    Example:
        >>> scales = mg.empty(4).log_normal_(0.0, 0.5)
    """
    return _fill_random(x, "log_normal_", generator, lambda g, n, c: sampling.log_normal(
        g, n, x.dtype, mean, std))


def geometric_(x, p, *, generator=None):
    r"""Fill in place with the number of Bernoulli(p) trials up to and including the first
    success, :math:`P(X = k) = (1 - p)^{k - 1} p`, k = 1, 2, ...
    (``torch.Tensor.geometric_``; integer tensors too).

    Formula:
        :math:`\lceil \ln u / \mathrm{log1p}(-p) \rceil`, u a float64 uniform.

    Args:
        p: the success probability, in (0, 1). generator: a ``mg.Generator``.

    Example:
        >>> trials = mg.empty(6, dtype=mg.int64).geometric_(0.2)
    """
    return _fill_random(x, "geometric_", generator, lambda g, n, c: sampling.geometric(
        g, n, x.dtype, p))
