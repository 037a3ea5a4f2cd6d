"""Differential fuzzer: random expression graphs run in microgradnorm and in PyTorch.

Hypothesis draws a short program: leaf tensors of random shapes (float64 or float32, with
continuous values or small integers, so that max, maximum and relu see ties), then a
sequence of steps from primitive ops (broadcasting binary ops, unary ops, reductions,
reshapes, permutes, expands, indexing, matmul, concatenate/stack), softmaxes and the norms
(LayerNorm, RMSNorm, their residual forms and BatchNorm, composite and fused). Every step
runs in both libraries on the same values; the objective Σ upstream·value over every
intermediate value is back-propagated in both, and every value, every leaf's gradient
and BatchNorm's running statistics must agree. In float32, where a pair differs beyond the
tolerance, the program runs again in float64 on the same numbers and ours must be close to
that result, or no further from it than twice PyTorch's float32 one: PyTorch's float32
rounding is not the oracle. A second property runs programs of the tie-sensitive ops alone
(max, maximum, relu with sums and reshapes) on small integers.

Default budget: 400 general and 200 tie programs (about 20 s), or the active hypothesis
profile's ``max_examples`` when that is larger.
Long runs: ``python -m pytest tests/engine/test_fuzz.py --hypothesis-profile fuzz`` (5,000
examples) or ``fuzz-long`` (50,000). ``docs/testing.md`` lists the deliberate bugs it
catches (``tests/meta/mutate.py`` re-runs that table).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import microgradnorm as mg
import microgradnorm.functional as F
from op_table import BINARY as BINARY_OPS
from op_table import REDUCTIONS, UNARY as UNARY_OPS

torch = pytest.importorskip("torch")
TF = torch.nn.functional

MAX_STEPS = 6
# Programs per run: at least this many, more under a longer profile (--hypothesis-profile).
# 100 were too few to catch every seeded bug of docs/testing.md on every derandomized run.
EXAMPLES = max(400, settings.default.max_examples)
TIE_EXAMPLES = max(200, settings.default.max_examples)
MAX_SIDE = 4
TOLERANCE = {np.float64: (1e-7, 1e-9), np.float32: (2e-3, 2e-4)}   # rtol, atol (scaled)


class Program:
    """The state of one drawn program: paired values (microgradnorm, torch), the leaves
    that require grad, running statistics to compare, and a log of the steps taken (the
    falsifying example hypothesis prints)."""

    def __init__(self, data, dtype, ties, seed):
        self.data, self.dtype, self.ties, self.seed = data, np.dtype(dtype), ties, seed
        self.precision = self.dtype      # what the leaves are rounded to, choices made for
        self.rng = np.random.default_rng(seed)
        self.values, self.leaves, self.stats, self.log = [], [], [], []
        self.drawn, self.replay = [], None

    def in_float64(self):
        """This program again, computed in float64 on the same values: its choices replayed,
        its leaves and upstream gradients the same numbers (rounded to this precision)."""
        twin = Program(None, np.float64, self.ties, self.seed)
        twin.precision, twin.replay = self.precision, iter(self.drawn)
        return twin

    # Every choice is a number drawn by hypothesis, reduced modulo the number of options:
    # generation spreads over all options (hypothesis's own small-example bias would keep
    # to the first few), and shrinking still moves towards the first option and 0.
    def _number(self, label):
        if self.replay is not None:
            return next(self.replay)
        number = self.data.draw(st.integers(0, 2**16 - 1), label=label)
        self.drawn.append(number)
        return number

    def values_of(self, array):
        """``array`` rounded to the program's precision, held in its dtype."""
        return array.astype(self.precision).astype(self.dtype)

    def choice(self, options, label):
        options = list(options)
        return options[self._number(label) % len(options)]

    def integer(self, low, high, label):
        return low + self._number(label) % (high - low + 1)

    def flag(self, label):
        return self._number(label) % 2 == 1

    def permutation(self, n, label):
        order = list(range(n))
        for i in range(n - 1, 0, -1):                   # Fisher-Yates
            j = self.integer(0, i, label)
            order[i], order[j] = order[j], order[i]
        return tuple(order)

    def leaf(self, shape, ties=None):
        ties = self.ties if ties is None else ties
        if ties:
            array = self.values_of(self.rng.integers(-2, 3, size=shape))
        else:
            array = self.values_of(self.rng.uniform(-2, 2, size=shape))
        pair = (mg.tensor(array, requires_grad=True),
                torch.tensor(array, requires_grad=True))
        self.leaves.append(pair)
        self.log.append(f"leaf {shape}")
        return pair

    def add(self, pair, what):
        m, t = pair
        assert m.shape == tuple(t.shape), f"{what}: shape {m.shape} vs torch {tuple(t.shape)}"
        self.values.append(pair)
        self.log.append(what)
        return pair


