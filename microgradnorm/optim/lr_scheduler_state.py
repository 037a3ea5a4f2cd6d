"""The state dicts of the learning-rate schedules, in torch's layout: every attribute torch's
scheduler holds (its ``__dict__`` less the optimizer), under torch's names and in torch's
order, with torch's values; and the load of such a dict (saved here or by torch) into a
schedule of the same class. ``LRScheduler.state_dict``/``load_state_dict`` call these."""

import ast
import bisect
import collections
import copy
import functools
import inspect
import math
import numbers
import textwrap
import types

from ..dtypes import check_number

__all__ = ["state_dict", "load_state_dict"]

# the attributes torch's base scheduler holds, after a schedule's own
BASE_KEYS = ("base_lrs", "last_epoch", "_step_count", "_is_initial",
             "_get_lr_called_within_step", "_last_lr")
# a schedule's own attributes, before and after the base's, as torch's __init__ sets them
LAYOUT = {
    "LambdaLR": ((), ("lr_lambdas",)),
    "MultiplicativeLR": ((), ("lr_lambdas",)),
    "StepLR": (("step_size", "gamma"), ()),
    "MultiStepLR": (("milestones", "gamma"), ()),
    "ConstantLR": (("factor", "total_iters"), ()),
    "LinearLR": (("start_factor", "end_factor", "total_iters"), ()),
    "ExponentialLR": (("gamma",), ()),
    "PolynomialLR": (("total_iters", "power"), ()),
    "CosineAnnealingLR": (("T_max", "eta_min"), ()),
    "CosineAnnealingWarmRestarts": (("T_0", "T_i", "T_mult", "eta_min", "T_cur"), ()),
    "CyclicLR": (("max_lrs", "total_size", "step_ratio", "mode", "gamma", "scale_mode",
                  "cycle_momentum", "use_beta1", "base_momentums", "max_momentums"),
                 ("_scale_fn_custom",)),
    "OneCycleLR": (("total_steps", "_schedule_phases", "_anneal_func_type", "cycle_momentum",
                    "use_beta1"), ()),
    "SWALR": (("_anneal_strategy", "anneal_epochs"), ()),
    "ReduceLROnPlateau": (("factor", "default_min_lr", "min_lrs", "patience", "cooldown", "eps",
                           "last_epoch", "_last_lr", "mode_worse", "mode", "threshold",
                           "threshold_mode", "best", "cooldown_counter", "num_bad_epochs"), ()),
    "SequentialLR": (("_milestones", "last_epoch", "_last_lr"), ("_schedulers",)),
    "ChainedScheduler": (("_last_lr",), ("_schedulers",)),
}
# the classes whose dict has no base part (torch's __init__ does not run the base's)
NO_BASE = ("ReduceLROnPlateau", "SequentialLR", "ChainedScheduler")
PHASE_KEYS = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")


def kind(scheduler):
    """The name of the library class ``scheduler`` is (a user's subclass: its base's)."""
    for cls in type(scheduler).__mro__:
        if cls.__name__ in LAYOUT:
            return cls.__name__
    return None


def keys(scheduler):
    """torch's keys of ``scheduler``'s state dict, in torch's order."""
    name = kind(scheduler)
    before, after = LAYOUT.get(name, ((), ()))
    if name == "CyclicLR" and not scheduler.cycle_momentum:   # torch sets them only then
        before = before[:-3]
    if name == "OneCycleLR" and not scheduler.cycle_momentum:
        before = before[:-1]
    own = before + (() if name in NO_BASE else BASE_KEYS) + after
    first, last = user_keys(scheduler, own)
    return first + own + last


@functools.cache
def _assigned(cls):
    # the attributes the code of a library class sets on ``self``
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    names = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        names.update(sub.attr for target in targets for sub in ast.walk(target)
                     if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name)
                     and sub.value.id == "self")
    return frozenset(names)


def user_keys(scheduler, own=()):
    """The attributes a user's subclass set itself (torch's state dict holds every one):
    those set before the library's constructor ran, and those after; none for a library
    class."""
    package = __name__.split(".")[0] + "."
    if type(scheduler).__module__.startswith(package):
        return (), ()
    library = set(own) | {"optimizer"}
    for base in type(scheduler).__mro__:
        if base.__module__.startswith(package):
            library |= _assigned(base)
    first, last, seen = [], [], False
    for key in vars(scheduler):
        seen = seen or key in library
        if key not in library:
            (last if seen else first).append(key)
    return tuple(first), tuple(last)


def _callable_state(fn):
    # torch's: a callable object's attributes, None for a function or a lambda
    return None if fn is None or isinstance(fn, types.FunctionType) else dict(fn.__dict__)


