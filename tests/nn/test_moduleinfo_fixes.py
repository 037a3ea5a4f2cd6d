"""Behaviours that torch's module samples (tests/nn/test_moduleinfo_generic.py) found
wrong, each checked directly against PyTorch at test time.

CTC in float32: over a long sequence the log-space recursions round at the magnitude of
the log-probability sums (about 100 after 50 frames); the gradient follows torch's float32
rounding (not only the exact value within float32's tolerance), so it stays far closer to
torch's float32 gradient than either is to the float64 one.
"""

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")


def _ctc_gradients(dtype, reduction):
    """(ours, torch's in dtype, torch's in float64): the gradient of a random weighting
    of the loss with respect to log_probs (50 frames, 3 sequences, 15 classes)."""
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((50, 3, 15))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = rng.integers(1, 15, (3, 30))
    lengths, target_lengths = [50, 50, 43], [30, 25, 20]
    upstream = rng.standard_normal(3 if reduction == "none" else ())

    def theirs(dt):
        x = torch.tensor(log_probs, dtype=dt, requires_grad=True)
        loss = torch.nn.functional.ctc_loss(x, torch.tensor(targets), torch.tensor(lengths),
                                            torch.tensor(target_lengths), reduction=reduction)
        loss.backward(torch.tensor(upstream, dtype=dt))
        return x.grad.double().numpy()
    x = mg.tensor(log_probs.astype(dtype), requires_grad=True)
    loss = mg.nn.functional.ctc_loss(x, mg.tensor(targets), mg.tensor(lengths),
                                     mg.tensor(target_lengths), reduction=reduction)
    loss.backward(mg.tensor(upstream.astype(dtype)))
    assert x.grad.dtype == mg.float32
    return x.grad.numpy().astype(np.float64), theirs(getattr(torch, dtype)), \
        theirs(torch.float64)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_ctc_float32_gradient_rounds_as_torchs(reduction):
    ours, theirs, exact = _ctc_gradients("float32", reduction)
    drift = np.abs(theirs - exact).max()          # torch's own float32 rounding
    assert drift > 0
    # a few float32 ulps of the gradient's size, where the drift from float64 is many more
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=max(drift / 20, 1e-7))
