"""NAdam, RAdam, Adamax, Adadelta, Adafactor, ASGD and Rprop with ``torch.optim``'s update
rules, names, defaults, state layout and checks, on the base class of ``optimizers.py``.

Each ``_update`` is torch's single-tensor loop written once in NumPy/CuPy, in torch's order
of operations, and returns new arrays (the base class writes them only after every
parameter's update is computed). The per-parameter numbers torch keeps as 0-d tensors of its
scalar dtype (NAdam's ``mu_product``, ASGD's ``eta`` and ``mu``) are 0-d arrays of that
dtype in the update, so they round as torch's do; the base class keeps every array of the
state in a Tensor, as torch's (``state_tensors.py``)."""

import numpy as np

from .. import backend
from ..ops.base import torch_sign
from ..ops.ternary import lerp_arrays
from ..tensor import Tensor
from .optimizers import Optimizer, _check_option, option_number
from .state_tensors import rate_rounding, scalar_dtype

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adamax", "NAdam", "RAdam", "Rprop", "SparseAdam"]


def _moments(state, grad, beta1, beta2):
    # Adam's two running moments, as torch updates them: lerp_, then mul_ and addcmul_
    # (its kernel: value · grad, then one FMA with grad and the decayed moment)
    exp_avg = lerp_arrays(state["exp_avg"], grad, 1 - beta1)
    exp_avg_sq = backend.fused_multiply_add((1 - beta2) * grad, grad,
                                            state["exp_avg_sq"] * beta2)
    return exp_avg, exp_avg_sq


def _start(state, param, **extra):
    # a parameter's first step: torch's lazy state, zeros of the parameter's shape
    if not state:
        xp = backend.array_module(param)
        state.update(step=0, **extra)
        for key in ("exp_avg", "exp_avg_sq"):
            state[key] = xp.zeros_like(param)


def _decay(param, grad, group):
    # L2 weight decay added to the gradient, or decoupled: the parameter shrunk first
    decay = float(group["weight_decay"])
    if not decay:
        return param, grad
    if group.get("decoupled_weight_decay"):              # (a Tensor rate: torch's rounding)
        r = rate_rounding(group)
        return param * r(1 - r(float(group["lr"]) * r(decay))), grad
    return param, grad + decay * param