# ----- steps ----------------------------------------------------------------------------------
def broadcast_partner(p, shape):
    """A shape that broadcasts with ``shape``: a suffix of it with some sides set to 1."""
    keep = p.integer(min(1, len(shape)), len(shape), "partner dims")
    tail = shape[len(shape) - keep:]
    ones = [p.flag("ones") for _ in tail]
    return tuple(1 if one else n for n, one in zip(tail, ones))


# The op table's ops, each input guarded into its domain: a step's input is whatever the
# previous steps made (exp of tanh, log of x² + 0.5, a divisor b² + 0.5: Op.guard).
UNARY = {name: (lambda m, op=op: op.ours(op.guard(m)), lambda t, op=op: op.torch(op.guard(t)))
         for name, op in UNARY_OPS.items()}
BINARY = {name: (lambda a, b, op=op: op.ours(a, op.guard(b)),
                 lambda a, b, op=op: op.torch(a, op.guard(b)))
          for name, op in BINARY_OPS.items()}


def step_unary(p, x, name=None):
    name = name or p.choice(sorted(UNARY), "unary")
    fm, ft = UNARY[name]
    return p.add((fm(x[0]), ft(x[1])), name)


def step_binary(p, x, name=None):
    name = name or p.choice(sorted(BINARY), "binary")
    other_shape = broadcast_partner(p, x[0].shape)
    y = p.leaf(other_shape)
    swap = p.flag("swap")
    a, b = (y, x) if swap else (x, y)
    fm, ft = BINARY[name]
    return p.add((fm(a[0], b[0]), ft(a[1], b[1])), f"{name} with {other_shape}, swap={swap}")


def step_reduce(p, x, name=None):
    name = name or p.choice(sorted(REDUCTIONS), "reduction")
    ndim = x[0].ndim
    axes = [a for a in p.permutation(ndim, "axes order") if p.flag(f"reduce axis {a}")]
    axis = None if not axes else (axes[0] if len(axes) == 1 else tuple(axes))
    keepdims = p.flag("keepdims")
    op = REDUCTIONS[name]
    m, t = op.ours(x[0], axis, keepdims), op.torch(x[1], axis, keepdims)
    return p.add((m, t), f"{name}(axis={axis}, keepdims={keepdims})")


def step_shape(p, x):
    m, t = x
    choices = ["reshape_flat", "unsqueeze"]
    if m.ndim >= 2:
        choices += ["permute", "transpose"]
    if m.ndim >= 3:
        choices += ["permute"]                 # 3 dims: a cycle, not only swaps
    if 1 in m.shape:
        choices += ["squeeze", "expand"]
    if m.size and m.ndim:
        choices += ["reshape_split"]
    name = p.choice(choices, "shape op")
    if name == "reshape_flat":
        return p.add((m.reshape(-1), t.reshape(-1)), "reshape(-1)")
    if name == "reshape_split":
        divisors = [d for d in range(1, m.size + 1) if m.size % d == 0]
        d = p.choice(divisors, "rows")
        return p.add((m.reshape(d, -1), t.reshape(d, -1)), f"reshape({d}, -1)")
    if name == "unsqueeze":
        k = p.integer(0, m.ndim, "unsqueeze axis")
        return p.add((m.unsqueeze(k), t.unsqueeze(k)), f"unsqueeze({k})")
    if name == "permute":                      # a cycle of 3 dims is its own test of argsort
        order = p.permutation(m.ndim, "permutation")
        return p.add((m.permute(order), t.permute(order)), f"permute{order}")
    if name == "transpose":
        return p.add((m.transpose(-1, -2), t.transpose(-1, -2)), "transpose(-1, -2)")
    if name == "squeeze":
        k = m.shape.index(1)
        return p.add((m.squeeze(k), t.squeeze(k)), f"squeeze({k})")
    k = m.shape.index(1)
    n = p.integer(1, MAX_SIDE, "expand to")
    shape = m.shape[:k] + (n,) + m.shape[k + 1:]
    return p.add((m.expand(shape), t.expand(shape)), f"expand{shape}")


