"""torch's top-level spellings of the nn.functional ops, with torch's own argument orders
(the norms, convolutions, dropouts, embedding, pools, losses with int reductions), the
other names torch has at its top level (select, chain_matmul, frobenius_norm, ...), stft and
istft, histogramdd, the low-rank SVD and PCA, frombuffer and DLPack, and
linalg.ldl_factor/ldl_solve: each against torch at test time, values, dtypes, gradients and
errors (the rest: test_missing_vocabulary_more.py)."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import microgradnorm as mg  # noqa: E402
import microgradnorm.functional as F  # noqa: E402

RNG = np.random.default_rng(0)


class Const:
    """An array passed to both libraries as a tensor that does not require grad."""

    def __init__(self, array):
        self.array = np.asarray(array)


def _pair(value):
    if isinstance(value, Const):
        return mg.tensor(value.array), torch.tensor(value.array)
    if isinstance(value, np.ndarray):
        grad = value.dtype.kind in "fc"
        return mg.tensor(value, requires_grad=grad), torch.tensor(value, requires_grad=grad)
    return value, value


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def check(name, *args, atol=1e-10, **options):
    """``mg.name`` and ``torch.name`` on the same arguments (arrays become a tensor of
    each library, floating ones requiring grad): every output's values and dtype, then each
    input's gradient of one upstream per floating output."""
    ours, theirs = zip(*[_pair(a) for a in args]) if args else ((), ())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = getattr(mg, name)(*ours, **options), getattr(torch, name)(*theirs, **options)
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want)
    losses, references = [], []
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype) == str(w.dtype)
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), atol=atol)
        if w.requires_grad and w.numel():
            upstream = RNG.standard_normal(tuple(w.shape))
            losses.append((g * mg.tensor(upstream)).sum())
            references.append((w * torch.tensor(upstream)).sum())
    if losses:
        sum(losses[1:], losses[0]).backward()
        sum(references[1:], references[0]).backward()
        for a, b in zip(ours, theirs):
            if isinstance(b, torch.Tensor) and b.requires_grad:
                assert (a.grad is None) == (b.grad is None)
                if b.grad is not None:
                    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=atol)
    return got


def same_error(ours, theirs):
    with pytest.raises(Exception) as expected:                 # noqa: PT011 (torch's class)
        theirs(torch)
    with pytest.raises(expected.type):
        ours(mg)


def randn(*shape):
    return RNG.standard_normal(shape)


# ----- the norms ------------------------------------------------------------------------------
def test_layer_norm_and_rms_norm():
    check("layer_norm", randn(3, 4, 5), [4, 5], randn(4, 5), randn(4, 5), 1e-5, True)
    check("layer_norm", randn(3, 5), (5,))
    check("layer_norm", randn(2, 6), [6], None, randn(6), 1e-3, False)
    check("rms_norm", randn(3, 4), [4], randn(4), 1e-6)
    check("rms_norm", randn(3, 4), (4,))
    check("rms_norm", randn(2, 3).astype(np.float32), [3], None, None, atol=1e-6)
    same_error(lambda m: m.layer_norm(m.ones(2, 3), [3], None, None, 1e-5, 1),
               lambda t: t.layer_norm(t.ones(2, 3), [3], None, None, 1e-5, 1))
    same_error(lambda m: m.layer_norm(m.ones(2, 3), [4]), lambda t: t.layer_norm(t.ones(2, 3), [4]))
    for shape in (3, (3.0,)):
        for name in ("layer_norm", "rms_norm"):
            same_error(lambda m, name=name, shape=shape: getattr(m, name)(m.ones(2, 3), shape),
                       lambda t, name=name, shape=shape: getattr(t, name)(t.ones(2, 3), shape))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_takes_torchs_order_and_updates_running_stats(training):
    x, w, b = randn(4, 3, 5), randn(3), randn(3)
    mean, var = randn(3), RNG.uniform(0.5, 2, 3)
    ours_stats = [mg.tensor(mean.copy()), mg.tensor(var.copy())]
    torch_stats = [torch.tensor(mean.copy()), torch.tensor(var.copy())]
    (mx, tx), (mw, tw), (mb, tb) = _pair(x), _pair(w), _pair(b)
    got = mg.batch_norm(mx, mw, mb, *ours_stats, training, 0.2, 1e-4, False)
    want = torch.batch_norm(tx, tw, tb, *torch_stats, training, 0.2, 1e-4, False)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-10)
    for a, c in zip(ours_stats, torch_stats):
        np.testing.assert_allclose(a.numpy(), c.numpy(), atol=1e-12)
    up = randn(4, 3, 5)
    (got * mg.tensor(up)).sum().backward()
    (want * torch.tensor(up)).sum().backward()
    for a, c in ((mx, tx), (mw, tw), (mb, tb)):
        np.testing.assert_allclose(a.grad.numpy(), c.grad.numpy(), atol=1e-10)
    if training:                     # no running statistics at all
        check("batch_norm", randn(4, 3), None, None, None, None, True, 0.1, 1e-5, True)
    same_error(lambda m: m.batch_norm(m.ones(2, 3), None, None, None, None, 1, 0.1, 1e-5, True),
               lambda t: t.batch_norm(t.ones(2, 3), None, None, None, None, 1, 0.1, 1e-5, True))
    same_error(lambda m: m.batch_norm(m.ones(2, 3), None, None),
               lambda t: t.batch_norm(t.ones(2, 3), None, None))