class NAdam(Optimizer):
    r"""Adam with Nesterov momentum (``torch.optim.NAdam``): with the momentum schedule
    :math:`\mu_t = \beta_1 (1 - \tfrac12\, 0.96^{t\psi})` (ψ = ``momentum_decay``) and
    :math:`\Pi_t = \prod_{i \le t} \mu_i`,

    .. math::
        m \leftarrow \beta_1 m + (1-\beta_1) g, \quad v \leftarrow \beta_2 v + (1-\beta_2) g^2,
        \quad \theta \leftarrow \theta - \eta \Big(\frac{(1-\mu_t)\, g}{1 - \Pi_t}
        + \frac{\mu_{t+1}\, m}{1 - \Pi_t \mu_{t+1}}\Big) \Big/
        \Big(\sqrt{v / (1-\beta_2^t)} + \epsilon\Big)

    with :math:`\lambda\theta` added to g, or with ``decoupled_weight_decay=True``
    :math:`\theta \leftarrow \theta(1 - \eta\lambda)` first. ``mu_product`` (Π) is kept in
    torch's scalar dtype (float32 unless float64 is the default dtype), as torch keeps it.
    ``maximize``, ``foreach``, ``capturable``, ``differentiable``, ``master_weights``: SGD's.

    Example:
        >>> opt = NAdam(model.parameters(), lr=2e-3, momentum_decay=4e-3)
    """

    scalar_state = ("mu_product",)

    python_number_options = {"weight_decay": TypeError, "momentum_decay": RuntimeError}

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False, master_weights=False):
        super().__init__(params, {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "differentiable": differentiable}, master_weights)

    def _update(self, param, grad, state, group):
        xp = backend.array_module(param)
        _start(state, param, mu_product=np.ones((), scalar_dtype()))
        lr, eps, decay = float(group["lr"]), float(group["eps"]), float(group["momentum_decay"])
        beta1, beta2 = (float(b) for b in group["betas"])
        grad = -grad if group["maximize"] else grad
        step = state["step"] + 1
        param, grad = _decay(param, grad, group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
        mu_product = np.asarray(state["mu_product"] * mu)      # rounds in its dtype
        exp_avg, exp_avg_sq = _moments(state, grad, beta1, beta2)
        denom = xp.sqrt(exp_avg_sq / (1 - beta2 ** step)) + eps
        product = float(mu_product)
        r = rate_rounding(group)                  # a Tensor rate: torch's rounding
        param = param + r(r(-lr * r(1.0 - mu)) / r(1.0 - product)) * grad / denom
        param = param + r(r(-lr * r(mu_next)) / r(1.0 - product * mu_next)) * exp_avg / denom
        state.update(step=step, mu_product=mu_product, exp_avg=exp_avg, exp_avg_sq=exp_avg_sq)
        return param


class RAdam(Optimizer):
    r"""Rectified Adam (``torch.optim.RAdam``): Adam's moments, with the step rectified by
    the length of the approximated simple moving average,

    .. math::
        \rho_\infty = \frac{2}{1-\beta_2} - 1, \quad
        \rho_t = \rho_\infty - \frac{2 t \beta_2^t}{1 - \beta_2^t}, \quad
        r_t = \sqrt{\frac{(\rho_t - 4)(\rho_t - 2)\rho_\infty}
        {(\rho_\infty - 4)(\rho_\infty - 2)\rho_t}},

    :math:`\theta \leftarrow \theta - \eta\, \hat m\, r_t \sqrt{1-\beta_2^t} / (\sqrt v +
    \epsilon)` where :math:`\rho_t > 5`, else the plain momentum step
    :math:`\theta \leftarrow \theta - \eta \hat m`, with :math:`\hat m = m / (1-\beta_1^t)`.
    Weight decay: NAdam's. ``maximize``, ``foreach``, ``capturable``, ``differentiable``,
    ``master_weights``: SGD's.

    Example:
        >>> opt = RAdam(model.parameters(), lr=1e-3, weight_decay=0.01,
        ...             decoupled_weight_decay=True)
    """

    python_number_options = {"weight_decay": TypeError}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False, master_weights=False):
        super().__init__(params, {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "foreach": foreach, "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable}, master_weights)

    def _update(self, param, grad, state, group):
        xp = backend.array_module(param)
        _start(state, param)
        lr, eps = float(group["lr"]), float(group["eps"])
        beta1, beta2 = (float(b) for b in group["betas"])
        grad = -grad if group["maximize"] else grad
        step = state["step"] + 1
        param, grad = _decay(param, grad, group)
        exp_avg, exp_avg_sq = _moments(state, grad, beta1, beta2)
        correction1, correction2 = 1 - beta1 ** step, 1 - beta2 ** step
        corrected = exp_avg / correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho = rho_inf - 2 * step * (beta2 ** step) / correction2
        if rho > 5.0:
            rect = ((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho)) ** 0.5
            adaptive = correction2 ** 0.5 / (xp.sqrt(exp_avg_sq) + eps)
            param = param - corrected * lr * adaptive * rect
        else:                                       # too few steps for a variance estimate
            param = param - corrected * lr
        state.update(step=step, exp_avg=exp_avg, exp_avg_sq=exp_avg_sq)
        return param


class Adamax(Optimizer):
    r"""Adamax (``torch.optim.Adamax``): Adam with the infinity norm in place of the second
    moment,

    .. math::
        g \leftarrow g + \lambda\theta, \quad m \leftarrow \beta_1 m + (1-\beta_1) g, \quad
        u \leftarrow \max(\beta_2 u, |g| + \epsilon), \quad
        \theta \leftarrow \theta - \frac{\eta}{1 - \beta_1^t} \frac{m}{u}

    ``maximize``, ``foreach``, ``capturable``, ``differentiable``, ``master_weights``: SGD's.

    Example:
        >>> opt = Adamax(model.parameters(), lr=2e-3)
    """

    python_number_options = {"weight_decay": TypeError, "betas": TypeError}

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False,
                 master_weights=False):
        super().__init__(params, {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable}, master_weights)

    def _update(self, param, grad, state, group):
        xp = backend.array_module(param)
        if not state:
            state.update(step=0, exp_avg=xp.zeros_like(param), exp_inf=xp.zeros_like(param))
        lr, eps = float(group["lr"]), float(group["eps"])
        beta1, beta2 = (float(b) for b in group["betas"])
        grad = -grad if group["maximize"] else grad
        step = state["step"] + 1
        param, grad = _decay(param, grad, group)
        exp_avg = lerp_arrays(state["exp_avg"], grad, 1 - beta1)
        exp_inf = xp.maximum(state["exp_inf"] * beta2, xp.abs(grad) + eps)
        r = rate_rounding(group)                  # a Tensor rate: torch's rounding
        param = param + -r(lr / r(1 - beta1 ** step)) * exp_avg / exp_inf
        state.update(step=step, exp_avg=exp_avg, exp_inf=exp_inf)
        return param


class Adadelta(Optimizer):
    r"""Adadelta (``torch.optim.Adadelta``): a step sized by the ratio of two running root
    mean squares, of the steps and of the gradients,

    .. math::
        g \leftarrow g + \lambda\theta, \quad v \leftarrow \rho v + (1-\rho) g^2, \quad
        \Delta = \frac{\sqrt{u + \epsilon}}{\sqrt{v + \epsilon}}\, g, \quad
        u \leftarrow \rho u + (1-\rho) \Delta^2, \quad \theta \leftarrow \theta - \eta\Delta

    ``maximize``, ``foreach``, ``capturable``, ``differentiable``, ``master_weights``: SGD's.

    Example:
        >>> opt = Adadelta(model.parameters(), lr=1.0, rho=0.9)
    """

    python_number_options = {"weight_decay": TypeError, "rho": TypeError}

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False, master_weights=False):
        super().__init__(params, {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
            "maximize": maximize, "capturable": capturable, "foreach": foreach,
            "differentiable": differentiable}, master_weights)

    def _check_option(self, name, value):
        super()._check_option(name, value)
        if name == "rho" and not value <= 1:
            raise ValueError(f"Adadelta: rho must be in [0, 1], got {value!r}")

    def _update(self, param, grad, state, group):
        xp = backend.array_module(param)
        if not state:
            state.update(step=0, square_avg=xp.zeros_like(param),
                         acc_delta=xp.zeros_like(param))
        lr, rho, eps = float(group["lr"]), float(group["rho"]), float(group["eps"])
        grad = -grad if group["maximize"] else grad
        param, grad = _decay(param, grad, group)
        square_avg = state["square_avg"] * rho + (1 - rho) * grad * grad
        delta = xp.sqrt(state["acc_delta"] + eps) / xp.sqrt(square_avg + eps) * grad
        acc_delta = state["acc_delta"] * rho + (1 - rho) * delta * delta
        state.update(step=state["step"] + 1, square_avg=square_avg, acc_delta=acc_delta)
        return param + -lr * delta


