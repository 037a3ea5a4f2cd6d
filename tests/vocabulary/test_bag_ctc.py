"""F.embedding_bag / nn.EmbeddingBag, F.ctc_loss / nn.CTCLoss, F.pdist and
nn.AdaptiveLogSoftmaxWithLoss against PyTorch: float64 values and the gradients of a random
upstream into each input (the table, per-sample weights, log_probs, the rows, every
parameter), float32 within its rounding, the edge cases (empty bags, bags of padding only,
tied and NaN maxima, zero-length targets, impossible alignments with and without
zero_infinity, zero distances), gradcheck of CTC through a log_softmax, the errors'
classes, and the modules' parameters drawn as torch's for one seed."""

import numpy as np
import pytest
import torch

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import nn
from torch_compare import check, pair, same_error

TF = torch.nn.functional


# ----- embedding_bag --------------------------------------------------------------------------
IDS = np.array([1, 2, 2, 5, 0, 3, 3, 6, 1])
LAYOUTS = {                      # (ids, offsets, include_last_offset)
    "offsets-with-empty-bags": (IDS, np.array([0, 3, 3, 7, 9]), False),
    "include-last-offset": (IDS, np.array([0, 3, 3, 7, 9]), True),
    "last-offset-before-the-end": (IDS, np.array([0, 3, 5]), True),    # the rest: last bag
    "two-dim": (IDS[:8].reshape(2, 4), None, False),
}


def _bag_call(lib, ids, table, offsets, **options):
    offsets = None if offsets is None else lib.tensor(offsets)
    return lib.nn.functional.embedding_bag(lib.tensor(ids), table, offsets, **options)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_bag_values_and_table_gradient(mode, layout, padding_idx):
    ids, offsets, last = LAYOUTS[layout]
    ours, theirs = pair(np.random.default_rng(1).standard_normal((7, 4)))
    options = dict(mode=mode, include_last_offset=last, padding_idx=padding_idx)
    check(_bag_call(mg, ids, ours, offsets, **options),
          _bag_call(torch, ids, theirs, offsets, **options), [(ours, theirs)])


@pytest.mark.parametrize("layout", ["offsets-with-empty-bags", "two-dim"])
def test_per_sample_weights_get_torch_gradient(layout):
    ids, offsets, last = LAYOUTS[layout]
    rng = np.random.default_rng(2)
    table, weights = pair(rng.standard_normal((7, 3))), pair(rng.standard_normal(ids.shape))
    options = dict(mode="sum", include_last_offset=last, padding_idx=2)
    check(_bag_call(mg, ids, table[0], offsets, per_sample_weights=weights[0], **options),
          _bag_call(torch, ids, table[1], offsets, per_sample_weights=weights[1], **options),
          [table, weights])


def test_max_takes_the_first_of_ties_and_keeps_only_a_leading_nan():
    table = np.round(np.random.default_rng(3).standard_normal((7, 4)))      # many ties
    table[1] = table[5]
    table[2, 0] = table[3, 1] = np.nan
    for offsets in ([0, 3, 4, 7], [0, 2, 4, 7]):      # NaN first in a bag, and met later
        ours, theirs = pair(table)
        got = _bag_call(mg, IDS, ours, np.array(offsets), mode="max")
        expected = _bag_call(torch, IDS, theirs, np.array(offsets), mode="max")
        np.testing.assert_array_equal(got.detach().numpy(), expected.detach().numpy())
        got.sum().backward()
        expected.sum().backward()
        np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_empty_bags_and_padding_only_bags_are_zeros_without_gradient(mode):
    ours = mg.tensor(np.random.default_rng(4).standard_normal((4, 3)), requires_grad=True)
    out = F.embedding_bag(mg.tensor([2, 2, 1]), ours, mg.tensor([0, 0, 2, 3]), mode=mode,
                          padding_idx=2)
    np.testing.assert_array_equal(out.detach().numpy()[[0, 1, 3]], 0.0)
    out.sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy()[[0, 2, 3]], 0.0)
    empty = F.embedding_bag(mg.tensor(np.zeros(0, np.int64)), ours, mg.tensor([0, 0]),
                            mode=mode)
    assert empty.shape == (2, 3) and not empty.detach().numpy().any()
    assert F.embedding_bag(mg.tensor(np.zeros((0, 2), np.int64)), ours).shape == (0, 3)


