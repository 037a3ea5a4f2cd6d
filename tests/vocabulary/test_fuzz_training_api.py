"""Optimizers, learning-rate schedules and the Module API side by side with PyTorch: the
corners a differential run of small training programs found (named and Tensor-valued
arguments, the state dict's layout, the warnings of a misordered step, a rate changed from
outside a schedule, a failed constructor, torch's private init helpers)."""

import copy
import math
import pickle
import warnings

import numpy as np
import pytest

import microgradnorm as mg

torch = pytest.importorskip("torch")

OPTIMIZERS = ["SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "RMSprop", "NAdam",
              "RAdam", "ASGD", "Rprop"]


def _params(lib, arrays):
    return [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]


def _run_steps(lib, optimizer, params, grads):
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = None if g is None else lib.tensor(g.copy(), dtype=lib.float64)
        optimizer.step()
    return [p.detach().numpy().copy() for p in params]


def _grads(seed, shapes, steps=4, late=None):
    # one gradient per parameter per step; parameter ``late`` gets none before step 2
    rng = np.random.default_rng(seed)
    return [[None if (i == late and s < 2) else rng.standard_normal(shape)
             for i, shape in enumerate(shapes)] for s in range(steps)]


def _outcome(call):
    # what a call did: its value, or the class of what it raised; and its warnings' classes
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", call())
        except Exception as error:          # noqa: BLE001 - the class is what is compared
            result = ("raise", type(error))
    return result, sorted({w.category.__name__ for w in caught})


def _same_outcome(ours, theirs):
    (mine, my_warnings), (torchs, torch_warnings) = ours, theirs
    assert my_warnings == torch_warnings
    assert mine[0] == torchs[0], (mine, torchs)
    if mine[0] == "raise":
        assert issubclass(mine[1], torchs[1]), (mine[1], torchs[1])
    else:
        assert mine[1] == torchs[1]


# -- optimizers: the forms of ``params`` -----------------------------------------------------

PARAM_FORMS = {
    "named_parameters": lambda lib, m: m.named_parameters(),
    "named_in_a_group": lambda lib, m: [{"params": m.named_parameters(), "lr": 0.5}],
    "generator": lambda lib, m: (p for p in m.parameters()),
    "a_tensor": lambda lib, m: m.weight,
    "a_set_in_a_group": lambda lib, m: [{"params": {m.weight}}],
    "named_and_unnamed": lambda lib, m: [("w", m.weight), m.bias],
    "a_non_leaf": lambda lib, m: [m.weight * 2],
    "empty": lambda lib, m: [],
}


@pytest.mark.parametrize("form", sorted(PARAM_FORMS))
def test_the_forms_of_params_are_taken_or_refused_as_torchs(form):
    def build(lib):
        model = lib.nn.Linear(2, 3)
        optimizer = lib.optim.SGD(PARAM_FORMS[form](lib, model), lr=0.1)
        groups = optimizer.state_dict()["param_groups"]
        return [(g.get("param_names"), g["params"], g["lr"]) for g in groups]

    _same_outcome(_outcome(lambda: build(mg)), _outcome(lambda: build(torch)))