def test_group_norm_and_instance_norm():
    check("group_norm", randn(2, 6, 4), 3, randn(6), randn(6), 1e-5, True)
    check("group_norm", randn(2, 4, 3, 3), 2)
    check("instance_norm", randn(2, 3, 5), randn(3), randn(3), None, None, True, 0.1, 1e-5,
          False)
    mean, var = randn(3), RNG.uniform(0.5, 2, 3)
    ours_stats = [mg.tensor(mean.copy()), mg.tensor(var.copy())]
    torch_stats = [torch.tensor(mean.copy()), torch.tensor(var.copy())]
    x = randn(2, 3, 5)
    got = mg.instance_norm(mg.tensor(x), None, None, *ours_stats, True, 0.3, 1e-5, False)
    want = torch.instance_norm(torch.tensor(x), None, None, *torch_stats, True, 0.3, 1e-5, False)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-10)
    for a, c in zip(ours_stats, torch_stats):
        np.testing.assert_allclose(a.numpy(), c.numpy(), atol=1e-12)
    check("instance_norm", randn(2, 3, 5), None, None, Const(mean), Const(var), False, 0.1,
          1e-5, False)
    same_error(lambda m: m.group_norm(m.ones(2, 6), 4), lambda t: t.group_norm(t.ones(2, 6), 4))


def test_the_norm_aliases_use_the_registrys_entries():
    x = mg.tensor(randn(2, 4), requires_grad=True)
    assert type(mg.layer_norm(x, [4]).grad_fn).__name__ == \
        type(F.layer_norm(x, [4]).grad_fn).__name__


# ----- convolutions ---------------------------------------------------------------------------
def test_convolutions_under_torchs_names():
    check("conv1d", randn(2, 3, 7), randn(4, 3, 3), randn(4), 2, 1)
    check("conv2d", randn(1, 2, 5, 5), randn(3, 2, 3, 3), None, 1, "same")
    check("conv3d", randn(1, 2, 4, 4, 4), randn(2, 2, 2, 2, 2))
    check("conv_transpose1d", randn(2, 3, 5), randn(3, 2, 3), randn(2), 2, 1, 1)
    check("conv_transpose2d", randn(1, 2, 3, 3), randn(2, 3, 2, 2))
    check("conv_transpose3d", randn(1, 2, 2, 2, 2), randn(2, 1, 2, 2, 2))


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_conv_tbc(pad):
    check("conv_tbc", randn(6, 2, 3), randn(3, 3, 4), randn(4), pad)
    same_error(lambda m: m.conv_tbc(m.ones(6, 2, 3), m.ones(3, 2, 4), m.ones(4)),
               lambda t: t.conv_tbc(t.ones(6, 2, 3), t.ones(3, 2, 4), t.ones(4)))
    same_error(lambda m: m.conv_tbc(m.ones(6, 2), m.ones(3, 2, 4), m.ones(4)),
               lambda t: t.conv_tbc(t.ones(6, 2), t.ones(3, 2, 4), t.ones(4)))
    same_error(lambda m: m.conv_tbc(m.ones(3, 2, 3), m.ones(5, 3, 2), m.ones(2)),
               lambda t: t.conv_tbc(t.ones(3, 2, 3), t.ones(5, 3, 2), t.ones(2)))
    assert mg.conv_tbc(mg.ones(4, 2, 3), mg.ones(5, 3, 2), mg.ones(2)).shape == \
        tuple(torch.conv_tbc(torch.ones(4, 2, 3), torch.ones(5, 3, 2), torch.ones(2)).shape)


