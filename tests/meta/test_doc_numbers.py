"""Every deterministic number that the docs, the README and the committed notebook outputs
quote (node counts, saved bytes, peak bytes, parameter counts, file sizes) is recomputed
here from the code that produces it.

A claim is a sentence of its file with ``{placeholders}``; the test fills them from the
tool and requires the sentence, whitespace aside, in the file. When the code changes a
number, the test names the file and the sentence to update. Timings are not claims: they
stay in the docs as dated measurements with their machine.
"""

import functools
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import optim
from microgradnorm.checkpoint import save_checkpoint
from microgradnorm.train import TrainConfig, gpt_step_timeline, train_tiny_gpt

ROOT = Path(__file__).parents[2]
MB = 1e6


@functools.cache
def norm_graphs(norm, affine=True):
    """Op nodes and saved bytes of one norm, composite and fused, on the demo's (2, 4, 8)."""
    result = mg.compare(norm, (2, 4, 8), affine=affine, repeat=1)
    return {"composite_nodes": result.composite.nodes, "fused_nodes": result.fused.nodes,
            "composite_saved": result.composite.saved_bytes,
            "fused_saved": result.fused.saved_bytes}


@functools.cache
def tiny_gpt():
    """The tiny GPT of the demo and of ``microgradnorm train`` (TrainConfig's defaults):
    graph nodes and saved bytes behind one loss, per impl, and its parameter count."""
    runs = {impl: train_tiny_gpt(TrainConfig(steps=1, impl=impl), progress=False)
            for impl in ("composite", "fused")}
    values = {"parameters": f"{runs['fused'].model.num_parameters():,}"}
    for impl, run in runs.items():
        values[f"{impl}_nodes"] = run.graph_nodes
        values[f"{impl}_saved_mb"] = f"{run.saved_bytes / MB:.2f}"
    return values


@functools.cache
def checkpoint_size():
    """The tiny GPT's checkpoint with its AdamW state, in kB."""
    model = train_tiny_gpt(TrainConfig(steps=1), progress=False).model
    optimizer = optim.AdamW(model.parameters())
    for p in model.parameters():
        p.grad = p.data * 0
    optimizer.step()
    path = ROOT / "tests" / f".checkpoint_size_{os.getpid()}.npz"
    try:
        save_checkpoint(path, model, optimizer, step=1)
        return {"kb": round(path.stat().st_size / 1000)}
    finally:
        path.unlink(missing_ok=True)


@functools.cache
def memory(d_model=32, n_layers=2):
    """``microgradnorm memory``'s numbers: the peak by module, and the totals the prose of
    docs/memory.md quotes, each impl's key prefixed by c (composite) or f (fused)."""
    values = {}
    for impl in ("composite", "fused"):
        timeline = gpt_step_timeline(TrainConfig(impl=impl, d_model=d_model,
                                                 n_layers=n_layers))
        peak = timeline.peak
        by = {c: b / MB for c, b in peak.by_category.items()}
        last = {e.phase: e for e in timeline.events}            # the last event of each phase
        k = impl[0]
        values.update({
            f"{k}_attention": f"{by['attention']:.3f}", f"{k}_mlp": f"{by['mlp']:.3f}",
            f"{k}_norms": f"{by['norms']:.3f}", f"{k}_residual": f"{by['residual']:.3f}",
            f"{k}_rest": f"{by['embeddings'] + by['head'] + by['loss']:.3f}",
            f"{k}_peak": f"{peak.total_bytes / MB:.3f}",
            f"{k}_peak_bytes": peak.total_bytes, f"{k}_norm_bytes": peak.by_category["norms"],
            f"{k}_mlp_share": peak.by_category["mlp"] / peak.total_bytes,
            f"{k}_attention_share": peak.by_category["attention"] / peak.total_bytes,
            f"{k}_forward_end": f"{last['forward'].total_bytes / MB:.2f}",
            f"{k}_backward_end": f"{last['backward'].total_bytes / MB:.2f}",
            f"{k}_freed": f"{last['freed'].total_bytes / MB:.2f}",
            f"{k}_forward_saved": f"{last['forward'].by_kind['saved'] / MB:.2f}",
        })
    return values