@pytest.mark.parametrize("kind", ["StepLR", "OneCycleLR", "CyclicLR", "SWALR"])
@pytest.mark.parametrize("tensor_lr", [False, True])
def test_a_group_with_a_schedules_keys_is_added_as_torchs(kind, tensor_lr):
    # a group copied from a scheduled optimizer's state dict: add_param_group and the
    # constructor take its keys (initial_lr, max_lr, ..., swa_lr), as torch's
    def run(lib):
        rate = lib.tensor(0.1, dtype=lib.float64) if tensor_lr else 0.1
        first = lib.zeros(2, requires_grad=True)
        optimizer = lib.optim.SGD([first], lr=rate, momentum=0.9)
        _scheduler(lib, kind, optimizer)       # the schedules' helper, below
        saved = {k: v for k, v in optimizer.state_dict()["param_groups"][0].items()
                 if k != "params"}
        optimizer.add_param_group({**saved, "params": [lib.zeros(3, requires_grad=True)]})
        again = lib.optim.SGD([{**saved, "params": [first]}], lr=0.1)
        return [{k: float(v) if isinstance(v, (float, lib.Tensor)) else v
                 for k, v in group.items() if k != "params"}
                for group in (optimizer.param_groups[1], again.param_groups[0])]

    ours, theirs = run(mg), run(torch)
    assert [sorted(g) for g in ours] == [sorted(g) for g in theirs]
    for group, torch_group in zip(ours, theirs):
        assert group == pytest.approx(torch_group, rel=1e-15)


def test_named_parameters_train_and_reload_as_torchs():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2).double()
        optimizer = lib.optim.Adam(model.named_parameters(), lr=0.1)
        x = lib.ones(4, 3, dtype=lib.float64)
        for _ in range(3):
            optimizer.zero_grad()
            model(x).square().sum().backward()
            optimizer.step()
        again = lib.optim.Adam(model.named_parameters(), lr=0.1)
        again.load_state_dict(optimizer.state_dict())
        return again.state_dict()["param_groups"][0]["param_names"], model.weight

    (names, weight), (torch_names, torch_weight) = run(mg), run(torch)
    assert names == torch_names
    np.testing.assert_allclose(weight.detach().numpy(), torch_weight.detach().numpy(),
                               rtol=1e-12, atol=1e-14)


# -- optimizers: a Tensor learning rate ------------------------------------------------------

@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_tensor_lr_steps_as_a_number_and_is_read_at_each_step(name):
    shapes = [(3,), (2, 2)]
    init = [np.linspace(-1, 1, int(np.prod(s))).reshape(s) for s in shapes]
    grads = _grads(1, shapes, late=1)
    results = []
    for lib in (mg, torch):
        params = _params(lib, init)
        lr = lib.tensor(0.05, dtype=lib.float64)
        optimizer = getattr(lib.optim, name)(params, lr=lr)
        first = _run_steps(lib, optimizer, params, grads[:2])
        lr.fill_(0.2)                         # the group holds the Tensor: the next steps see it
        results.append(first + _run_steps(lib, optimizer, params, grads[2:]))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("case", ["two_elements", "one_element_1d", "negative",
                                  "adam_foreach", "adamw_foreach", "adam_foreach_capturable"])
def test_a_tensor_lr_is_checked_as_torchs(case):
    def build(lib):
        p = lib.zeros(2, requires_grad=True)
        if case == "two_elements":
            return lib.optim.SGD([p], lr=lib.tensor([0.1, 0.2])).param_groups[0]["lr"].shape
        if case == "one_element_1d":
            return tuple(lib.optim.SGD([p], lr=lib.tensor([0.1])).param_groups[0]["lr"].shape)
        if case == "negative":
            return lib.optim.SGD([p], lr=lib.tensor(-0.1))
        kind = "AdamW" if case == "adamw_foreach" else "Adam"
        optimizer = getattr(lib.optim, kind)(
            [p], lr=lib.tensor(0.1), foreach=True, capturable=case.endswith("capturable"))
        return type(optimizer.param_groups[0]["lr"]).__name__

    _same_outcome(_outcome(lambda: build(mg)), _outcome(lambda: build(torch)))


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("lr_dtype", ["float32", "float64"])
@pytest.mark.parametrize("rates", [(0.5, 0.5), (0.5, 0.25)])
def test_lbfgs_reads_a_tensor_lr_at_each_step_as_torchs(line_search_fn, lr_dtype, rates):
    # a rate changed between steps: torch's as a number in the group (torch keeps its
    # Tensor rate as the last step length, so a later fill_ rescales that step too)
    def run(lib, tensor_lr):
        p = lib.tensor(np.linspace(-1, 1, 3), dtype=lib.float64, requires_grad=True)
        goal = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)
        lr = lib.tensor(rates[0], dtype=getattr(lib, lr_dtype))
        optimizer = lib.optim.LBFGS([p], lr=lr if tensor_lr else lr.item(), max_iter=3,
                                    line_search_fn=line_search_fn)

        def closure():
            optimizer.zero_grad()
            loss = ((p - goal) ** 4).sum() + (p * p).sum()
            loss.backward()
            return loss

        seen = []
        for rate in rates:
            lr.fill_(rate)
            if not tensor_lr:
                optimizer.param_groups[0]["lr"] = lr.item()
            seen.append(optimizer.step(closure).item())
            seen.extend(p.detach().numpy().tolist())
        return seen

    np.testing.assert_allclose(run(mg, True), run(torch, rates[0] == rates[1]), rtol=1e-10,
                               atol=1e-12)


