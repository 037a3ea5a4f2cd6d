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
# # 3. Composite vs fused, on one norm
#
# `F.layer_norm(..., impl="composite")` builds LayerNorm from primitives as a textbook
# writes it; `impl="fused"` records one node whose backward is the closed form of
# notebook 2. Same numbers, different graphs: this notebook puts them side by side.

# %%
import numpy as np

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import viz

# %% [markdown]
# ## Twin graphs
# `viz.compare` draws both backward graphs with the arrays each node saves (dashed) and a
# caption with node counts and saved bytes.

# %%
viz.compare("layernorm", shape=(2, 4, 8))

# %% [markdown]
# ## Nodes and bytes, counted

# %%
rng = np.random.default_rng(0)
x = rng.standard_normal((2, 4, 8))
weight, bias = rng.standard_normal(8), rng.standard_normal(8)
for impl in ("composite", "fused"):
    xt = mg.tensor(x, requires_grad=True)
    y = F.layer_norm(xt, 8, mg.tensor(weight, requires_grad=True),
                     mg.tensor(bias, requires_grad=True), impl=impl)
    stats = mg.graph_stats(y)
    print(f"{impl:9}: {stats.nodes} nodes, {stats.saved_bytes} bytes saved, ops {stats.by_op}")

# %% [markdown]
# ## Gradient differences
# `mg.compare` runs both, with the same inputs, and reports max |fused − composite| for
# the output and every gradient, the finite-difference check of each, and the timings.

# %%
result = mg.compare("layernorm", (2, 4, 8), finite_differences=True, repeat=3)
print(result.table())

# %% [markdown]
# The same for RMSNorm, whose composite graph has no mean subtraction:

# %%
print(mg.compare("rmsnorm", (2, 4, 8), finite_differences=True, repeat=3).table())
viz.compare("rmsnorm", shape=(2, 4, 8))
