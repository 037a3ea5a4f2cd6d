"""SGD, Adam, AdamW, RMSprop and Adagrad with ``torch.optim``'s update rules, names, defaults
and parameter groups; half-precision parameters update in float32 (docs/pytorch.md). The
other optimizers of ``torch.optim`` are in ``variants.py``, on the same base class."""

import copy
import warnings

import numpy as np

from .. import backend, kernels
from ..autograd import enable_grad
from ..autograd.inference import refuse_write
from ..dtypes import is_floating, is_half
from ..nn.module import clear_grad
from ..tensor import Tensor
from .optimizer_hooks import OptimizerHooks
from .option_numbers import (check_betas_kinds, check_foreach_tensors, check_step_numbers,
                             option_number, step_numbers)
from .state_tensors import (advance, as_arrays, complex_update, loaded_value, rate_rounding,
                            state_tensor, step_tensor, store, tensor_rate)

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop"]


class Optimizer(OptimizerHooks):
    """Base class: parameter groups (missing options from ``defaults``), ``zero_grad``,
    ``step``, ``state_dict`` and ``load_state_dict``, with torch's hooks around the last
    three (``optimizer_hooks.py``)."""

    def __repr__(self):
        """PyTorch's form: the class, then each group's options, sorted."""
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines + [")"])

    def __init__(self, params, defaults, master_weights=False):
        if not isinstance(master_weights, bool):
            raise ValueError(f"{type(self).__name__}: master_weights must be True or False, "
                             f"got {master_weights!r}")
        self.master_weights = master_weights
        for name, value in defaults.items():
            self._check_option(name, value)
        self._check_group({**defaults, "params": []})    # before params is read, as torch's
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params must be an iterable of Tensors or "
                            "dicts, got a Tensor (torch's error; pass [tensor])")
        params = list(params)
        if not params:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        self.param_groups = []
        self.state = {}                      # id(param) -> {name: Tensor}
        for group in params if isinstance(params[0], dict) else [{"params": params}]:
            self.add_param_group(group)

    @property
    def state(self):
        """Per-parameter state, ``{id(param): {name: Tensor}}`` (``state_tensors.py``);
        ``state[param]`` reads a parameter's entry too (torch's ``optimizer.state[p]``), {}
        where it has none yet."""
        return self._state

    @state.setter
    def state(self, value):
        self._state = ParamState(value)

    def __deepcopy__(self, memo):
        # the state is keyed by id(param): a copy's entries follow the copied parameters
        copied = object.__new__(type(self))
        memo[id(self)] = copied
        for name, value in self.__getstate__().items():     # no hooks, as torch's
            if name != "_param_ids":                            # for unpickling only
                copied.__dict__[name] = copy.deepcopy(value, memo)
        copied.state = {id(memo[key]) if key in memo else key: entries
                        for key, entries in copied.state.items()}
        return copied

    def add_param_group(self, param_group):
        """Add a group of parameters with options of its own (``torch.optim``'s); a missing
        option takes the optimizer's default. A parameter already in a group is a
        ValueError, and one listed twice in the group a warning, as in torch."""
        name = type(self).__name__
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise TypeError(f"{name}: a parameter group must be a dict with 'params', got "
                            f"{type(param_group).__name__}")
        # a schedule's keys taken, as torch's (a group of a state dict saved with a schedule)
        unknown = sorted(set(param_group) - set(self.defaults) - SCHEDULER_KEYS
                         - {"params", "param_names"})
        if unknown:
            raise ValueError(f"{name}: unknown options in a parameter group: {unknown}; "
                             f"expected some of {sorted(self.defaults)}")
        params, names = _named_params(name, param_group["params"])
        # torch's order: the group's own keys as given, its names, the defaults it lacks
        group = {**param_group, "params": params}
        if names:                                # torch 2.13's named parameters
            group["param_names"] = names
        for option, default in self.defaults.items():
            group.setdefault(option, default)
        for p in params:
            # a frozen parameter (requires_grad False) is taken, as torch's: fine-tuning
            # passes model.parameters() whole, and the step skips what has no gradient
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: params must be Tensors, got {type(p).__name__}")
            if not (p.is_leaf or p._retains_grad):
                raise ValueError(f"{name}: can't optimize a non-leaf Tensor (torch's error); "
                                 "pass the leaf, or a .detach().requires_grad_() copy")
        if any(("param_names" in g) != bool(names) for g in self.param_groups):
            raise ValueError(f"{name}: all parameter groups must be with or without names "
                             "(torch's error)")
        for option in [*self.defaults, *(SCHEDULER_KEYS & set(group))]:
            self._check_option(option, group[option])   # scheduler keys: numbers >= 0 too
        self._check_group(group)
        if len({id(p) for p in params}) < len(params):
            warnings.warn(f"{name}: a parameter group lists a parameter more than once "
                          "(torch warns the same, and will refuse it)", UserWarning,
                          stacklevel=2)
        held = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in held for p in params):
            raise ValueError(f"{name}: some parameters appear in more than one parameter "
                             "group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Clear the ``.grad`` of every parameter: None (default) or zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:                  # clear_grad's first case, without its call
                    p.grad = None
                else:
                    clear_grad(p, False)

    def step(self, closure=None):
        """Update every parameter that has a ``.grad``; a failing step changes nothing.
        ``closure``, as torch's: called first with grad enabled (it clears the gradients,
        computes the loss and calls ``backward``), and its loss returned; None without one."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._step()
        return loss

    def _step(self):
        name = type(self).__name__
        # the state's own dict methods, keyed by id(p): ParamState's, which also take a
        # parameter as the key, cost a Python call per parameter
        raw = self._state
        todo = []
        for group in self.param_groups:
            params = group["params"]
            if isinstance(group["lr"], Tensor):   # read at each step, as torch's (its
                group = {**group, "lr": float(lr_value(group["lr"])),   # dtype: Adam's)
                         "lr_dtype": group["lr"]._array.dtype.type}
            check_step_numbers(self, group)       # torch's errors at step, before any write
            group = step_numbers(group)           # the other options held as Tensors
            for p in params:
                if p.grad is not None:
                    _check_gradient(name, p, self.complex_params)
                    _check_state(self, p, dict.get(raw, id(p), {}))
                    todo.append((p, group))
        for p, _ in todo:                        # all or none: no write fails half-way
            refuse_write(p)                      # an inference tensor outside its mode
            if not getattr(p._array.flags, "writeable", True):
                raise ValueError(f"{name}.step: a parameter of shape {p.shape} is read-only; "
                                 "nothing was updated")
        # every update runs here: an inf or NaN gradient gives torch's values silently
        # (inf - inf, 0 · inf, x / inf: NumPy would warn)
        silent = backend.silent_floats()
        if self.updates_in_place:                # every check passed: nothing left to fail
            with silent:
                for p, group in todo:
                    entry = dict.get(raw, id(p))
                    if entry is None:            # kept once it holds something (SGD
                        entry = {}               # without momentum keeps none)
                    new = self._half_aware_update(p, entry, group)
                    if entry:
                        dict.__setitem__(raw, id(p), entry)
                    if new is not p._array:
                        p._array[...] = new      # half precision: rounded once, here
                    p._bump_version()
            return
        updates = []                             # new values and states, then the writes
        with silent:                             # (the update on the state's arrays)
            for p, group in todo:
                state = as_arrays(dict.get(raw, id(p), {}))
                updates.append((p, self._half_aware_update(p, state, group), state))
        for p, new, state in updates:
            p._array[...] = new
            p._bump_version()
            if state or dict.__contains__(raw, id(p)):   # SGD without momentum keeps none
                dict.__setitem__(raw, id(p), store(dict.get(raw, id(p), {}), state,
                                                   not self.tensor_step,  # (the same dict)
                                                   (id(p._array), id(p.grad._array))))

    def state_dict(self):
        """``{"state": {index: {name: value}}, "param_groups": [...]}`` as torch lays it out;
        the state's entries and Tensors themselves, as torch's (``copy.deepcopy`` keeps a
        snapshot)."""
        index, groups = {}, []
        for group in self.param_groups:
            ids = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append({**copy.deepcopy({k: v for k, v in group.items() if k != "params"}),
                           "params": ids})
        params = {id(p): p for group in self.param_groups for p in group["params"]}
        state = {index[key]: entries         # the entries themselves, as torch's
                 for key, entries in self.state.items() if key in params}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict()``; a mismatch is a ValueError before anything changes.
        A saved Tensor already of its parameter's dtype and device is loaded as it is (the
        state dict and the optimizer then share it, as torch 2.13's); others are cast copies."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError(f"{name}.load_state_dict: expected a dict with keys 'state' and "
                             f"'param_groups', got "
                             + (f"keys {sorted(state_dict)}" if isinstance(state_dict, dict)
                                else type(state_dict).__name__))
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict: state_dict has {len(saved_groups)} "
                             f"parameter groups, the optimizer {len(self.param_groups)}")
        by_index, new_groups, pinned = {}, [], set()
        for number, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(f"{name}.load_state_dict: group {number} has "
                                 f"{len(saved['params'])} parameters in state_dict, "
                                 f"{len(group['params'])} in the optimizer")
            options = {k: v for k, v in saved.items() if k not in ("params", "param_names")}
            for option in OPTIONAL & set(self.defaults) - set(options):
                options[option] = group[option]     # saved before the option existed
            if not set(self.defaults) <= set(options) <= set(self.defaults) | SCHEDULER_KEYS:
                raise ValueError(f"{name}.load_state_dict: group {number} has options "
                                 f"{sorted(options)}, expected {sorted(self.defaults)}")
            for option, value in options.items():     # betas, etas, ...: tuples, as given
                if isinstance(value, list):
                    options[option] = tuple(value)
            for option, value in options.items():
                self._check_option(option, value)       # scheduler keys: numbers >= 0 too
            names = saved.get("param_names", group.get("param_names"))
            if names is not None:                   # the saved names, else the optimizer's
                options["param_names"] = list(names)
            new_groups.append({**options, "params": group["params"]})
            by_index.update(zip(saved["params"], group["params"]))
            if saved.get("capturable") or saved.get("fused"):    # their steps: float32
                pinned.update(saved["params"])
        new_state, own = {}, _own_step(self)
        for index, entries in state_dict["state"].items():
            if int(index) not in by_index:
                raise ValueError(f"{name}.load_state_dict: state for parameter {index}, "
                                 f"which no group lists")
            param = by_index[int(index)]
            new_state[id(param)] = {key: loaded_value(self, index, key, value, param, own,
                                                      int(index) in pinned)
                                    for key, value in entries.items()}
        for group in new_groups:
            self._check_group(group)
        self.param_groups = new_groups
        self.state = new_state

    def _half_aware_update(self, p, state, group):
        # every update passes here (``_step`` silences NumPy's float warnings around it):
        # half-precision parameters update in float32 (from the master copy, if kept)
        if not is_half(p._array.dtype):
            if p._array.dtype.kind == "c":       # as torch's: its real and imaginary parts
                return complex_update(lambda *args: self._update(*args, group), p._array,
                                      p.grad._array, state)
            return self._update(p._array, p.grad._array, state, group)
        master = state.pop("master", None) if self.master_weights else None
        param = getattr(master, "_array", master)          # a Tensor in an in-place state
        if param is None:
            param = p._array.astype(np.float32)
        new = self._update(param, p.grad._array.astype(np.float32), state, group)
        if self.master_weights:                  # in-place states hold Tensors
            kept = isinstance(master, Tensor) and new is param
            state["master"] = (new if not self.updates_in_place else master if kept
                               else state_tensor(new))
        return new

    def _check_option(self, name, value):
        """Raise unless ``value`` suits option ``name``: torch's checks (an optimizer with
        options of its own adds its checks)."""
        _check_option(type(self).__name__, name, value)

    def _check_group(self, group):
        """Checks that tie a group's options together (SGD's nesterov; fused with foreach)."""
        if group.get("fused") and group.get("foreach"):
            raise RuntimeError(f"{type(self).__name__}: `fused` and `foreach` cannot be `True` "
                               "together (torch's error)")

    # per-parameter numbers of the state, 0-d arrays in torch's scalar dtype (NAdam's
    # mu_product, ASGD's eta and mu); every other array has the parameter's shape unless
    # ``_state_shape`` says otherwise (Adafactor's factored second moments)
    scalar_state = ()
    # the options torch's step reads as Python numbers: ``option_numbers.check_step_numbers``
    python_number_options = {}

    def _state_shape(self, key, shape):
        """The shape of state ``key`` for a parameter of ``shape``."""
        return () if key in self.scalar_state else tuple(shape)

    # ``_update`` returns new arrays (the state's too, given as arrays) unless the optimizer
    # says it writes the parameter and its state (Tensors) in place, after every check of
    # ``step``
    updates_in_place = False
    # the state's ``step``: torch's 0-d Tensor (False: an int, SparseAdam's)
    tensor_step = True
    # complex parameters update as their real and imaginary parts (False: torch refuses)
    complex_params = True

    def _update(self, param, grad, state, group):
        # the new value of ``param`` (``param`` itself where updated in place)
        raise NotImplementedError


class ParamState(dict):
    """An optimizer's state by ``id(param)``, indexed by the parameter as well, as torch's
    ``defaultdict`` keyed by parameters: a missing entry is a new {}."""

    def __getitem__(self, key):
        return super().__getitem__(_state_key(key))

    def __missing__(self, key):
        return self.setdefault(key, {})

    def __setitem__(self, key, value):
        super().__setitem__(_state_key(key), value)

    def __delitem__(self, key):
        super().__delitem__(_state_key(key))

    def __contains__(self, key):
        return super().__contains__(_state_key(key))

    def get(self, key, default=None):
        return super().get(_state_key(key), default)

    def setdefault(self, key, default=None):
        return super().setdefault(_state_key(key), default)

    def pop(self, key, *default):
        return super().pop(_state_key(key), *default)


def _state_key(key):
    return id(key) if isinstance(key, Tensor) else key


class SGD(Optimizer):
    r"""Stochastic gradient descent with momentum (``torch.optim.SGD``):

    .. math::
        g \leftarrow g + \lambda\theta, \quad
        b \leftarrow \mu b + (1 - \tau) g \ (b = g \text{ at the first step}), \quad
        \theta \leftarrow \theta - \eta\,(g + \mu b \text{ if nesterov else } b)

    ``maximize=True`` ascends; ``master_weights=True`` keeps float32 copies of
    half-precision parameters. ``foreach``, ``fused`` (and the other optimizers'
    ``capturable``) pick one of torch's implementations: taken and kept in the groups as torch
    keeps them, they change nothing here (one implementation); ``differentiable=True`` is a
    NotImplementedError (the step is not recorded in the graph)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, master_weights=False, *, maximize=False, foreach=None,
                 differentiable=False, fused=None):
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov,
                                  "maximize": maximize, "foreach": foreach,
                                  "differentiable": differentiable, "fused": fused},
                         master_weights)

    def _check_group(self, group):
        super()._check_group(group)
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("SGD: nesterov needs momentum > 0 and dampening = 0")

    updates_in_place = True                      # the momentum buffer, a Tensor
    python_number_options = {"weight_decay": TypeError, "dampening": TypeError}

    def _update(self, param, grad, state, group):
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        momentum = group["momentum"]
        if momentum:
            held = state.get("momentum_buffer")
            if held is None:                     # (a 0-d parameter's: an array too)
                held = state["momentum_buffer"] = state_tensor(grad.copy())
                buf = held._array
            else:                                # b <- μb + (1 - τ)g, in the buffer itself
                buf = held._array
                buf *= momentum
                buf += grad if group["dampening"] == 0 else (1 - group["dampening"]) * grad
            grad = grad + momentum * buf if group["nesterov"] else buf
        return param - group["lr"] * grad


