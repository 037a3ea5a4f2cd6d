"""Hypothesis strategies shared by the test files (minitorch's ``tests/helpers`` habit).

    from strategies import arrays, broadcastable_pair, shapes

Shapes stay small (sides <= 5) so finite differences and PyTorch comparisons stay fast.
Values are well conditioned: bounded, and where a test needs it positive, away from zero
or pairwise distinct (no ties for max/maximum/relu under finite differences).
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def shapes(min_dims=0, max_dims=3, max_side=4, min_side=1):
    """Tuples of ``min_dims..max_dims`` sides, each in ``min_side..max_side``."""
    return st.lists(st.integers(min_side, max_side), min_size=min_dims,
                    max_size=max_dims).map(tuple)


@st.composite
def broadcastable_pair(draw, min_dims=0, max_dims=3, max_side=4):
    """Two shapes that broadcast together: each is a suffix of one full shape (fewer
    leading dims), with some sides replaced by 1. Either may be the larger one."""
    full = draw(shapes(min_dims, max_dims, max_side))

    def derived():
        dropped = draw(st.integers(0, len(full) - min_dims))
        kept = full[dropped:]
        ones = draw(st.lists(st.booleans(), min_size=len(kept), max_size=len(kept)))
        return tuple(1 if one else n for n, one in zip(kept, ones))

    return derived(), derived()


def arrays(shape, low=-2.0, high=2.0, dtype=np.float64):
    """Float arrays of ``shape`` with values in [low, high] (hypothesis picks the values, so
    repeated values, zeros and the bounds all occur: good for comparisons with PyTorch,
    which shares our tie conventions)."""
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False,
                         width=np.dtype(dtype).itemsize * 8)
    return hnp.arrays(dtype, shape, elements=elements)


def positive_arrays(shape, low=0.5, high=2.0):
    """Arrays bounded away from 0 (inputs of log, sqrt, fractional/negative powers)."""
    return arrays(shape, low, high)


@st.composite
def nonzero_arrays(draw, shape, margin=0.5, high=2.0):
    """Arrays with |value| in [margin, high], either sign (divisors)."""
    magnitude = draw(arrays(shape, margin, high))
    signs = draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([-1.0, 1.0])))
    return magnitude * signs


@st.composite
def distinct_arrays(draw, shape, low=-2.0, high=2.0):
    """Arrays of a shuffled grid: values pairwise (high - low) / size apart and at least a
    fifth of that away from 0, so no ties for max, maximum or relu under finite
    differences (eps = 1e-6) as long as size stays small."""
    size = int(np.prod(shape, dtype=np.int64))
    order = np.array(draw(st.permutations(range(size))), dtype=np.float64)
    step = (high - low) / max(size, 1)
    # The 0.3 offset keeps every grid point off the symmetric interval's midpoint, 0.
    return (low + (order + 0.3) * step).reshape(shape)


def seeded_normal(shape, seed=0):
    """A fixed standard-normal array, e.g. an upstream gradient for backward."""
    return np.random.default_rng(seed).standard_normal(shape)