# -- optimizers: the state dict's layout -----------------------------------------------------

@pytest.mark.parametrize("name, options", [("SGD", {}), ("SGD", {"momentum": 0.9}),
                                           ("Adam", {}), ("RMSprop", {"centered": True}),
                                           ("Adagrad", {}), ("NAdam", {}), ("ASGD", {})])
def test_the_state_dict_holds_torchs_entries_and_a_readable_step(name, options):
    shapes = [(2,), (3,)]
    init = [np.ones(s) for s in shapes]
    grads = _grads(2, shapes, steps=2, late=1)
    states = []
    for lib in (mg, torch):
        params = _params(lib, init)
        optimizer = getattr(lib.optim, name)(params, lr=0.1, **options)
        _run_steps(lib, optimizer, params, grads)
        states.append(optimizer.state_dict()["state"])
    ours, theirs = states
    assert {i: sorted(s) for i, s in ours.items()} == {i: sorted(s) for i, s in theirs.items()}
    for index, entries in theirs.items():
        if "step" in entries:                 # torch's is a 0-d Tensor: .item() reads both
            assert ours[index]["step"].item() == entries["step"].item()


@pytest.mark.parametrize("name", ["Adam", "RMSprop", "Adagrad", "NAdam", "ASGD", "Adafactor"])
def test_the_live_step_is_torchs_0d_tensor_that_float_and_int_read(name):
    # ``optimizer.state[p]["step"]`` a 0-d Tensor of torch's scalar dtype, as torch's, the
    # state dict's the same Tensor; float() and int() read every one
    steps = []
    for lib in (mg, torch):
        p = lib.ones(2, dtype=lib.float64, requires_grad=True)
        optimizer = getattr(lib.optim, name)([p], lr=0.1)
        for _ in range(3):
            p.grad = lib.ones(2, dtype=lib.float64)
            optimizer.step()
        live, saved = optimizer.state[p]["step"], optimizer.state_dict()["state"][0]["step"]
        steps.append((float(live), int(live), float(saved), int(saved),
                      str(saved.dtype).replace("torch.", ""), type(live).__name__))
    ours, theirs = steps
    assert ours == theirs


# -- schedules: the order of the first steps -------------------------------------------------

def _scheduler(lib, kind, optimizer):
    schedules = lib.optim.lr_scheduler
    if kind == "SequentialLR":
        members = [schedules.ConstantLR(optimizer), schedules.ExponentialLR(optimizer, 0.9)]
        return schedules.SequentialLR(optimizer, members, [2])
    if kind == "ChainedScheduler":
        return schedules.ChainedScheduler([schedules.ConstantLR(optimizer),
                                           schedules.ExponentialLR(optimizer, 0.9)])
    if kind == "SWALR":
        return lib.optim.swa_utils.SWALR(optimizer, 0.05)
    made = {"StepLR": lambda: schedules.StepLR(optimizer, 1),
            "OneCycleLR": lambda: schedules.OneCycleLR(optimizer, 1.0, total_steps=10),
            "CyclicLR": lambda: schedules.CyclicLR(optimizer, 0.01, 0.1),
            "CosineAnnealingWarmRestarts":
                lambda: schedules.CosineAnnealingWarmRestarts(optimizer, 2),
            "ReduceLROnPlateau": lambda: schedules.ReduceLROnPlateau(optimizer)}
    return made[kind]()


