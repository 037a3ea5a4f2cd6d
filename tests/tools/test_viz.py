"""The visualizer: node accounting, folding, escaping, rendering, and the twin graphs."""

import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import microgradnorm as mg
import microgradnorm.functional as F
from microgradnorm import viz
from microgradnorm.autograd import module_scope
from microgradnorm.norms import NORMS, lookup

# CI installs Graphviz (.ci/run): there a missing `dot` is a failure, not a skip.
needs_dot = pytest.mark.skipif(not viz.dot_available() and os.environ.get("CI") != "true",
                               reason="Graphviz's dot is not installed")


def op_ids(source, prefix=""):
    return re.findall(rf"^\s*({prefix}op\d+) \[", source, flags=re.M)


def leaf(shape, name=None, seed=0):
    t = mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)
    t.name = name
    return t


def small_model(impl="composite"):
    """Two 'blocks' with module scopes, as nn modules record them: a norm and a linear map
    each, and a loss."""
    x = leaf((3, 4, 8), "x")
    h = x
    for i in range(2):
        w, b, proj = (leaf(s, f"blocks.{i}.{n}", seed=i + 1)
                      for s, n in (((8,), "ln1.weight"), ((8,), "ln1.bias"), ((8, 8), "proj")))
        with module_scope(f"blocks.{i}"):
            with module_scope(f"blocks.{i}.ln1"):
                normed = F.layer_norm(h, 8, w, b, impl=impl)
            h = h + (normed @ proj).relu()
    return (h * h).mean()


@pytest.mark.parametrize("impl", ["composite", "fused"])
@pytest.mark.parametrize("norm", NORMS)
def test_dot_has_one_op_node_per_graph_node(norm, impl):
    arrays = NORMS[norm].make_inputs((2, 3, 4))
    tensors = {name: mg.tensor(a, requires_grad=True) for name, a in arrays.items()}
    outputs = NORMS[norm].run(tensors, impl, NORMS[norm].running_stats(arrays))
    source = viz.draw(outputs, show_saved=True).source
    assert len(op_ids(source)) == mg.graph_stats(*outputs).nodes


def test_op_nodes_of_a_model_and_its_root_is_highlighted():
    loss = small_model()
    dot = viz.draw(loss)
    assert len(op_ids(dot.source)) == mg.graph_stats(loss).nodes
    root = re.search(r"^\s*root0 \[(.*)\]$", dot.source, flags=re.M).group(1)
    assert "#f9c289" in root and "() float64" in root


@pytest.mark.parametrize("norm", NORMS)
def test_twin_graph_node_counts_match_graph_stats(norm):
    dot = viz.compare(norm, (2, 3, 4))
    twin = dot.twin
    assert len(op_ids(dot.source, "composite_")) == twin.composite.nodes > 1
    assert len(op_ids(dot.source, "fused_")) == twin.fused.nodes == 1
    for side, stats in (("composite", twin.composite), ("fused", twin.fused)):
        word = "node" if stats.nodes == 1 else "nodes"
        assert f"{side}: {stats.nodes} op {word} · {stats.saved_bytes:,} bytes saved" \
            in dot.source
    assert twin.fused.saved_bytes <= twin.composite.saved_bytes
    saved_names = lookup(norm).fused.saved_names       # each saved array named by its node
    assert any(f"saved: {name}" in dot.source for name in saved_names)
    green = {op: "#c9ecc9" in attributes for op, attributes in
             re.findall(r"^\s*((?:composite|fused)_op\d+) \[(.*)\]$", dot.source, flags=re.M)}
    assert green and all(green[op] == op.startswith("fused_") for op in green)   # fused only


def test_twin_graph_takes_an_alias_and_names_the_norm():
    assert viz.compare("layernorm", (2, 3, 4)).twin.norm == "layer_norm"


def test_twin_graph_of_a_model_function_folds_and_counts_each_side():
    def two_blocks(impl):
        return small_model(impl)
    dot = viz.compare(two_blocks, collapse=["blocks.1"])
    twin = dot.twin
    assert twin.norm == "two_blocks" and "two_blocks  (composite | fused)" in dot.source
    for side, stats in (("composite", twin.composite), ("fused", twin.fused)):
        assert stats.nodes == mg.graph_stats(small_model(side)).nodes
        assert f"{side}: {stats.nodes} op nodes · {stats.saved_bytes:,} bytes saved" \
            in dot.source
    assert re.findall(r"^\s*(\w+)_fold\d+ \[", dot.source, flags=re.M) == ["composite", "fused"]


