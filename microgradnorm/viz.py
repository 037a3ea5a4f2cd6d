"""The graph visualizer: the backward graph behind a tensor, drawn with Graphviz.

``draw(root)`` draws one graph; ``compare(norm, shape)`` puts the composite and the fused
graph of one norm side by side. Labels are HTML-like, built from escaped text, so no name
can break the DOT source. How to read the pictures: docs/visualizer.md.
"""

import dataclasses
import html
import shutil
from pathlib import Path

import numpy as np

from .autograd import topological_order
from .backend import memory_owner
from .capture import Captured
from .checks.comparison import make_leaves
from .checks.stats import graph_stats, saved_bytes
from .fused import FusedFunction
from .norms import SPECS, lookup
from .tensor import Tensor

__all__ = ["FORMATS", "INSTALL_HINT", "TwinStats", "compare", "dot_available", "draw",
           "render"]

FORMATS = ("svg", "png")

_STYLE = {
    "op": dict(shape="box", style="rounded,filled", fillcolor="#dbe8f6", color="#5b7fa8"),
    "fused": dict(shape="box", style="rounded,filled,bold", fillcolor="#c9ecc9",
                  color="#3a8a3a"),
    "leaf": dict(shape="box", style="filled", fillcolor="#fff2c2", color="#b39b3b"),
    "root": dict(shape="box", style="filled,bold", fillcolor="#f9c289", color="#b3621b",
                 penwidth="2"),
    "saved": dict(shape="box", style="rounded,filled,dashed", fillcolor="#fde8d7",
                  color="#c98b5b", fontsize="10"),
    "folded": dict(shape="box3d", style="filled", fillcolor="#e6e6e6", color="#666666"),
}
_SAVED_EDGE = dict(style="dashed", color="#c98b5b", arrowhead="none")


def _graphviz():
    try:
        import graphviz
    except ImportError as error:           # a dependency; this only happens if removed
        raise RuntimeError("the visualizer needs the graphviz package: pip install graphviz"
                           ) from error
    return graphviz


def dot_available():
    """True when Graphviz's ``dot`` program, which renders SVG and PNG, is on the PATH."""
    return shutil.which("dot") is not None


def draw(root, show_saved=False, cluster=False, collapse=None, title=None):
    """Draw the backward graph behind ``root``.

    Args:
        root: a Tensor, or a tuple of Tensors drawn as one graph; or a captured step
            (``mg.capture``): the graph its tape recorded.
        show_saved: draw each buffer saved for backward, dashed, once.
        cluster: box the nodes of each module (``blocks.0.attn``) in a labelled cluster.
        collapse: module names (``"ln1"`` folds every ``blocks.N.ln1``) and/or ``"norms"``
            (each composite norm call) to fold into one grey box each.

    Returns:
        a ``graphviz.Digraph``: ``.source`` is the DOT text, ``.render(...)`` draws it.

    Example:
        >>> y = F.layer_norm(x, 8, w, b, impl="composite")
        >>> viz.draw(y, show_saved=True).render("ln", format="svg", cleanup=True)
    """
    dot = _new_digraph(title)
    _GraphDrawing(_as_roots(root), "", show_saved, cluster, _collapse_items(collapse)).emit(dot)
    return dot


def compare(norm, shape=(2, 4, 8), dtype="float64", show_saved=True, affine=True, seed=0,
            collapse=None):
    """The composite and the fused backward graph of ``norm`` side by side, on the same
    inputs, each captioned with its op nodes and saved bytes.

    Args:
        norm: a name in ``norms.SPECS`` (a norm, softmax, cross_entropy, attention) or an
            alias; or a function ``run(impl)`` returning the output Tensor(s) computed with
            ``impl`` (a model's loss after ``model.set_impl(impl)``), titled by its name.
        shape, dtype, affine, seed: as in ``mg.compare`` (a name only).
        collapse: as in ``draw``: modules and/or ``"norms"`` folded into one box each.

    Returns:
        a ``graphviz.Digraph``; its ``twin`` attribute holds the ``TwinStats``.

    Example:
        >>> twin = viz.compare("layer_norm", (2, 4, 8))
        >>> twin.render("layer_norm_twin", format="png", cleanup=True)   # no DOT file left
    """
    if callable(norm):
        run, name, shape, dtype = norm, norm.__name__, None, None
        title = f"{name}  (composite | fused)"
    else:
        spec = lookup(norm, "viz.compare: norm", SPECS)
        arrays = spec.make_inputs(shape, dtype, affine, seed)
        run, name, shape, dtype = (lambda impl: _run_spec(spec, arrays, impl)), spec.name, \
            tuple(shape), str(np.dtype(dtype))
        title = f"{spec.title} ({name})  shape={shape}  dtype={dtype}  (composite | fused)"
    dot = _new_digraph(title)
    stats = {}
    for impl in ("composite", "fused"):
        outputs = _as_roots(run(impl))
        stats[impl] = graph_stats(*outputs)
        caption = (f"{impl}: {_plural(stats[impl].nodes, 'op node')} · "
                   f"{stats[impl].saved_bytes:,} bytes saved for backward")
        with dot.subgraph(name=f"cluster_{impl}") as side:
            side.attr(label=_html(_bold(caption)), style="rounded", color="#999999",
                      fontsize="16")
            _GraphDrawing(outputs, f"{impl}_", show_saved, False,
                          _collapse_items(collapse)).emit(side)
    dot.twin = TwinStats(name, shape, dtype, stats["composite"], stats["fused"])
    return dot