@pytest.mark.parametrize("kind", ["StepLR", "OneCycleLR", "CyclicLR", "SWALR", "SequentialLR",
                                  "ChainedScheduler", "CosineAnnealingWarmRestarts",
                                  "ReduceLROnPlateau"])
@pytest.mark.parametrize("order", ["s", "os", "so", "ss", "oss", "sos", "o|s"])
def test_a_schedule_stepped_before_its_optimizer_warns_as_torchs(kind, order):
    def run(lib):
        optimizer = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.1, momentum=0.9)
        before, _, after = order.rpartition("|")
        for _ in before:                      # an optimizer step before the schedule exists
            optimizer.step()
        scheduler = _scheduler(lib, kind, optimizer)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for call in after:
                if call == "o":
                    optimizer.step()
                elif kind == "ReduceLROnPlateau":
                    scheduler.step(1.0)
                else:
                    scheduler.step()
        return sum("before `optimizer.step()`" in str(w.message) for w in caught)

    assert run(mg) == run(torch)


def test_get_lr_warns_and_gives_torchs_chainable_rates():
    def run(lib):
        optimizer = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.1)
        scheduler = lib.optim.lr_scheduler.StepLR(optimizer, 1, 0.5)
        optimizer.step()
        scheduler.step()
        with pytest.warns(UserWarning, match="get_last_lr"):
            return scheduler.get_lr()

    assert run(mg) == pytest.approx(run(torch), rel=1e-15)


@pytest.mark.parametrize("kind", ["SequentialLR", "ChainedScheduler", "ReduceLROnPlateau",
                                  "StepLR", "SWALR", "CosineAnnealingWarmRestarts"])
def test_get_lr_of_every_schedule_answers_as_torchs(kind):
    # the schedules without a chainable form of their own: torch's NotImplementedError
    def run(lib):
        optimizer = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.1)
        scheduler = _scheduler(lib, kind, optimizer)
        optimizer.step()
        return _outcome(lambda: [round(lr, 12) for lr in scheduler.get_lr()])

    _same_outcome(run(mg), run(torch))