def step_index(p, x):
    m, t = x
    if m.ndim == 0 or m.shape[0] == 0:
        return step_unary(p, x)
    n = m.shape[0]
    kind = p.choice(["slice", "int", "array"], "index kind")
    if kind == "slice":
        start = p.integer(0, n - 1, "start")
        stop = p.integer(start + 1, n, "stop")
        return p.add((m[start:stop], t[start:stop]), f"[{start}:{stop}]")
    if kind == "int":
        i = p.integer(-n, n - 1, "index")
        return p.add((m[i], t[i]), f"[{i}]")
    idx = np.array([p.integer(0, n - 1, "id") for _ in range(p.integer(1, 5, "ids"))])
    return p.add((m[idx], t[torch.tensor(idx)]), f"[{idx.tolist()}]")


def step_matmul(p, x):
    m, t = x
    if m.ndim == 0:
        return step_unary(p, x)
    k = p.integer(1, MAX_SIDE, "matmul width")
    vector = p.flag("vector")
    w = p.leaf((m.shape[-1],) if vector else (m.shape[-1], k))
    return p.add((m @ w[0], t @ w[1]), f"@ {w[0].shape}")


def step_join(p, x):
    m, t = x
    if m.ndim == 0:
        return step_unary(p, x)
    y = p.leaf(m.shape)
    axis = p.integer(0, m.ndim - 1, "join axis")
    if p.flag("stack"):
        return p.add((mg.stack([m, y[0]], axis), torch.stack([t, y[1]], axis)), f"stack {axis}")
    return p.add((mg.concatenate([m, y[0]], axis), torch.cat([t, y[1]], axis)), f"cat {axis}")


def step_softmax(p, x):
    m, t = x
    if m.ndim == 0:
        return step_unary(p, x)
    axis = p.integer(-m.ndim, m.ndim - 1, "softmax axis")
    if p.flag("log"):
        return p.add((F.log_softmax(m, axis), TF.log_softmax(t, axis)), f"log_softmax {axis}")
    return p.add((F.softmax(m, axis), TF.softmax(t, axis)), f"softmax {axis}")


