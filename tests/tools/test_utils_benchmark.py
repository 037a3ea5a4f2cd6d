"""utils.benchmark against torch.utils.benchmark: Measurement's statistics and text and
Compare's table for the same raw times, and Timer's runs."""

import numpy as np
import pytest

import microgradnorm as mg
from microgradnorm.utils import benchmark as mb

torch = pytest.importorskip("torch")
import torch.utils.benchmark as tb  # noqa: E402


def without_address(text):
    return text.split("\n", 1)[1]


SPECS = [dict(stmt="x + 1", setup="x = 1", label="L", sub_label="s", description="d",
              num_threads=2),
         dict(stmt="y = x * 2\ny.sum()", setup="pass"),
         dict(stmt="f(x)", setup="a = 1\nb = 2", sub_label="small", label=None)]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 9, 40])
@pytest.mark.parametrize("spread", [0.01, 0.15, 0.6])
def test_measurement_statistics_and_text_are_torchs(n, spread):
    rng = np.random.default_rng(int(n * 100 + spread * 10))
    for kw in SPECS:
        raw = list(rng.uniform(1, 1 + spread, n) * 10 ** rng.uniform(-8, 1))
        ours = mb.Measurement(100, raw, mb.TaskSpec(**kw))
        theirs = tb.Measurement(100, raw, tb.TaskSpec(**kw))
        assert without_address(repr(ours)) == without_address(repr(theirs))
        for name in ("median", "iqr", "significant_figures", "has_warnings", "times",
                     "number_per_run", "raw_times", "title", "stmt", "num_threads",
                     "as_row_name", "env"):
            assert getattr(ours, name) == getattr(theirs, name), name
        assert ours.mean == pytest.approx(theirs.mean, rel=1e-15)
        assert ours.meets_confidence(0.2) == theirs.meets_confidence(0.2)


def test_helpers_are_torchs():
    for t in (3e-10, 2.5e-8, 1.2e-6, 4.2e-4, 0.5, 12.0):
        assert mb.select_unit(t) == tb.select_unit(t)
    # a power of 1000: float32(1e-6)'s log10 is -6 rounded once, as torch's float32 log10
    # gives it on an Intel AVX-512 CPU (NumPy's float32 log10: an ulp below, so "ns")
    assert mb.select_unit(1e-6) == ("us", 1e-6) and mb.select_unit(1e-3) == ("ms", 1e-3)
    for x, n in ((123.456, 2), (0.0123456, 3), (98765.0, 1), (1.5, 4)):
        assert mb.trim_sigfig(x, n) == tb.trim_sigfig(x, n)
    assert mb.unit_to_english("us") == tb.unit_to_english("us")
    assert mb.ordered_unique([3, 1, 3, 2, 1]) == [3, 1, 2]


def measurements(lib, rng):
    out = []
    for threads in (1, 4):
        for description in ("fused", "composite", "reference"):
            for row in ("n=16", "n=1024"):
                raw = list(rng.uniform(1, 1.3, 5) * 10 ** rng.uniform(-6, -4))
                spec = lib.TaskSpec(stmt="f(x)", setup="", label="norms", sub_label=row,
                                    description=description, num_threads=threads)
                out.append(lib.Measurement(10, raw, spec))
    raw = [2e-3, 2.1e-3, 2.05e-3]
    out.append(lib.Measurement(1, raw, lib.TaskSpec("g()", "", label="other",
                                                    description="once")))
    return out


@pytest.mark.parametrize("options", [(), ("trim_significant_figures",), ("colorize",),
                                     ("highlight_warnings", "trim_significant_figures")])
def test_compare_table_is_torchs(options, capsys):
    ours = mb.Compare(measurements(mb, np.random.default_rng(5)))
    theirs = tb.Compare(measurements(tb, np.random.default_rng(5)))
    for option in options:
        getattr(ours, option)()
        getattr(theirs, option)()
    assert str(ours) == str(theirs)
    ours.print()
    assert capsys.readouterr().out == str(theirs) + "\n"
    with pytest.raises(ValueError, match="Measurement"):
        ours.extend_results([1.0])


def test_timer_runs_the_statement():
    calls = []
    timer = mb.Timer("f()", setup="calls.append('setup')",
                     globals={"f": lambda: calls.append(1), "calls": calls},
                     label="calls", description="append")
    m = timer.timeit(50)
    assert isinstance(m, mb.Measurement) and m.number_per_run == 50 and len(m.raw_times) == 1
    assert calls.count(1) == 50 + 2 and calls.count("setup") == 2    # warm-up, then 50
    assert m.median > 0 and m.label == "calls" and m.description == "append"


def test_autoranges_meet_their_bounds():
    a = mg.ones(8, 8)
    timer = mb.Timer("a @ a", globals={"a": a}, sub_label="8x8", num_threads=1)
    blocked = timer.blocked_autorange(min_run_time=0.02)
    assert sum(blocked.raw_times) >= 0.02 and blocked.number_per_run >= 1
    ticks = []
    adaptive = timer.adaptive_autorange(threshold=0.5, max_run_time=0.3,
                                        callback=lambda n, t: ticks.append(n))
    assert len(adaptive.raw_times) == len(ticks) >= 1
    assert sum(adaptive.raw_times) <= 0.3 + 4 * max(adaptive.raw_times)
    text = repr(adaptive)
    assert "runs per measurement" in text or "runs ," in text
    # the statement sees the package as `torch`, as torch's Timer puts torch in globals
    assert mb.Timer("torch.ones(2).sum()").timeit(3).median > 0


def test_refusals():
    with pytest.raises(NotImplementedError):
        mb.Timer("x", language="c++")
    with pytest.raises(NotImplementedError):
        mb.Timer("pass").autorange()
    with pytest.raises(AttributeError):
        _ = mb.Timer("pass").timeit(1).no_such_field


def test_namespace():
    import microgradnorm.utils.benchmark as by_path
    assert by_path is mb is mg.utils.benchmark
