"""Float-like arguments as PyTorch reads them, compared with PyTorch at test time.

Every float argument below (an ``eps``, a ``p``, a slope, a margin, a bound, a fill value)
is given stand-ins for its usual value: ``True``, a NumPy float32, float64 and int64 scalar,
a 0-d float and a 0-d integer tensor, a one-element 1-d tensor, a complex number and a
string. PyTorch's outcome (the values of one call, and for a module its repr; or the class
of the exception it raises) is computed here, then ours, and they must agree: equal values
and reprs, or our exception a subclass of torch's.

A few outcomes of torch's are not copied (a module that keeps a value it cannot use and
fails at its first call, say); ``KEPT`` lists them with the reason, as docs/pytorch.md
(its row on float arguments) does, and its test checks that they still differ and that ours
refuses with a TypeError (or runs). ``LEFT`` lists the differences not yet followed; each
must still differ, so following one fails the test until its entry goes.
"""

import re
import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

KINDS = ("bool", "float32", "float64", "int64", "tensor", "int tensor", "1-d tensor",
         "complex", "str")


def _stand_in(kind, lib, base):
    # the value given for a float argument whose usual value is ``base``
    if kind == "bool":
        return True
    if kind in ("float32", "float64"):
        return getattr(np, kind)(base)
    if kind == "int64":
        return np.int64(round(base))
    if kind == "tensor":
        return lib.tensor(float(base))
    if kind == "int tensor":
        return lib.tensor(int(round(base)))
    if kind == "1-d tensor":
        return lib.tensor([float(base)])
    return complex(base, 1.0) if kind == "complex" else "0.5"


def _x(lib, *shape):
    # a float32 tensor of evenly spread values in [-2, 2]
    count = int(np.prod(shape))
    return lib.tensor(np.linspace(-2.0, 2.0, count).reshape(shape).astype(np.float32))