def step_norm(p, x):
    m, t = x
    if m.ndim == 0 or m.size == 0:
        return step_unary(p, x)
    impl = p.choice(F.IMPLS, "impl")
    kind = p.choice(["layer_norm", "rms_norm", "add_layer_norm", "add_rms_norm", "batch_norm"],
                    "norm")
    if kind == "batch_norm":
        if m.ndim == 1 and m.size >= 2:        # (N,) -> (N, 1): one channel
            x = m, t = p.add((m.reshape(-1, 1), t.reshape(-1, 1)), "reshape(-1, 1)")
        if m.ndim > 3:
            x = m, t = p.add((m.reshape(m.shape[0], m.shape[1], -1),
                              t.reshape(t.shape[0], t.shape[1], -1)), "reshape(N, C, -1)")
        if m.ndim in (2, 3) and m.size // m.shape[1] >= 2:
            return batch_norm(p, x, impl)
        kind = "layer_norm"
    d = m.shape[-1]
    if d == 1 and "layer" in kind:
        # LayerNorm over one element outputs β exactly and its exact x-gradient is 0; the
        # kernels return rounding noise there instead (torch's float32 one e.g. ±0.0039, the
        # composite graph's the difference of two products), which a later norm of the
        # constant rows that follow amplifies by 1/sqrt(eps), ≈ 316 at eps 1e-5 and 6.7e7 at
        # float64's machine epsilon (RMSNorm's default), past any tolerance. RMSNorm over one
        # element is x/|x|.
        kind = kind.replace("layer", "rms")
    affine = p.flag("affine")
    w = p.leaf((d,), ties=False) if affine else (None, None)
    b = p.leaf((d,), ties=False) if affine and "layer" in kind else (None, None)
    if kind.startswith("add_"):
        r = p.leaf(m.shape)
        if kind == "add_layer_norm":
            y, s = F.add_layer_norm(m, r[0], d, w[0], b[0], impl=impl)
            ty = TF.layer_norm(t + r[1], (d,), w[1], b[1], 1e-5)
        else:
            y, s = F.add_rms_norm(m, r[0], d, w[0], impl=impl)
            ty = TF.rms_norm(t + r[1], (d,), w[1])          # both: eps x's machine epsilon
        p.add((s, t + r[1]), f"{kind} residual sum")
        return p.add((y, ty), f"{kind}({impl}, affine={affine})")
    if kind == "layer_norm":
        y, ty = F.layer_norm(m, d, w[0], b[0], impl=impl), TF.layer_norm(t, (d,), w[1], b[1])
    else:
        y, ty = F.rms_norm(m, d, w[0], impl=impl), TF.rms_norm(t, (d,), w[1])
    return p.add((y, ty), f"{kind}({impl}, affine={affine})")


def batch_norm(p, x, impl):
    m, t = x
    c = m.shape[1]
    w, b = p.leaf((c,), ties=False), p.leaf((c,), ties=False)
    rm, rv = np.zeros(c, p.dtype), np.ones(c, p.dtype)
    trm, trv = torch.zeros(c, dtype=t.dtype), torch.ones(c, dtype=t.dtype)
    y = F.batch_norm(m, rm, rv, w[0], b[0], training=True, impl=impl)
    ty = TF.batch_norm(t, trm, trv, w[1], b[1], training=True)
    p.stats.append((rm, trm))
    p.stats.append((rv, trv))
    return p.add((y, ty), f"batch_norm({impl})")


# Drawn uniformly from this list: the steps that hide the most backward code come twice.
STEPS = [step_unary, step_binary, step_binary, step_reduce, step_reduce, step_shape,
         step_shape, step_index, step_matmul, step_join, step_softmax, step_norm, step_norm]


# Ties: max, maximum and relu share a tie's gradient by convention (1/count, 1/2, 0); on
# small integers ties are everywhere, and these steps keep the values integers.
TIE_STEPS = [
    lambda p, x: step_reduce(p, x, "max"),
    lambda p, x: step_binary(p, x, "maximum"),
    lambda p, x: step_binary(p, x, p.choice(["add", "sub"], "integer op")),
    lambda p, x: step_unary(p, x, p.choice(["relu", "neg"], "integer op")),
    lambda p, x: step_reduce(p, x, "sum"),
    step_shape,
]


# ----- the test -------------------------------------------------------------------------------
def assert_close(got, expected, dtype, what, log):
    rtol, atol = TOLERANCE[np.dtype(dtype).type]
    expected = np.asarray(expected, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol * scale,
                               err_msg=f"{what}; program: {' -> '.join(log)}")


@pytest.mark.slow
@settings(max_examples=EXAMPLES,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), dtype=st.sampled_from([np.float64, np.float32]), ties=st.booleans(),
       seed=st.integers(0, 2**16))
def test_random_graphs_match_pytorch(data, dtype, ties, seed):
    if dtype == np.float32 and ties:
        ties = False              # float32 with exact ties: norms of constant rows amplify noise
    run_program(Program(data, dtype, ties, seed), STEPS)


