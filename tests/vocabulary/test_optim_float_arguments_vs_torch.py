"""The float arguments of the optimizers, the schedules, ``nn.init`` and the fill factories
given as a Python float, int or bool, a NumPy scalar, a 0-d or one-element Tensor, a Tensor of
two elements, a string, None or a complex number: each call runs under torch and under this
library at test time; both accept (with the same type kept in ``param_groups`` and the same
results) or both refuse, ours with torch's exception class or a subclass of it. ``LEFT``
lists the differences not followed, each checked to differ still."""

import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

KINDS = ("float", "int", "bool", "float64", "float32", "int64", "0-d", "1-element", "2-element",
         "str", "None", "complex")


def _stand_in(lib, base, kind):
    # ``base`` given as ``kind``: None where the kind cannot hold it (an int of 0.9)
    return {
        "float": float(base), "int": int(base) if float(base).is_integer() else None,
        "bool": True, "float64": np.float64(base), "float32": np.float32(base),
        "int64": np.int64(base) if float(base).is_integer() else None,
        "0-d": lib.tensor(float(base)), "1-element": lib.tensor([float(base)]),
        "2-element": lib.tensor([float(base)] * 2), "str": str(base), "None": "none",
        "complex": complex(base)}[kind]


def _kind_name(value):
    value = value[0] if isinstance(value, tuple) else value
    return "Tensor" if isinstance(value, (torch.Tensor, mg.Tensor)) else type(value).__name__


def _outcome(run):
    # ("raises", class) or ("ok", what the run returned)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", run()
        except Exception as error:               # the class is what must agree
            return "raises", type(error)


def _agree(theirs, ours):
    if theirs[0] == "raises" or ours[0] == "raises":
        return theirs[0] == ours[0] and issubclass(ours[1], theirs[1])
    (kept_t, values_t), (kept_o, values_o) = theirs[1], ours[1]
    return kept_t == kept_o and np.allclose(values_t, values_o, rtol=1e-5, atol=1e-7,
                                            equal_nan=True)


# ---------------------------------------------------------------- optimizers
OPTIMIZERS = {
    "SGD": dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01),
    "Adam": dict(lr=0.1, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01),
    "AdamW": dict(lr=0.1, eps=1e-8, weight_decay=0.01),
    "RMSprop": dict(lr=0.1, alpha=0.9, eps=1e-8, momentum=0.5, weight_decay=0.01),
    "Adagrad": dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, eps=1e-10,
                    weight_decay=0.01),
    "Adadelta": dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.01),
    "Adamax": dict(lr=0.1, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.01),
    "NAdam": dict(lr=0.1, eps=1e-8, weight_decay=0.01, momentum_decay=0.004),
    "RAdam": dict(lr=0.1, eps=1e-8, weight_decay=0.01),
    "ASGD": dict(lr=0.1, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.01),
    "Rprop": dict(lr=0.1, etas=(0.5, 1.2), step_sizes=(1e-6, 50.0)),
    "Adafactor": dict(lr=0.01, beta2_decay=-0.8, d=1.0, weight_decay=0.0),
}


def _optimizer_run(lib, name, option, kind):
    options = dict(OPTIMIZERS[name])
    base = options[option]
    first = _stand_in(lib, base[0] if isinstance(base, tuple) else base, kind)
    if first is None:
        return None
    first = None if first == "none" else first
    options[option] = (first, *base[1:]) if isinstance(base, tuple) else first

    def run():
        param = lib.nn.Parameter(lib.linspace(-1.0, 1.0, 4))
        optimizer = getattr(lib.optim, name)([param], **options)
        kept = _kind_name(optimizer.param_groups[0][option])
        for _ in range(2):
            optimizer.zero_grad()
            (param * param * param).sum().backward()
            optimizer.step()
        return kept, param.detach().numpy().copy()
    return run


def _holds(base, kind):
    # an int (Python's or NumPy's) stands in for a whole value only
    base = base[0] if isinstance(base, tuple) else base
    return kind not in ("int", "int64") or float(base).is_integer()


OPTIMIZER_CASES = [(name, option, kind) for name, options in OPTIMIZERS.items()
                   for option in options for kind in KINDS if _holds(options[option], kind)]

# torch's step refuses these where ours refuses at construction (the same error, earlier) or
# with another class: options torch checks nowhere but in the step's arithmetic
# torch checks these nowhere but in its step's arithmetic, which lets them through or trips
# on them there
LEFT = {("Rprop", "etas", "float32"): "torch's step refuses a NumPy float32 eta",
        ("Rprop", "step_sizes", "None"): "torch's clamp takes None (no bound); ours refuses",
        ("Rprop", "step_sizes", "complex"): "torch's step takes a complex bound; ours refuses",
        ("ASGD", "alpha", "complex"): "torch's step takes a complex alpha; ours refuses"}


@pytest.mark.parametrize("name, option, kind", OPTIMIZER_CASES,
                         ids=["-".join(case) for case in OPTIMIZER_CASES])