# ----- dropout: torch's draws for one seed ----------------------------------------------------
@pytest.mark.parametrize("name", ["dropout", "feature_dropout", "alpha_dropout",
                                  "feature_alpha_dropout"])
def test_dropouts_replay_torchs_draws(name):
    x = randn(3, 4, 5)
    for inplace in (False, True):
        fn = name + "_" if inplace else name
        mg.manual_seed(3)
        torch.manual_seed(3)
        ours, theirs = mg.tensor(x.copy()), torch.tensor(x.copy())
        got, want = getattr(mg, fn)(ours, 0.4, True), getattr(torch, fn)(theirs, 0.4, True)
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)
        assert (got is ours) == (want is theirs)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    (mx, tx) = _pair(x)
    mg.manual_seed(5)
    torch.manual_seed(5)
    got, want = getattr(mg, name)(mx, 0.3, True), getattr(torch, name)(tx, 0.3, True)
    up = randn(3, 4, 5)
    (got * mg.tensor(up)).sum().backward()
    (want * torch.tensor(up)).sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    assert getattr(mg, name)(mx, 0.5, False) is mx
    same_error(lambda m: getattr(m, name)(m.ones(3), 0.5, 1),
               lambda t: getattr(t, name)(t.ones(3), 0.5, 1))
    for p, train in ((1.5, True), (-0.1, False), ("a", True)):
        same_error(lambda m, p=p, train=train: getattr(m, name)(m.ones(3, 2), p, train),
                   lambda t, p=p, train=train: getattr(t, name)(t.ones(3, 2), p, train))


# ----- embedding ------------------------------------------------------------------------------
def test_embedding_takes_the_table_first():
    ids = np.array([[0, 2], [2, 3]])
    check("embedding", randn(4, 3), ids)
    check("embedding", randn(4, 3), ids, 2)
    check("embedding", randn(4, 3), ids, -1, True)
    check("embedding", randn(4, 3), ids, 7)             # outside the table: no padding row
    same_error(lambda m: m.embedding(m.ones(4, 3), m.tensor([4])),
               lambda t: t.embedding(t.ones(4, 3), t.tensor([4])))


def test_embedding_renorm_():
    table = randn(5, 3) * 3
    ours, theirs = mg.tensor(table.copy()), torch.tensor(table.copy())
    ids = np.array([0, 3, 3])
    assert mg.embedding_renorm_(ours, mg.tensor(ids), 1.5, 2.0) is ours
    torch.embedding_renorm_(theirs, torch.tensor(ids), 1.5, 2.0)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)
    ours, theirs = mg.tensor(table.copy()), torch.tensor(table.copy())
    mg.embedding_renorm_(ours, mg.tensor(ids), 0.5, 1.0)
    torch.embedding_renorm_(theirs, torch.tensor(ids), 0.5, 1.0)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)


# ----- pooling --------------------------------------------------------------------------------
def test_pools_under_torchs_names():
    check("max_pool1d", randn(2, 3, 9), 3)
    check("max_pool1d", randn(2, 3, 9), [3], [2], [1], [1], True)
    check("max_pool2d", randn(1, 2, 6, 6), [2, 2], [], 1)
    check("max_pool3d", randn(1, 1, 4, 4, 4), 2, 1)
    check("max_pool1d_with_indices", randn(2, 3, 9), 2, 2, 1)
    check("avg_pool1d", randn(2, 3, 9), 3, 2, 1, True, False)
    check("avg_pool1d", randn(2, 3, 8), [2])
    check("adaptive_avg_pool1d", randn(2, 3, 9), 4)
    check("adaptive_max_pool1d", randn(2, 3, 9), 4)