def _functions():
    # (id, call(lib, v), usual value)
    cases = []

    def add(name, call, base):
        cases.append((name, call, base))

    def F(lib):
        return lib.nn.functional

    def two(lib):
        return _x(lib, 3, 4), _x(lib, 3, 4) * 0.5 + 0.1

    add("F.dropout(p, training=False)",
        lambda lib, v: F(lib).dropout(_x(lib, 3, 4), v, training=False), 0.5)
    add("F.dropout(p=1)", lambda lib, v: F(lib).dropout(_x(lib, 3, 4), v), 1.0)
    add("F.alpha_dropout(p)",
        lambda lib, v: F(lib).alpha_dropout(_x(lib, 3, 4), v, training=False), 0.5)
    add("F.pdist(p)", lambda lib, v: F(lib).pdist(_x(lib, 3, 4), v), 2.0)
    add("cdist(p)", lambda lib, v: lib.cdist(_x(lib, 3, 4), _x(lib, 2, 4), p=v), 2.0)
    add("F.pairwise_distance(p)",
        lambda lib, v: F(lib).pairwise_distance(*two(lib), p=v), 2.0)
    add("F.pairwise_distance(eps)",
        lambda lib, v: F(lib).pairwise_distance(*two(lib), eps=v), 1e-6)
    add("F.triplet_margin_loss(p)",
        lambda lib, v: F(lib).triplet_margin_loss(*two(lib), _x(lib, 3, 4) * 0.2, p=v), 2.0)
    add("F.triplet_margin_loss(margin)",
        lambda lib, v: F(lib).triplet_margin_loss(*two(lib), _x(lib, 3, 4) * 0.2, margin=v),
        1.0)
    add("F.normalize(p)", lambda lib, v: F(lib).normalize(_x(lib, 3, 4), p=v), 2.0)
    add("F.normalize(eps)", lambda lib, v: F(lib).normalize(_x(lib, 3, 4), eps=v), 1e-12)
    add("norm(p)", lambda lib, v: lib.norm(_x(lib, 3, 4), p=v), 2.0)
    add("Tensor.norm(p)", lambda lib, v: _x(lib, 3, 4).norm(p=v), 2.0)
    add("dist(p)", lambda lib, v: lib.dist(*two(lib), v), 2.0)
    add("renorm(p)", lambda lib, v: lib.renorm(_x(lib, 3, 4), v, 0, 1.0), 2.0)
    add("renorm(maxnorm)", lambda lib, v: lib.renorm(_x(lib, 3, 4), 2, 0, v), 1.0)
    for fn, arg, base in (("leaky_relu", "negative_slope", 0.1), ("elu", "alpha", 1.0),
                          ("celu", "alpha", 1.0), ("hardshrink", "lambd", 0.5),
                          ("softshrink", "lambd", 0.5), ("softplus", "beta", 1.0),
                          ("softplus", "threshold", 1.0)):
        add(f"F.{fn}({arg})",
            lambda lib, v, f=fn, a=arg: getattr(F(lib), f)(_x(lib, 3, 4), **{a: v}), base)
    add("F.threshold(threshold)", lambda lib, v: F(lib).threshold(_x(lib, 3, 4), v, 0.0), 0.5)
    add("F.threshold(value)", lambda lib, v: F(lib).threshold(_x(lib, 3, 4), 0.5, v), 2.0)
    add("F.hardtanh(min_val)", lambda lib, v: F(lib).hardtanh(_x(lib, 3, 4), v, 1.5), -1.0)
    add("F.hardtanh(max_val)", lambda lib, v: F(lib).hardtanh(_x(lib, 3, 4), -1.0, v), 1.0)
    add("F.rrelu(lower)",
        lambda lib, v: F(lib).rrelu(_x(lib, 3, 4), lower=v, training=False), 0.125)
    add("F.smooth_l1_loss(beta)", lambda lib, v: F(lib).smooth_l1_loss(*two(lib), beta=v), 1.0)
    add("F.huber_loss(delta)", lambda lib, v: F(lib).huber_loss(*two(lib), delta=v), 1.0)
    add("F.margin_ranking_loss(margin)",
        lambda lib, v: F(lib).margin_ranking_loss(_x(lib, 4), _x(lib, 4) * 0.3,
                                                  lib.tensor([1.0, -1, 1, -1]), margin=v), 1.0)
    add("F.hinge_embedding_loss(margin)",
        lambda lib, v: F(lib).hinge_embedding_loss(_x(lib, 4), lib.tensor([1.0, -1, 1, -1]),
                                                   margin=v), 1.0)
    add("F.cosine_embedding_loss(margin)",
        lambda lib, v: F(lib).cosine_embedding_loss(_x(lib, 3, 4), _x(lib, 3, 4) * 0.3 + 1,
                                                    lib.tensor([1.0, -1, 1]), margin=v), 0.0)
    add("F.multi_margin_loss(margin)",
        lambda lib, v: F(lib).multi_margin_loss(_x(lib, 3, 4), lib.tensor([0, 1, 2]),
                                                margin=v), 1.0)
    add("F.cross_entropy(label_smoothing)",
        lambda lib, v: F(lib).cross_entropy(_x(lib, 3, 4), lib.tensor([0, 1, 2]),
                                            label_smoothing=v), 0.1)
    add("F.poisson_nll_loss(eps)",
        lambda lib, v: F(lib).poisson_nll_loss(_x(lib, 3, 4), _x(lib, 3, 4).abs(), eps=v), 1e-8)
    add("F.gaussian_nll_loss(eps)",
        lambda lib, v: F(lib).gaussian_nll_loss(*two(lib), _x(lib, 3, 4).abs() + 0.1, eps=v),
        1e-6)
    add("F.interpolate(scale_factor)",
        lambda lib, v: F(lib).interpolate(_x(lib, 1, 1, 3), scale_factor=v), 2.0)
    add("F.interpolate(scale_factor, bilinear)",
        lambda lib, v: F(lib).interpolate(_x(lib, 1, 1, 3, 3), scale_factor=v,
                                          mode="bilinear"), 2.0)
    add("F.pad(value)", lambda lib, v: F(lib).pad(_x(lib, 1, 3), (1, 1), value=v), 2.0)
    add("F.layer_norm(eps)", lambda lib, v: F(lib).layer_norm(_x(lib, 3, 4), (4,), eps=v), 1e-5)
    add("F.rms_norm(eps)", lambda lib, v: F(lib).rms_norm(_x(lib, 3, 4), (4,), eps=v), 1e-5)
    add("F.group_norm(eps)", lambda lib, v: F(lib).group_norm(_x(lib, 2, 4, 3), 2, eps=v), 1e-5)
    add("F.batch_norm(eps)",
        lambda lib, v: F(lib).batch_norm(_x(lib, 3, 4), None, None, training=True, eps=v), 1e-5)

    def batch_norm_momentum(lib, v):
        running = lib.zeros(4)
        out = F(lib).batch_norm(_x(lib, 3, 4), running, lib.ones(4), training=True, momentum=v)
        return out, running
    add("F.batch_norm(momentum)", batch_norm_momentum, 0.1)
    add("F.instance_norm(eps)", lambda lib, v: F(lib).instance_norm(_x(lib, 2, 3, 4), eps=v),
        1e-5)
    for arg, base in (("alpha", 1e-4), ("beta", 0.75), ("k", 1.0)):
        add(f"F.local_response_norm({arg})",
            lambda lib, v, a=arg: F(lib).local_response_norm(_x(lib, 1, 3, 4), 2, **{a: v}), base)
    add("F.cosine_similarity(eps)",
        lambda lib, v: F(lib).cosine_similarity(_x(lib, 3, 4), _x(lib, 3, 4) + 1, eps=v), 1e-8)
    add("F.lp_pool1d(norm_type)",
        lambda lib, v: F(lib).lp_pool1d(_x(lib, 1, 1, 4).abs(), v, 2), 2.0)
    add("F.embedding(max_norm)",
        lambda lib, v: F(lib).embedding(lib.tensor([0, 1]), _x(lib, 3, 4), max_norm=v), 1.0)
    add("clamp(min)", lambda lib, v: lib.clamp(_x(lib, 3, 4), min=v), -1.0)
    add("clamp(max)", lambda lib, v: lib.clamp(_x(lib, 3, 4), max=v), 1.0)
    add("Tensor.clamp(min, max)", lambda lib, v: _x(lib, 3, 4).clamp(v, 1.5), -1.0)
    add("lerp(weight)", lambda lib, v: lib.lerp(_x(lib, 3, 4), lib.ones(3, 4), v), 0.5)
    add("addcmul(value)",
        lambda lib, v: lib.addcmul(_x(lib, 3, 4), _x(lib, 3, 4), _x(lib, 3, 4), value=v), 0.5)
    add("addcdiv(value)",
        lambda lib, v: lib.addcdiv(_x(lib, 3, 4), _x(lib, 3, 4), _x(lib, 3, 4) + 5, value=v),
        0.5)
    add("full(fill_value)", lambda lib, v: lib.full((2, 3), v), 2.0)
    add("Tensor.fill_(value)", lambda lib, v: _x(lib, 3, 4).fill_(v), 2.0)
    add("masked_fill(value)", lambda lib, v: _x(lib, 3, 4).masked_fill(_x(lib, 3, 4) > 0, v),
        2.0)
    add("histc(min)", lambda lib, v: lib.histc(_x(lib, 3, 4), bins=4, min=v, max=2), -1.0)
    add("quantile(q)", lambda lib, v: lib.quantile(_x(lib, 3, 4), v), 0.5)
    add("isclose(rtol)", lambda lib, v: lib.isclose(*two(lib), rtol=v), 1e-5)
    add("allclose(atol)", lambda lib, v: lib.allclose(*two(lib), atol=v), 1e-8)
    add("addmm(beta)",
        lambda lib, v: lib.addmm(_x(lib, 3, 3), _x(lib, 3, 3), _x(lib, 3, 3), beta=v), 0.5)
    add("addmm(alpha)",
        lambda lib, v: lib.addmm(_x(lib, 3, 3), _x(lib, 3, 3), _x(lib, 3, 3), alpha=v), 0.5)
    return cases


