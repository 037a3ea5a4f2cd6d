"""Every CPU kernel module against the reference (the textbook formulas), from one table of
cases: in float64, every output and gradient of ``blocked`` (the default) and ``numba_cpu``
(where numba is installed) agrees with the reference's to 1e-12 of its scale. The blocks
are made small so that the blocked kernels cross block boundaries."""

import inspect

import numpy as np
import pytest

from microgradnorm.kernels import blocked, reference

MODULES = [pytest.param(blocked, id="blocked")]
try:
    from microgradnorm.kernels import numba_cpu
    MODULES.append(pytest.param(numba_cpu, id="numba"))
except ImportError:
    pass

RELATIVE = 1e-12
ROWS, COLS = 37, 53


def arrays(seed=0):
    rng = np.random.default_rng(seed)
    rows = lambda: rng.standard_normal((ROWS, COLS))                    # noqa: E731
    return {"x": 2 * rows() + 0.5, "residual": rows(), "dy": rows(), "ds": rows(),
            "weight": 1 + 0.5 * rng.standard_normal(COLS), "bias": rng.standard_normal(COLS),
            "x3": 1.5 + rng.standard_normal((4, 6, 9)), "dy3": rng.standard_normal((4, 6, 9))}


def layer_norm(k, a, weight, bias):
    y, mean, rstd = k.layer_norm_forward(a["x"], weight, bias, 1e-5)
    return (y, mean, rstd, *k.layer_norm_backward(a["dy"], a["x"], weight, mean, rstd,
                                                   bias is not None))


def add_layer_norm(k, a, weight, bias):
    y, s, mean, rstd = k.add_layer_norm_forward(a["x"], a["residual"], weight, bias, 1e-5)
    return (y, s, mean, rstd, *k.add_layer_norm_backward(a["dy"], a["ds"], s, weight, mean,
                                                          rstd, bias is not None))


def rms_norm(k, a, weight, offset, casting):
    y, rstd = k.rms_norm_forward(a["x"], weight, 1e-6, offset=offset, casting=casting)
    return (y, rstd, *k.rms_norm_backward(a["dy"], a["x"], weight, rstd, offset=offset,
                                          casting=casting))


def add_rms_norm(k, a, weight, offset, casting):
    y, s, rstd = k.add_rms_norm_forward(a["x"], a["residual"], weight, 1e-6, offset=offset,
                                        casting=casting)
    return (y, s, rstd, *k.add_rms_norm_backward(a["dy"], a["ds"], s, weight, rstd,
                                                 offset=offset, casting=casting))


def batch_norm(k, a, training):
    running_mean, running_var = np.zeros(6), np.ones(6)
    mean, var = k.batch_norm_statistics(a["x3"])
    k.update_running_stats(running_mean, running_var, mean, var, 36, 0.1)
    if not training:
        mean, var = running_mean, running_var
    y, rstd = k.batch_norm_forward(a["x3"], mean, var, a["weight"][:6], a["bias"][:6], 1e-5)
    return (y, rstd, running_mean, running_var,
            *k.batch_norm_backward(a["dy3"], a["x3"], a["weight"][:6], mean, rstd, training))


def softmax_rows(k, a, op):
    y = getattr(k, f"{op}_forward")(a["x"], 1)
    return y, getattr(k, f"{op}_backward")(a["dy"], y, 1), k.logsumexp(a["x"], 1)


# (id, function of (kernel module, arrays) -> every output and gradient)
CASES = [
    ("layer_norm", lambda k, a: layer_norm(k, a, a["weight"], a["bias"])),
    ("layer_norm-no-affine", lambda k, a: layer_norm(k, a, None, None)),
    ("add_layer_norm", lambda k, a: add_layer_norm(k, a, a["weight"], a["bias"])),
    ("add_layer_norm-weight-only", lambda k, a: add_layer_norm(k, a, a["weight"], None)),
    ("rms_norm-no-weight", lambda k, a: rms_norm(k, a, None, 0.0, "llama")),
    *[(f"rms_norm-{casting}-offset{offset}",
       lambda k, a, o=offset, c=casting: rms_norm(k, a, a["weight"] - o, o, c))
      for casting in ("llama", "gemma", "none") for offset in (0.0, 1.0)],
    ("add_rms_norm", lambda k, a: add_rms_norm(k, a, a["weight"], 0.0, "llama")),
    ("add_rms_norm-gemma-offset1", lambda k, a: add_rms_norm(k, a, a["weight"] - 1, 1.0,
                                                             "gemma")),
    ("batch_norm-training", lambda k, a: batch_norm(k, a, True)),
    ("batch_norm-eval", lambda k, a: batch_norm(k, a, False)),
    *[(op, lambda k, a, o=op: softmax_rows(k, a, o)) for op in ("softmax", "log_softmax")],
]


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    monkeypatch.setattr(blocked, "BLOCK_ELEMENTS", COLS * 8)         # 5 blocks, last of 5


@pytest.mark.parametrize("case", [c[1] for c in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("module", MODULES)
def test_every_output_agrees_with_the_reference_in_float64(module, case):
    a = arrays()
    expected = case(reference, {k: v.copy() for k, v in a.items()})
    actual = case(module, {k: v.copy() for k, v in a.items()})
    assert len(actual) == len(expected)
    for i, (got, want) in enumerate(zip(actual, expected)):
        assert (got is None) == (want is None), i
        if want is None:
            continue
        assert got.dtype == want.dtype == np.float64 and got.shape == want.shape, i
        scale = max(1.0, float(np.abs(want).max()))
        assert np.abs(got - want).max() <= RELATIVE * scale, (i, np.abs(got - want).max())


def test_the_table_can_fail():
    """A module off by one part in 1e10 fails the comparison above."""
    a = arrays()
    y, *_ = CASES[0][1](reference, a)
    assert np.abs(y * (1 + 1e-10) - y).max() > RELATIVE * max(1.0, np.abs(y).max())


@pytest.mark.parametrize("module", MODULES)
def test_every_module_has_every_reference_kernel_with_its_signature(module):
    for name, function in vars(reference).items():
        if inspect.isfunction(function) and name.endswith(("_forward", "_backward",
                                                           "_statistics", "_stats")):
            assert (inspect.signature(getattr(module, name))
                    == inspect.signature(function)), name
