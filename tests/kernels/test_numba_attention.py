"""The numba attention kernels (``numba_attention.attention_forward`` / ``_backward``, the
blocked online softmax) against the reference kernels: float64 within 1e-12 and float32
within 5e-6 of each output's scale, over shapes that cross and miss the blocks, causal or
not; against torch's scaled_dot_product_attention in float64; and what they hand to the
reference (masks, dropout, half precision, broadcast batch dims, inf and NaN), exactly."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm.kernels import reference

pytest.importorskip("numba")
from microgradnorm.kernels import numba_attention, numba_cpu  # noqa: E402  (after the skip)

if not numba_attention.BLAS:
    pytest.skip("numba's BLAS helper needs SciPy: everything is the reference's",
                allow_module_level=True)

BLOCK_Q, BLOCK_K = numba_attention.BLOCK_Q, numba_attention.BLOCK_K
BOUND = {np.float64: 1e-12, np.float32: 5e-6}
# (query, key, value) shapes: (..., L, E), (..., S, E), (..., S, Ev)
SHAPES = {
    "one head": ((5, 4), (7, 4), (7, 4)),
    "several heads, L != S": ((2, 3, 9, 8), (2, 3, 13, 8), (2, 3, 13, 8)),
    "blocks, not multiples": ((2, BLOCK_Q + 7, 6), (2, 2 * BLOCK_K + 5, 6),
                              (2, 2 * BLOCK_K + 5, 6)),
    "L > S, several blocks": ((1, 2 * BLOCK_Q + 3, 5), (1, BLOCK_K - 9, 5), (1, BLOCK_K - 9, 5)),
    "L = 1": ((3, 1, 8), (3, 11, 8), (3, 11, 8)),
    "S = 1": ((2, 6, 8), (2, 1, 8), (2, 1, 8)),
    "E = 1": ((2, 2, 17, 1), (2, 2, 17, 1), (2, 2, 17, 1)),
    "E = 64, Ev = 24": ((2, 70, 64), (2, 90, 64), (2, 90, 24)),
    "L = S = two blocks exactly": ((1, 2, 2 * BLOCK_Q, 4), (1, 2, 2 * BLOCK_K, 4),
                                   (1, 2, 2 * BLOCK_K, 4)),
    "L < S, keys no query sees": ((1, BLOCK_Q - 3, 4), (1, 2 * BLOCK_K + 1, 4),
                                  (1, 2 * BLOCK_K + 1, 4)),
}


def draw(shapes, dtype, seed=0, spread=1.0):
    rng = np.random.default_rng(seed)
    q, k, v = (spread * rng.standard_normal(s) for s in shapes)
    dout = rng.standard_normal(q.shape[:-1] + v.shape[-1:])
    return tuple(a.astype(dtype) for a in (q, k, v, dout))


def both_ways(module, q, k, v, dout, is_causal, scale=0.3):
    out, lse = module.attention_forward(q, k, v, None, is_causal, scale)
    return (out, lse, *module.attention_backward(dout, q, k, v, out, lse, None, is_causal,
                                                  scale))


def assert_close(actual, expected, bound):
    for i, (got, want) in enumerate(zip(actual, expected)):
        assert (got is None) == (want is None), i
        if want is None:
            continue
        assert got.dtype == want.dtype and got.shape == want.shape, i
        scale = max(1.0, float(np.abs(want).max()))
        assert np.abs(got - want).max() <= bound * scale, (i, np.abs(got - want).max())


@pytest.fixture
def no_reference(monkeypatch):
    """Make the reference kernels raise, so that a test proves the compiled loops ran."""
    def refuse(*args, **kwargs):
        raise AssertionError("handed to the reference")
    for name in ("attention_forward", "attention_backward"):
        monkeypatch.setattr(reference, name, refuse)


@pytest.mark.parametrize("is_causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_compiled_kernels_agree_with_the_reference(shape, dtype, is_causal, monkeypatch):
    q, k, v, dout = draw(SHAPES[shape], dtype, spread=2.0)
    expected = both_ways(reference, q, k, v, dout, is_causal)
    monkeypatch.setattr(reference, "attention_forward", None)      # a delegation would fail
    monkeypatch.setattr(reference, "attention_backward", None)
    actual = both_ways(numba_attention, q, k, v, dout, is_causal)
    assert actual[-1] is None                                        # no mask: no dS
    assert_close(actual, expected, BOUND[dtype])


def test_the_comparison_can_fail():
    """Off by one part in 1e10, or a causal output where the full one is due, fails."""
    q, k, v, dout = draw(SHAPES["blocks, not multiples"], np.float64)
    expected = both_ways(reference, q, k, v, dout, False)
    with pytest.raises(AssertionError):
        assert_close([expected[0] * (1 + 1e-10)], expected[:1], BOUND[np.float64])
    with pytest.raises(AssertionError):
        assert_close(both_ways(numba_attention, q, k, v, dout, True), expected, 1e-3)


def test_heads_of_one_projection_are_read_in_place_and_their_gradients_keep_its_layout(
        no_reference):
    """q, k, v as a model file makes them, (B, T, 3C) split and viewed (B, T, H, E), then
    transposed (B, H, T, E): the kernels read them where they lie and write dq, dk, dv laid
    out as (B, T, H, E), so that the transpose and view give them back without a copy; the
    numbers are those of the contiguous copies to rounding (BLAS may sum in another order
    for another leading dimension)."""
    B, T, H, E = 2, 70, 3, 8
    qkv, dout = draw(((B, T, 3 * H * E),) * 3, np.float64)[::3]
    views = [qkv[..., i * H * E:(i + 1) * H * E].reshape(B, T, H, E).transpose(0, 2, 1, 3)
             for i in range(3)]
    dout = dout[..., :H * E].reshape(B, T, H, E).transpose(0, 2, 1, 3)
    assert all(numba_attention._heads(a) is a for a in views + [dout])       # no copies
    contiguous = [np.ascontiguousarray(a) for a in views]
    expected = both_ways(numba_attention, *contiguous, np.ascontiguousarray(dout), True)
    actual = both_ways(numba_attention, *views, dout, True)
    assert_close(actual[:5], expected[:5], BOUND[np.float64])
    for gradient in actual[2:5]:
        assert gradient.transpose(0, 2, 1, 3).flags.c_contiguous


@pytest.mark.parametrize("shape", ["L = S = two blocks exactly", "L < S, keys no query sees",
                                   "L > S, several blocks"])
def test_every_gradient_element_is_written_whatever_the_memory_held(shape, monkeypatch):
    """The products write dq, dk, dv (β = 0 on a block's first visit) and the keys no query
    sees are zeroed: gradients allocated full of NaN come out as the reference's."""
    def full_of_nan(array):
        return np.full(array.shape, np.nan, array.dtype)
    monkeypatch.setattr(numba_attention, "_gradient_like", full_of_nan)
    q, k, v, dout = draw(SHAPES[shape], np.float64)
    expected = both_ways(reference, q, k, v, dout, True)
    monkeypatch.setattr(reference, "attention_forward", None)      # a NaN left would hand
    monkeypatch.setattr(reference, "attention_backward", None)     # the call over: fails
    assert_close(both_ways(numba_attention, q, k, v, dout, True), expected, BOUND[np.float64])


@pytest.mark.parametrize("case", ["columns strided", "rows overlapping", "rows reversed",
                                  "batch dims merged"])
def test_a_layout_blas_cannot_take_is_copied_and_runs_compiled(case, no_reference):
    q, k, v, dout = draw(((2, 3, 9, 8), (2, 3, 9, 8), (2, 3, 9, 8)), np.float64)
    if case == "columns strided":
        odd = np.repeat(q, 2, axis=-1)[..., ::2]                         # q, every other value
    elif case == "rows overlapping":
        odd = np.broadcast_to(q[:, :, :1], q.shape)                      # row stride 0
    elif case == "rows reversed":
        odd = q[:, :, ::-1]
    else:
        q, k, v, dout = (a.reshape(2, 3, 1, 9, 8).transpose(2, 0, 1, 3, 4) for a in
                         (q, k, v, dout))                                # 5-D views
        odd = q
    expected = both_ways(numba_attention, np.ascontiguousarray(odd), k, v, dout, True)
    actual = both_ways(numba_attention, odd, k, v, dout, True)
    assert_close(actual[:5], expected[:5], BOUND[np.float64])


def handed_over():
    """(q, k, v, dout, mask, is_causal, dropout_p) calls that the reference runs."""
    q, k, v, dout = draw(((2, 5, 4), (2, 6, 4), (2, 6, 3)), np.float64)
    rng = np.random.default_rng(3)
    dead = rng.random((5, 6)) > 0.4
    dead[2] = False                                     # a query with nothing to attend to
    nan_q, inf_v = q.copy(), v.copy()
    nan_q[1, 2, 0], inf_v[0, 3, 1] = np.nan, np.inf
    return {"bool mask, a dead row": (q, k, v, dout, dead, False, 0.0),
            "float mask": (q, k, v, dout, rng.standard_normal((5, 6)), False, 0.0),
            "dropout": (q, k, v, dout, None, True, 0.25),
            "float16": (*(a.astype(np.float16) for a in (q, k, v, dout)), None, True, 0.0),
            "broadcast batch": (q[:1], k, v, dout, None, False, 0.0),
            "mixed dtypes": (q.astype(np.float32), k, v, dout, None, False, 0.0),
            "NaN in q": (nan_q, k, v, dout, None, False, 0.0),
            "inf in v": (q, k, inf_v, dout, None, True, 0.0),
            "S = 0": (q, k[:, :0], v[:, :0], dout, None, False, 0.0),
            "NaN in v past every query, k and v of one projection":
                (*nan_in_one_projection(), None, True, 0.0)}


def nan_in_one_projection():
    """q (L = 3) and k, v (S = 5) viewed from one (B, S, 2·E) array, with a NaN in v at a
    key the causal mask hides from every query: the compiled loops never visit it, so only
    the finiteness check, which reads the array k and v share once, can hand the call to
    the reference (whose 0·NaN makes the output NaN, as torch's)."""
    rng = np.random.default_rng(4)
    q, kv = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((2, 5, 8))
    kv[1, 4, 6] = np.nan                                   # v: columns 4 to 7, key 4
    k, v = (kv[..., 4 * i:4 * i + 4].reshape(2, 5, 1, 4).transpose(0, 2, 1, 3)
            for i in range(2))
    return q, k, v, rng.standard_normal((2, 1, 3, 4))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")            # inf - inf in the reference
@pytest.mark.parametrize("case", list(handed_over()))
def test_the_rest_is_the_reference_exactly(case, monkeypatch):
    q, k, v, dout, mask, is_causal, dropout_p = handed_over()[case]
    stream = mg.Generator().manual_seed(7).state_array()  # the dropout mask's draws
    args = (mask, is_causal, 0.5, dropout_p, stream)
    out, lse = reference.attention_forward(q, k, v, *args)
    expected = (out, lse, *reference.attention_backward(dout, q, k, v, out, lse, *args,
                                                         need_mask_grad=True))
    calls = []
    for name in ("attention_forward", "attention_backward"):
        original = getattr(reference, name)
        monkeypatch.setattr(reference, name, lambda *a, _o=original, _n=name, **kw:
                            calls.append(_n) or _o(*a, **kw))
    out, lse = numba_attention.attention_forward(q, k, v, *args)
    actual = (out, lse, *numba_attention.attention_backward(dout, q, k, v, out, lse, *args,
                                                             need_mask_grad=True))
    assert calls == ["attention_forward", "attention_backward"]
    for got, want in zip(actual, expected):
        if want is None:
            assert got is None
            continue
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    if case == "bool mask, a dead row":                  # zeros out and zero gradients
        assert not out[:, 2].any() and not actual[2][:, 2].any()


@pytest.mark.parametrize("is_causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", ["several heads, L != S", "blocks, not multiples",
                                   "E = 64, Ev = 24"])
def test_the_compiled_kernels_agree_with_torch(shape, is_causal):
    q, k, v, dout = draw(SHAPES[shape], np.float64)
    out, lse = numba_attention.attention_forward(q, k, v, None, is_causal, 0.3)
    dq, dk, dv, _ = numba_attention.attention_backward(dout, q, k, v, out, lse, None,
                                                       is_causal, 0.3)
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    expected = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv,
                                                                is_causal=is_causal, scale=0.3)
    expected.backward(torch.tensor(dout))
    for got, want in zip((out, dq, dk, dv), (expected, tq.grad, tk.grad, tv.grad)):
        np.testing.assert_allclose(got, want.detach().numpy(), rtol=0, atol=1e-12)