def _modules():
    # (id, build(nn, v), usual value, input(lib) for one call)
    cases = []

    def add(name, build, base, inputs):
        cases.append((name, build, base, inputs))

    def shaped(*shape):
        return lambda lib: (_x(lib, *shape),)

    def pair(lib):
        return _x(lib, 3, 4).abs(), (_x(lib, 3, 4) * 0.5 + 0.1).abs()

    def triple(lib):
        return _x(lib, 3, 4), _x(lib, 3, 4) * 0.5 + 0.1, _x(lib, 3, 4) * 0.2

    add("LeakyReLU", lambda nn, v: nn.LeakyReLU(v), 0.1, shaped(3, 4))
    add("Dropout", lambda nn, v: nn.Dropout(v).eval(), 0.5, shaped(3, 4))
    add("Dropout (p=1, training)", lambda nn, v: nn.Dropout(v), 1.0, shaped(3, 4))
    add("Dropout2d", lambda nn, v: nn.Dropout2d(v).eval(), 0.5, shaped(2, 3, 4))
    add("BatchNorm1d.eps", lambda nn, v: nn.BatchNorm1d(4, eps=v), 1e-5, shaped(3, 4))
    add("BatchNorm1d.momentum", lambda nn, v: nn.BatchNorm1d(4, momentum=v), 0.1, shaped(3, 4))
    add("BatchNorm2d.momentum", lambda nn, v: nn.BatchNorm2d(2, momentum=v), 0.1,
        shaped(3, 2, 2, 2))
    add("LayerNorm.eps", lambda nn, v: nn.LayerNorm(4, eps=v), 1e-5, shaped(3, 4))
    add("RMSNorm.eps", lambda nn, v: nn.RMSNorm(4, eps=v), 1e-5, shaped(3, 4))
    add("GroupNorm.eps", lambda nn, v: nn.GroupNorm(2, 4, eps=v), 1e-5, shaped(2, 4, 3))
    add("InstanceNorm1d.eps", lambda nn, v: nn.InstanceNorm1d(3, eps=v), 1e-5, shaped(2, 3, 4))
    add("Hardtanh.min_val", lambda nn, v: nn.Hardtanh(v, 1.5), -1.0, shaped(3, 4))
    add("Hardtanh.max_val", lambda nn, v: nn.Hardtanh(-1.0, v), 1.0, shaped(3, 4))
    add("ELU", lambda nn, v: nn.ELU(v), 1.0, shaped(3, 4))
    add("CELU", lambda nn, v: nn.CELU(v), 1.0, shaped(3, 4))
    add("Softplus.beta", lambda nn, v: nn.Softplus(beta=v), 1.0, shaped(3, 4))
    add("Softplus.threshold", lambda nn, v: nn.Softplus(threshold=v), 1.0, shaped(3, 4))
    add("Threshold.threshold", lambda nn, v: nn.Threshold(v, 0.0), 0.5, shaped(3, 4))
    add("Threshold.value", lambda nn, v: nn.Threshold(0.5, v), 2.0, shaped(3, 4))
    add("Hardshrink", lambda nn, v: nn.Hardshrink(v), 0.5, shaped(3, 4))
    add("Softshrink", lambda nn, v: nn.Softshrink(v), 0.5, shaped(3, 4))
    add("RReLU.lower", lambda nn, v: nn.RReLU(lower=v).eval(), 0.125, shaped(3, 4))
    add("LocalResponseNorm.alpha", lambda nn, v: nn.LocalResponseNorm(2, alpha=v), 1e-4,
        shaped(1, 3, 4))
    add("CrossEntropyLoss.label_smoothing",
        lambda nn, v: nn.CrossEntropyLoss(label_smoothing=v), 0.1,
        lambda lib: (_x(lib, 3, 4), lib.tensor([0, 1, 2])))
    add("TripletMarginLoss.margin", lambda nn, v: nn.TripletMarginLoss(margin=v), 1.0, triple)
    add("TripletMarginLoss.p", lambda nn, v: nn.TripletMarginLoss(p=v), 2.0, triple)
    add("PairwiseDistance.p", lambda nn, v: nn.PairwiseDistance(p=v), 2.0, pair)
    add("CosineSimilarity.eps", lambda nn, v: nn.CosineSimilarity(eps=v), 1e-8, pair)
    add("Upsample.scale_factor", lambda nn, v: nn.Upsample(scale_factor=v), 2.0,
        shaped(1, 1, 3))
    add("ConstantPad1d.value", lambda nn, v: nn.ConstantPad1d(1, v), 2.0, shaped(1, 3))
    add("SmoothL1Loss.beta", lambda nn, v: nn.SmoothL1Loss(beta=v), 1.0, pair)
    add("HuberLoss.delta", lambda nn, v: nn.HuberLoss(delta=v), 1.0, pair)
    add("MarginRankingLoss.margin", lambda nn, v: nn.MarginRankingLoss(margin=v), 1.0,
        lambda lib: (_x(lib, 4), _x(lib, 4) * 0.3, lib.tensor([1.0, -1, 1, -1])))
    add("GaussianNLLLoss.eps", lambda nn, v: nn.GaussianNLLLoss(eps=v), 1e-6,
        lambda lib: triple(lib)[:2] + (_x(lib, 3, 4).abs() + 0.1,))
    add("Embedding.max_norm", lambda nn, v: nn.Embedding(3, 4, max_norm=v), 1.0,
        lambda lib: (lib.tensor([0, 1]),))
    add("TransformerEncoderLayer.layer_norm_eps",
        lambda nn, v: nn.TransformerEncoderLayer(4, 1, 8, layer_norm_eps=v).eval(), 1e-5,
        shaped(2, 3, 4))
    return cases


