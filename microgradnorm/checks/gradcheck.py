"""Finite-difference checks of the autograd: ``gradcheck``, ``gradgradcheck`` (the double
backward) and ``jacobian``."""

import math
import warnings

import numpy as np

from ..autograd import enable_grad, forward_ad, grad, no_grad
from ..backend import to_numpy
from ..dtypes import check_number
from ..tensor import Tensor, tensor


class GradcheckError(AssertionError, RuntimeError):
    """An analytical gradient disagrees with central finite differences (a RuntimeError
    as PyTorch's, and an AssertionError for tests)."""


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-4, seed=0, *, backward_ad=True,
              forward_ad=False):
    """Check the gradients of ``fn`` at ``inputs`` against central differences in float64.

    d(Σ v·fn)/d(input), for fixed random directions v, must satisfy |analytical -
    numerical| <= atol + rtol·|numerical| everywhere, with no NaN or inf anywhere.

    Args:
        fn: takes the inputs, returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a sequence (float64 where they require grad, else a warning, as
            torch's; other values are passed through).
        eps: the finite-difference step.
        backward_ad: check the gradients that backward gives (reverse mode).
        forward_ad: also check the tangents ``autograd.forward_ad`` gives (one dual
            evaluation per input element), as torch's ``check_forward_ad``.

    Returns:
        True, the inputs unchanged; else raises ``GradcheckError`` naming the worst element.

    Example:
        >>> x = mg.tensor(np.random.randn(3, 4), requires_grad=True)
        >>> mg.gradcheck(lambda t: F.layer_norm(t, 4), x)
        True
    """
    _check_tolerances(eps, atol, rtol)
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input requires grad")
    for i in checked:          # as torch's: a warning, and the check runs in that dtype
        if inputs[i].dtype != np.float64:
            warnings.warn(f"gradcheck: input {i} requires grad and is {inputs[i].dtype}, not "
                          "torch.float64; finite differences in it will likely fail the check. "
                          "Create the inputs with dtype=mg.float64.", UserWarning, stacklevel=2)

    outputs = _as_tuple(fn(*inputs))
    used = [k for k, o in enumerate(outputs) if isinstance(o, Tensor) and o.requires_grad]
    # none requires grad: the floating outputs must not move either, as torch's check
    # ("Numerical gradient for function expected to be zero")
    used = used or [k for k, o in enumerate(outputs) if isinstance(o, Tensor)
                    and (o.is_floating_point() or o.is_complex())]
    rng = np.random.default_rng(seed)
    directions = [outputs[k].xp.asarray(rng.standard_normal(outputs[k].shape)) for k in used]
    tracked = [(outputs[k], v) for k, v in zip(used, directions) if outputs[k].requires_grad]
    tracked = tracked if backward_ad else []
    analytical = grad([o for o, _ in tracked], [inputs[i] for i in checked],
                      [v for _, v in tracked], allow_unused=True) if tracked else \
        (None,) * len(checked)

    def objective():
        with no_grad():
            outs = _as_tuple(fn(*inputs))
        return sum(float((outs[k]._array * v).sum()) for k, v in zip(used, directions))

    for i, analytic in zip(checked, analytical):
        numerical = numerical_grad(objective, inputs[i]._array, eps)
        if backward_ad:
            analytic = np.zeros(inputs[i].shape) if analytic is None else \
                to_numpy(analytic._array)
            _compare(i, inputs[i], analytic, numerical, atol, rtol)
        if forward_ad:
            _compare(i, inputs[i], _forward_gradient(fn, inputs, i, used, directions),
                     numerical, atol, rtol)
    return True


def _forward_gradient(fn, inputs, i, used, directions):
    """d(Σ v·fn)/d(input i) by forward-mode AD: one dual level per element of the input,
    its tangent that element's unit vector."""
    result = np.zeros(inputs[i].shape)
    for index in np.ndindex(inputs[i].shape):
        unit = inputs[i].xp.zeros(inputs[i].shape, dtype=inputs[i].dtype)
        unit[index] = 1
        with forward_ad.dual_level():
            args = list(inputs)
            args[i] = forward_ad.make_dual(inputs[i], Tensor(unit, dtype=unit.dtype))
            outputs = _as_tuple(fn(*args))
            tangents = [forward_ad.unpack_dual(outputs[k]).tangent for k in used]
        result[index] = sum(float((to_numpy(t._array) * to_numpy(v)).sum())
                            for t, v in zip(tangents, directions) if t is not None)
    return result