# ----- losses with int reductions ------------------------------------------------------------
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_losses_with_int_reductions(reduction):
    x, y = randn(4, 3), RNG.uniform(0, 1, (4, 3))
    sign = np.array([1.0, -1.0, 1.0, -1.0])
    check("binary_cross_entropy_with_logits", x, y, Const(RNG.uniform(0, 1, 3)),
          Const(RNG.uniform(0.5, 2, 3)), reduction)
    check("binary_cross_entropy_with_logits", x, Const(y), None, None, reduction)
    check("cosine_embedding_loss", randn(4, 3), randn(4, 3), sign, 0.1, reduction)
    check("hinge_embedding_loss", x, np.sign(randn(4, 3)), 0.5, reduction)
    check("margin_ranking_loss", randn(4), randn(4), sign, 0.2, reduction)
    check("triplet_margin_loss", randn(4, 3), randn(4, 3), randn(4, 3), 1.0, 2.0, 1e-6, True,
          reduction)
    check("poisson_nll_loss", x, RNG.uniform(0, 3, (4, 3)), True, True, 1e-8, reduction)
    check("poisson_nll_loss", RNG.uniform(0.1, 2, (4, 3)), RNG.uniform(0, 3, (4, 3)), False,
          False, 1e-8, reduction)
    check("kl_div", np.log(RNG.uniform(0.1, 1, (4, 3))), RNG.uniform(0.1, 1, (4, 3)),
          reduction)
    check("kl_div", randn(4, 3), randn(4, 3), reduction, log_target=True)
    log_probs = np.log(RNG.dirichlet(np.ones(4), (6, 2)))
    check("ctc_loss", log_probs, np.array([[1, 2, 2], [3, 1, 0]]), [6, 5], [3, 2], 0,
          reduction, False)
    same_error(lambda m: m.kl_div(m.ones(3), m.ones(3), "mean"),
               lambda t: t.kl_div(t.ones(3), t.ones(3), "mean"))


def test_same_signature_names():
    check("bilinear", randn(3, 2), randn(3, 4), randn(5, 2, 4), randn(5))
    check("cosine_similarity", randn(3, 4), randn(3, 4), 1, 1e-8)
    check("channel_shuffle", randn(1, 6, 2, 2), 3)
    check("split_with_sizes", randn(5, 2), [2, 3])
    check("split_with_sizes", randn(2, 5), [1, 4], 1)
    check("affine_grid_generator", randn(2, 2, 3), [2, 1, 4, 5], False)
    check("affine_grid_generator", randn(1, 3, 4), [1, 1, 2, 3, 4], True)


# ----- tensor norms, products, views ---------------------------------------------------------
def test_norm_except_dim():
    for dim in (0, 1, 2, -1, -2):
        check("norm_except_dim", randn(3, 4, 5), 2, dim)
    check("norm_except_dim", randn(3, 4), 3, 1)
    check("norm_except_dim", randn(4), 2, 0)
    check("norm_except_dim", randn(3, 4))