def test_saved_nodes_add_up_to_graph_stats_bytes():
    loss = small_model()
    source = viz.draw(loss, show_saved=True).source
    labels = re.findall(r"^\s*saved\d+ \[label=<(.*?)>\s", source, flags=re.M)
    shown = sum(int(b.replace(",", "")) for b in
                re.findall(r"· ([\d,]+) B</FONT>", "\n".join(labels)))
    assert labels and shown == mg.graph_stats(loss).saved_bytes


def test_leaves_carry_parameter_names_and_constants_are_not_drawn():
    source = viz.draw(small_model()).source
    for name in ("blocks.0.ln1.weight", "blocks.1.proj", ">x<"):
        assert name in source
    leaves = re.findall(r"^\s*(leaf\d+) \[", source, flags=re.M)
    assert len(leaves) == 7                     # x and three parameters per block


def test_collapse_norms_folds_each_composite_norm_call():
    loss = small_model("composite")
    full = mg.graph_stats(loss).nodes
    source = viz.draw(loss, collapse="norms").source
    boxes = re.findall(r"layer_norm \(composite\)</B><BR/><FONT POINT-SIZE=\"10\">(\d+) op "
                       r"nodes · 2 parameters · ([\d,]+) B saved", source)
    assert len(boxes) == 2                      # γ and β of blocks.N.ln1 go into the box
    hidden = sum(int(n) for n, _ in boxes)
    assert len(op_ids(source)) == full - hidden
    assert "ln1.weight" not in source and "blocks.0.proj" in source
    x = leaf((3, 4, 8))
    alone = mg.graph_stats(F.layer_norm(x, 8, leaf((8,)), leaf((8,)), impl="composite"))
    assert all(int(n) == alone.nodes for n, _ in boxes)
    assert all(int(b.replace(",", "")) == alone.saved_bytes for _, b in boxes)


def test_a_folded_box_keeps_inputs_and_parameters_used_elsewhere():
    x = leaf((2, 4), "x")
    w = leaf((4,), "w")
    y = F.rms_norm(x, 4, w, impl="composite") * w       # w also feeds the Mul outside
    source = viz.draw(y, collapse="norms").source
    assert ">x<" in source and ">w<" in source and "parameter" not in source


def test_collapse_by_module_name_folds_every_block_and_keeps_edges():
    loss = small_model("composite")
    dot = viz.draw(loss, collapse=["ln1"])
    boxes = re.findall(r"^\s*(fold\d+) \[label=<<B>(blocks\.\d\.ln1)</B>", dot.source, re.M)
    assert sorted(path for _, path in boxes) == ["blocks.0.ln1", "blocks.1.ln1"]
    for box, _ in boxes:                        # each box is fed and feeds something
        assert re.search(rf"-> {box}\b", dot.source)
        assert re.search(rf"^\s*{box} ->", dot.source, re.M)
    assert viz.draw(loss, collapse=["blocks.0", "blocks.1"]).source.count("box3d") == 2
    assert viz.draw(loss, collapse="blocks").source.count("box3d") == 1


def test_fused_norms_are_one_node_so_collapse_norms_changes_nothing():
    loss = small_model("fused")
    assert viz.draw(loss, collapse="norms").source == viz.draw(loss).source


def test_clusters_nest_by_module_path():
    source = viz.draw(small_model(), cluster=True).source
    for path in ("blocks", "blocks.0", "blocks.0.ln1", "blocks.1.ln1"):
        assert f"label=<{path}>" in source
    assert re.search(r"subgraph cluster_blocks_2e_0_2e_ln1 \{", source)
    # Edges come after every cluster, at the top level: an edge inside a cluster would pull
    # a node not declared yet into that cluster.
    edges = [line for line in source.splitlines() if " -> " in line]
    assert edges and all(line.startswith("\t") and not line.startswith("\t\t")
                         for line in edges)


def test_bad_arguments_are_clear():
    with pytest.raises(TypeError, match="root must be a Tensor"):
        viz.draw(np.ones(3))
    with pytest.raises(TypeError, match="collapse"):
        viz.draw(small_model(), collapse=[3])
    with pytest.raises(ValueError, match="norm must be one of"):
        viz.compare("groupnorm")


