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
# # 1. The engine: from a scalar to a tensor graph
#
# Every operation on a `Tensor` that requires a gradient records one node of a graph;
# `backward()` walks that graph in reverse topological order and adds each node's
# gradient contribution into `.grad`. This notebook starts from three scalars, as
# micrograd's demo does, and ends with a tensor graph of one neural-network layer.
#
# As in PyTorch, Python numbers become float32 tensors by default; this notebook works in
# float64, where finite differences are meaningful, and says so once.

# %%
import numpy as np

import microgradnorm as mg
from microgradnorm import viz

mg.set_default_dtype(mg.float64)      # torch.set_default_dtype(torch.float64)

# %% [markdown]
# ## Scalars
# `a * b + c`, then `tanh`: four leaves and three nodes. The gradients are those of
# calculus: d/da tanh(ab + c) = (1 − tanh²)·b.

# %%
a = mg.tensor(2.0, requires_grad=True)
b = mg.tensor(-3.0, requires_grad=True)
c = mg.tensor(10.0, requires_grad=True)
e = a * b
d = e + c
out = d.tanh()
out.backward()
print(out)
print("a.grad", a.grad.item(), " expected", (1 - np.tanh(4.0) ** 2) * -3.0)
print("b.grad", b.grad.item(), " expected", (1 - np.tanh(4.0) ** 2) * 2.0)

# %% [markdown]
# The backward graph: one box per node (its op), the leaves in blue, the root in orange.
# `viz.draw` returns a `graphviz.Digraph`, which a notebook shows as SVG.

# %%
viz.draw(out, title="tanh(a·b + c)")

# %% [markdown]
# ## Gradients accumulate
# A value used twice receives the sum of both paths' gradients, and a second `backward()`
# adds to `.grad` (as in PyTorch) until it is zeroed.

# %%
x = mg.tensor(3.0, requires_grad=True)
y = x * x + x          # dy/dx = 2x + 1 = 7
y.backward()
print("x.grad after one backward:", x.grad)
(x * x + x).backward()
print("after a second backward:  ", x.grad)

# %% [markdown]
# ## Tensors
# The same engine on arrays: a linear layer with a ReLU and a mean. Shapes follow NumPy's
# broadcasting; each gradient has its tensor's shape.

# %%
rng = np.random.default_rng(0)
inputs = mg.tensor(rng.standard_normal((4, 3)))
weight = mg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
bias = mg.tensor(np.zeros(2), requires_grad=True)
hidden = (inputs @ weight + bias).relu()
loss = hidden.mean()
loss.backward()
print(loss)
print("weight.grad", weight.grad.shape, "bias.grad", bias.grad)

# %% [markdown]
# `show_saved=True` adds the arrays each node saved for backward (dashed), with their
# bytes; `mg.graph_stats` counts the same.

# %%
hidden = (inputs @ weight + bias).relu()
loss = hidden.mean()
stats = mg.graph_stats(loss)
print(stats)
viz.draw(loss, show_saved=True, title="mean(relu(x @ W + b))")

# %% [markdown]
# The analytic gradient against central finite differences in float64:

# %%
mg.gradcheck(lambda w, bb: (inputs @ w + bb).relu().mean(), [weight, bias])