def test_max_norm_renormalises_the_rows_looked_up_in_place_as_torch():
    table = np.random.default_rng(5).standard_normal((5, 3)) * 3
    ours, theirs = mg.tensor(table), torch.tensor(table)
    options = dict(mode="sum", max_norm=1.5, norm_type=1.0, padding_idx=3)
    got = _bag_call(mg, [0, 1, 3, 3], ours, np.array([0, 2]), **options)
    expected = _bag_call(torch, [0, 1, 3, 3], theirs, np.array([0, 2]), **options)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)   # padding too
    np.testing.assert_array_equal(ours.numpy()[[2, 4]], table[[2, 4]])


def test_embedding_bag_float32_dtype_and_values():
    table = np.random.default_rng(6).standard_normal((7, 4)).astype(np.float32)
    for mode in ("sum", "mean", "max"):
        got = _bag_call(mg, IDS, mg.tensor(table), np.array([0, 4]), mode=mode)
        expected = _bag_call(torch, IDS, torch.tensor(table), np.array([0, 4]), mode=mode)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda lib, w: _bag_call(lib, IDS, w, np.array([1, 3])),                 # offsets[0] != 0
    lambda lib, w: _bag_call(lib, IDS, w, np.array([0, 10])),                # past the end
    lambda lib, w: _bag_call(lib, IDS[:8].reshape(2, 4), w, np.array([0, 1])),
    lambda lib, w: _bag_call(lib, IDS[:8].reshape(2, 2, 2), w, None),
    lambda lib, w: _bag_call(lib, IDS, w, None),
    lambda lib, w: _bag_call(lib, IDS, w, np.array([[0, 3]])),
    lambda lib, w: _bag_call(lib, IDS, w, np.array([0, 3]), mode="median"),
    lambda lib, w: _bag_call(lib, IDS, w, np.array([0, 3]), mode="mean",
                             per_sample_weights=lib.ones(9, dtype=lib.float64)),
    lambda lib, w: _bag_call(lib, IDS, w, np.array([0, 3]), mode="sum",
                             per_sample_weights=lib.ones(8, dtype=lib.float64)),
    lambda lib, w: _bag_call(lib, IDS, w, np.array([0, 3]), mode="sum",
                             per_sample_weights=lib.ones(9, dtype=lib.float32)),
    lambda lib, w: _bag_call(lib, np.array([1, 7]), w, np.array([0, 1])),    # id out of range
    lambda lib, w: _bag_call(lib, np.array([1.0, 2.0]), w, np.array([0, 1])),
    lambda lib, w: _bag_call(lib, IDS, w, np.array([0, 3]), padding_idx=7),
    lambda lib, w: _bag_call(lib, IDS, w[0], np.array([0, 3])),
    lambda lib, w: _bag_call(lib, IDS[:0].reshape(2, 0), w, None),           # step 0
    lambda lib, w: _bag_call(lib, IDS, w, np.array([0, 3]), mode="max",
                             scale_grad_by_freq=True),
], ids=["first-offset", "last-offset", "2d-with-offsets", "3d", "no-offsets", "2d-offsets",
        "mode", "weights-not-sum", "weights-shape", "weights-dtype", "id-range", "float-ids",
        "padding-range", "1d-weight", "zero-length-rows", "max-scale-grad"])
def test_embedding_bag_errors_have_torch_classes(call):
    table = np.random.default_rng(7).standard_normal((7, 3))
    same_error(lambda: call(mg, mg.tensor(table)), lambda: call(torch, torch.tensor(table)))


def test_embedding_bag_module_draws_as_torch_and_reads_as_torch():
    mg.manual_seed(3)
    torch.manual_seed(3)
    ours = nn.EmbeddingBag(10, 3, mode="max", padding_idx=-2, max_norm=2.0)
    theirs = torch.nn.EmbeddingBag(10, 3, mode="max", padding_idx=-2, max_norm=2.0)
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    assert repr(ours) == repr(theirs)
    ids, offsets = np.array([1, 2, 8, 9, 4]), np.array([0, 2])
    # float32: the renormalised rows round differently in the last place (F.embedding's)
    check(ours(mg.tensor(ids), mg.tensor(offsets)), theirs(torch.tensor(ids),
                                                           torch.tensor(offsets)),
          [(ours.weight, theirs.weight)], atol=1e-6, rtol=1e-6)
    table = [[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]]
    frozen = nn.EmbeddingBag.from_pretrained(mg.tensor(table))
    expected = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(table))
    assert not frozen.weight.requires_grad and repr(frozen) == repr(expected)
    np.testing.assert_allclose(frozen(mg.tensor([[1, 0]])).numpy(),
                               expected(torch.tensor([[1, 0]])).detach().numpy())
    with pytest.raises(ValueError, match="mode"):             # torch: at the first call
        nn.EmbeddingBag(4, 2, mode="median")
    with pytest.raises(AssertionError):
        nn.EmbeddingBag(4, 2, padding_idx=4)