def memory_prose():
    """The shares of the peak that docs/memory.md's prose quotes, in % (d 32 and d 64)."""
    sizes = {"32": memory(), "64": memory(64, 4)}
    values = {}
    for d, v in sizes.items():
        values.update({
            f"c_norm_share_{d}": f"{100 * v['c_norm_bytes'] / v['c_peak_bytes']:.1f}",
            f"f_norm_share_{d}": f"{100 * v['f_norm_bytes'] / v['f_peak_bytes']:.1f}",
            f"c_norms_{d}": f"{v['c_norm_bytes'] / MB:.2f}",
            f"f_norms_{d}": f"{v['f_norm_bytes'] / MB:.2f}",
            f"shrink_{d}": f"{100 * (1 - v['f_peak_bytes'] / v['c_peak_bytes']):.1f}",
        })
    for part in ("mlp", "attention"):
        shares = [v[f"{k}_{part}_share"] for v in sizes.values() for k in "cf"]
        values[f"{part}_low"] = f"{100 * min(shares):.0f}"
        values[f"{part}_high"] = f"{100 * max(shares):.0f}"
    return values


def memory_table_rows(d_model, n_layers):
    """The rows of docs/memory.md's peak table for one size."""
    v = memory(d_model, n_layers)
    rows = [("attention", "attention"), ("mlp", "mlp"), ("norms", "norms"),
            ("residual", "residual"), ("embeddings, head, loss", "rest")]
    lines = [f"| {label} | {v['c_' + key]} | {v['f_' + key]} |" for label, key in rows]
    return "\n".join(lines + [f"| **peak** | **{v['c_peak']}** | **{v['f_peak']}** |"])


def layer_norm_graphs():
    return norm_graphs("layer_norm")


def layer_norm_graphs_plain():
    return norm_graphs("layer_norm", affine=False)


def rms_norm_graphs():
    return norm_graphs("rms_norm")


@functools.cache
def nanogpt_idiom_twin():
    """docs/porting.md's twin: microgradnorm/cli/pytorch_style_gpt.py (nanoGPT's idiom,
    flash attention) at the doc's config, op nodes and saved bytes behind the loss per impl."""
    from microgradnorm.cli import pytorch_style_gpt as module
    model = module.GPT(module.GPTConfig(n_layer=1, n_head=2, n_embd=32, block_size=16,
                                        vocab_size=50, dropout=0.0, bias=True, flash=True))
    rng = np.random.default_rng(0)
    idx, targets = rng.integers(0, 50, (4, 16)), rng.integers(0, 50, (4, 16))
    values = {}
    for impl in ("composite", "fused"):
        model.set_impl(impl)
        stats = mg.graph_stats(model(mg.tensor(idx), mg.tensor(targets))[1])
        values.update({f"{impl}_nodes": stats.nodes, f"{impl}_saved": f"{stats.saved_bytes:,}"})
    return values


def with_commas(values):
    return {k: f"{v:,}" for k, v in values.items()}