# torch.autograd.gradcheck's switches that this check has no counterpart for and that only
# relax or time it; those asking for forward-mode or batched gradients are refused
_ACCEPTED = {"nondet_tol", "check_undefined_grad", "check_grad_dtypes", "fast_mode",
             "masked"}
_REFUSED = {"check_batched_grad", "check_batched_forward_grad"}


def torch_gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
                    check_forward_ad=False, check_backward_ad=True, **switches):
    """``torch.autograd.gradcheck`` (``mg.autograd.gradcheck``): ``gradcheck`` with
    PyTorch's defaults and keywords; with ``raise_exception=False`` a failure returns False.
    ``check_forward_ad`` checks the tangents of ``autograd.forward_ad`` too,
    ``check_backward_ad=False`` leaves out the gradients; batched checks
    (``check_batched_grad``, ``check_batched_forward_grad``) are refused: no batched
    gradients here."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    for name, value in switches.items():
        if name in _REFUSED and value:
            raise NotImplementedError(f"gradcheck: {name}=True is not supported (no "
                                      "forward-mode or batched gradients here)")
        if name not in _ACCEPTED | _REFUSED:
            raise TypeError(f"gradcheck() got an unexpected keyword argument '{name}'")
    try:
        return gradcheck(func, inputs, eps=eps, atol=atol, rtol=rtol,
                         backward_ad=bool(check_backward_ad), forward_ad=bool(check_forward_ad))
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-4, seed=0):
    """Check the double backward of ``fn`` at ``inputs`` against central differences of its
    gradient, as torch's ``gradgradcheck``: the gradient

        G(inputs, grad_outputs) = d(Σ grad_outputs·fn(inputs))/d(inputs)

    recorded with ``create_graph=True`` is itself checked by ``gradcheck``, as a function
    of the inputs and of ``grad_outputs`` (those that require grad), so its backward (the
    second derivatives, ``graph_backward``) meets finite differences of first derivatives.

    Args:
        fn: takes the inputs, returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a sequence (float64 where they require grad).
        grad_outputs: a Tensor or a sequence, one per output that requires grad; None:
            random values in [-1, 1), requiring grad, drawn from ``seed``.
        eps, atol, rtol, seed: as ``gradcheck``'s.

    Returns:
        True; else raises ``GradcheckError`` naming the worst element.

    Example:
        >>> x = mg.tensor(np.random.randn(3, 4), requires_grad=True)
        >>> mg.gradgradcheck(lambda t: (t.sin() * t).sum(1), x)
        True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(
            tensor(o.xp.asarray(rng.uniform(-1, 1, o.shape)).astype(
                o.dtype if o.is_floating_point() or o.is_complex() else np.float64),
                requires_grad=True) for o in _differentiable(fn(*inputs)))
    else:
        grad_outputs = (grad_outputs,) if isinstance(grad_outputs, Tensor) else \
            tuple(grad_outputs)
    count = len(grad_outputs)
    wanted = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]

    def gradient(*args):
        # under gradcheck's finite differences too (it runs fn without grad): recorded
        with enable_grad():
            outputs = _differentiable(fn(*args[:len(args) - count]))
            grads = grad(outputs, [args[i] for i in wanted], list(args[len(args) - count:]),
                         create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(gradient, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     seed=seed)


def torch_gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                        gen_non_contig_grad_outputs=False, raise_exception=True,
                        check_rev_over_rev=True, **switches):
    """``torch.autograd.gradgradcheck`` (``mg.autograd.gradgradcheck``): ``gradgradcheck``
    with PyTorch's defaults and keywords; with ``raise_exception=False`` a failure returns
    False. Forward-over-reverse (``check_fwd_over_rev``) and batched checks are refused;
    ``gen_non_contig_grad_outputs`` is accepted (every array here is contiguous)."""
    if not check_rev_over_rev:
        raise AssertionError("Expected at least one of check_fwd_over_rev or "
                             "check_rev_over_rev to be True")
    for name, value in switches.items():
        if name in ("check_fwd_over_rev", "check_batched_grad") and value:
            raise NotImplementedError(f"gradgradcheck: {name}=True is not supported (no "
                                      "forward-mode or batched gradients here)")
        if name not in _ACCEPTED | {"check_fwd_over_rev", "check_batched_grad"}:
            raise TypeError(f"gradgradcheck() got an unexpected keyword argument '{name}'")
    try:
        return gradgradcheck(func, inputs, grad_outputs, eps=eps, atol=atol, rtol=rtol)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _differentiable(outputs):
    return tuple(o for o in _as_tuple(outputs) if isinstance(o, Tensor) and o.requires_grad)


