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
# # 4. A tiny GPT, trained with both implementations
#
# A character-level GPT (2 blocks, d_model 32) on the Zen of Python, trained twice from the
# same seed: once with every norm composite, once fused. In float64 the two loss curves
# agree to rounding; the graphs and the memory differ.

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

import microgradnorm.functional as F
from microgradnorm import viz
from microgradnorm.train import TrainConfig, compare_impls, gpt_step_timeline

warnings.filterwarnings("ignore", message="IProgress not found")   # no widgets: no bar

# %%
runs = compare_impls(TrainConfig(steps=40), progress=False)
print(f"max |loss composite - loss fused| over 40 steps: {runs.max_loss_diff:.1e}")
for name, run in (("composite", runs.composite), ("fused", runs.fused)):
    print(f"{name:9}: loss {run.losses[0]:.3f} -> {run.losses[-1]:.3f}, {run.graph_nodes} nodes, "
          f"{run.saved_bytes / 1e6:.2f} MB saved, {1000 * run.seconds_per_step:.0f} ms/step")

# %%
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(runs.composite.losses, label="composite", linewidth=3, alpha=0.5)
ax.plot(runs.fused.losses, label="fused", linestyle="--")
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy")
ax.legend()
plt.show()

# %% [markdown]
# ## The graph, folded by module
# Each composite norm call, each attention and each MLP folded into one grey box that says
# how many nodes and bytes it hides.

# %%
model = runs.composite.model
batch = np.random.default_rng(0).integers(0, model.vocab_size, size=(2, 9))
logits = model(batch[:, :-1])                           # (B, T, V)
loss = F.cross_entropy(logits.reshape(-1, model.vocab_size), batch[:, 1:].reshape(-1))
viz.draw(loss, cluster=True, collapse=["norms", "attn", "mlp"], title="tiny GPT, composite")

# %% [markdown]
# ## Memory of one training step
# `mg.memory_timeline` counts the arrays the step holds after every node (see
# `docs/memory.md`); here with tracemalloc's count next to it.

# %%
timelines = {impl: gpt_step_timeline(TrainConfig(impl=impl), trace=True)
             for impl in ("composite", "fused")}
fig, ax = plt.subplots(figsize=(7, 3.5))
for impl, timeline in timelines.items():
    peak = timeline.peak
    line, = ax.plot(np.array(timeline.totals()) / 1e6,
                    label=f"{impl}: peak {peak.total_bytes / 1e6:.2f} MB")
    ax.plot(peak.index, peak.total_bytes / 1e6, "o", color=line.get_color())
    ax.plot([e.traced_bytes / 1e6 for e in timeline.events], color=line.get_color(),
            linestyle=":", linewidth=1)
ax.set_xlabel("event (graph node, forward then backward); dotted: tracemalloc")
ax.set_ylabel("MB held")
ax.legend()
plt.show()
print(timelines["fused"].table())