FUNCTIONS = {name: (call, base) for name, call, base in _functions()}
MODULES = {name: (build, base, inputs) for name, build, base, inputs in _modules()}

# torch's outcomes not copied (docs/pytorch.md, its row on float arguments)
_FORWARD_FAILS = "torch keeps a value it cannot read and fails at the first call"
KEPT = {}
for _name in ("Dropout", "Dropout (p=1, training)", "Dropout2d", "Hardtanh.min_val",
              "Hardtanh.max_val", "TripletMarginLoss.margin"):
    KEPT[_name, "1-d tensor"] = _FORWARD_FAILS
for _name in ("LeakyReLU", "BatchNorm1d.eps", "BatchNorm1d.momentum", "BatchNorm2d.momentum",
              "LayerNorm.eps", "RMSNorm.eps", "GroupNorm.eps", "InstanceNorm1d.eps", "ELU",
              "CELU", "Softplus.beta", "Softplus.threshold", "Threshold.threshold",
              "Threshold.value", "Hardshrink", "Softshrink", "RReLU.lower",
              "CrossEntropyLoss.label_smoothing", "TripletMarginLoss.p", "SmoothL1Loss.beta",
              "MarginRankingLoss.margin", "GaussianNLLLoss.eps", "Embedding.max_norm",
              "TransformerEncoderLayer.layer_norm_eps"):
    for _kind in ("1-d tensor", "complex", "str"):
        KEPT[_name, _kind] = _FORWARD_FAILS