def _run_spec(spec, arrays, impl):
    # one side of a norm's twin: named leaves in, named outputs out
    tensors = make_leaves(spec, arrays)
    for name, tensor in tensors.items():
        tensor.name = name
    outputs = spec.run(tensors, impl, spec.running_stats(arrays))
    for out, name in zip(outputs, spec.outputs):
        out.name = name
    return outputs


@dataclasses.dataclass(frozen=True)
class TwinStats:
    """What the two captions of a twin graph say: ``graph_stats`` of each side."""

    norm: str
    shape: tuple
    dtype: str
    composite: object
    fused: object


def render(dot, directory, name, formats=FORMATS):
    """Write ``name.dot`` and, when Graphviz's ``dot`` is installed, ``name.<format>`` for
    each format into ``directory``. Returns the paths written (the DOT source first)."""
    formats = (formats,) if isinstance(formats, str) else tuple(formats)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"render: formats must be some of {FORMATS}, got {unknown}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f"{name}.dot"
    source.write_text(dot.source)
    written = [source]
    if dot_available():
        for fmt in formats:
            written.append(Path(dot.render(source, format=fmt, outfile=directory /
                                           f"{name}.{fmt}", quiet=True)))
    return written


INSTALL_HINT = ("Graphviz's `dot` was not found, so only .dot sources were written; install "
                "it (Debian/Ubuntu: apt-get install graphviz, macOS: brew install graphviz) "
                "to get SVG and PNG.")


