"""Where a training step's time goes, here and in PyTorch: the model file of ``bench
--train`` (``pytorch_style_gpt.py``, nanoGPT's idiom) or ``nn.GPT``, one thread each.

    PYTHONPATH=. python benchmarks/step_profile.py [float32|float64] [file|gpt]

Ours: cProfile over 20 steps; the time inside each op's ``forward`` and ``backward``
(array work, by op), the optimizer's step, and the rest: the engine (recording, the
backward loop, freeing) and the model's own Python. PyTorch: its profiler's self CPU
time by aten op. Profilers slow both sides (ours more: cProfile hooks every Python call),
so compare the shares, and take the step times from ``bench --train``.
"""

import argparse
import cProfile
import collections
import pstats

from microgradnorm.autograd.function import Function
from microgradnorm.cli import bench_train

SIZES = (64, 64, 64, 4, 2, 16)     # vocab, context, d_model, heads, layers, batch: as bench
STEPS = 20


def op_methods():
    """{(file, first line): (op name, "forward" or "backward")} for every Function."""
    found, stack = {}, [Function]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        for phase in ("forward", "backward"):
            code = getattr(getattr(cls, phase), "__code__", None)
            if code is not None and phase in vars(cls):
                found[(code.co_filename, code.co_firstlineno)] = (cls.__name__, phase)
    return found


def ours(step):
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(STEPS):
        step()
    profile.disable()
    stats, methods = pstats.Stats(profile), op_methods()
    by_op, optimizer = collections.Counter(), 0.0
    for (file, line, name), (_, _, _, cumulative, _) in stats.stats.items():
        if (file, line) in methods:
            by_op[methods[file, line]] += cumulative
        elif name == "step" and "optim" in file:
            optimizer += cumulative
    total = stats.total_tt
    print(f"ours: {total / STEPS * 1e3:.1f} ms a step under cProfile")
    for (op, phase), seconds in by_op.most_common(14):
        print(f"  {op:28} {phase:8} {seconds / STEPS * 1e3:7.2f} ms "
              f"{100 * seconds / total:5.1f} %")
    arrays = sum(by_op.values())
    rest = total - arrays - optimizer
    print(f"  {'every op (array work)':37} {arrays / STEPS * 1e3:7.2f} ms "
          f"{100 * arrays / total:5.1f} %")
    print(f"  {'optimizer step':37} {optimizer / STEPS * 1e3:7.2f} ms "
          f"{100 * optimizer / total:5.1f} %")
    print(f"  {'engine and model Python':37} {rest / STEPS * 1e3:7.2f} ms "
          f"{100 * rest / total:5.1f} %")


def theirs(step):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(STEPS):
            step()
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    print(f"torch: {total / STEPS / 1e3:.1f} ms a step under its profiler")
    for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[:14]:
        print(f"  {e.key[:46]:46} {e.self_cpu_time_total / STEPS / 1e3:7.2f} ms "
              f"{100 * e.self_cpu_time_total / total:5.1f} %")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dtype", nargs="?", default="float32", choices=("float32", "float64"))
    parser.add_argument("model", nargs="?", default="file", choices=("file", "gpt"),
                        help="the model file of bench --train, or nn.GPT")
    arguments = parser.parse_args(argv)
    dtype, model = arguments.dtype, arguments.model
    with bench_train.single_thread() as threads:
        print(f"{model} {dtype}, sizes {SIZES}; {threads}")
        if model == "file":
            step = bench_train.model_file_step(False, *SIZES, dtype)
            torch_step = bench_train.model_file_step(True, *SIZES, dtype)
        else:
            step = bench_train.gpt_training_step("fused", *SIZES, dtype)[0]
            torch_step = bench_train._torch_step(*SIZES, dtype, 0)
        for _ in range(3):
            step(), torch_step()
        ours(step)
        if bench_train.torch_available():
            theirs(torch_step)


if __name__ == "__main__":
    main()