class Adam(Optimizer):
    r"""Adam (``torch.optim.Adam``), with L2 weight decay added to the gradient:

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g, \quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,
        \quad \theta \leftarrow \theta - \eta\,\frac{m / (1-\beta_1^t)}
        {\sqrt{v / (1-\beta_2^t)} + \epsilon}

    ``amsgrad=True`` divides by the largest v so far; ``decoupled_weight_decay=True`` is
    AdamW's decay; ``maximize``, ``master_weights``, ``foreach``, ``fused``, ``capturable``,
    ``differentiable``: SGD's."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False,
                 master_weights=False):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps,
                                  "weight_decay": weight_decay, "amsgrad": amsgrad,
                                  "maximize": maximize, "foreach": foreach,
                                  "capturable": capturable, "differentiable": differentiable,
                                  "fused": fused,
                                  "decoupled_weight_decay": decoupled_weight_decay},
                         master_weights)

    updates_in_place = True
    python_number_options = {"weight_decay": TypeError}

    def _check_option(self, name, value):
        super()._check_option(name, value)
        check_betas_kinds(type(self).__name__, name, value)   # torch's Adam's, of betas

    def _update(self, param, grad, state, group):
        # in place, by the selected kernels (numba's one loop, else the NumPy reference);
        # the options as Python numbers: a NumPy float64 lr would promote float32 arrays
        # the state holds Tensors (``state_tensors.py``): their arrays are updated in place
        xp = backend.array_module(param)
        if not state:
            state.update(step=step_tensor(0), exp_avg=state_tensor(xp.zeros_like(param)),
                         exp_avg_sq=state_tensor(xp.zeros_like(param)))
        if group["amsgrad"] and "max_exp_avg_sq" not in state:
            state["max_exp_avg_sq"] = state_tensor(xp.zeros_like(param))
        step = advance(state)
        beta1, beta2 = (float(b) for b in group["betas"])
        lr, weight_decay = float(group["lr"]), float(group["weight_decay"])
        rounded = group.get("lr_dtype")
        if rounded is not None:                  # a Tensor rate: torch's numbers, below
            lr, weight_decay = tensor_rate(param, lr, weight_decay, beta1 ** step, group,
                                           rounded)
        kernels.for_array(param).adam_update(
            param, grad, state["exp_avg"]._array, state["exp_avg_sq"]._array,
            state["max_exp_avg_sq"]._array if group["amsgrad"] else None, step,
            lr, beta1, beta2, float(group["eps"]),
            weight_decay, bool(group["decoupled_weight_decay"]),
            bool(group["maximize"]))
        return param

    def _check_group(self, group):
        super()._check_group(group)
        check_foreach_tensors(type(self).__name__, group)      # torch's Adam's


class AdamW(Adam):
    r"""Adam with decoupled weight decay (``torch.optim.AdamW``, default
    ``weight_decay=0.01``): :math:`\theta \leftarrow \theta (1 - \eta\lambda)` before the
    Adam step, instead of adding :math:`\lambda\theta` to the gradient (its groups hold
    ``decoupled_weight_decay=True``, as torch's)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None, master_weights=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True, master_weights=master_weights)


class RMSprop(Optimizer):
    r"""RMSprop (``torch.optim.RMSprop``): divide the gradient by a running root mean square,

    .. math::
        g \leftarrow g + \lambda\theta, \quad v \leftarrow \alpha v + (1 - \alpha) g^2, \quad
        \bar g \leftarrow \bar g + (1 - \alpha)(g - \bar g), \quad
        d = \sqrt{v - \bar g^2 \text{ if centered else } v} + \epsilon,

    then :math:`\theta \leftarrow \theta - \eta\, g / d`, or with momentum
    :math:`b \leftarrow \mu b + g / d,\ \theta \leftarrow \theta - \eta b`.

    ``maximize``, ``master_weights``, ``capturable``, ``foreach``, ``differentiable``: SGD's.

    Example:
        >>> opt = RMSprop(model.parameters(), lr=0.01, momentum=0.9, centered=True)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False, *, master_weights=False):
        super().__init__(params, {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                                  "centered": centered, "weight_decay": weight_decay,
                                  "capturable": capturable, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable},
                         master_weights)

    updates_in_place = True                      # the state's Tensors, in place
    python_number_options = {"weight_decay": TypeError, "alpha": TypeError}

    def _update(self, param, grad, state, group):
        alpha, momentum = group["alpha"], group["momentum"]
        xp = backend.array_module(param)
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        if not state:
            state.update(step=step_tensor(0), square_avg=state_tensor(xp.zeros_like(param)))
        # created when first needed: a schedule may switch momentum on after the first step
        if momentum > 0 and "momentum_buffer" not in state:
            state["momentum_buffer"] = state_tensor(xp.zeros_like(param))
        if group["centered"] and "grad_avg" not in state:
            state["grad_avg"] = state_tensor(xp.zeros_like(param))
        advance(state)
        second = state["square_avg"]._array       # v <- αv + (1-α)g², in place
        second *= alpha
        second += (1 - alpha) * grad * grad
        if group["centered"]:                      # the variance instead of the raw moment
            average = state["grad_avg"]._array
            average += (1 - alpha) * (grad - average)
            second = second - average * average
        denom = second ** 0.5 + group["eps"]
        if momentum > 0:
            buf = state["momentum_buffer"]._array
            buf *= momentum
            buf += grad / denom
            return param - group["lr"] * buf
        return param - group["lr"] * grad / denom


class Adagrad(Optimizer):
    r"""Adagrad (``torch.optim.Adagrad``): each coordinate's step shrinks with the sum of its
    squared gradients,

    .. math::
        g \leftarrow g + \lambda\theta, \quad s \leftarrow s + g^2, \quad
        \theta \leftarrow \theta - \frac{\eta}{1 + (t - 1)\,\delta}\,
        \frac{g}{\sqrt{s} + \epsilon}

    with :math:`\delta` = ``lr_decay`` and s starting at ``initial_accumulator_value``.
    As in torch, every parameter has its state (step 0, the filled sum) from the start.
    ``maximize``, ``master_weights``, ``foreach``, ``differentiable``, ``fused``: SGD's.

    Example:
        >>> opt = Adagrad(model.parameters(), lr=0.1, lr_decay=1e-3)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None, master_weights=False):
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps,
                                  "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value,
                                  "foreach": foreach, "maximize": maximize,
                                  "differentiable": differentiable, "fused": fused},
                         master_weights)
        for group in self.param_groups:
            for p in group["params"]:
                # half-precision parameters keep float32 states
                dtype = np.float32 if is_half(p.dtype) else p.dtype
                xp = backend.array_module(p._array)
                self.state[id(p)] = {"step": step_tensor(0), "sum": state_tensor(xp.full(
                    p.shape, group["initial_accumulator_value"], dtype))}

    updates_in_place = True                      # the sum, a Tensor, in place
    python_number_options = {"weight_decay": TypeError, "lr_decay": TypeError}

    def _update(self, param, grad, state, group):
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        if "sum" not in state:                     # a state dict saved without it
            state.update(step=step_tensor(0), sum=state_tensor(backend.array_module(
                param).full_like(param, group["initial_accumulator_value"])))
        step = advance(state)
        r = rate_rounding(group)                 # a Tensor rate: torch's rounding
        rate = r(group["lr"] / r(1 + (step - 1) * group["lr_decay"]))
        total = state["sum"]._array              # the sum, in place (the Tensor's array)
        total += grad * grad
        return param - rate * grad / (total ** 0.5 + group["eps"])