# ----- ctc_loss -----------------------------------------------------------------------------
PADDED = np.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]])


def _log_probs(steps=6, batch=3, classes=5, seed=0, normalized=True, dtype=np.float64):
    x = np.random.default_rng(seed).standard_normal((steps, batch, classes))
    if normalized:
        x = x - np.log(np.exp(x).sum(-1, keepdims=True))
    return x.astype(dtype)


CTC_CASES = {     # name: (targets, input_lengths, target_lengths, options)
    "padded": (PADDED, [6, 5, 3], [3, 2, 2], {}),
    "concatenated-tuples": (np.array([1, 2, 2, 3, 1, 4, 4]), (6, 5, 3), (3, 2, 2), {}),
    "zero-length-targets": (PADDED, [6, 5, 3], [0, 2, 1], {}),
    "zero-length-inputs": (PADDED, [6, 0, 0], [3, 0, 1], {}),
    "impossible": (PADDED, [6, 5, 2], [3, 2, 2], {}),       # 4, 4 needs 3 frames: inf, NaN
    "zero-infinity": (PADDED, [6, 5, 2], [3, 2, 2], {"zero_infinity": True}),
    "blank-4": (np.array([[1, 2, 0], [3, 1, 0], [0, 0, 0]]), [6, 5, 3], [3, 2, 2],
                {"blank": 4}),
}


def _ctc_call(lib, log_probs, targets, input_lengths, target_lengths, **options):
    def lengths(value):
        return value if isinstance(value, tuple) else lib.tensor(np.asarray(value))
    return lib.nn.functional.ctc_loss(log_probs, lib.tensor(targets), lengths(input_lengths),
                                      lengths(target_lengths), **options)


def _check_nan_aware(ours, theirs, inputs, atol=1e-12):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=atol,
                               atol=atol)
    upstream = np.random.default_rng(8).standard_normal(theirs.shape)
    ours.backward(mg.tensor(upstream.astype(ours.dtype)))
    theirs.backward(torch.tensor(upstream, dtype=theirs.dtype))
    for a, b in inputs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=atol, atol=atol)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", CTC_CASES)
def test_ctc_loss_values_and_gradients(case, reduction):
    targets, input_lengths, target_lengths, options = CTC_CASES[case]
    ours, theirs = pair(_log_probs())
    _check_nan_aware(
        _ctc_call(mg, ours, targets, input_lengths, target_lengths, reduction=reduction,
                  **options),
        _ctc_call(torch, theirs, targets, input_lengths, target_lengths, reduction=reduction,
                  **options), [(ours, theirs)])


def test_ctc_impossible_alignment_is_inf_with_nan_gradient_for_its_frames_only():
    ours = mg.tensor(_log_probs(), requires_grad=True)
    losses = F.ctc_loss(ours, mg.tensor(PADDED), (6, 5, 2), (3, 2, 2), reduction="none")
    assert np.isinf(losses.detach().numpy()[2])
    losses.sum().backward()
    assert np.isnan(ours.grad.numpy()[:2, 2]).all() and not ours.grad.numpy()[2:, 2].any()
    assert np.isfinite(ours.grad.numpy()[:, :2]).all()


def test_ctc_gradient_is_torch_formula_for_unnormalised_log_probs_and_float32():
    for dtype, atol in ((np.float64, 1e-12), (np.float32, 2e-5)):
        ours, theirs = pair(_log_probs(normalized=False, seed=9, dtype=dtype))
        got = _ctc_call(mg, ours, PADDED, [6, 5, 3], [3, 2, 2])
        assert got.dtype == dtype
        _check_nan_aware(got, _ctc_call(torch, theirs, PADDED, [6, 5, 3], [3, 2, 2]),
                         [(ours, theirs)], atol=atol)


def test_ctc_longer_sequences_and_unbatched_input():
    rng = np.random.default_rng(10)
    targets = rng.integers(1, 20, (4, 12))
    ours, theirs = pair(_log_probs(steps=40, batch=4, classes=20, seed=11))
    _check_nan_aware(_ctc_call(mg, ours, targets, [40, 31, 25, 38], [12, 10, 8, 11]),
                     _ctc_call(torch, theirs, targets, [40, 31, 25, 38], [12, 10, 8, 11]),
                     [(ours, theirs)], atol=1e-10)
    for targets, reduction in ((np.array([1, 2]), "none"), (np.array([[1, 2, 3]]), "mean")):
        ours, theirs = pair(_log_probs()[:, 0])
        got = _ctc_call(mg, ours, targets, np.array(6), np.array(2), reduction=reduction)
        expected = _ctc_call(torch, theirs, targets, (6,), (2,), reduction=reduction)
        assert got.shape == ()
        _check_nan_aware(got, expected, [(ours, theirs)])