def numerical_grad(objective, array, eps=1e-6):
    """(f(x + eps·e_i) - f(x - eps·e_i)) / (2·eps) for f = ``objective()``, perturbing
    ``array`` in place one element at a time; a float64 array of its shape."""
    numerical = np.zeros(array.shape)
    for index in np.ndindex(array.shape):
        original = array[index].copy()
        try:
            array[index] = original + eps
            plus = objective()
            array[index] = original - eps
            minus = objective()
        finally:
            array[index] = original
        numerical[index] = (plus - minus) / (2 * eps)
    return numerical


def _check_tolerances(eps, atol, rtol):
    for name, value, low in (("eps", eps, "> 0"), ("atol", atol, ">= 0"),
                             ("rtol", rtol, ">= 0")):
        check_number("gradcheck", name, value)
        if not math.isfinite(value) or not (value > 0 if name == "eps" else value >= 0):
            raise ValueError(f"gradcheck: {name} must be a finite number {low}, got {value!r}")


def _compare(i, tensor, analytic, numerical, atol, rtol):
    name = f"input {i}" + (f" ({tensor.name})" if tensor.name else "")
    data = to_numpy(tensor._array)
    for what, values in (("the input", data), ("the analytical gradient", analytic),
                         ("the numerical gradient", numerical)):
        bad = ~np.isfinite(values)
        if bad.any():
            where = tuple(int(k) for k in np.argwhere(bad)[0])
            raise GradcheckError(
                f"gradcheck: {what} of {name} with shape {tensor.shape} is not finite at "
                f"index {where}: {values[where]} (analytical {analytic[where]:.10g}, "
                f"numerical {numerical[where]:.10g}; {int(bad.sum())} of {bad.size} "
                "elements are NaN or inf). A gradient check needs finite values; move the "
                "point away from a singularity or fix the backward that produced it.")
    excess = np.abs(analytic - numerical) - (atol + rtol * np.abs(numerical))
    if excess.size and excess.max() > 0:
        worst = np.unravel_index(int(np.argmax(excess)), excess.shape)
        raise GradcheckError(
            f"gradcheck: the gradient of {name} with shape {tensor.shape} is wrong at index "
            f"{tuple(int(k) for k in worst)}: analytical {analytic[worst]:.10g}, numerical "
            f"{numerical[worst]:.10g}, |difference| {abs(analytic[worst] - numerical[worst]):.3g}"
            f" > atol + rtol·|numerical| = {atol + rtol * abs(numerical[worst]):.3g} "
            f"({int((excess > 0).sum())} of {excess.size} elements fail)")


def jacobian(fn, x):
    """The dense Jacobian of ``fn`` at ``x`` (a Tensor or array), one backward per output
    element: J[i..., j...] = d out[i...] / d x[j...], of shape ``fn(x).shape + x.shape``.

    Example:
        >>> J = mg.jacobian(lambda t: F.layer_norm(t, 4), mg.tensor(np.random.randn(4)))
        >>> J.shape
        (4, 4)
    """
    data = x._array if isinstance(x, Tensor) else np.asarray(x)
    if np.dtype(data.dtype).kind != "f":
        raise TypeError(f"jacobian: x must be a floating-point tensor, got dtype {data.dtype}")
    leaf = Tensor(data, requires_grad=True, dtype=data.dtype)
    out = fn(leaf)
    xp = leaf.xp
    result = xp.zeros(out.shape + leaf.shape, dtype=np.result_type(out.dtype, leaf.dtype))
    for index in np.ndindex(out.shape):
        direction = xp.zeros(out.shape, dtype=out.dtype)
        direction[index] = 1
        (row,) = grad(out, leaf, direction, retain_graph=True, allow_unused=True)
        if row is not None:
            result[index] = row._array
    return result


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)