def test_optimizer_option_as_torch(name, option, kind):
    theirs_run, ours_run = _optimizer_run(torch, name, option, kind), \
        _optimizer_run(mg, name, option, kind)
    theirs, ours = _outcome(theirs_run), _outcome(ours_run)
    left = (name, option, kind) in LEFT
    assert _agree(theirs, ours) != left, f"{name}({option}={kind}): torch {theirs}, ours " \
        f"{ours}" + (" (agrees now: drop its LEFT entry)" if left else "")


# ---------------------------------------------------------------- schedules
SCHEDULES = [
    ("StepLR", dict(step_size=2, gamma=0.5), "gamma"),
    ("ExponentialLR", dict(gamma=0.5), "gamma"),
    ("MultiStepLR", dict(milestones=[1, 2], gamma=0.5), "gamma"),
    ("CosineAnnealingLR", dict(T_max=4, eta_min=0.01), "eta_min"),
    ("ConstantLR", dict(factor=0.5, total_iters=2), "factor"),
    ("PolynomialLR", dict(total_iters=4, power=2.0), "power"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2), "max_lr"),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range",
                      gamma=0.9), "gamma"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, pct_start=0.3), "max_lr"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, pct_start=0.3), "pct_start"),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, div_factor=25.0), "div_factor"),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, eta_min=0.01), "eta_min"),
    ("ReduceLROnPlateau", dict(factor=0.5, patience=0), "factor"),
    ("ReduceLROnPlateau", dict(factor=0.5, patience=0, threshold=1e-4), "threshold"),
    ("ReduceLROnPlateau", dict(factor=0.5, patience=0, min_lr=0.001), "min_lr"),
    ("ReduceLROnPlateau", dict(factor=0.5, patience=0, eps=1e-8), "eps"),
]
SCHEDULE_KINDS = ("bool", "float64", "float32", "0-d", "1-element", "str")


def _schedule_run(lib, name, options, option, kind):
    options = dict(options)
    value = _stand_in(lib, options[option], kind)
    options[option] = value

    def run():
        optimizer = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1, momentum=0.9)
        scheduler = getattr(lib.optim.lr_scheduler, name)(optimizer, **options)
        rates = []
        for _ in range(5):
            optimizer.step()
            scheduler.step(1.0) if name == "ReduceLROnPlateau" else scheduler.step()
            rates.append(float(optimizer.param_groups[0]["lr"]))
        return "rates", rates
    return run


SCHEDULE_CASES = [(name, options, option, kind) for name, options, option in SCHEDULES
                  for kind in SCHEDULE_KINDS]
# torch keeps a Tensor option as it is and multiplies the rates by it; a Tensor base_lr of
# CyclicLR is aliased by torch's groups (its rates freeze at the peak): not followed
SCHEDULE_LEFT = {}


@pytest.mark.parametrize("name, options, option, kind", SCHEDULE_CASES,
                         ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in SCHEDULE_CASES])
def test_schedule_option_as_torch(name, options, option, kind):
    theirs = _outcome(_schedule_run(torch, name, options, option, kind))
    ours = _outcome(_schedule_run(mg, name, options, option, kind))
    assert _agree(theirs, ours), f"{name}({option}={kind}): torch {theirs}, ours {ours}"


# ---------------------------------------------------------------- nn.init
INITS = [("uniform_", "a", dict(a=0.0, b=1.0)), ("uniform_", "b", dict(a=0.0, b=2.0)),
         ("normal_", "mean", dict(mean=1.0, std=1.0)), ("normal_", "std", dict(std=2.0)),
         ("constant_", "val", dict(val=2.0)), ("xavier_uniform_", "gain", dict(gain=2.0)),
         ("xavier_normal_", "gain", dict(gain=2.0)), ("kaiming_uniform_", "a", dict(a=1.0)),
         ("kaiming_normal_", "a", dict(a=1.0)), ("orthogonal_", "gain", dict(gain=2.0)),
         ("sparse_", "sparsity", dict(sparsity=0.0)), ("sparse_", "std", dict(sparsity=0.5)),
         ("trunc_normal_", "mean", dict(mean=0.0)), ("trunc_normal_", "std", dict(std=1.0)),
         ("trunc_normal_", "a", dict(a=-1.0)), ("trunc_normal_", "b", dict(b=2.0))]
INIT_CASES = [(fn, arg, options, kind) for fn, arg, options in INITS for kind in KINDS
              if _holds(options.get(arg, 0.01), kind)]


def _init_run(lib, fn, arg, options, kind):
    options = dict(options)
    value = _stand_in(lib, options.get(arg, 0.01), kind)
    if value is None:
        return None
    options[arg] = None if value == "none" else value

    def run():
        lib.manual_seed(0)
        weight = lib.empty(4, 4)
        getattr(lib.nn.init, fn)(weight, **options)
        # draws differ where the QR or rounding does: compare what the fill is made of
        values = weight.detach().double().numpy()
        return str(weight.dtype).rsplit(".", 1)[-1], [np.isfinite(values).all(),
                                                        float((values == 0).mean())]
    return run