def test_ctc_gradcheck_through_log_softmax():
    # torch's gradient is the logits' under a log_softmax: there it is the true derivative
    logits = mg.tensor(np.random.default_rng(12).standard_normal((5, 2, 4)), requires_grad=True)

    def loss(x):
        return F.ctc_loss(x.log_softmax(2), mg.tensor([[1, 3, 3], [2, 0, 0]]), (5, 4), (3, 1),
                          reduction="sum")
    assert mg.gradcheck(loss, (logits,))
    assert loss(logits).grad_fn.next_functions[0][0].name() == "CtcLossBackward0"


@pytest.mark.parametrize("call", [
    lambda lib, x: _ctc_call(lib, x, PADDED, [6, 5, 3], [3, 2, 2], blank=5),
    lambda lib, x: _ctc_call(lib, x, PADDED, [6, 5, 3], [3, 2, 2], reduction="avg"),
    lambda lib, x: _ctc_call(lib, x, PADDED, (6, 5), (3, 2, 2)),
    lambda lib, x: _ctc_call(lib, x, PADDED, [7, 5, 3], [3, 2, 2]),
    lambda lib, x: _ctc_call(lib, x, PADDED, [6, 5, 3], [-1, 2, 2]),
    lambda lib, x: _ctc_call(lib, x, PADDED, [6, 5, 3], [4, 2, 2]),
    lambda lib, x: _ctc_call(lib, x, PADDED.reshape(-1)[:6], [6, 5, 3], [3, 2, 2]),
    lambda lib, x: _ctc_call(lib, x, PADDED, np.array([6.0, 5.0, 3.0]), [3, 2, 2]),
    lambda lib, x: _ctc_call(lib, x.half(), PADDED, [6, 5, 3], [3, 2, 2]),
    lambda lib, x: _ctc_call(lib, x[:, :0], PADDED[:0], [], []),
    lambda lib, x: _ctc_call(lib, x[None], PADDED, [6, 5, 3], [3, 2, 2]),
    lambda lib, x: _ctc_call(lib, x, PADDED[:, :, None], [6, 5, 3], [3, 2, 2]),
    lambda lib, x: lib.nn.functional.ctc_loss(x[:, 0], lib.tensor([1, 2]), 6, 2),
    lambda lib, x: _ctc_call(lib, x, PADDED, (6, 5, 3), [3, 2, 2]),
], ids=["blank", "reduction", "input-lengths-size", "input-too-long", "negative-target",
        "padded-too-short", "concatenated-size", "float-lengths", "half", "empty", "4d",
        "3d-targets", "int-lengths", "tuple-and-tensor-lengths"])
def test_ctc_errors_have_torch_classes(call):
    x = _log_probs()
    same_error(lambda: call(mg, mg.tensor(x)), lambda: call(torch, torch.tensor(x)))


def test_ctc_module_is_the_function_with_its_options():
    loss = nn.CTCLoss(blank=4, reduction="sum", zero_infinity=True)
    x = mg.tensor(_log_probs())
    targets = mg.tensor(CTC_CASES["blank-4"][0])
    np.testing.assert_array_equal(
        loss(x, targets, (6, 5, 2), (3, 2, 2)).numpy(),
        F.ctc_loss(x, targets, (6, 5, 2), (3, 2, 2), 4, "sum", True).numpy())
    assert repr(loss) == repr(torch.nn.CTCLoss(blank=4)) == "CTCLoss()"
    with pytest.raises(TypeError):
        nn.CTCLoss(zero_infinity=1)


# ----- pdist --------------------------------------------------------------------------------
ROWS = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [1.0, 1.0, 5.0], [3.0, -1.0, 3.0]])


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, np.inf])
def test_pdist_values_and_gradient_with_a_zero_distance_and_ties(p):
    ours, theirs = pair(ROWS)          # rows 0 and 1 coincide; p = inf ties in pair (2, 3)
    check(F.pdist(ours, p), torch.pdist(theirs, p), [(ours, theirs)])
    x = np.random.default_rng(13).standard_normal((6, 4)).astype(np.float32)
    np.testing.assert_allclose(mg.pdist(mg.tensor(x), p).numpy(),
                               torch.pdist(torch.tensor(x), p).numpy(), rtol=2e-6, atol=2e-6)


