"""L-BFGS (``torch.optim.LBFGS``): a quasi-Newton step from the last ``history_size`` pairs of
parameter and gradient changes, with a fixed step or the strong-Wolfe line search.

The algorithm is torch's (minFunc's), operation for operation on the flat vector of every
parameter: the numbers it compares and scales by (the step t, yᵀs, the initial Hessian scale,
the two-loop coefficients) are 0-d arrays in the parameters' dtype, as torch keeps them in
0-d tensors, so float32 runs round as torch's: each ``add_(x, alpha=a)`` of torch's (the
two-loop updates, the parameter step) is one rounding here too, as its FMA-compiled kernels
round it, and a Python number divided by a float32 step (the line search's cubic) is the
step's reciprocal times the number, as torch's ``number / tensor``. What is left is each
library's own last bit: the order of the dot products' and the 1-norm's sums (NumPy's BLAS
and pairwise sums, torch's MKL and cascade sums) and the line search's square root (torch's
float32 one is not always correctly rounded): an ulp now and then, which an ill-conditioned
problem grows over the iterations, as it would between any two float32 runs."""

import copy

import numpy as np

from .. import backend
from ..autograd import enable_grad, no_grad
from ..tensor import Tensor
from .optimizers import Optimizer, _check_option, lr_value
from .state_tensors import loaded_value, state_tensor

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    r"""The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clamped to
    ``bounds`` (default: the two points); their midpoint where the cubic has no minimum:

    .. math::
        d_1 = g_1 + g_2 - 3\frac{f_1 - f_2}{x_1 - x_2}, \quad d_2 = \sqrt{d_1^2 - g_1 g_2},
        \quad x = x_2 - (x_2 - x_1)\frac{g_2 + d_2 - d_1}{g_2 - g_1 + 2 d_2}

    (with the two points swapped where x1 > x2)."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    span = x1 - x2
    # torch's number / tensor is tensor.reciprocal() * number: two roundings, as here
    d1 = g1 + g2 - (3 * (f1 - f2) / span if type(span) in (int, float)
                    else 1 / span * (3 * (f1 - f2)))
    d2_square = d1 ** 2 - g1 * g2
    if not d2_square >= 0:
        return (low + high) / 2.0
    d2 = _sqrt(d2_square)
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, low), high)


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """The step t along direction ``d`` (from loss f, gradient g, slope gtd = gᵀd at t = 0)
    meeting the strong Wolfe conditions: f(t) <= f + c1·t·gtd and |f'(t)| <= -c2·gtd. First
    grow t until an interval brackets such a point, then shrink the bracket by cubic
    interpolation. ``evaluate(t)`` gives (loss, flat gradient) at step t.

    Returns (loss, gradient, t, number of evaluations)."""
    d_norm = abs(d).max()
    f_new, g_new = evaluate(t)
    evals, ls_iter = 1, 0
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g.copy(), gtd
    done = False
    while ls_iter < max_ls:                           # bracketing
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g, done = [t], [f_new], [g_new], True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # extrapolate: a cubic step between 1.01 t and 10 t
        t_next = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                    bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.copy(), gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    # zoom: shrink the bracket [low, high] until a point meets the conditions
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # a trial too close to an end twice running (or past it) moves a tenth inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                near_top = abs(t - max(bracket)) < abs(t - min(bracket))
                t = max(bracket) - eps if near_top else min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new      # not low enough: the new high
            bracket_g[high], bracket_gtd[high] = g_new.copy(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new         # the new low
            bracket_g[low], bracket_gtd[low] = g_new.copy(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    r"""Limited-memory BFGS (``torch.optim.LBFGS``). Each iteration of ``step(closure)``
    moves the flat parameter vector θ along

    .. math::
        d = -H g, \qquad H \approx \nabla^2 f^{-1}

    built by the two-loop recursion from the last ``history_size`` pairs
    :math:`s = \theta_{k+1} - \theta_k`, :math:`y = g_{k+1} - g_k` (a pair is kept only if
    :math:`y^\top s > 10^{-10}`), starting from :math:`H_0 = (y^\top s / y^\top y)\,I`;
    the first direction is -g with step :math:`\min(1, 1/\lVert g\rVert_1)\,\eta`, the others
    step η, or the step the strong-Wolfe line search finds
    (``line_search_fn="strong_wolfe"``). One ``step`` runs up to ``max_iter`` iterations and
    ``max_eval`` closure calls (default ``max_iter * 5 // 4``), stopping early where the
    largest gradient entry is at most ``tolerance_grad``, or the loss or the step changes
    by less than ``tolerance_change``.

    Args:
        params: the parameters, one group only (torch's restriction).
        lr: η. max_iter, max_eval, tolerance_grad, tolerance_change, history_size,
        line_search_fn: as above, torch's defaults.

    ``step(closure)`` calls ``closure`` (which clears the gradients, computes the loss,
    calls ``backward`` and returns the loss) with grad enabled, and returns its first loss.
    The state (the history, the last direction and step) is kept under the first
    parameter, as torch keeps it.

    Example:
        >>> optimizer = LBFGS(model.parameters(), lr=0.8)
        >>> def closure():
        ...     optimizer.zero_grad()
        ...     loss = criterion(model(x), y)
        ...     loss.backward()
        ...     return loss
        >>> optimizer.step(closure)
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor):
            _check_option("LBFGS", "lr", lr)          # a Tensor rate of one element, as torch's
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, {
            "lr": lr, "max_iter": max_iter, "max_eval": max_eval,
            "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
            "history_size": history_size, "line_search_fn": line_search_fn})
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    def _check_option(self, name, value):
        if name == "line_search_fn":
            if value is not None and not isinstance(value, str):
                raise TypeError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                                f"{value!r}")
            return
        super()._check_option(name, value)

    @property
    def _params(self):
        return self.param_groups[0]["params"]

    def _flat_grad(self):
        # every parameter's gradient, flattened and concatenated (zeros for a missing one);
        # a complex parameter as its real and imaginary parts
        xp = backend.array_module(self._params[0]._array)
        views = [_real_flat(p.grad._array) if p.grad is not None
                 else xp.zeros(_real_flat(p._array).size, _real_flat(p._array).dtype)
                 for p in self._params]
        return xp.concatenate(views)

    def _add_grad(self, step_size, update):
        # θ += step_size · update, in place, parameter by parameter
        offset = 0
        for p in self._params:
            flat = _real_flat(p._array)        # a view, or a copy of a strided parameter
            flat[...] = _axpy(flat, step_size, update[offset:offset + flat.size])
            offset += flat.size
            p._array[...] = flat.view(p._array.dtype).reshape(p.shape)
            p._bump_version()

    def _set_params(self, arrays):
        for p, array in zip(self._params, arrays):
            p._array[...] = array
            p._bump_version()

    def _directional_evaluate(self, closure, x, t, d):
        # loss and flat gradient at x + t·d, the parameters put back to x after
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._flat_grad()
        self._set_params(x)
        return loss, flat_grad

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` recomputes the loss and its
        gradients and returns the loss. Returns the loss of the first call."""
        if len(self.param_groups) != 1:         # add_param_group after the constructor
            raise AssertionError(
                f"Expected exactly one param_group, but got {len(self.param_groups)}")
        with no_grad():
            return self._iterate(enable_grad()(closure))

    def _iterate(self, closure):
        group = self.param_groups[0]
        # a Tensor rate read as a number at each step, as the other optimizers read it
        lr, max_iter, max_eval = lr_value(group["lr"]), group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search_fn = group["history_size"], group["line_search_fn"]
        state = self.state.setdefault(id(self._params[0]), {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        # the history as torch keeps it, Tensors (lists of them), read as arrays here
        d, t = _array(state.get("d")), _number(state.get("t"))
        old_dirs, old_stps, ro = (None if state.get(key) is None else
                                  [_array(v) for v in state[key]]
                                  for key in ("old_dirs", "old_stps", "ro"))
        H_diag, prev_flat_grad = _array(state.get("H_diag")), _array(state.get("prev_flat_grad"))
        prev_loss = _number(state.get("prev_loss"))
        if "al" in state:
            state["al"] = [_array(v) for v in state["al"]]
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # the direction: -g first, then the two-loop recursion over the history
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad                 # (n,) gradient change
                s = d * t                                      # (n,) the last step
                ys = _dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:          # forget the oldest pair
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / _dot(y, y)
                al = state.setdefault("al", [None] * history_size)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * ro[i]
                    q[...] = _axpy(q, -al[i], old_dirs[i])
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = _dot(old_dirs[i], r) * ro[i]
                    r[...] = _axpy(r, al[i] - be_i, old_stps[i])     # (r is d: in place)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            # the step length: min(1, 1/|g|₁)·lr at the very first iteration, lr after
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / _sum(abs(flat_grad))) * lr
            else:
                t = lr
            gtd = _dot(flat_grad, d)                           # the slope along d
            if gtd > -tolerance_change:
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._array.copy() for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda step, x=x_init, d=d: self._directional_evaluate(closure, x, step,
                                                                            d),
                    t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:             # the last iteration's loss is not needed
                    loss = float(closure())
                    flat_grad = self._flat_grad()
                    opt_cond = abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break
        state.update(d=_tensor(d), t=_number(t), old_dirs=[_tensor(v) for v in old_dirs],
                     old_stps=[_tensor(v) for v in old_stps], ro=[_tensor(v) for v in ro],
                     H_diag=_tensor(H_diag), prev_flat_grad=_tensor(prev_flat_grad),
                     prev_loss=prev_loss)
        if "al" in state:
            state["al"] = [_tensor(v) for v in state["al"]]
        return orig_loss

    def state_dict(self):
        """torch's layout: the one group's options, and the state under parameter 0 (the
        entry itself, as torch's: ``copy.deepcopy`` keeps a snapshot)."""
        options = {k: v for k, v in self.param_groups[0].items() if k != "params"}
        groups = [{**copy.deepcopy(options), "params": list(range(len(self._params)))}]
        entries = self.state.get(id(self._params[0]))
        return {"state": {0: entries} if entries else {}, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict()``: the options as any optimizer's; the history in new
        lists holding the saved Tensors, each cast to the parameter's dtype and device (kept
        as it is where it has them, as torch 2.13's)."""
        entries = state_dict.get("state", {}) if isinstance(state_dict, dict) else {}
        if set(entries) - {0} or not all(isinstance(v, dict) for v in entries.values()):
            raise ValueError("LBFGS.load_state_dict: the state is kept under parameter 0 "
                             f"only, got keys {sorted(entries)}")
        super().load_state_dict({**state_dict, "state": {}})
        if entries:
            first = self._params[0]

            def cast(key, value):
                if isinstance(value, (list, tuple)):
                    return type(value)(cast(key, v) for v in value)
                return loaded_value(self, 0, key, value, first, own=True)
            self.state = {id(first): {key: cast(key, value)
                                      for key, value in entries[0].items()}}


def _array(value):
    # a state entry read for the iteration: a Tensor's array (a view: no copy)
    return value._array if isinstance(value, Tensor) else value


def _number(value):
    # a step length or loss as a Python float (torch's may be a 0-d Tensor)
    return None if value is None else float(_array(value))


def _tensor(value):
    # a state entry as torch keeps it: arrays and NumPy numbers as Tensors; Python numbers
    # (``H_diag``'s first 1) and None (an unused slot of ``al``) as they are
    if isinstance(value, np.generic):         # (np.float64 is a float too)
        return state_tensor(np.array(value))
    if value is None or isinstance(value, (Tensor, int, float)):
        return value
    return state_tensor(value)


def _dot(a, b):
    # the last bits that are each library's own: torch's dot runs in its BLAS's order, its
    # sum in its cascade's, its float32 sqrt is not always correctly rounded; these are
    # NumPy's, so float32 iterates can part from torch's by an ulp, then more as iterations
    # compound it (module-level names: the tests put torch's in their place)
    return a.dot(b)


def _sum(a):
    return a.sum()


def _sqrt(a):
    return backend.array_module(a).sqrt(a)


def _axpy(y, alpha, x):
    # y + alpha·x as torch's ``y.add_(x, alpha=alpha)`` rounds it: alpha in the kernel's
    # math type (float32 for float32 and narrower), the multiply-add rounded once, as its
    # FMA-compiled kernels do; two roundings drift from torch's iterates within ~20 steps
    alpha = (np.float64 if y.dtype.itemsize > 4 else np.float32)(float(alpha))
    return backend.fused_multiply_add(x, alpha, y)


def _real_flat(array):
    # a contiguous parameter or gradient as a flat real vector (a view: writes reach it)
    flat = array.reshape(-1)
    return flat.view(flat.real.dtype) if flat.dtype.kind == "c" else flat