@pytest.mark.slow
@settings(max_examples=TIE_EXAMPLES,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_programs_with_ties_match_pytorch(data, seed):
    """Integer-valued float64 programs of max, maximum, relu, sums and reshapes: every
    gradient that a tie convention decides is compared with PyTorch's."""
    run_program(Program(data, np.float64, True, seed), TIE_STEPS)


def run_program(p, steps):
    """Run the program and compare every value, running statistic and gradient with
    PyTorch's. In float32, where a pair differs, PyTorch's float32 result is not the last
    word: rounding can be what differs (a BatchNorm of a few values amplifies it past the
    tolerance, on both sides), so the program is computed again in float64 on the same
    values (PyTorch's, ``Program.in_float64``), and ours must be within the tolerance of
    that, or no further from it than twice PyTorch's float32 result is."""
    results = execute(p, steps)
    truth = None
    for what, ours, theirs in results:
        try:
            assert_close(ours, theirs, p.dtype, what, p.log)
        except AssertionError:
            if p.dtype != np.float32:
                raise
            if truth is None:
                truth = {w: t for w, _, t in execute(p.in_float64(), steps)}
            assert_no_further(ours, theirs, truth[what], what, p.log)


def assert_no_further(ours, theirs, exact, what, log):
    """Where ``exact`` is finite, |ours - exact| within float32's tolerance of it (scaled by
    its largest finite value) or twice |theirs - exact|; elsewhere the same inf or NaN."""
    rtol, atol = TOLERANCE[np.float32]
    ours, theirs, exact = (np.asarray(a, dtype=np.float64) for a in (ours, theirs, exact))
    finite = np.isfinite(exact)
    scale = max(1.0, float(np.max(np.abs(exact[finite]), initial=0.0)))
    with np.errstate(invalid="ignore"):                  # inf - inf, NaN compared
        allowed = np.fmax(atol * scale + rtol * np.abs(exact), 2 * np.abs(theirs - exact))
        close = np.abs(ours - exact) <= allowed
    same = (ours == exact) | (np.isnan(ours) & np.isnan(exact))
    bad = np.where(finite, ~close, ~same)
    assert not bad.any(), (f"{what}: ours {ours[bad]}, PyTorch's float32 {theirs[bad]}, "
                           f"float64 {exact[bad]}; program: {' -> '.join(log)}")


def execute(p, steps):
    """Build and differentiate the program: [(what, ours, PyTorch's)] for each value,
    running statistic and leaf gradient, as NumPy arrays."""
    shape = tuple(p.integer(1, MAX_SIDE, "side") for _ in range(p.integer(1, 3, "dims")))
    x = p.leaf(shape)
    for i in range(p.integer(1, MAX_STEPS, "steps")):
        step = p.choice(steps, f"step {i}")
        if p.values and p.flag("reuse earlier value"):
            x = p.values[p.integer(0, len(p.values) - 1, "which")]
        x = step(p, x)
        if x[0].size > 4 ** 4:                 # keep graphs small: reduce what grew
            x = p.add((x[0].sum(), x[1].sum()), "sum (size cap)")

    results = [(f"value {i}", m.detach().numpy(), t.detach().numpy())
               for i, (m, t) in enumerate(p.values)]
    results += [(f"running statistic {i}", ours, theirs.numpy())
                for i, (ours, theirs) in enumerate(p.stats)]

    outputs = [(m, t) for m, t in p.values if m.requires_grad]
    upstream = [p.values_of(p.rng.standard_normal(m.shape)) for m, _ in outputs]
    leaves = [pair for pair in p.leaves if pair[0].requires_grad]
    ours = mg.grad([m for m, _ in outputs], [m for m, _ in leaves], upstream)
    theirs = torch.autograd.grad([t for _, t in outputs], [t for _, t in leaves],
                                 [torch.tensor(u) for u in upstream], allow_unused=True)
    for i, ((m, _), g, tg) in enumerate(zip(leaves, ours, theirs)):
        g = np.zeros(m.shape) if g is None else g.numpy()
        tg = np.zeros(m.shape) if tg is None else tg.numpy()
        results.append((f"gradient of leaf {i} {m.shape}", g, tg))
    return results
