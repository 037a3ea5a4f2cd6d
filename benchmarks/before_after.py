"""An older version of the code against this one and PyTorch, in one process, in turns:
the engine's cost per node, the tiny GPT's training step, the fused LayerNorm and RMSNorm
kernels. NumPy's BLAS and PyTorch run on one thread each.

The older version is imported side by side under another package name:

    git archive 0936320 microgradnorm | tar -x -C /tmp/old
    mv /tmp/old/microgradnorm /tmp/old/microgradnorm_before
    PYTHONPATH=. python benchmarks/before_after.py --before /tmp/old [--keep-freed-memory]

``--part engine|train|norms`` runs one table. Medians of ``--repeat`` calls (the engine:
101). Run it on a quiet machine; on a shared one, compare within one run only, or time by
the process's CPU time (``--clock cpu``).
"""

import argparse
import importlib
import platform
import sys

import numpy as np

import microgradnorm as after
from microgradnorm import backend
from microgradnorm.cli import bench_cuda, bench_train
from microgradnorm.cli.bench_harness import cpu_timer, time_interleaved
from microgradnorm.norms import NORMS

SHAPES = ((4096, 1024), (1024, 4096), (16384, 256))


def gpt_step(package, impl, d_model, n_layers, context, batch, vocab=64, heads=4, seed=0):
    """One training step of ``package``'s nn.GPT (float32), as ``bench --train`` times it."""
    np.random.seed(seed)
    model = package.nn.GPT(vocab, context, d_model, heads, n_layers, impl=impl,
                           dtype="float32")
    optimizer = package.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = np.random.default_rng(seed).integers(0, vocab, (batch, context + 1))
    cross_entropy = package.functional.cross_entropy

    def step():
        loss = cross_entropy(model(tokens[:, :-1]).reshape(-1, vocab), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return step


def chain(make_tensor, tanh, layers=50, width=4, batch=2):
    """``bench.engine_overhead``'s chain, h = tanh(h @ W + b), for either engine."""
    rng = np.random.default_rng(0)
    x = make_tensor(rng.standard_normal((batch, width)), False)
    params = [(make_tensor(rng.standard_normal((width, width)) / width, True),
               make_tensor(rng.standard_normal(width), True)) for _ in range(layers)]

    def step():
        h = x
        for weight, bias in params:
            h = tanh(h @ weight + bias)
        h.sum().backward()
    return step


def engine_table(before, torch, timer):
    steps = {
        "before": chain(lambda a, r: before.Tensor(a, requires_grad=r), lambda h: h.tanh()),
        "after": chain(lambda a, r: after.Tensor(a, requires_grad=r), lambda h: h.tanh()),
        "torch": chain(lambda a, r: torch.tensor(a, requires_grad=r), torch.tanh)}
    timings = time_interleaved(steps, repeat=101, warmup=5, timer=timer)
    t = {k: v.median for k, v in timings.items()}
    nodes = 151
    print("engine, us per node: " + ", ".join(f"{k} {v / nodes * 1e6:.2f}" for k, v in t.items())
          + f"; after/before {t['after'] / t['before']:.2f}, after/torch "
          f"{t['after'] / t['torch']:.2f}, before/torch {t['before'] / t['torch']:.2f}")


def train_table(before, repeat, timer):
    for d_model, n_layers, context, batch in bench_train.TRAIN_SIZES:
        size = (d_model, n_layers, context, batch)
        steps = {f"{name} {impl}": gpt_step(package, impl, *size)
                 for name, package in (("before", before), ("after", after))
                 for impl in ("fused", "composite")}
        steps["torch"] = bench_train._torch_step(64, context, d_model, 4, n_layers, batch,
                                                 "float32", 0)
        timings = time_interleaved(steps, repeat=repeat, warmup=2, timer=timer)
        t = {k: v.median for k, v in timings.items()}
        print(f"step d_model {d_model}, {n_layers} layers, context {context}, batch {batch}: "
              + ", ".join(f"{k} {v * 1e3:.1f} ms ({v / t['torch']:.2f}x torch)"
                          for k, v in t.items()))


def norm_cases(reference, norm, arrays):
    """(forward, forward + backward) of one reference-kernel module."""
    forward, backward = bench_cuda.kernel_calls(norm, arrays, reference)
    return forward, lambda: (forward(), backward())


def torch_cases(torch, norm, arrays):
    import torch.nn.functional as TF

    tensors = {name: torch.tensor(a, requires_grad=True) for name, a in arrays.items()
               if name != "dy"}
    tdy = torch.tensor(arrays["dy"])

    def forward():
        return NORMS[norm].run_torch(TF, tensors)

    def step():
        return torch.autograd.grad(forward(), list(tensors.values()), [tdy])
    return forward, step


def default_cpu_kernels(package):
    """The kernels ``package`` runs NumPy arrays on by default: what its
    ``kernels.for_array`` gives (numba's where numba imports, in versions that choose), else
    ``kernels.blocked``, or before that module ``kernels.reference`` (then the same code)."""
    kernels = importlib.import_module(package.__name__ + ".kernels")
    if hasattr(kernels, "default_cpu_kernels"):
        return kernels.for_array(np.empty(0))
    try:
        return importlib.import_module(package.__name__ + ".kernels.blocked")
    except ImportError:
        return importlib.import_module(package.__name__ + ".kernels.reference")


def norms_table(before, torch, repeat, timer):
    ref_after, ref_before = default_cpu_kernels(after), default_cpu_kernels(before)
    for norm in bench_cuda.GPU_NORMS:                 # the row norms with their own kernels
        for dtype in ("float32", "float64"):
            for shape in SHAPES:
                rng = np.random.default_rng(0)
                x, dy = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
                w, b = (rng.standard_normal(shape[1]).astype(dtype) for _ in range(2))
                arrays = {"x": x, "weight": w, "dy": dy}
                if "bias" in NORMS[norm].params:
                    arrays["bias"] = b
                cases = {"before": norm_cases(ref_before, norm, arrays),
                         "after": norm_cases(ref_after, norm, arrays),
                         "torch": torch_cases(torch, norm, arrays)}
                copy = np.empty_like(x)
                for i, phase in enumerate(("forward", "forward+backward")):
                    fns = {k: v[i] for k, v in cases.items()}
                    fns["copy"] = lambda dst=copy, src=x: np.copyto(dst, src)
                    ms = {k: v.median * 1e3
                          for k, v in time_interleaved(fns, repeat=repeat, warmup=1,
                                                            timer=timer).items()}
                    arrays = 2 if phase == "forward" else 5     # full-size reads + writes
                    print(f"{norm:10} {shape[0]:>5}x{shape[1]:<5} {dtype} {phase:16} before "
                          f"{ms['before']:7.2f} after {ms['after']:7.2f} torch {ms['torch']:7.2f}"
                          f" ms | after/torch {ms['after'] / ms['torch']:.2f}, before/torch "
                          f"{ms['before'] / ms['torch']:.2f} | after "
                          f"{arrays * x.nbytes / ms['after'] / 1e6:.1f} GB/s, copy "
                          f"{2 * x.nbytes / ms['copy'] / 1e6:.1f} GB/s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True,
                        help="directory holding the package microgradnorm_before")
    parser.add_argument("--keep-freed-memory", action="store_true",
                        help="call backend.keep_freed_memory() first, as the command line does")
    parser.add_argument("--part", choices=("all", "engine", "train", "norms"), default="all")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="cpu: this process's CPU time per call (steadier under load)")
    args = parser.parse_args()
    sys.path.insert(0, args.before)
    before = importlib.import_module("microgradnorm_before")
    import torch

    if args.keep_freed_memory:
        backend.keep_freed_memory()
    timer = cpu_timer if args.clock == "cpu" else None
    with bench_train.single_thread() as threads:
        malloc = "freed memory kept" if args.keep_freed_memory else "defaults"
        print(f"# {args.clock} clock; malloc: {malloc}; "
              f"{threads}; python {platform.python_version()}, numpy {np.__version__}, "
              f"torch {torch.__version__}")
        if args.part in ("all", "engine"):
            engine_table(before, torch, timer)
        if args.part in ("all", "train"):
            train_table(before, args.repeat, timer)
        if args.part in ("all", "norms"):
            norms_table(before, torch, args.repeat, timer)


if __name__ == "__main__":
    main()