_ARITHMETIC = "torch's Python code computes with the value as it is; ours reads a number"
for _name in ("F.local_response_norm(alpha)", "F.local_response_norm(beta)",
              "F.local_response_norm(k)", "LocalResponseNorm.alpha"):
    KEPT[_name, "complex"] = _ARITHMETIC + " (a complex one gives a complex result there)"
for _name in ("F.normalize(eps)", "F.gaussian_nll_loss(eps)", "GaussianNLLLoss.eps"):
    KEPT[_name, "1-d tensor"] = _ARITHMETIC + " (a one-element tensor clamps there)"
KEPT["F.normalize(p)", "str"] = "torch's RuntimeError of norm's string orders; our TypeError"
for _name in ("F.normalize(eps)", "F.lp_pool1d(norm_type)"):
    KEPT[_name, "complex"] = "torch's NotImplementedError of a complex clamp or power; ours " \
        "refuses the number (a RuntimeError and a TypeError)"
for _kind in ("float32", "int64", "tensor", "int tensor"):
    KEPT["HuberLoss.delta", _kind] = "torch's constructor refuses a NumPy or tensor delta " \
        "its function takes; ours takes it"
# differences not yet followed (each checked to differ still)
LEFT = {}


def _values(out):
    # a result as arrays (and tuples of them): what two calls are compared by
    if isinstance(out, (tuple, list)):
        return tuple(_values(part) for part in out)
    if hasattr(out, "detach"):
        return np.asarray(out.detach().numpy(), dtype=np.float64)
    return out


def _normalised(text):
    # NumPy's scalar reprs, ``np.float32(0.5)``, as the number they hold
    return re.sub(r"np\.(?:float32|float64|int64)\(([^)]*)\)", r"\1", text)


def _function_outcome(lib, name, kind):
    call, base = FUNCTIONS[name]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("gives", _values(call(lib, _stand_in(kind, lib, base))))
    except Exception as error:                 # noqa: BLE001 (the class is the outcome)
        return ("raises", type(error))