FLAGS = ("nesterov", "amsgrad", "maximize", "centered", "decoupled_weight_decay", "capturable",
         "differentiable")
# torch's choice of implementation: None lets it choose
SWITCHES = ("foreach", "fused")
# options an older state dict may lack: they load with the optimizer's own values
OPTIONAL = frozenset({"amsgrad", "maximize", "decoupled_weight_decay", "capturable",
                      "differentiable", "foreach", "fused"})
# what learning-rate schedulers store in a group, as torch's do: the base rate of every
# schedule, and OneCycleLR's peak and floor rates and momentum bounds
SCHEDULER_KEYS = frozenset({"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum",
                            "swa_lr"})


def _check_option(optimizer, name, value):
    if name in ("lr", "initial_lr") and isinstance(value, Tensor):
        # torch takes a 1-element Tensor rate; a schedule's initial_lr is its copy
        if value.numel() != 1:
            raise ValueError(f"{optimizer}: Tensor {name} must be 1-element, got shape "
                             f"{tuple(value.shape)}")
        value = value.item()
    if name in SWITCHES:
        if value is not None and not isinstance(value, bool):
            raise ValueError(f"{optimizer}: {name} must be None, True or False, got {value!r}")
        return
    if name in FLAGS:
        if not isinstance(value, bool):
            raise ValueError(f"{optimizer}: {name} must be True or False, got {value!r}")
        if name == "differentiable" and value:
            raise NotImplementedError(f"{optimizer}: differentiable=True is not supported: "
                                      "the step is not recorded in the graph")
        return
    if name == "betas":
        numbers = [option_number(optimizer, "betas", b) for b in value] \
            if isinstance(value, (tuple, list)) and len(value) == 2 else None
        if numbers is None or not all(0 <= b < 1 for b in numbers):
            raise ValueError(f"{optimizer}: betas must be two numbers in [0, 1), got "
                             f"{value!r}")
        return
    value = option_number(optimizer, name, value)
    if not value >= 0:
        raise ValueError(f"{optimizer}: {name} must be a non-negative number, got {value!r}")


