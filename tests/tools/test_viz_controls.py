"""Every character a name may hold is drawn: the 32 C0 controls, DEL, C1 controls and
other characters XML forbids are shown as their code, never passed to Graphviz."""

import shutil

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm import viz
from microgradnorm.autograd import module_scope

CONTROLS = [chr(c) for c in range(32)] + ["\x7f", "\x85", "\x9b", "\ud800", "\ufffe", "\uffff"]


def graph_with_names(name):
    x = mg.tensor(np.ones(3), requires_grad=True)
    x.name = f"w{name}[0m"
    with module_scope(f"blk{name}.a"):
        y = x * 2.0
    y.name = f"out{name}"
    return viz.draw(y, show_saved=True, cluster=True, title=f"t{name}")


@pytest.mark.parametrize("char", CONTROLS, ids=[f"U+{ord(c):04X}" for c in CONTROLS])
def test_control_characters_are_escaped_in_the_source(char):
    source = graph_with_names(char).source
    if char in "\r\n\t":          # newlines become spaces; a tab is valid XML
        return
    assert char not in source
    assert f"\\\\x{ord(char):02x}" in source or f"\\\\u{ord(char):04x}" in source


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")
def test_all_control_characters_render_with_dot():
    # One graph with every character at once: dot must accept it (a syntax error raised
    # before the fix for "\x1b" and "\x00").
    names = "".join(CONTROLS[:33]) + "\x85"
    svg = graph_with_names(names).pipe(format="svg").decode("utf-8")
    assert "\\x1b" in svg and "\\x00" in svg and "\\x7f" in svg