def _module_outcome(lib, name, kind):
    build, base, inputs = MODULES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            module = build(lib.nn, _stand_in(kind, lib, base))
        except Exception as error:             # noqa: BLE001
            return ("raises", type(error))
        lib.manual_seed(0)
        try:
            out = ("gives", _values(module(*inputs(lib))))
        except Exception as error:             # noqa: BLE001
            out = ("call raises", type(error))
    return ("builds", _normalised(repr(module)), out)


def _same(theirs, ours):
    # equal values (NaN equal to NaN), or our exception class a subclass of torch's
    if isinstance(theirs, type):
        return isinstance(ours, type) and issubclass(ours, theirs)
    if isinstance(theirs, tuple):
        return (isinstance(ours, tuple) and len(ours) == len(theirs)
                and all(_same(a, b) for a, b in zip(theirs, ours)))
    if isinstance(theirs, np.ndarray):
        return (isinstance(ours, np.ndarray) and ours.shape == theirs.shape
                and np.allclose(ours, theirs, rtol=1e-5, atol=1e-6, equal_nan=True))
    return type(ours) is type(theirs) and ours == theirs


def _outcomes(name, kind):
    outcome = _module_outcome if name in MODULES else _function_outcome
    return outcome(torch, name, kind), outcome(mg, name, kind)


@pytest.mark.parametrize("name", list(FUNCTIONS) + list(MODULES))
def test_float_like_argument_as_torch(name):
    """Each stand-in for the argument: ours as torch's; a ``LEFT`` one must still differ
    (drop its entry once it agrees); a ``KEPT`` one is the next test's."""
    wrong = []
    for kind in KINDS:
        if (name, kind) in KEPT:
            continue
        theirs, ours = _outcomes(name, kind)
        if _same(theirs, ours) == ((name, kind) in LEFT):
            wrong.append(f"given {kind}: torch {theirs}, ours {ours}"
                         + (" (agrees now: drop its LEFT entry)" if (name, kind) in LEFT
                            else ""))
    assert not wrong, f"{name}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("name, kind", sorted(KEPT), ids=[f"{n}-{k}" for n, k in sorted(KEPT)])
def test_kept_differences(name, kind):
    """Where torch's outcome is not copied, ours refuses with a TypeError (a module at
    construction, or at its call) or gives what runs; torch's still differs."""
    theirs, ours = _outcomes(name, kind)
    if ours[0] == "raises":
        assert issubclass(ours[1], TypeError), ours
    elif ours[0] == "builds":         # it runs, or its call refuses the value it keeps
        assert ours[2][0] == "gives" or issubclass(ours[2][1], TypeError), ours
    assert not _same(theirs, ours), f"torch now agrees: {theirs}; drop the KEPT entry"


def test_float_of_reads_as_torch():
    """The reading itself: a Python float is returned as it is; a bool, a NumPy scalar and
    a 0-d tensor give their values; a complex number, a tensor of two elements, a string
    and a 0-d tensor that requires grad are refused, naming the argument."""
    from microgradnorm.dtypes import float_of

    value = 0.25
    assert float_of(value, "f", "eps") is value
    assert float_of(True, "f", "eps") == 1.0 and type(float_of(True, "f", "eps")) is float
    assert float_of(np.float32(0.5), "f", "eps") == 0.5
    assert float_of(mg.tensor(2), "f", "eps") == 2
    assert float_of(mg.tensor([0.5]), "f", "eps", one_element=True) == 0.5
    for bad, error in ((1j, RuntimeError), (1j, TypeError), ("0.5", TypeError),
                       (None, TypeError), (mg.tensor([0.5, 1.0]), TypeError),
                       (mg.tensor([0.5]), TypeError),
                       (mg.tensor(0.5, requires_grad=True), TypeError)):
        with pytest.raises(error, match="eps"):
            float_of(bad, "f", "eps")
    # torch's own refusals of the same values, for a float (double) argument
    x = torch.ones(2)
    for bad in (1j, "0.5", None, torch.tensor([0.5]), torch.tensor(0.5, requires_grad=True)):
        with pytest.raises((TypeError, RuntimeError)):
            torch.dropout(x, bad, False)