def test_resuming_without_initial_lr_is_torchs_key_error():
    optimizer = mg.optim.SGD([mg.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(KeyError, match="initial_lr"):
        mg.optim.lr_scheduler.StepLR(optimizer, 2, last_epoch=3)
    with pytest.raises(KeyError):
        torch.optim.lr_scheduler.StepLR(
            torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1), 2, last_epoch=3)
    assert "initial_lr" not in optimizer.param_groups[0]


# -- schedules: the rate the group holds -----------------------------------------------------

RECURSIVE = {
    "StepLR": {"step_size": 2, "gamma": 0.5}, "MultiStepLR": {"milestones": [1, 3, 3]},
    "ExponentialLR": {"gamma": 0.8}, "CosineAnnealingLR": {"T_max": 3, "eta_min": 0.001},
    "LinearLR": {"start_factor": 0.25, "total_iters": 3}, "ConstantLR": {"factor": 0.5},
    "PolynomialLR": {"total_iters": 4, "power": 2.0},
    "MultiplicativeLR": {"lr_lambda": lambda epoch: 0.9},
}


@pytest.mark.parametrize("first", sorted(RECURSIVE))
@pytest.mark.parametrize("second", [None, "ExponentialLR", "StepLR", "LambdaLR"])
def test_a_rate_changed_from_outside_or_by_another_schedule_goes_on_as_torchs(first, second):
    def run(lib):
        optimizer = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.1)
        schedules = lib.optim.lr_scheduler
        made = [getattr(schedules, first)(optimizer, **RECURSIVE[first])]
        if second == "LambdaLR":
            made.append(schedules.LambdaLR(optimizer, lambda epoch: 0.95 ** epoch))
        elif second is not None:
            made.append(getattr(schedules, second)(optimizer, **RECURSIVE[second]))
        rates = []
        for step in range(8):
            optimizer.step()
            for scheduler in made:
                scheduler.step()
            if step == 2:                     # a rate set by hand, between two steps
                optimizer.param_groups[0]["lr"] *= 0.5
            rates.append([optimizer.param_groups[0]["lr"]]
                         + [s.get_last_lr()[0] for s in made])
        return rates

    for ours, theirs in zip(run(mg), run(torch)):
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("kind, options", [
    ("StepLR", {"step_size": 2}), ("CosineAnnealingLR", {"T_max": 3}),
    ("LambdaLR", {"lr_lambda": lambda e: 1 / (e + 1)}), ("OneCycleLR", {"max_lr": 1.0,
     "total_steps": 8, "cycle_momentum": False}), ("CyclicLR", {"base_lr": 0.01,
     "max_lr": 0.1, "cycle_momentum": False}), ("CosineAnnealingWarmRestarts", {"T_0": 2}),
    ("ReduceLROnPlateau", {"patience": 0})])
def test_a_schedule_fills_a_tensor_rate_in_place_as_torchs(kind, options):
    def run(lib):
        rate = lib.tensor(0.1, dtype=lib.float64)
        optimizer = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=rate)
        scheduler = getattr(lib.optim.lr_scheduler, kind)(optimizer, **options)
        seen = []
        for _ in range(5):
            optimizer.step()
            scheduler.step(1.0) if kind == "ReduceLROnPlateau" else scheduler.step()
            seen.append((optimizer.param_groups[0]["lr"] is rate, rate.item()))
        return seen

    for (same, value), (torch_same, torch_value) in zip(run(mg), run(torch)):
        assert same == torch_same
        assert math.isclose(value, torch_value, rel_tol=1e-12)


@pytest.mark.parametrize("then", [None, "LambdaLR", "StepLR"])
def test_a_schedule_whose_function_raises_leaves_the_groups_as_torchs(then):
    # torch's constructor has written initial_lr when the function raises: it stays, and a
    # schedule made after starts from it
    def raising(epoch):
        raise ZeroDivisionError("schedule")

    def run(lib):
        optimizer = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.1)
        failed = _outcome(lambda: lib.optim.lr_scheduler.LambdaLR(optimizer, raising))
        optimizer.param_groups[0]["lr"] = 0.05
        made = {"LambdaLR": lambda: lib.optim.lr_scheduler.LambdaLR(optimizer, lambda e: 0.5),
                "StepLR": lambda: lib.optim.lr_scheduler.StepLR(optimizer, 1, 0.5)}
        last = made[then]().get_last_lr() if then else None
        return failed, {k: v for k, v in optimizer.param_groups[0].items() if k != "params"}, \
            last

    assert run(mg) == run(torch)


# -- Module API and init ---------------------------------------------------------------------

@pytest.mark.parametrize("name, value", [("weight", "module"), ("bias", "module"),
                                         ("weight", "none"), ("bias", "tensor")])