@pytest.mark.parametrize("fn, arg, options, kind", INIT_CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in INIT_CASES])
def test_init_argument_as_torch(fn, arg, options, kind):
    theirs_run = _init_run(torch, fn, arg, options, kind)
    theirs, ours = _outcome(theirs_run), _outcome(_init_run(mg, fn, arg, options, kind))
    assert _agree(theirs, ours), f"{fn}({arg}={kind}): torch {theirs}, ours {ours}"


@pytest.mark.parametrize("kind", KINDS)
def test_calculate_gain_param_as_torch(kind):
    def run(lib):
        value = _stand_in(lib, 1.0 if kind in ("int", "int64") else 0.2, kind)
        gain = lib.nn.init.calculate_gain("leaky_relu", None if value == "none" else value)
        return type(gain).__name__, [gain]
    theirs, ours = _outcome(lambda: run(torch)), _outcome(lambda: run(mg))
    assert _agree(theirs, ours), f"calculate_gain(param={kind}): torch {theirs}, ours {ours}"


# ---------------------------------------------------------------- fill values
FILLS = {"0-d float": lambda lib: lib.tensor(2.5), "0-d int": lambda lib: lib.tensor(3),
         "0-d bool": lambda lib: lib.tensor(True), "0-d complex": lambda lib: lib.tensor(1 + 1j),
         "1-element": lambda lib: lib.tensor([2.5]), "2-element": lambda lib: lib.tensor([1., 2.]),
         "bool": lambda lib: True, "complex": lambda lib: 1 + 2j, "float64": lambda lib:
         np.float64(2.5), "float32": lambda lib: np.float32(2.5), "int64": lambda lib:
         np.int64(3), "NumPy bool": lambda lib: np.bool_(True), "str": lambda lib: "1",
         "None": lambda lib: None}
FILL_CALLS = {
    "full": lambda lib, v: lib.full((2,), v),
    "full float64": lambda lib, v: lib.full((2,), v, dtype=lib.float64),
    "full_like": lambda lib, v: lib.full_like(lib.zeros(2), v),
    "full_like int64": lambda lib, v: lib.full_like(lib.zeros(2, dtype=lib.int64), v),
    "fill_": lambda lib, v: lib.zeros(2).fill_(v),
    "fill_ int32": lambda lib, v: lib.zeros(2, dtype=lib.int32).fill_(v),
    "new_full": lambda lib, v: lib.zeros(2).new_full((2,), v),
    "new_full int64": lambda lib, v: lib.zeros(2, dtype=lib.int64).new_full((2,), v),
}
FILL_CASES = [(call, kind) for call in FILL_CALLS for kind in FILLS]


@pytest.mark.parametrize("call, kind", FILL_CASES, ids=[f"{c}-{k}" for c, k in FILL_CASES])
def test_fill_value_as_torch(call, kind):
    def run(lib):
        out = FILL_CALLS[call](lib, FILLS[kind](lib))
        values = out.numpy()
        return str(out.dtype).rsplit(".", 1)[-1], [values.real, values.imag] \
            if np.iscomplexobj(values) else values.astype(np.float64)
    theirs, ours = _outcome(lambda: run(torch)), _outcome(lambda: run(mg))
    assert _agree(theirs, ours), f"{call}({kind}): torch {theirs}, ours {ours}"


def test_tensor_options_are_read_at_each_step():
    # a Tensor momentum kept in the group, as torch's, changed in place between steps: the
    # next step reads the new value (the comparison above must be able to fail on a copy)
    def run(lib):
        momentum = lib.tensor(0.5)
        param = lib.nn.Parameter(lib.ones(2))
        optimizer = lib.optim.SGD([param], lr=1.0, momentum=momentum)
        kept = optimizer.param_groups[0]["momentum"] is momentum
        for value in (0.5, 0.9, 0.0):
            momentum.fill_(value)
            param.grad = lib.ones(2)
            optimizer.step()
        return kept, param.detach().numpy().tolist()
    assert run(mg) == run(torch)
    assert run(mg)[1] != [-2.0, -2.0]                    # what a stale 0.5 would give


@pytest.mark.parametrize("name, options", [
    ("SGD", lambda lib: dict(lr=True, momentum=lib.tensor(0.9), dampening=np.float32(0.1))),
    ("Adam", lambda lib: dict(lr=lib.tensor(0.01), eps=lib.tensor([1e-6]), weight_decay=False)),
    ("RMSprop", lambda lib: dict(alpha=np.float64(0.9), momentum=lib.tensor(0.5)))])
def test_optimizer_repr_with_such_options_as_torch(name, options):
    def text(lib):
        return repr(getattr(lib.optim, name)([lib.nn.Parameter(lib.ones(2))], **options(lib)))
    assert text(mg) == text(torch)
