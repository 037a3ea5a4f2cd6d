# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 2. The backward of LayerNorm and RMSNorm, derived and checked
#
# For one row x ∈ ℝᴰ, LayerNorm is
# μ = mean(x), σ² = mean((x − μ)²), rstd = 1/√(σ² + ε), x̂ = (x − μ)·rstd, y = γ ⊙ x̂ + β.
# With g = dy ⊙ γ (the gradient reaching x̂), the chain rule through μ and σ² collapses to
#
# $$\frac{\partial L}{\partial x} = \frac{\mathrm{rstd}}{D}\Bigl(D\,g - \sum_j g_j
#   - \hat{x} \sum_j g_j \hat{x}_j\Bigr), \qquad
#   \frac{\partial L}{\partial \gamma} = \sum_{rows} dy \odot \hat{x}, \qquad
#   \frac{\partial L}{\partial \beta} = \sum_{rows} dy.$$
#
# RMSNorm drops the centering: rstd = 1/√(mean(x²) + ε), x̂ = x·rstd, y = γ ⊙ x̂, and
#
# $$\frac{\partial L}{\partial x} = \mathrm{rstd}\Bigl(g - \hat{x}\,\frac{1}{D}\sum_j g_j
#   \hat{x}_j\Bigr).$$
#
# Below, the two formulas are written in NumPy, compared with finite differences, with the
# library's fused and composite graphs, and with the seed-style layers.

# %%
import numpy as np

import microgradnorm as mg
import microgradnorm.functional as F


def layer_norm_backward(x, gamma, dy, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
    xhat = (x - mu) * rstd
    g = dy * gamma
    D = x.shape[-1]
    dx = rstd / D * (D * g - g.sum(-1, keepdims=True) - xhat * (g * xhat).sum(-1, keepdims=True))
    return dx, (dy * xhat).reshape(-1, D).sum(0), dy.reshape(-1, D).sum(0)


def rms_norm_backward(x, gamma, dy, eps=1e-6):
    rstd = 1 / np.sqrt((x ** 2).mean(-1, keepdims=True) + eps)
    xhat = x * rstd
    g = dy * gamma
    dx = rstd * (g - xhat * (g * xhat).mean(-1, keepdims=True))
    return dx, (dy * xhat).reshape(-1, x.shape[-1]).sum(0)


# %% [markdown]
# ## Against finite differences
# The loss L = Σ y ⊙ dy for a random dy, central differences with h = 1e-6 in float64.

# %%
rng = np.random.default_rng(0)
x = rng.standard_normal((3, 8)) * 2 + 0.5
gamma, beta, dy = rng.standard_normal(8), rng.standard_normal(8), rng.standard_normal((3, 8))


def layer_norm(x):
    mu = x.mean(-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) + beta


def numeric_dx(f, x, h=1e-6):
    dx = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        dx[i] = ((f(up) - f(down)) * dy).sum() / (2 * h)
    return dx


dx, dgamma, dbeta = layer_norm_backward(x, gamma, dy)
print("LayerNorm  max |analytic - numeric| dx:", np.abs(dx - numeric_dx(layer_norm, x)).max())


def rms_norm(x):
    return gamma * x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6)


dx_rms, dgamma_rms = rms_norm_backward(x, gamma, dy)
print("RMSNorm    max |analytic - numeric| dx:", np.abs(dx_rms - numeric_dx(rms_norm, x)).max())

# %% [markdown]
# ## Against the library: the fused node and the composite graph
# The fused node implements exactly these formulas; the composite graph gets its gradient
# from the chain rule through nine primitive nodes. Both agree with the NumPy formulas to
# rounding.

# %%
for impl in ("fused", "composite"):
    xt, wt, bt = (mg.tensor(a, requires_grad=True) for a in (x, gamma, beta))
    F.layer_norm(xt, 8, wt, bt, impl=impl).backward(dy)
    print(f"layer_norm {impl:9}: dx {np.abs(xt.grad - dx).max():.1e}  "
          f"dgamma {np.abs(wt.grad - dgamma).max():.1e}  dbeta {np.abs(bt.grad - dbeta).max():.1e}")
    xt, wt = (mg.tensor(a, requires_grad=True) for a in (x, gamma))
    F.rms_norm(xt, 8, wt, 1e-6, impl=impl).backward(dy)     # the formula's eps, LLaMA's
    print(f"rms_norm   {impl:9}: dx {np.abs(xt.grad - dx_rms).max():.1e}  "
          f"dgamma {np.abs(wt.grad - dgamma_rms).max():.1e}")

# %% [markdown]
# ## Why the gradient has no component along 1 (LayerNorm) or x̂ (both)
# LayerNorm's output does not change when a constant is added to a row, so its Jacobian
# annihilates the all-ones direction: Σ dx = 0 for every row. Both norms are invariant to
# scaling the row, so x · dx = 0 (up to ε).

# %%
print("LayerNorm row sums of dx:", dx.sum(-1))
print("LayerNorm x·dx per row:  ", (x * dx).sum(-1))
print("RMSNorm   x·dx per row:  ", (x * dx_rms).sum(-1))

# %% [markdown]
# ## The source derivation's worked example, end to end
# Its "Verify Against Implementation" cell, run on the seed-style
# layers (`microgradnorm.layers`), `LayerNorm(d_model=8)` in float32:

# %%
from microgradnorm.layers import LayerNorm, RMSNorm  # noqa: E402 (the worked example's import)

np.random.seed(123)
x = np.random.randn(2, 4, 8).astype(np.float32)  # (batch, seq, dim)
dy = np.random.randn(2, 4, 8).astype(np.float32)

ln = LayerNorm(d_model=8)
y_ln = ln.forward(x)
dx_ln = ln.backward(dy)
print("LayerNorm:")
print(f"  Input shape:  {x.shape}")
print(f"  Output shape: {y_ln.shape}")
print(f"  Output mean:  {y_ln.mean(axis=-1)[0,0]:.6f} (should be ≈0)")
print(f"  Output var:   {y_ln.var(axis=-1)[0,0]:.6f} (should be ≈1)")

rn = RMSNorm(d_model=8)
y_rn = rn.forward(x)
dx_rn = rn.backward(dy)
print("\nRMSNorm:")
print(f"  Input shape:  {x.shape}")
print(f"  Output shape: {y_rn.shape}")
print(f"  Output RMS:   {np.sqrt((y_rn**2).mean(axis=-1))[0,0]:.6f} (should be ≈1)")

# %% [markdown]
# And its gradients against the formulas above (computed in float64 from the same float32
# inputs):

# %%
ref_dx, ref_dgamma, ref_dbeta = layer_norm_backward(x.astype(np.float64), np.ones(8), dy)
print("LayerNorm dx     max |layer - formula|:", np.abs(dx_ln - ref_dx).max())
print("LayerNorm dgamma max |layer - formula|:", np.abs(ln.grad_gamma - ref_dgamma).max())
ref_dx_rn, _ = rms_norm_backward(x.astype(np.float64), np.ones(8), dy)
print("RMSNorm   dx     max |layer - formula|:", np.abs(dx_rn - ref_dx_rn).max())