def test_deprecated_norms_and_chain_matmul():
    check("frobenius_norm", randn(3, 4, 5), (0, 2))
    check("frobenius_norm", randn(3, 4, 5), [1], True)
    check("frobenius_norm", randn(3, 4), ())
    check("nuclear_norm", randn(3, 4, 5))
    check("nuclear_norm", randn(3, 4, 5), True)
    check("nuclear_norm", randn(3, 4, 5), (0, 2))
    check("nuclear_norm", randn(3, 4, 5), [2, 1], True)
    check("chain_matmul", randn(2, 3), randn(3, 4), randn(4, 2))
    check("chain_matmul", randn(2, 3))
    with pytest.warns(UserWarning, match="deprecated"):
        mg.frobenius_norm(mg.ones(2, 2), (0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda m: m.frobenius_norm(m.ones(2, 2, 2), (0, 1, 2)),
                   lambda t: t.frobenius_norm(t.ones(2, 2, 2), (0, 1, 2)))
        same_error(lambda m: m.chain_matmul(), lambda t: t.chain_matmul())


def test_select_as_strided_and_conj_physical_():
    check("select", randn(3, 4), 1, -2)
    check("select", randn(3, 4), 0, 2)
    same_error(lambda m: m.select(m.ones(3), 0, 5), lambda t: t.select(t.ones(3), 0, 5))
    data = np.arange(12.0)
    ours, theirs = mg.tensor(data.copy()), torch.tensor(data.copy())
    assert mg.as_strided_(ours, (3, 2), (4, 1), 1) is ours
    torch.as_strided_(theirs, (3, 2), (4, 1), 1)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    z = np.array([1 + 2j, -3j, 0.5])
    ours, theirs = mg.tensor(z.copy()), torch.tensor(z.copy())
    assert mg.conj_physical_(ours) is ours
    torch.conj_physical_(theirs)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    real = mg.tensor([1.0, 2.0])
    assert mg.conj_physical_(real) is real and real.tolist() == [1.0, 2.0]


# ----- stft and istft -------------------------------------------------------------------------
def _complex_check(got, want, inputs):
    """Values of a complex (or real) result, then the gradients of each input pair."""
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-10)
    ours = mg.view_as_real(got) if got.dtype.kind == "c" else got
    theirs = torch.view_as_real(want) if want.is_complex() else want
    up = RNG.standard_normal(tuple(theirs.shape))
    (ours * mg.tensor(up)).sum().backward()
    (theirs * torch.tensor(up)).sum().backward()
    for a, b in inputs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("signal, options", [
    ((40,), dict(n_fft=8, return_complex=True)),
    ((2, 40), dict(n_fft=8, hop_length=3, win_length=6, normalized=True, return_complex=True)),
    ((2, 40), dict(n_fft=8, hop_length=3, center=False, onesided=False, return_complex=True)),
    ((41,), dict(n_fft=7, hop_length=2, pad_mode="constant", return_complex=True)),
    ((40,), dict(n_fft=8, hop_length=2, return_complex=False)),
    ("complex", dict(n_fft=8, hop_length=2)),
])
def test_stft(signal, options):
    array = RNG.standard_normal(40) + 1j * RNG.standard_normal(40) if signal == "complex" \
        else RNG.standard_normal(signal)
    win = options.get("win_length", options["n_fft"])
    window = RNG.uniform(0.5, 1, win)
    (x, tx), (w, tw) = _pair(array), _pair(window)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = mg.stft(x, window=w, **options), torch.stft(tx, window=tw, **options)
    _complex_check(got, want, [(x, tx), (w, tw)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        method = x.detach().stft(window=w.detach(), **options)
    np.testing.assert_array_equal(method.numpy(), got.detach().numpy())


@pytest.mark.filterwarnings("ignore:A window was not provided")
def test_stft_errors():
    same_error(lambda m: m.stft(m.ones(40), 8), lambda t: t.stft(t.ones(40), 8))
    same_error(lambda m: m.stft(m.ones(4), 8, center=False, return_complex=True),
               lambda t: t.stft(t.ones(4), 8, center=False, return_complex=True))
    same_error(lambda m: m.stft(m.ones(40), 8, window=m.ones(5), return_complex=True),
               lambda t: t.stft(t.ones(40), 8, window=t.ones(5), return_complex=True))
    same_error(lambda m: m.stft(m.ones(40), 8, win_length=9, return_complex=True),
               lambda t: t.stft(t.ones(40), 8, win_length=9, return_complex=True))


@pytest.mark.parametrize("options", [
    dict(n_fft=8, hop_length=2), dict(n_fft=8, hop_length=2, length=40),
    dict(n_fft=8, hop_length=2, length=45), dict(n_fft=8, hop_length=2, normalized=True),
    dict(n_fft=8, hop_length=2, win_length=6),
    dict(n_fft=8, hop_length=2, center=False, onesided=False),
    dict(n_fft=8, hop_length=2, center=False, onesided=False, return_complex=True),
])
def test_istft(options):
    win = options.get("win_length", 8)
    window = torch.hann_window(win + 2, dtype=torch.float64)[1:-1].numpy()
    onesided = options.get("onesided", True)
    spectrum = torch.stft(torch.tensor(RNG.standard_normal((2, 40))), 8, 2, win_length=win,
                          window=torch.tensor(window), center=options.get("center", True),
                          onesided=onesided, return_complex=True).numpy()
    (s, ts), (w, tw) = _pair(spectrum), _pair(window)
    s.requires_grad_(True)
    ts.requires_grad_(True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = mg.istft(s, window=w, **options), torch.istft(ts, window=tw, **options)
    _complex_check(got, want, [(s, ts), (w, tw)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda m: m.istft(m.ones(5, 3), 8), lambda t: t.istft(t.ones(5, 3), 8))
    square = np.ones((5, 17), complex)
    same_error(lambda m: m.istft(m.tensor(square), 8, 4, window=m.hann_window(8),
                                 center=False),
               lambda t: t.istft(t.tensor(square), 8, 4, window=t.hann_window(8),
                                 center=False))


# ----- histogramdd, low-rank SVD, buffers and DLPack -----------------------------------------
@pytest.mark.parametrize("points, bins, options", [
    ((50, 2), 4, {}), ((50, 3), [2, 3, 4], {}),
    ((5, 10, 2), 3, dict(range=[-1.0, 1.0, -2.0, 2.0], density=True)),
    ((50, 2), 4, dict(weight=True)), ((50, 2), "edges", {}), ((0, 2), 3, {}),
    ((50, 2), "edges", dict(range=[-5.0, 5.0, -5.0, 5.0], density=True)),
])
def test_histogramdd(points, bins, options):
    data = RNG.standard_normal(points)
    mine, theirs = dict(options), dict(options)
    if options.get("weight"):
        weight = RNG.uniform(size=points[:-1])
        mine["weight"], theirs["weight"] = mg.tensor(weight), torch.tensor(weight)
    if bins == "edges":
        edges = [np.array([-1.0, 0.0, 2.0]), np.array([-3.0, 0.0, 0.5, 3.0])]
        ours_bins, torch_bins = [mg.tensor(e) for e in edges], [torch.tensor(e) for e in edges]
    else:
        ours_bins = torch_bins = bins
    got = mg.histogramdd(mg.tensor(data), ours_bins, **mine)
    want = torch.histogramdd(torch.tensor(data), torch_bins, **theirs)
    assert type(got).__name__ == "histogramdd"
    np.testing.assert_allclose(got.hist.numpy(), want.hist.numpy(), atol=1e-12)
    assert len(got.bin_edges) == len(want.bin_edges)
    for a, b in zip(got.bin_edges, want.bin_edges):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("name, shape, options", [
    ("svd_lowrank", (10, 6), dict(q=3)), ("svd_lowrank", (5, 9), dict(q=4, niter=1)),
    ("svd_lowrank", (2, 8, 5), {}), ("pca_lowrank", (10, 6), dict(q=3)),
    ("pca_lowrank", (10, 6), dict(center=False)),
])
def test_lowrank_replays_torchs_draw(name, shape, options):
    # singular vectors are unique up to sign (LAPACK builds differ): compare S, U S Vᴴ and
    # their gradients
    (x, tx) = _pair(RNG.standard_normal(shape))
    mg.manual_seed(4)
    torch.manual_seed(4)
    got, want = getattr(mg, name)(x, **options), getattr(torch, name)(tx, **options)
    assert [tuple(g.shape) for g in got] == [tuple(w.shape) for w in want]
    np.testing.assert_allclose(got[1].detach().numpy(), want[1].detach().numpy(), atol=1e-9)
    ours = got[0] @ mg.diag_embed(got[1]) @ got[2].mH
    theirs = want[0] @ torch.diag_embed(want[1]) @ want[2].mH
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-9)
    up, up_s = RNG.standard_normal(ours.shape), RNG.standard_normal(got[1].shape)
    ((ours * mg.tensor(up)).sum() + (got[1] * mg.tensor(up_s)).sum()).backward()
    ((theirs * torch.tensor(up)).sum() + (want[1] * torch.tensor(up_s)).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-8)
    same_error(lambda m: m.pca_lowrank(m.ones(3, 4), q=5),
               lambda t: t.pca_lowrank(t.ones(3, 4), q=5))


def test_frombuffer():
    raw = bytearray(np.arange(4, dtype=np.int32).tobytes())
    got = mg.frombuffer(raw, dtype=mg.int32, count=2, offset=4)
    want = torch.frombuffer(raw, dtype=torch.int32, count=2, offset=4)
    assert got.tolist() == want.tolist() and got.dtype == np.int32
    raw[4] = 9                                     # shared memory, both ways
    assert got.tolist() == want.tolist() == [9, 2]
    grad = mg.frombuffer(bytearray(8), dtype=mg.float32, requires_grad=True)
    assert grad.requires_grad and grad.is_leaf
    for options in (dict(offset=13), dict(count=5), dict(offset=2), dict(count=0)):
        same_error(lambda m, o=options: m.frombuffer(raw, dtype=m.int32, **o),
                   lambda t, o=options: t.frombuffer(raw, dtype=t.int32, **o))
    same_error(lambda m: m.frombuffer(bytearray(), dtype=m.int32),
               lambda t: t.frombuffer(bytearray(), dtype=t.int32))
    same_error(lambda m: m.frombuffer([1, 2], dtype=m.int32),
               lambda t: t.frombuffer([1, 2], dtype=t.int32))


def test_dlpack_both_ways():
    theirs = torch.arange(4.0)
    ours = mg.from_dlpack(theirs)
    theirs[0] = 5.0
    assert ours.tolist() == theirs.tolist()
    assert mg.from_dlpack(torch.to_dlpack(torch.arange(3))).tolist() == [0, 1, 2]
    capsule = mg.to_dlpack(mg.arange(3))
    assert torch.from_dlpack(capsule).tolist() == [0, 1, 2]
    x = mg.arange(6.0).reshape(2, 3).t()
    back = torch.from_dlpack(x)
    assert back.tolist() == x.tolist() and back.stride() == (1, 3)
    assert mg.from_dlpack(np.arange(3)).tolist() == [0, 1, 2]
    used = torch.to_dlpack(torch.arange(2))
    torch.from_dlpack(used)
    same_error(lambda m: m.from_dlpack(used), lambda t: t.from_dlpack(used))


# ----- linalg.ldl_factor / ldl_solve ---------------------------------------------------------
def _symmetric(shape, dtype=np.float64, hermitian=False):
    a = RNG.standard_normal(shape)
    if dtype == np.complex128:
        a = a + 1j * RNG.standard_normal(shape)
    return a + (a.conj() if hermitian else a).swapaxes(-1, -2)


def _small_diagonal(a):
    # a diagonal much smaller than the rest: Bunch-Kaufman takes 2×2 pivots
    a = a.copy()
    np.einsum("...ii->...i", a)[...] *= 1e-3
    return a


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 20, 80])
def test_ldl_factor_and_solve(n):
    hermitian = _symmetric((2, n, n), np.complex128, hermitian=True)
    for a, herm in ((_symmetric((n, n)), False), (_symmetric((2, n, n)), True),
                    (_symmetric((n, n), np.complex128), False), (hermitian, True),
                    (_small_diagonal(hermitian), True)):
        got = mg.linalg.ldl_factor_ex(mg.tensor(a), hermitian=herm)
        want = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=herm)
        np.testing.assert_array_equal(got.pivots.numpy(), want.pivots.numpy())
        assert got.pivots.dtype == np.int32 and got.info.shape == tuple(want.info.shape)
        np.testing.assert_allclose(got.LD.numpy(), want.LD.numpy(), atol=1e-9, rtol=1e-8)
        b = RNG.standard_normal(a.shape[:-1] + (3,)).astype(a.dtype)
        x = mg.linalg.ldl_solve(got.LD, got.pivots, mg.tensor(b), hermitian=herm)
        y = torch.linalg.ldl_solve(want.LD, want.pivots, torch.tensor(b), hermitian=herm)
        np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-8, rtol=1e-7)
        LD, pivots = mg.linalg.ldl_factor(mg.tensor(a), hermitian=herm)
        np.testing.assert_array_equal(LD.numpy(), got.LD.numpy())


