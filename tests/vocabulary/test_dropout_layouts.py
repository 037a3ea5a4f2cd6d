"""Dropout masks on inputs that are views (transposed, permuted, sliced, expanded) against
torch's for one seed: torch draws an element-wise mask into ``empty_like(input)``, which
keeps the input's memory order, and a per-channel mask into a row-major tensor; and
``generator.empty_like``, the layout torch's ``empty_like`` gives, against torch's."""

import warnings

import numpy as np
import pytest
import torch

import microgradnorm as mg
from microgradnorm import generator

LAYOUTS = {
    "contiguous": lambda L, d: L.arange(1.0, 25.0, dtype=d).reshape(2, 3, 4),
    "transposed": lambda L, d: L.arange(1.0, 13.0, dtype=d).reshape(3, 4).t(),
    "permuted": lambda L, d: L.arange(1.0, 25.0, dtype=d).reshape(2, 3, 4).permute(2, 0, 1),
    "transposed 3-d": lambda L, d: L.arange(1.0, 25.0, dtype=d).reshape(2, 3, 4).transpose(1, 2),
    "sliced": lambda L, d: L.arange(1.0, 25.0, dtype=d).reshape(4, 6)[:, ::2],
    "transposed, sliced": lambda L, d: L.arange(1.0, 25.0, dtype=d).reshape(4, 6).t()[::2],
    "expanded": lambda L, d: L.arange(1.0, 5.0, dtype=d).reshape(1, 4).expand(3, 4),
    "expanded, permuted": lambda L, d: L.arange(1.0, 7.0, dtype=d).reshape(2, 3)[:, None, :]
    .expand(2, 4, 3).transpose(0, 2),
    "channels last": lambda L, d: L.arange(1.0, 49.0, dtype=d).reshape(2, 2, 3, 4)
    .permute(0, 3, 1, 2),
}

DROPOUTS = {
    "dropout": lambda L, x: L.nn.functional.dropout(x, 0.4),
    "dropout in place": lambda L, x: L.nn.functional.dropout(x, 0.4, inplace=True),
    "alpha_dropout": lambda L, x: L.nn.functional.alpha_dropout(x, 0.4, training=True),
    "Dropout": lambda L, x: L.nn.Dropout(0.4)(x),
    "AlphaDropout": lambda L, x: L.nn.AlphaDropout(0.4)(x),
    "dropout1d": lambda L, x: L.nn.functional.dropout1d(x, 0.4) if x.ndim < 4 else None,
    "Dropout2d": lambda L, x: L.nn.Dropout2d(0.4)(x),         # 2-D: torch's deprecated read
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_draws_torchs_mask_for_a_view(name, layout, dtype):
    if name == "dropout in place" and layout.startswith("expanded"):
        pytest.skip("writing into an expanded tensor: torch's RuntimeError, a read-only "
                    "ValueError here, whichever op writes")
    results = []
    for L in (torch, mg):
        x = LAYOUTS[layout](L, getattr(L, dtype))        # made in dtype: a view of it
        L.manual_seed(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # Dropout2d's reading of a 2-, 3-D input
            y = DROPOUTS[name](L, x)
        if y is None:
            pytest.skip(f"{name} takes no {x.ndim}-d input")
        results.append((y.numpy(), L.rand(3).numpy()))   # the stream after it, too
    (theirs, their_next), (ours, our_next) = results
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(our_next, their_next)


def test_dropout_gradient_follows_the_mask_of_a_transposed_input():
    grads = []
    for L in (torch, mg):
        w = L.tensor(np.arange(1.0, 13.0).reshape(3, 4), requires_grad=True)
        L.manual_seed(5)
        (L.nn.functional.dropout(w.t(), 0.5) * L.arange(3.0)).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def offsets(shape, strides):
    # each element's offset in memory, for a shape and its strides in elements
    ndim = len(shape)
    return sum(np.arange(size).reshape([-1 if i == k else 1 for i in range(ndim)]) * stride
               for k, (size, stride) in enumerate(zip(shape, strides)))


def test_empty_like_lays_out_as_torchs():
    rng = np.random.default_rng(0)
    for _ in range(300):
        ndim = int(rng.integers(1, 5))
        shape = [int(rng.integers(1, 4)) for _ in range(ndim)]
        view = torch.empty([size * int(rng.integers(1, 3)) for size in shape])
        view = view[tuple(slice(0, size * step, step) for size, step in
                          zip(shape, rng.integers(1, 3, ndim).tolist()))]
        view = view[tuple(slice(0, size) for size in shape)]
        view = view.permute(*rng.permutation(ndim).tolist())
        if rng.random() < 0.5:                      # one dim expanded
            dim, sizes = int(rng.integers(0, ndim)), list(view.shape)
            sizes[dim] = int(rng.integers(1, 4))
            view = view.narrow(dim, 0, 1).expand(*sizes)
        source = np.lib.stride_tricks.as_strided(np.empty(1, np.float32), view.shape,
                                                 [4 * s for s in view.stride()])
        ours = generator.empty_like(source, np.float32)
        theirs = torch.empty_like(view)
        assert ours.shape == tuple(view.shape)
        np.testing.assert_array_equal(
            np.broadcast_to(offsets(ours.shape, [s // 4 for s in ours.strides]), ours.shape),
            np.broadcast_to(offsets(ours.shape, theirs.stride()), ours.shape))


@pytest.mark.parametrize("shape", [(5, 6), (2, 3, 2, 2, 2)])
def test_dropout2d_of_a_2d_or_5d_input_warns_and_draws_torchs_mask(shape):
    x = np.random.default_rng(0).standard_normal(shape)
    results = []
    for L in (torch, mg):
        L.manual_seed(11)
        with pytest.warns(UserWarning, match=f"Received a {len(shape)}-D input to dropout2d"):
            results.append(L.nn.functional.dropout2d(L.tensor(x), 0.5).numpy())
    np.testing.assert_array_equal(results[1], results[0])
    for L in (torch, mg):
        with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="at least 2 dim"):
            L.nn.Dropout2d(0.5)(L.ones(4))