def _get(scheduler, key):
    name = kind(scheduler)
    if key in ("_is_initial", "_get_lr_called_within_step"):
        return False                  # flags of a step in progress: never set between steps
    if key == "_step_count":          # torch's CosineAnnealingWarmRestarts never counts
        return 0 if name == "CosineAnnealingWarmRestarts" else scheduler._step_count
    if key == "lr_lambdas":
        return [_callable_state(fn) for fn in scheduler.lr_lambdas]
    if key == "_scale_fn_custom":
        return _callable_state(scheduler._scale_fn_custom)
    if key == "_schedulers":
        return [member.state_dict() for member in _inner(scheduler)]
    if name == "MultiStepLR" and key == "milestones":
        return collections.Counter(scheduler.milestones)
    if key == "_schedule_phases":
        return [dict(zip(PHASE_KEYS, phase)) for phase in scheduler.phases]
    if key in ("_anneal_func_type", "_anneal_strategy"):
        return scheduler.anneal_strategy
    if key == "_milestones":
        return list(scheduler.milestones)
    if key == "mode_worse":
        return math.inf if scheduler.mode == "min" else -math.inf
    value = getattr(scheduler, key)
    return list(value) if isinstance(value, list) else value


def state_dict(scheduler):
    """torch's state dict of ``scheduler``: ``{key: value}`` for every key of ``keys``."""
    return {key: _get(scheduler, key) for key in keys(scheduler)}


def _set(scheduler, key, value, where):
    # one saved attribute back into the scheduler, in this library's form
    if key in ("_is_initial", "_get_lr_called_within_step", "mode_worse", "_schedulers",
               "lr_lambdas", "_scale_fn_custom", "base_lrs", "last_epoch"):
        return                                   # derived, or loaded by the caller
    if key == "_step_count":
        check_number(where, key, value, integer=True)
        scheduler._step_count = int(value)
    elif key == "milestones" and kind(scheduler) == "MultiStepLR":
        items = value.elements() if isinstance(value, collections.Counter) else value
        scheduler.milestones = sorted(items)
    elif key == "_schedule_phases":
        scheduler.phases = [tuple(phase[k] for k in PHASE_KEYS) for phase in value]
    elif key in ("_anneal_func_type", "_anneal_strategy"):
        if value not in ("cos", "linear"):
            raise ValueError(f"{where}: {key} must be 'cos' or 'linear', got {value!r}")
        scheduler.anneal_strategy = value
    elif key == "_milestones":
        scheduler.milestones = list(value)
    elif key == "_last_lr":
        if not isinstance(value, (list, tuple)) \
                or len(value) != len(scheduler.optimizer.param_groups):
            raise ValueError(f"{where}: _last_lr must hold one rate per parameter group, "
                             f"got {value!r}")
        scheduler._last_lr = list(value)
    else:
        if isinstance(value, numbers.Number) and not isinstance(value, bool):
            check_number(where, key, value)
        scheduler.__dict__[key] = list(value) if isinstance(value, (list, tuple)) else value


def check_keys(scheduler, saved, required=("last_epoch", "base_lrs")):
    """``saved`` must be a dict of ``scheduler``'s keys holding ``required``."""
    where = f"{type(scheduler).__name__}.load_state_dict"
    expected = keys(scheduler)
    if kind(scheduler) in ("SequentialLR", "ChainedScheduler"):
        expected += ("base_lrs",)             # this library's older dicts held them
    if not isinstance(saved, dict) or not set(required) <= set(saved) \
            or not set(saved) <= set(expected):
        raise ValueError(f"{where}: expected a dict of the keys {list(expected)} (at least "
                         f"{list(required)}), got {saved!r}")
    return where


def load_attributes(scheduler, saved, where, rates=False):
    """Set every saved attribute but the rates' (``last_epoch``, ``base_lrs``: with
    ``rates`` only, else the caller's jump takes them); the callable objects' attributes
    are updated too."""
    for key, value in saved.items():
        _set(scheduler, key, value, where)
    for member, entry in zip(_inner(scheduler), saved.get("_schedulers", ())):
        load_attributes(member, entry, where, rates)    # a sequence or chain inside
    if rates:
        if "last_epoch" in saved:
            check_number(where, "last_epoch", saved["last_epoch"], integer=True)
            scheduler.last_epoch = int(saved["last_epoch"])
        if "base_lrs" in saved:
            scheduler.base_lrs = list(saved["base_lrs"])
    lambdas = saved.get("lr_lambdas")
    if lambdas is not None:
        fns = scheduler.lr_lambdas
        if not isinstance(lambdas, (list, tuple)) or len(lambdas) != len(fns) \
                or not all(entry is None or isinstance(entry, dict) for entry in lambdas):
            raise ValueError(f"{where}: lr_lambdas must be a list of {len(fns)} dicts or "
                             f"None (one per parameter group), got {lambdas!r}")
        for fn, entry in zip(fns, lambdas):
            if entry is not None and hasattr(fn, "__dict__"):
                fn.__dict__.update(entry)
    fn_state = saved.get("_scale_fn_custom")
    if fn_state is not None and hasattr(scheduler._scale_fn_custom, "__dict__"):
        scheduler._scale_fn_custom.__dict__.update(fn_state)