class Adafactor(Optimizer):
    r"""Adafactor (``torch.optim.Adafactor``): a second moment kept as a row and a column
    factor for every parameter of two or more dimensions (over its last two), whole for the
    others. At step t, with :math:`\hat\beta_t = 1 - t^{\tau}` (τ = ``beta2_decay``),
    :math:`\rho_t = \min(\eta, 1/\sqrt t)` and
    :math:`\alpha_t = \max(\epsilon_2, \mathrm{RMS}(\theta))\,\rho_t`:

    .. math::
        R \leftarrow \hat\beta_t R + (1-\hat\beta_t)\,\overline{g^2}_{\text{row}}, \quad
        C \leftarrow \hat\beta_t C + (1-\hat\beta_t)\,\overline{g^2}_{\text{col}}, \quad
        \hat V = \frac{R C}{\max(\overline{R}, \epsilon_1)}

    (:math:`\hat V \leftarrow \hat\beta_t \hat V + (1-\hat\beta_t) g^2` for a vector), then
    :math:`U = g / \sqrt{\max(\hat V, \epsilon_1^2)}` and
    :math:`\theta \leftarrow \theta - \alpha_t\, U / \max(1, \mathrm{RMS}(U) / d)`.
    Weight decay shrinks θ by :math:`1 - \eta\lambda` after :math:`\alpha_t` is taken.
    ``eps = (eps1, eps2)``: eps1 None is the machine epsilon of the dtype updated (float32
    for half-precision parameters, which update in float32 here). ``maximize``,
    ``foreach``, ``master_weights``: SGD's.

    Example:
        >>> opt = Adafactor(model.parameters(), lr=1e-2)
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False, master_weights=False):
        super().__init__(params, {
            "lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
            "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize},
            master_weights)

    def _check_option(self, name, value):
        if name == "beta2_decay":
            value = option_number("Adafactor", name, value)
            if not value <= 0:
                raise ValueError(f"Adafactor: beta2_decay must be <= 0, got {value!r}")
        elif name == "eps":
            if not isinstance(value, (tuple, list)) or len(value) != 2:
                raise ValueError(f"Adafactor: eps must be a pair (eps1 or None, eps2), got "
                                 f"{value!r}")
            if value[0] is not None:
                super()._check_option("eps1", value[0])
            super()._check_option("eps2", value[1])
        elif name == "d":
            value = option_number("Adafactor", name, value)
            if not value >= 1:
                raise ValueError(f"Adafactor: d (the clipping threshold) must be >= 1, got "
                                 f"{value!r}")
        else:
            super()._check_option(name, value)

    complex_params = False                       # torch's Adafactor refuses them at step

    def _state_shape(self, key, shape):
        if key == "row_var":                      # (..., R, 1): the mean over each row
            return tuple(shape[:-1]) + (1,)
        if key == "col_var":                      # (..., 1, C): the mean over each column
            return tuple(shape[:-2]) + (1,) + tuple(shape[-1:])
        return super()._state_shape(key, shape)

    def _update(self, param, grad, state, group):
        xp = backend.array_module(param)
        factored = grad.ndim > 1
        if not state:
            state["step"] = 0
            if factored:
                state["row_var"] = xp.zeros(self._state_shape("row_var", grad.shape), grad.dtype)
                state["col_var"] = xp.zeros(self._state_shape("col_var", grad.shape), grad.dtype)
            else:
                state["variance"] = xp.zeros_like(grad)
        lr, (eps1, eps2) = float(group["lr"]), group["eps"]
        eps1 = float(np.finfo(param.dtype).eps if eps1 is None else eps1)
        grad = -grad if group["maximize"] else grad
        step = state["step"] + 1
        weight = float(step) ** float(group["beta2_decay"])          # 1 - beta2 at step t
        rho = min(lr, 1 / (float(step) ** 0.5))
        # a Tensor rate: torch's rounding where the rate is the factor ρ (and in the decay)
        r = rate_rounding(group)
        q = r if not 1 / (float(step) ** 0.5) < lr else rate_rounding({})
        alpha = q(q(max(float(eps2), float(xp.linalg.norm(param)) / (param.size ** 0.5))) * rho)
        if group["weight_decay"]:
            param = param * r(1 - r(lr * r(float(group["weight_decay"]))))
        if factored:
            row_mean = xp.linalg.norm(grad, axis=-1, keepdims=True) ** 2 / grad.shape[-1]
            col_mean = xp.linalg.norm(grad, axis=-2, keepdims=True) ** 2 / grad.shape[-2]
            row_var = lerp_arrays(state["row_var"], row_mean, weight)      # (..., R, 1)
            col_var = lerp_arrays(state["col_var"], col_mean, weight)      # (..., 1, C)
            estimate = row_var @ col_var / xp.maximum(row_var.mean(axis=-2, keepdims=True),
                                                      eps1)
            state.update(row_var=row_var, col_var=col_var)
        else:
            estimate = state["variance"] = lerp_arrays(state["variance"], grad * grad, weight)
        update = 1 / xp.sqrt(xp.maximum(estimate, eps1 * eps1)) * grad
        denom = max(1.0, float(xp.linalg.norm(update)) / ((update.size ** 0.5) * group["d"]))
        state["step"] = step
        return param + q(-alpha / q(denom)) * update


class ASGD(Optimizer):
    r"""Averaged stochastic gradient descent (``torch.optim.ASGD``):

    .. math::
        g \leftarrow g + \lambda_w\theta, \quad
        \theta \leftarrow \theta(1 - \lambda\eta_t) - \eta_t g, \quad
        \bar\theta \leftarrow \bar\theta + \mu_t(\theta - \bar\theta),

    then :math:`\eta_{t+1} = \eta / (1 + \lambda\eta t)^{\alpha}` and
    :math:`\mu_{t+1} = 1 / \max(1, t - t_0)`; the average :math:`\bar\theta` is the state
    ``ax`` (θ itself while μ is 1). ``eta`` and ``mu`` are kept in torch's scalar dtype,
    as torch keeps them. ``maximize``, ``foreach``, ``capturable``, ``differentiable``,
    ``master_weights``: SGD's.

    Example:
        >>> opt = ASGD(model.parameters(), lr=0.01, t0=100)
    """

    scalar_state = ("eta", "mu")

    python_number_options = {"weight_decay": TypeError, "lambd": RuntimeError,
                             "alpha": RuntimeError}

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False, *,
                 master_weights=False):
        super().__init__(params, {
            "lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
            "capturable": capturable}, master_weights)

    def _check_option(self, name, value):
        if name in ("lambd", "alpha", "t0"):      # any real number, as torch takes them
            option_number("ASGD", name, value)
        else:
            super()._check_option(name, value)

    def _update(self, param, grad, state, group):
        xp = backend.array_module(param)
        lr, lambd, alpha = float(group["lr"]), float(group["lambd"]), float(group["alpha"])
        if not state:
            state.update(step=0, eta=np.array(lr, scalar_dtype()),
                         mu=np.ones((), scalar_dtype()), ax=xp.zeros_like(param))
        grad = -grad if group["maximize"] else grad
        step = state["step"] + 1
        param, grad = _decay(param, grad, group)
        eta, mu = float(state["eta"]), float(state["mu"])
        param = param * (1 - lambd * eta)
        param = param + -eta * grad
        ax = state["ax"] + (param - state["ax"]) * mu if mu != 1 else param.copy()
        r = rate_rounding(group)                  # a Tensor rate: torch's rounding
        state.update(step=step, ax=ax,
                     eta=np.array(r(lr / r(r(1 + r(r(r(lambd) * lr) * r(float(step))))
                                           ** r(alpha))), scalar_dtype()),
                     mu=np.array(1 / max(1, float(step) - float(group["t0"])), scalar_dtype()))
        return param


class Rprop(Optimizer):
    r"""Resilient backpropagation (``torch.optim.Rprop``): each coordinate's step size grows
    by :math:`\eta_+` while its gradient keeps its sign and shrinks by :math:`\eta_-` when
    it flips, within ``step_sizes``; the parameter moves by the step size against the sign,

    .. math::
        s \leftarrow \mathrm{clip}(s \cdot f, s_{min}, s_{max}), \quad
        f = \eta_+,\ \eta_-,\ 1 \text{ where } g\,g_{prev} > 0,\ < 0,\ = 0, \quad
        \theta \leftarrow \theta - \mathrm{sign}(g)\, s

    with g taken as 0 (and remembered as 0) where the sign flipped. Step sizes start at
    ``lr``. ``maximize``, ``foreach``, ``capturable``, ``differentiable``,
    ``master_weights``: SGD's.

    Example:
        >>> opt = Rprop(model.parameters(), lr=0.01, etas=(0.5, 1.2))
    """

    python_number_options = {"step_sizes": TypeError}

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False,
                 master_weights=False):
        super().__init__(params, {
            "lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable},
            master_weights)

    def _check_option(self, name, value):
        if name not in ("etas", "step_sizes"):
            super()._check_option(name, value)
            return
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise ValueError(f"Rprop: {name} must be a pair of numbers, got {value!r}")
        for number in value:
            option_number("Rprop", name, number)
        if name == "etas" and not 0.0 < value[0] < 1.0 < value[1]:
            raise ValueError(f"Rprop: etas must be (etaminus, etaplus) with 0 < etaminus < 1 "
                             f"< etaplus, got {value!r}")

    def _update(self, param, grad, state, group):
        xp = backend.array_module(param)
        if not state:
            state.update(step=0, prev=xp.zeros_like(param),
                         step_size=xp.full_like(grad, float(group["lr"])))
        etaminus, etaplus = (float(eta) for eta in group["etas"])
        smallest, largest = (float(size) for size in group["step_sizes"])
        grad = -grad if group["maximize"] else grad
        # torch's sign: 0 for NaN (a NaN gradient, or inf beside a stored 0), so that
        # coordinate keeps its step size and does not move
        factor = torch_sign(grad * state["prev"])            # a new array, 0-d too
        factor[factor > 0] = etaplus
        factor[factor < 0] = etaminus
        factor[factor == 0] = 1
        step_size = xp.clip(state["step_size"] * factor, smallest, largest)
        grad = xp.array(grad)                         # a copy, an array even when 0-d
        grad[factor == etaminus] = 0                  # a flipped sign: no move this step
        state.update(step=state["step"] + 1, prev=grad, step_size=step_size)
        return param - torch_sign(grad) * step_size


class SparseAdam(Optimizer):
    r"""Adam for the gradients of ``Embedding(sparse=True)`` (``torch.optim.SparseAdam``):
    the moments and the parameter change only in the rows the gradient holds,

    .. math::
        m_r \leftarrow m_r + (1-\beta_1)(g_r - m_r), \quad
        v_r \leftarrow v_r + (1-\beta_2)(g_r^2 - v_r), \quad
        \theta_r \leftarrow \theta_r - \eta \frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t}
        \frac{m_r}{\sqrt{v_r} + \epsilon}

    with t counting every step. Gradients are dense here: a row is held when it is not all
    zeros (torch's sparse gradient also holds a row read whose gradient sums to zero; there
    its moments decay, here they stay).

    Args:
        params: parameters or groups; lr, betas, eps: Adam's (lr > 0, eps > 0, betas in
            [0, 1)); maximize: ascend.

    Example:
        >>> emb = nn.Embedding(100, 8, sparse=True)
        >>> opt = SparseAdam(emb.parameters(), lr=1e-2)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor):
            _check_option("SparseAdam", "lr", lr)     # a Tensor rate of one element, as torch's
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize},
                         False)
        complex_at = [[i, j] for i, group in enumerate(self.param_groups)
                      for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_at:                            # torch's refusal, at construction
            raise ValueError(f"Complex params at indices {complex_at}: SparseAdam does not "
                             "support complex parameters")

    tensor_step = False                          # torch's SparseAdam counts in an int

    def _update(self, param, grad, state, group):
        _start(state, param)
        xp = backend.array_module(param)
        lr, eps = float(group["lr"]), float(group["eps"])
        beta1, beta2 = (float(b) for b in group["betas"])
        grad = -grad if group["maximize"] else grad
        step = state["step"] + 1
        rows = (xp.flatnonzero(xp.any(grad.reshape(len(grad), -1) != 0, axis=1))
                if grad.ndim else Ellipsis)
        exp_avg, exp_avg_sq = state["exp_avg"].copy(), state["exp_avg_sq"].copy()
        g, m, v = grad[rows], exp_avg[rows], exp_avg_sq[rows]
        m_step, v_step = (g - m) * (1 - beta1), (g * g - v) * (1 - beta2)
        exp_avg[rows], exp_avg_sq[rows] = m + m_step, v + v_step
        step_size = lr * (1 - beta2 ** step) ** 0.5 / (1 - beta1 ** step)
        param = param.copy()
        param[rows] = param[rows] + -step_size * ((m_step + m) / (xp.sqrt(v_step + v) + eps))
        state.update(step=step, exp_avg=exp_avg, exp_avg_sq=exp_avg_sq)
        return param