def lr_value(lr):
    """A group's rate as a number: a Tensor rate (torch takes a 1-element one) read, as torch
    reads it at each step."""
    return lr.item() if isinstance(lr, Tensor) else lr


def _named_params(optimizer, params):
    # a group's params as torch 2.13 reads them: a Tensor, or an ordered iterable of Tensors
    # or of (name, Tensor) pairs (``named_parameters()``), all named or none; the names too
    if isinstance(params, Tensor):
        return [params], []
    if isinstance(params, (set, frozenset)):
        raise TypeError(f"{optimizer}: optimizer parameters need to be organized in ordered "
                        "collections, but the ordering of tensors in sets changes between "
                        "runs; use a list")
    params = list(params)
    named = [p for p in params if isinstance(p, tuple)]
    if named and len(named) != len(params):
        raise ValueError(f"{optimizer}: all optimizer params should be with or without names; "
                         "some parameter names are missing")
    if named and any(len(p) != 2 for p in named):
        raise TypeError(f"{optimizer}: named parameters must be (name, Tensor) pairs")
    return [p[1] for p in named] or params, [p[0] for p in named]


def _own_step(optimizer):
    # a subclass with its own step() (``torch.optim.optimizer.Optimizer``'s habit), whose
    # state holds what it stored: Tensors, ints, anything, given and taken as they are
    return type(optimizer)._update is Optimizer._update