# (file, sentence with {placeholders}, function giving the values)
CLAIMS = [
    ("docs/porting.md", 'The captions read "composite: {composite_nodes} op nodes · '
     '{composite_saved} bytes saved for backward" and "fused: {fused_nodes} op nodes · '
     '{fused_saved} bytes saved for backward"', nanogpt_idiom_twin),
    ("README.md", "the composite graph ({composite_nodes} nodes, {composite_saved} B saved) "
     "and the fused node ({fused_nodes} node, {fused_saved} B)",
     lambda: with_commas(layer_norm_graphs())),
    ("README.md", 'impl="composite") # {composite_nodes} nodes:', layer_norm_graphs),
    ("docs/tutorial.md", "# {fused_nodes} vs {composite_nodes}", layer_norm_graphs_plain),
    ("docs/tutorial.md", "its composite graph has {r} nodes instead of {l} (with affine",
     lambda: {"r": rms_norm_graphs()["composite_nodes"],
              "l": layer_norm_graphs()["composite_nodes"]}),
    ("docs/norm_placement.md", "Its composite graph has {r} nodes where LayerNorm's has {l}",
     lambda: {"r": rms_norm_graphs()["composite_nodes"],
              "l": layer_norm_graphs()["composite_nodes"]}),
    ("docs/visualizer.md", "* **composite, {composite_nodes} nodes**", layer_norm_graphs),
    ("docs/precision.md", "the composite graph rounds after every primitive "
     "({composite_nodes} nodes for", layer_norm_graphs),
    ("docs/visualizer.md", "same graph has {composite_nodes} op nodes; with fused nodes (norms, "
     "attention, GELU, loss) {fused_nodes}.", tiny_gpt),
    ("docs/training.md", "Saving the tiny GPT's checkpoint ({parameters} parameters, AdamW "
     "state, {kb} kB)", lambda: {**tiny_gpt(), **checkpoint_size()}),
    ("docs/memory.md", "**d_model 32, 2 blocks** (the demo's tiny GPT):\n\n"
     "| module | composite | fused |\n|--------|----------:|------:|\n{rows}",
     lambda: {"rows": memory_table_rows(32, 2)}),
    ("docs/memory.md", "**d_model 64, 4 blocks**:\n\n"
     "| module | composite | fused |\n|--------|----------:|------:|\n{rows}",
     lambda: {"rows": memory_table_rows(64, 4)}),
    ("docs/memory.md", "**Normalization is {c_norm_share_32} % (d 32) and {c_norm_share_64} % "
     "(d 64) of the peak with composite norms, and {f_norm_share_32} % and {f_norm_share_64} % "
     "with fused ones.** Fusing removes three quarters of the norms' memory ({c_norms_32} → "
     "{f_norms_32} MB, {c_norms_64} → {f_norms_64} MB)", memory_prose),
    ("docs/memory.md", "The step as a whole shrinks by {shrink_32} % and {shrink_64} %",
     memory_prose),
    ("docs/memory.md", "**The feed-forward is the largest part of the composite step, and "
     "GELU most of it** ({mlp_low}–{mlp_high} %)", memory_prose),
    ("docs/memory.md", "Attention is the other large part ({attention_low}–{attention_high} %",
     memory_prose),
    ("docs/memory.md", "where this command measures peaks of {d32} MB and {d64} MB (composite)",
     lambda: {"d32": round(memory()["c_peak_bytes"] / MB),
              "d64": round(memory(64, 4)["c_peak_bytes"] / MB)}),
    ("docs/memory.md", "the peak is the forward's {c_forward_end} MB (composite) plus the "
     "gradients in flight", memory),
    ("docs/memory.md", "releases the activations at once ({f_backward_end} → {f_freed} MB, "
     "fused)", memory),
    ("docs/memory.md", 'The demo\'s "saved bytes" ({composite_saved_mb} MB composite, '
     "{fused_saved_mb} MB fused,", tiny_gpt),
    ("docs/memory.md", "the saved kind at the end of the forward ({c_forward_saved} MB and "
     "{f_forward_saved} MB here)", memory),
    ("notebooks/03_composite_vs_fused.ipynb", "composite: {composite_nodes} nodes, "
     "{composite_saved} bytes saved", layer_norm_graphs),
    ("notebooks/03_composite_vs_fused.ipynb", "fused : {fused_nodes} nodes, {fused_saved} "
     "bytes saved", layer_norm_graphs),
    ("notebooks/04_tiny_gpt.ipynb", "{composite_nodes} nodes, {composite_saved_mb} MB saved",
     tiny_gpt),
    ("notebooks/04_tiny_gpt.ipynb", "{fused_nodes} nodes, {fused_saved_mb} MB saved",
     tiny_gpt),
    ("notebooks/04_tiny_gpt.ipynb", "peak {f_peak} MB at event", memory),
]


def flat(text):
    return re.sub(r"\s+", " ", text).strip()


def file_text(path):
    """A markdown file as it is; a notebook as its markdown cells and committed outputs."""
    text = (ROOT / path).read_text()
    if not path.endswith(".ipynb"):
        return text
    parts = []
    for cell in json.loads(text)["cells"]:
        if cell["cell_type"] == "markdown":
            parts.append("".join(cell["source"]))
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", [])))
            parts.append("".join(output.get("data", {}).get("text/plain", [])))
    return "\n".join(parts)


@pytest.mark.parametrize("path, sentence, values", CLAIMS,
                         ids=[f"{c[0]}:{c[1][:40]}" for c in CLAIMS])
def test_the_number_quoted_is_the_number_computed(path, sentence, values):
    expected = flat(sentence.format(**values()))
    assert expected in flat(file_text(path)), f"{path} should say: {expected}"