def test_assigning_to_a_parameter_name_is_checked_as_torchs(name, value):
    def assign(lib):
        model = lib.nn.Linear(2, 2)
        new = {"module": lib.nn.ReLU(), "none": None, "tensor": lib.zeros(2)}[value]
        setattr(model, name, new)
        return sorted(n for n, _ in model.named_parameters()), sorted(model._modules)

    _same_outcome(_outcome(lambda: assign(mg)), _outcome(lambda: assign(torch)))


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4, 5), (5,), (0, 3)])
@pytest.mark.parametrize("mode", ["fan_in", "FAN_OUT", "fan_avg"])
def test_torchs_private_fan_helpers_and_any_case_mode(shape, mode):
    def fans(lib):
        init = lib.nn.init
        tensor = lib.empty(*shape)
        return (init._calculate_fan_in_and_fan_out(tensor),
                init._calculate_correct_fan(tensor, mode))

    _same_outcome(_outcome(lambda: fans(mg)), _outcome(lambda: fans(torch)))

    def drawn(lib):
        lib.manual_seed(3)
        return lib.nn.init.kaiming_uniform_(lib.empty(4, 3), mode=mode).numpy().tolist()

    _same_outcome(_outcome(lambda: drawn(mg)), _outcome(lambda: drawn(torch)))


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Rprop"])
def test_the_state_is_indexed_by_the_parameter_as_torchs(name):
    def run(lib):
        used, unused = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
        optimizer = getattr(lib.optim, name)([used, unused], lr=0.1)
        used.grad = lib.ones(2)
        optimizer.step()
        seen = (sorted(optimizer.state[used]), used in optimizer.state, unused in optimizer.state)
        missing = optimizer.state[unused]            # torch's defaultdict: a new {}
        return seen, missing, unused in optimizer.state, sorted(optimizer.state_dict()["state"])

    assert run(mg) == run(torch)


def _stepped(lib, kind="Adam"):
    p = lib.ones(2, dtype=lib.float64, requires_grad=True)
    p.grad = lib.ones(2, dtype=lib.float64)
    return getattr(lib.optim, kind)([p], lr=0.1), p


HOOK_PROGRAMS = {
    "step": lambda lib, opt, log: (
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), sorted(k)))),
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", a[0] is o))),
        opt.step(), opt.step(closure=lambda: 2.0)),
    "step_removed": lambda lib, opt, log: (
        opt.register_step_pre_hook(lambda *a: log.append("pre")).remove(), opt.step()),
    "step_new_arguments": lambda lib, opt, log: (
        opt.register_step_pre_hook(lambda o, a, k: ((o,), {"closure": lambda: 3.0})),
        log.append(opt.step())),
    "step_bad_return": lambda lib, opt, log: (
        opt.register_step_pre_hook(lambda o, a, k: 5), opt.step()),
    "state_dict": lambda lib, opt, log: (
        opt.register_state_dict_pre_hook(lambda o: log.append("pre")),
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1}),
        opt.register_state_dict_post_hook(lambda o, sd: log.append("extra" in sd),
                                          prepend=True),
        log.append(sorted(opt.state_dict()))),
    "load_state_dict": lambda lib, opt, log: (
        opt.step(),
        opt.register_load_state_dict_pre_hook(
            lambda o, sd: log.append(sorted(sd)) or {k: sd[k] for k in ("state",
                                                                         "param_groups")}),
        opt.register_load_state_dict_post_hook(lambda o: log.append("post")),
        opt.load_state_dict({**opt.state_dict(), "extra": 1})),
}


@pytest.mark.parametrize("program", sorted(HOOK_PROGRAMS))
@pytest.mark.parametrize("kind", ["SGD", "Adam"])
def test_optimizer_hooks_run_as_torchs(program, kind):
    def run(lib):
        optimizer, p = _stepped(lib, kind)
        log = []
        HOOK_PROGRAMS[program](lib, optimizer, log)
        return log, p.detach().numpy().tolist()

    _same_outcome(_outcome(lambda: run(mg)), _outcome(lambda: run(torch)))