HOSTILE = ['quote " and \' marks', "<b>tags</b> & <<", "{braces}", "line\nbreak",
           'label="x"]; evil [shape=star', "back\\slash \\N \\G", "]>"]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_cannot_break_the_dot_source(name):
    x = leaf((2, 3), name)
    with module_scope(name):
        y = F.layer_norm(x, 3, impl="composite")
    y.name = name
    source = viz.draw(y, show_saved=True, cluster=True).source
    assert _escaped(name) in source
    # Outside the HTML labels (tags nest one level: <B>, <FONT>, <BR/>) nothing of the
    # name is left: it cannot have opened a statement or an attribute of its own.
    outside = re.sub(r"label=<(?:[^<>]|<[^<>]*>)*>", "label=LABEL", source)
    outside = re.sub(r"subgraph cluster_\w+ \{", "subgraph CLUSTER {", outside)  # ids: \w only
    for word in ("evil", "star", "tags", "braces", "slash", "quote", "break"):
        assert word not in outside
    assert outside.count("{") == outside.count("}")


def _escaped(name):
    return viz._escape(name)


@needs_dot
@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_render_to_valid_svg(name, tmp_path):
    x = leaf((2, 3), name)
    with module_scope(name):
        y = F.rms_norm(x, 3, impl="composite")
    y.name = name
    svg = viz.render(viz.draw(y, show_saved=True, cluster=True), tmp_path, "g", ("svg",))[1]
    root = ET.parse(svg).getroot()
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any(name.replace("\n", " ").strip() in t for t in texts), texts


@needs_dot
def test_renders_svg_and_png(tmp_path):
    written = viz.render(viz.compare("layernorm"), tmp_path, "twin")
    assert [p.name for p in written] == ["twin.dot", "twin.svg", "twin.png"]
    assert written[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ET.parse(written[1])                                      # well-formed XML


def test_render_without_dot_writes_the_source_only(tmp_path, monkeypatch):
    monkeypatch.setattr(viz, "dot_available", lambda: False)
    written = viz.render(viz.compare("rmsnorm"), tmp_path, "twin")
    assert [p.name for p in written] == ["twin.dot"]
    assert written[0].read_text().startswith("digraph")


def run_cli(*args, cwd, path=None):
    import sys
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}   # this checkout
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "microgradnorm", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@needs_dot
def test_demo_end_to_end(tmp_path):
    result = run_cli("demo", "--out", "out", "--repeat", "1", "--train-steps", "3",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    agree = re.search(r"loss curves agree: max \|composite - fused\| over 3 steps = (\S+)",
                      result.stdout)
    assert agree and float(agree.group(1)) <= 1e-8
    assert (out / "tiny_gpt_graph.svg").stat().st_size > 0
    for norm in NORMS:
        for ext in ("dot", "svg", "png"):
            assert (out / f"{norm}_twin.{ext}").stat().st_size > 0
        assert re.search(rf"^{norm}\s+output\s+\d+ / 1\s", result.stdout, re.M), norm
    report = (out / "report.md").read_text()
    assert all(f"]({norm}_twin.svg)" in report for norm in NORMS)
    assert "| norm | quantity |" in report and "](tiny_gpt_graph.svg)" in report
    precision = report.split("## Low precision: where composite and fused part")[1]
    assert "- layer_norm float16 'scale 300': composite" in precision
    assert "Low precision against float64" in result.stdout
    table = result.stdout.split("Training the tiny GPT")[0]
    diffs = [float(v) for v in re.findall(r"\s(\d\.\de[+-]\d\d)", table)]
    assert len(diffs) >= 25 and max(diffs) < 1e-7      # |f-c| ~1e-16, FD ~1e-9 in float64


def test_demo_without_graphviz_still_completes(tmp_path):
    result = run_cli("demo", "--out", "out", "--repeat", "1", "--train-steps", "2",
                     cwd=tmp_path, path="")
    assert result.returncode == 0, result.stderr
    assert "install" in result.stdout and "graphviz" in result.stdout
    out = tmp_path / "out"
    assert sorted(p.suffix for p in out.iterdir()) == [".dot"] * (len(NORMS) + 1) + [".md"]
    assert "layer_norm_twin.dot" in (out / "report.md").read_text()


@needs_dot
def test_graph_command_writes_the_requested_format(tmp_path):
    result = run_cli("graph", "--norm", "add_rms_norm", "--out", ".", "--format", "png",
                     cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "add_rms_norm_twin.png").read_bytes()[:4] == b"\x89PNG"
    assert not (tmp_path / "add_rms_norm_twin.svg").exists()


@needs_dot
def test_drawings_display_as_svg_in_a_notebook():
    """Jupyter shows what draw and compare return through _repr_mimebundle_ (graphviz's)."""
    x = mg.tensor(np.random.randn(2, 4), requires_grad=True)
    for dot in (viz.draw(F.layer_norm(x, 4, impl="composite")), viz.compare("rmsnorm")):
        svg = dot._repr_mimebundle_()["image/svg+xml"]
        assert ET.fromstring(svg).tag.endswith("svg")