# ----- the drawing -------------------------------------------------------------------------
class _GraphDrawing:
    """The nodes behind ``roots`` as DOT statements, ids starting with ``prefix``. Edges go
    after all nodes: one naming a node before its cluster declared it would put it outside."""

    def __init__(self, roots, prefix, show_saved, cluster, collapse):
        self.roots, self.prefix = roots, prefix
        self.show_saved, self.cluster = show_saved, cluster
        self.order = topological_order([r.grad_fn for r in roots if r.grad_fn is not None])
        self.op_ids = {id(node): f"{prefix}op{i}" for i, node in enumerate(self.order)}
        self.folds = _fold_keys(self.order, collapse)
        self.box_ids = {key: f"{prefix}fold{i}"
                        for i, key in enumerate(dict.fromkeys(self.folds.values()))}
        self.leaf_ids = {}
        self.nodes = []                   # (module path, id, label, style)
        self.edges = {}                   # (source, target) -> style; ordered, no repeats

    def emit(self, graph):
        folded_leaves = self._folded_leaves()
        self._add_folded_boxes(folded_leaves)
        self._add_ops_and_edges(folded_leaves)
        self._add_roots()
        by_path = {}
        for path, node_id, label, style in self.nodes:
            by_path.setdefault(path if self.cluster else "", []).append((node_id, label, style))
        _emit_clusters(graph, by_path, "", self.prefix)
        for (source, target), style in self.edges.items():
            graph.edge(source, target, **style)

    # Each op node either stands for itself or, when folded, for its box.
    def _target(self, node):
        key = self.folds.get(id(node))
        return self.op_ids[id(node)] if key is None else self.box_ids[key]

    def _members(self):
        members = {}
        for node in self.order:
            key = self.folds.get(id(node))
            if key is not None:
                members.setdefault(key, []).append(node)
        return members

    def _folded_leaves(self):
        # {id(leaf): box key}: leaves named inside a folded module that feed only its box
        consumers, leaves = {}, {}
        for node in self.order:
            for t in node.inputs:
                if t is not None and t.grad_fn is None and t.requires_grad:
                    consumers.setdefault(id(t), set()).add(self.folds.get(id(node), node))
                    leaves[id(t)] = t
        paths = {(kind, what): what if kind == "module" else nodes[0].module
                 for (kind, what), nodes in self._members().items()}
        folded = {}
        for key_id, used_by in consumers.items():
            (only,) = used_by if len(used_by) == 1 else (None,)
            name = leaves[key_id].name or ""
            if isinstance(only, tuple) and paths[only] and name.startswith(paths[only] + "."):
                folded[key_id] = only
        return folded

    def _add_folded_boxes(self, folded_leaves):
        for key, nodes in self._members().items():
            kind, what = key
            params = sum(1 for k in folded_leaves.values() if k == key)
            head = f"{what[0]} (composite)" if kind == "group" else what
            details = [_plural(len(nodes), "op node")]
            details += [_plural(params, "parameter")] if params else []
            details += [f"{saved_bytes(nodes):,} B saved", "folded"]
            label = _html(_bold(head) + _small(" · ".join(details)))
            path = nodes[0].module if kind == "group" else _parent(what)
            self.nodes.append((path, self.box_ids[key], label, _STYLE["folded"]))

    def _add_ops_and_edges(self, folded_leaves):
        saved_drawn = set()
        named = self._tensor_names()
        for node in self.order:
            target = self._target(node)
            if self.folds.get(id(node)) is None:
                style = "fused" if _is_fused(node) else "op"
                self.nodes.append((node.module, target, _op_label(node), _STYLE[style]))
                if self.show_saved:
                    self._add_saved(node, target, saved_drawn, named)
            for tensor in node.inputs:
                if tensor is None or id(tensor) in folded_leaves:
                    continue
                source = self._source(tensor)
                if source is not None and source != target:
                    self.edges.setdefault((source, target), {})

    def _source(self, tensor):
        if tensor.grad_fn is not None:
            return self._target(tensor.grad_fn)
        if not tensor.requires_grad:
            return None                   # constants (eps, running stats) are not drawn
        if id(tensor) not in self.leaf_ids:
            leaf_id = self.leaf_ids[id(tensor)] = f"{self.prefix}leaf{len(self.leaf_ids)}"
            self.nodes.append((_parent(tensor.name or ""), leaf_id,
                               _tensor_label(tensor, "leaf"), _STYLE["leaf"]))
        return self.leaf_ids[id(tensor)]

    def _add_saved(self, node, target, drawn, named):
        owners = {}                          # an op that saves one buffer twice: one line
        for name, array in node.named_saved_arrays():
            owners.setdefault(id(memory_owner(array)), (memory_owner(array), name))
        for owner, saved_name in owners.values():
            saved_id = f"{self.prefix}saved{id(owner)}"
            if saved_id not in drawn:
                drawn.add(saved_id)
                name = named.get(id(owner), saved_name)   # the tensor's name, else the op's
                what = f"saved: {name}" if name else "saved"
                if name in ("mean", "rstd"):     # a fused norm's statistics, not x-sized
                    what += f" per {node.function.statistics_of}"
                label = _html(_escape(what) + _small(
                    f"{_meta(owner.shape, owner.dtype)} · {owner.nbytes:,} B"))
                self.nodes.append((node.module, saved_id, label, _STYLE["saved"]))
            self.edges.setdefault((saved_id, target), _SAVED_EDGE)

    def _add_roots(self):
        for i, root in enumerate(self.roots):
            root_id = f"{self.prefix}root{i}"
            self.nodes.append(("", root_id, _tensor_label(root, "output"), _STYLE["root"]))
            if root.grad_fn is not None:
                self.edges.setdefault((self._target(root.grad_fn), root_id), {})

    def _tensor_names(self):
        # A saved buffer's name when a tensor holds it: a leaf's name or "<Op> output";
        # others (a fused node's mean, rstd) take the op's ``saved_names``.
        names = {}
        for t in [t for node in self.order for t in node.inputs] + list(self.roots):
            if t is not None and t._array is not None:        # a freed node keeps no data
                what = t.name or (f"{t.grad_fn.name} output" if t.grad_fn else None)
                if what:
                    names.setdefault(id(memory_owner(t._array)), what)
        return names


def _emit_clusters(graph, by_path, path, prefix):
    for node_id, label, style in by_path.get(path, ()):
        graph.node(node_id, label, **style)
    for child in _child_paths(by_path, path):
        with graph.subgraph(name=f"cluster_{prefix}{_cluster_name(child)}") as sub:
            sub.attr(label=_html(_escape(child)), style="rounded,dashed", color="#8c8c8c",
                     fontsize="12", labeljust="l")
            _emit_clusters(sub, by_path, child, prefix)