def load_state_dict(scheduler, saved, jump):
    """Load ``saved`` into ``scheduler``: its attributes, then ``jump(scheduler)`` (which sets
    the rates of the saved step, and ``_last_lr``), then the count as saved; on a failure
    everything is put back (the scheduler, the members of a sequence or a chain, the
    groups)."""
    where = f"{type(scheduler).__name__}.load_state_dict"
    members = _all_members(scheduler)
    kept = [(member, copy.copy(vars(member))) for member in members]
    kept_fns = [(fn, dict(fn.__dict__)) for member in members
                for fn in list(getattr(member, "lr_lambdas", ()))
                + [getattr(member, "_scale_fn_custom", None)] if hasattr(fn, "__dict__")]
    groups = [dict(group) for group in scheduler.optimizer.param_groups]
    try:
        load_attributes(scheduler, saved, where)
        jump(scheduler)                 # its last rates are those of the step it set
        if "_step_count" in saved:
            _set(scheduler, "_step_count", saved["_step_count"], where)
    except Exception:
        for member, attributes in kept:
            vars(member).clear()
            vars(member).update(attributes)
        for fn, attributes in kept_fns:
            fn.__dict__.clear()
            fn.__dict__.update(attributes)
        for group, entries in zip(scheduler.optimizer.param_groups, groups):
            group.clear()
            group.update(entries)
        raise


def _inner(scheduler):
    # the schedulers a SequentialLR or a ChainedScheduler runs; [] for any other
    return getattr(scheduler, "schedulers", None) or getattr(scheduler, "_schedulers", None) \
        or []


def _all_members(scheduler):
    found, todo = [], [scheduler]
    while todo:
        member = todo.pop()
        found.append(member)
        todo.extend(_inner(member))
    return found


def undo_step(scheduler):
    """torch's ``recursive_undo`` of a SequentialLR: the step its constructor took, taken
    back from the count of every scheduler inside (of a chain or sequence inside too)."""
    inner = _inner(scheduler)
    if inner:
        for member in inner:
            undo_step(member)
    else:
        scheduler.last_epoch -= 1


def _member_states(scheduler, saved, where):
    # the saved states of a sequence's or chain's schedulers, one per scheduler, each of
    # its scheduler's keys
    inner = _inner(scheduler)
    if not isinstance(saved, (list, tuple)) or len(saved) != len(inner):
        raise ValueError(f"{where}: _schedulers must hold {len(inner)} scheduler states, got "
                         f"{saved!r}")
    for member, entry in zip(inner, saved):
        check_keys(member, entry, ())
    return list(zip(inner, saved))


def load_composite(scheduler, saved):
    """Load a SequentialLR's or a ChainedScheduler's state dict: its schedulers' attributes,
    the rates of the saved step (a sequence's run replayed from step 0, a chain's composed
    from the base rates), then every scheduler's count and last rates as saved."""
    sequence = kind(scheduler) == "SequentialLR"
    where = check_keys(scheduler, saved, ("last_epoch",) if sequence else ("_schedulers",))
    members = _member_states(scheduler, saved.get("_schedulers", []), where) \
        if "_schedulers" in saved or not sequence else []
    if sequence:
        epoch = saved["last_epoch"]
    else:                                 # a chain's step: its first scheduler's
        entry = members[0][1]
        while "last_epoch" not in entry and entry.get("_schedulers"):
            entry = entry["_schedulers"][0]
        epoch = entry.get("last_epoch", scheduler.last_epoch)
    check_number(where, "last_epoch", epoch, integer=True)
    if epoch < 0:
        raise ValueError(f"{where}: last_epoch must be an int >= 0, got {epoch!r}")

    def jump(scheduler):
        for member, entry in members:
            load_attributes(member, entry, where)
        scheduler._last_lr = None                   # a jump: the walk from the base rates
        base_lrs = list(saved.get("base_lrs", scheduler.base_lrs))
        if sequence:
            scheduler._go_to(int(epoch), base_lrs, jump=True)
        else:
            scheduler._go_to(int(epoch), base_lrs)
        for member, entry in members:
            load_attributes(member, entry, where, rates=True)

    load_state_dict(scheduler, saved, jump)


def undo_waiting(sequence):
    """A new SequentialLR's schedulers but the one running at step 0: the step each one's
    constructor took, taken back (torch's ``recursive_undo``)."""
    running = bisect.bisect_right(sequence.milestones, 0)
    for index, member in enumerate(sequence.schedulers):
        if index != running:
            undo_step(member)


def load_plateau(scheduler, saved):
    """Load a ReduceLROnPlateau's state dict: the options, the counters, the best metric and
    the last rates (the rates themselves are the optimizer's to load)."""
    where = check_keys(scheduler, saved,
                       ("last_epoch", "best", "num_bad_epochs", "cooldown_counter"))
    for key in ("last_epoch", "num_bad_epochs", "cooldown_counter"):
        check_number(where, key, saved[key], integer=True)
    check_number(where, "best", saved["best"])
    if saved.get("mode", scheduler.mode) not in ("min", "max") \
            or saved.get("threshold_mode", scheduler.threshold_mode) not in ("rel", "abs"):
        raise ValueError(f"{where}: mode must be 'min' or 'max' and threshold_mode 'rel' or "
                         f"'abs', got {saved!r}")
    load_state_dict(scheduler, saved,
                    lambda _: setattr(scheduler, "last_epoch", int(saved["last_epoch"])))