def _check_state(optimizer, p, state):
    # a state array of another shape (the parameter's data replaced since): torch's error,
    # before anything changes (an entry of the parameter's shape passes at one comparison
    # where every entry has that shape)
    own = p._array.shape
    plain = not optimizer.scalar_state and \
        type(optimizer)._state_shape is Optimizer._state_shape
    for key, value in state.items():
        shape = getattr(getattr(value, "_array", value), "shape", None)
        if shape is not None and key != "step" and not (plain and shape == own) \
                and tuple(shape) != optimizer._state_shape(key, p.shape):
            raise ValueError(f"{type(optimizer).__name__}.step: state {key!r} has shape "
                             f"{tuple(shape)}, its parameter {p.shape} (was the parameter's "
                             "data replaced?); nothing was updated")


def _check_gradient(optimizer, p, complex_params=True):
    grad = p.grad._array
    if grad.shape == p._array.shape and grad.dtype.kind == "f":
        return                                   # the common case, at two comparisons
    if tuple(p.grad.shape) != p.shape:
        raise ValueError(f"{optimizer}.step: a gradient has shape {tuple(p.grad.shape)}, its "
                         f"parameter {p.shape}")
    if p._array.dtype.kind == "c":               # torch views both as real, or refuses
        if not complex_params:
            raise RuntimeError(f"{optimizer} does not support complex parameters")
        if grad.dtype != p._array.dtype:
            raise TypeError(f"{optimizer}.step: a complex parameter of dtype "
                            f"{p._array.dtype} needs a gradient of its dtype, got {grad.dtype}")
        return
    dtype = getattr(p.grad, "dtype", None)
    kind = getattr(dtype, "kind", None)
    if kind not in ("i", "u") and not (dtype is not None and is_floating(dtype)):
        lost = " (a complex gradient would lose its imaginary part)" if kind == "c" else ""
        raise TypeError(f"{optimizer}.step: a gradient must be a real floating-point array, "
                        f"got {getattr(p.grad, 'dtype', type(p.grad))} for a parameter of "
                        f"shape {p.shape}{lost}")