def test_numba_cpu_exposes_them():
    assert numba_cpu.attention_forward is numba_attention.attention_forward
    assert numba_cpu.attention_backward is numba_attention.attention_backward


@pytest.mark.parametrize("dtype, bound", [(np.float64, 1e-12), (np.float32, 5e-6)])
def test_the_fused_node_runs_them_and_its_backward_the_same_kernels(dtype, bound, monkeypatch):
    """F.scaled_dot_product_attention under the numba kernels agrees with the reference
    kernels; a node's backward runs its forward's module whatever is selected by then."""
    q, k, v, dout = draw(((2, 2, 70, 8), (2, 2, 70, 8), (2, 2, 70, 8)), dtype)
    results = {}
    for name in ("reference", "numba"):
        with mg.cpu_kernels(name):
            tensors = [mg.tensor(a, requires_grad=True) for a in (q, k, v)]
            out = F.scaled_dot_product_attention(*tensors, is_causal=True, impl="fused")
        calls = []
        if name == "numba":
            def spy(*args, _calls=calls, **kwargs):
                _calls.append(1)
                return numba_attention.attention_backward(*args, **kwargs)
            monkeypatch.setattr(numba_cpu, "attention_backward", spy)
        with mg.cpu_kernels("reference"):
            (out * mg.tensor(dout)).sum().backward()
        assert calls == ([1] if name == "numba" else [])
        results[name] = [out.detach().numpy()] + [t.grad.numpy() for t in tensors]
    assert_close(results["numba"], results["reference"], bound)