def test_pdist_shapes_and_errors():
    assert mg.pdist(mg.zeros(1, 3)).shape == (0,) and mg.pdist(mg.zeros(0, 3)).shape == (0,)
    assert mg.pdist(mg.zeros(5, 2)).shape == (10,)
    np.testing.assert_array_equal(mg.pdist(mg.ones(3, 0)).numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_allclose(F.pdist(mg.tensor(ROWS), p=mg.tensor(2.0)).numpy(),
                               torch.pdist(torch.tensor(ROWS)).numpy())
    for call in (lambda lib, x: lib.pdist(x[None]), lambda lib, x: lib.pdist(x[0]),
                 lambda lib, x: lib.pdist(x.long()), lambda lib, x: lib.pdist(x, -1.0),
                 lambda lib, x: lib.pdist(x.half())):
        same_error(lambda call=call: call(mg, mg.tensor(ROWS)),
                   lambda call=call: call(torch, torch.tensor(ROWS)))


# ----- AdaptiveLogSoftmaxWithLoss -----------------------------------------------------------
def _adaptive_pair(**options):
    mg.manual_seed(5)
    torch.manual_seed(5)
    arguments = dict(in_features=16, n_classes=30, cutoffs=[5, 12, 20], div_value=2.0,
                     **options)
    return (nn.AdaptiveLogSoftmaxWithLoss(**arguments).to(dtype="float64"),
            torch.nn.AdaptiveLogSoftmaxWithLoss(**arguments).double())


def test_adaptive_softmax_parameters_output_loss_and_gradients_are_torch():
    ours, theirs = _adaptive_pair(head_bias=True)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    x, y = pair(np.random.default_rng(14).standard_normal((9, 16)))
    target = np.array([0, 4, 5, 11, 12, 29, 20, 3, 7])
    got, expected = ours(x, mg.tensor(target)), theirs(y, torch.tensor(target))
    assert type(got).__name__ == "_ASMoutput" and got._fields == ("output", "loss")
    np.testing.assert_allclose(got.output.detach().numpy(), expected.output.detach().numpy(),
                               rtol=1e-12)
    check(got.loss, expected.loss, [(x, y)] + list(zip(ours.parameters(), theirs.parameters())))
    np.testing.assert_allclose(ours.log_prob(x).detach().numpy(),
                               theirs.log_prob(y).detach().numpy(), rtol=1e-12)
    single = ours(x[0], mg.tensor(target[0])), theirs(y[0], torch.tensor(target[0]))
    assert single[0].output.shape == () and single[0].loss.shape == ()
    np.testing.assert_allclose(single[0].output.item(), single[1].output.item(), rtol=1e-12)


def test_adaptive_softmax_predict_in_each_of_torch_three_branches():
    ours, theirs = _adaptive_pair()
    rows = np.random.default_rng(15).standard_normal((12, 16))
    with torch.no_grad():
        for bias in (10.0, -10.0, None):      # all in the shortlist, none, mixed
            theirs.head.weight[:5] += 0 if bias is None else bias
            ours.head.weight.data = mg.tensor(theirs.head.weight.numpy().copy())
            np.testing.assert_array_equal(ours.predict(mg.tensor(rows)).numpy(),
                                          theirs.predict(torch.tensor(rows)).numpy())
            theirs.head.weight[:5] -= 0 if bias is None else bias


@pytest.mark.parametrize("call", [
    lambda lib, m, x: m(x, lib.tensor([0, 30, 1, 2, 3, 4, 5, 6, 7])),        # out of range
    lambda lib, m, x: m(x, lib.tensor([0, 1])),
    lambda lib, m, x: m(x, lib.tensor([[0, 1]])),
    lambda lib, m, x: m(x[0], lib.tensor([0])),
    lambda lib, m, x: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 30, [12, 5]),
    lambda lib, m, x: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 30, []),
    lambda lib, m, x: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 30, [5, 30]),
], ids=["target-range", "batch", "2d-target", "1d-input-1d-target", "unsorted", "empty",
        "cutoff-range"])
def test_adaptive_softmax_errors_have_torch_classes(call):
    ours, theirs = _adaptive_pair()
    x = np.random.default_rng(16).standard_normal((9, 16))
    same_error(lambda: call(mg, ours, mg.tensor(x)), lambda: call(torch, theirs,
                                                                  torch.tensor(x)))