def _child_paths(paths, path):
    # the module paths one level below ``path`` on the way to each of ``paths``
    children = set()
    for p in paths:
        if p != path and (path == "" or p.startswith(path + ".")):
            head = (p[len(path) + 1:] if path else p).split(".", 1)[0]
            children.add(f"{path}.{head}" if path else head)
    return sorted(children)


def _cluster_name(path):
    # A DOT id made of the path's characters that are safe in one; the label shows the path.
    return "".join(c if c.isalnum() else f"_{ord(c):x}_" for c in path)


def _parent(path):
    return path.rsplit(".", 1)[0] if "." in path else ""


# ----- folding -----------------------------------------------------------------------------
def _collapse_items(collapse):
    if collapse is None:
        return ()
    try:
        items = (collapse,) if isinstance(collapse, str) else tuple(collapse)
    except TypeError:
        items = (collapse,)                  # not iterable: refused just below
    for item in items:
        if not isinstance(item, str) or not item:
            raise TypeError(f"draw: collapse must be a module name, a list of them or "
                            f"'norms', got {collapse!r}")
    return items


def _fold_keys(order, collapse):
    """{id(node): ("module", path) | ("group", (name, call))} for every node that is folded.
    A module fold wins over a norm fold (it is the larger box)."""
    groups = {}
    if "norms" in collapse:
        for node in order:
            if node.group is not None:
                groups.setdefault(node.group, []).append(node)
    keys = {}
    for group, nodes in groups.items():
        if len(nodes) > 1:                # a one-node group is already one box
            for node in nodes:
                keys[id(node)] = ("group", group)
    patterns = [item for item in collapse if item != "norms"]
    for node in order:
        path = _matching_module(node.module, patterns)
        if path is not None:
            keys[id(node)] = ("module", path)
    return keys


def _matching_module(module, patterns):
    # The outermost prefix of ``module`` that names a pattern: "ln1" matches the prefix
    # "blocks.0.ln1" of "blocks.0.ln1.inner", and so does the full path "blocks.0.ln1".
    if not module or not patterns:
        return None
    parts = module.split(".")
    for end in range(1, len(parts) + 1):
        prefix = ".".join(parts[:end])
        if any(prefix == p or prefix.endswith("." + p) for p in patterns):
            return prefix
    return None


# ----- labels ------------------------------------------------------------------------------
def _tensor_label(tensor, default_name):
    return _html(_bold(tensor.name or default_name) + _small(_meta(tensor.shape, tensor.dtype)))


def _op_label(node):
    metas = node.outputs_meta or ()
    freed = _small("freed by backward()") if node._freed else ""
    return _html(_bold(node.name) + "".join(_small(_meta(*meta)) for meta in metas) + freed)


def _is_fused(node):
    return issubclass(node.function, FusedFunction)


def _meta(shape, dtype):
    return f"{tuple(shape)} {np.dtype(dtype)}"


def _escape(text):
    # Newlines become spaces (one line per field); characters XML forbids are shown as
    # their code (\x1b); a backslash is doubled, else Graphviz reads \N, \G... as escapes.
    text = str(text).replace("\r", " ").replace("\n", " ")
    text = "".join(_visible(c) for c in text)
    return html.escape(text, quote=True).replace("\\", "\\\\")


def _visible(c):
    code = ord(c)
    if (code < 0x20 and c != "\t") or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF \
            or code in (0xFFFE, 0xFFFF):
        return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
    return c


def _bold(text):
    return f"<B>{_escape(text)}</B>"


def _small(text):
    return f'<BR/><FONT POINT-SIZE="10">{_escape(text)}</FONT>'


def _html(markup):
    return f"<{markup}>"                  # the graphviz package passes <...> through as HTML


def _plural(n, word):
    return f"{n} {word}" + ("" if n == 1 else "s")


def _as_roots(root):
    if isinstance(root, Captured):
        return root.graph_roots()            # the recorded graph of a captured step
    roots = (root,) if isinstance(root, Tensor) else tuple(root)
    if not roots or not all(isinstance(r, Tensor) for r in roots):
        raise TypeError(f"draw: root must be a Tensor or a sequence of Tensors, got "
                        f"{type(root).__name__}")
    return roots


def _new_digraph(title):
    dot = _graphviz().Digraph(
        graph_attr=dict(rankdir="TB", fontname="Helvetica", nodesep="0.25", ranksep="0.35",
                        labelloc="t", fontsize="18"),
        node_attr=dict(fontname="Helvetica", fontsize="12", margin="0.12,0.05", height="0.3"),
        edge_attr=dict(color="#555555", arrowsize="0.7"))
    if title:
        dot.attr(label=_html(_bold(title)))
    return dot