def test_ldl_pivots_of_an_indefinite_matrix_and_errors():
    a = np.array([[0.0, 1, 2], [1, 0, 3], [2, 3, 0]])
    got, want = mg.linalg.ldl_factor(mg.tensor(a)), torch.linalg.ldl_factor(torch.tensor(a))
    assert got.pivots.tolist() == want.pivots.tolist()
    np.testing.assert_allclose(got.LD.numpy(), want.LD.numpy(), atol=1e-12)
    info = mg.linalg.ldl_factor_ex(mg.zeros(3, 3)).info
    assert info.item() == torch.linalg.ldl_factor_ex(torch.zeros(3, 3)).info.item()
    same_error(lambda m: m.linalg.ldl_factor(m.zeros(3, 3)),
               lambda t: t.linalg.ldl_factor(t.zeros(3, 3)))
    same_error(lambda m: m.linalg.ldl_factor(m.ones(2, 3)),
               lambda t: t.linalg.ldl_factor(t.ones(2, 3)))
    same_error(lambda m: m.linalg.ldl_factor(m.ones(3, 3), hermitian=1),
               lambda t: t.linalg.ldl_factor(t.ones(3, 3), hermitian=1))
    LD, pivots = mg.linalg.ldl_factor(mg.tensor(a))
    same_error(lambda m: m.linalg.ldl_solve(LD, pivots, m.ones(3, 1, dtype=m.float32)),
               lambda t: t.linalg.ldl_solve(*t.linalg.ldl_factor(t.tensor(a)), t.ones(3, 1)))
    x = mg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    same_error(lambda m: m.linalg.ldl_factor(x).LD.sum().backward(),
               lambda t: t.linalg.ldl_factor(tx).LD.sum().backward())