def test_a_custom_optimizer_runs_its_hooks_and_counts_for_the_step_order():
    def run(lib):
        class Plain(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": 0.5})

            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        p.data.add_(p.grad, alpha=-group["lr"])

        p = lib.ones(2, dtype=lib.float64, requires_grad=True)
        p.grad = lib.ones(2, dtype=lib.float64)
        optimizer, log = Plain([p]), []
        optimizer.register_step_post_hook(lambda *args: log.append("post"))
        scheduler = lib.optim.lr_scheduler.StepLR(optimizer, 1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            optimizer.step()
            scheduler.step()
        return log, p.detach().numpy().tolist(), len(caught)

    assert run(mg) == run(torch)


COPIES = {"deepcopy": copy.deepcopy, "copy": copy.copy,
          "pickle": lambda optimizer: pickle.loads(pickle.dumps(optimizer))}


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("kind", ["SGD", "Adam"])
def test_an_optimizer_copied_inside_its_hook_runs_hooks_as_torchs(how, kind):
    # the copy carries neither the hooks (torch's copies are of the groups and the state)
    # nor the running hook's re-entry flag: a hook registered on it runs
    def run(lib):
        optimizer, p = _stepped(lib, kind)
        copies, log = [], []
        optimizer.register_step_pre_hook(lambda o, a, k: copies.append(COPIES[how](o)))
        optimizer.step()
        twin = copies[0]
        twin.register_step_post_hook(lambda o, a, k: log.append("twin"))
        twin.register_state_dict_pre_hook(lambda o: log.append("twin state_dict"))
        twin.step()
        twin.step()
        twin.state_dict()
        optimizer.register_step_post_hook(lambda o, a, k: log.append("own"))
        optimizer.step()
        return log, len(copies)

    assert run(mg) == run(torch)


@pytest.mark.parametrize("name, options", [("SGD", {"momentum": 0.9}), ("SGD", {}),
                                           ("Adam", {}), ("AdamW", {"amsgrad": True}),
                                           ("RMSprop", {}), ("NAdam", {})])
def test_a_step_reads_the_state_without_the_parameter_keyed_methods(name, options, monkeypatch):
    # the step's speed: the state's own dict methods by id(p), never ParamState's Python
    # ones (a call per parameter); the values are torch's
    from microgradnorm.optim.optimizers import ParamState

    def refused(*args, **kwargs):
        raise AssertionError("a ParamState method on the step's path")

    shapes = [(3,), (2, 2)]
    init = [np.linspace(-1, 1, int(np.prod(s))).reshape(s) for s in shapes]
    grads = _grads(4, shapes, late=1)
    results = []
    for lib in (torch, mg):
        params = _params(lib, init)
        optimizer = getattr(lib.optim, name)(params, lr=0.05, **options)
        if lib is mg:
            for method in ("get", "setdefault", "pop", "__contains__", "__getitem__",
                           "__setitem__", "__missing__"):
                monkeypatch.setattr(ParamState, method, refused)
        results.append(_run_steps(lib, optimizer, params, grads))
    for theirs, ours in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("kind", sorted(RECURSIVE))
@pytest.mark.parametrize("steps", [0, 1, 3])
def test_a_schedule_loaded_with_its_optimizer_continues_as_torchs(kind, steps):
    def run(lib):
        def fresh():
            optimizer = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.1)
            return optimizer, getattr(lib.optim.lr_scheduler, kind)(optimizer, **RECURSIVE[kind])

        optimizer, scheduler = fresh()
        for _ in range(steps):
            optimizer.step()
            scheduler.step()
        resumed, resumed_scheduler = fresh()    # a state one step ahead of its own, or more
        resumed.load_state_dict(optimizer.state_dict())
        resumed_scheduler.load_state_dict(scheduler.state_dict())
        rates = [resumed.param_groups[0]["lr"]]
        for _ in range(3):
            resumed.step()
            resumed_scheduler.step()
            rates.append(resumed.param_groups[0]["lr"])
        return rates

    assert run(mg) == pytest.approx(run(torch), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("owner", ["optimizer", "module"])
@pytest.mark.parametrize("set_to_none", [False, True])
def test_zero_grad_cuts_a_gradient_recorded_by_create_graph_as_torchs(owner, set_to_none):
    def run(lib):
        model = lib.nn.Linear(2, 2).double()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # torch's warning about the reference cycle
            model(lib.ones(1, 2, dtype=lib.float64)).square().sum().backward(create_graph=True)
        clearing = lib.optim.SGD(model.parameters(), lr=0.1) if owner == "optimizer" else model
        clearing.zero_grad(set_to_none=set_to_none)
        grad = model.weight.grad
        return None if grad is None else (grad.requires_grad, grad.grad_fn is None,
                                          grad.detach().numpy().tolist())

    assert run(mg) == run(torch)


@pytest.mark.parametrize("persistent", [True, False])
def test_a_parameter_registered_as_a_buffer_stays_a_buffer_as_torchs(persistent):
    def run(lib):
        model = lib.nn.Linear(1, 1)
        model.register_buffer("running", lib.nn.Parameter(lib.zeros(2)), persistent=persistent)
        return (sorted(n for n, _ in model.named_buffers()),
                sorted(n for n, _ in model.named_parameters()), sorted(model.state_dict()))

    assert run(mg) == run(torch)


@pytest.mark.parametrize("name, options", [("SGD", {"momentum": 0.9}), ("Adam", {}),
                                           ("RMSprop", {"centered": True})])
def test_a_deep_copied_optimizer_keeps_its_state_for_the_copied_parameters(name, options):
    def run(lib):
        p = lib.ones(2, dtype=lib.float64, requires_grad=True)
        optimizer = getattr(lib.optim, name)([p], lr=0.1, **options)
        p.grad = lib.ones(2, dtype=lib.float64)
        optimizer.step()
        twin = copy.deepcopy(optimizer)
        q = twin.param_groups[0]["params"][0]
        q.grad = lib.full((2,), 0.5, dtype=lib.float64)
        twin.step()
        return q.detach().numpy().tolist(), p.detach().numpy().tolist()

    np.testing.assert_allclose(run(mg), run(torch), rtol=1e-12)


GLOBAL_HOOKS = {
    "pre": lambda lib, log: [lib.nn.modules.module.register_module_forward_pre_hook(
        lambda m, args: log.append(("pre", type(m).__name__)))],
    "pre_replacing": lambda lib, log: [lib.nn.modules.module.register_module_forward_pre_hook(
        lambda m, args: (args[0] * 0,) if isinstance(m, lib.nn.Linear) else None)],
    "post_before_the_modules_own": lambda lib, log: [
        lib.nn.modules.module.register_module_forward_hook(
            lambda m, args, out: log.append(("post", type(m).__name__)))],
    "post_with_kwargs": lambda lib, log: [lib.nn.modules.module.register_module_forward_hook(
        lambda m, args, kwargs, out: log.append(sorted(kwargs)), with_kwargs=True)],
    "always_call": lambda lib, log: [lib.nn.modules.module.register_module_forward_hook(
        lambda m, args, out: log.append(("always", out is None)), always_call=True)],
}


@pytest.mark.parametrize("program", sorted(GLOBAL_HOOKS))
def test_global_forward_hooks_run_for_every_module_as_torchs(program):
    def run(lib):
        log = []
        handles = GLOBAL_HOOKS[program](lib, log)
        try:
            lib.manual_seed(0)
            model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
            model[0].register_forward_hook(lambda m, args, out: log.append("own"))

            class Failing(lib.nn.Module):
                def forward(self, x):
                    raise ValueError("forward")

            with pytest.raises(ValueError):
                Failing()(lib.ones(1))
            out = model(lib.ones(1, 2)).detach().numpy().tolist()
        finally:
            for handle in handles:
                handle.remove()
        model(lib.ones(1, 2))                 # removed: nothing more logged
        return log, np.round(out, 6).tolist()

    assert run(mg) == run(torch)
