"""The kernels beside the norms against PyTorch's: GELU (exact and tanh), softmax and
log-softmax rows, causal attention and AdamW's update, each as the NumPy reference
(``kernels.reference``), the numba kernels (the default where numba imports) and PyTorch
on the same data, forward + backward, one thread each, in turns, by process CPU time.

    PYTHONPATH=. python benchmarks/activations.py              # every row, medians of 61
    PYTHONPATH=. python benchmarks/activations.py --quick      # small shapes, few repeats

Attention is timed twice: on contiguous (B, H, T, E) heads, and on the heads a model file
makes of one projection (``qkv.split(C, dim=2)``, ``view(B, T, H, E).transpose(1, 2)``, as
``nn.CausalSelfAttention`` and nanoGPT do), through the graph on both sides (split, views,
the attention node, backward), which is where a kernel that copies strided heads pays.
AdamW is one ``optimizer.step()`` over the parameters of ``nn.GPT`` at ``bench --train``'s
first size (the reference: ``reference.adam_update``, the NumPy formula in place).

Columns: reference, numba and PyTorch in ms (medians), then numba / PyTorch (below 1:
faster than PyTorch) and reference / numba.

PyTorch's float64 exact GELU runs about 6x faster in a process once a ``torch.optim`` step
has run (measured with torch 2.13: forward on (1024, 256) 4.8 ms before, 0.8 ms after; its
other kernels here do not move), so one step runs first: every row is timed in the state
a training loop is in.
"""

import argparse
import contextlib
import sys

import numpy as np

import microgradnorm as mg
from microgradnorm import kernels, nn, optim
from microgradnorm.cli import bench_train
from microgradnorm.cli.bench_harness import cpu_timer, machine_description, time_interleaved

SIZES = {"rows": (1024, 256), "softmax": (4096, 64), "heads": (16, 4, 64, 16)}
QUICK_SIZES = {"rows": (64, 32), "softmax": (64, 16), "heads": (2, 2, 16, 8)}


def _on(module, fn):
    """``fn`` run with the CPU kernels of ``module`` (the reference or numba's) selected: a
    whole graph or optimizer step, which picks its kernels itself."""
    name = "reference" if module is kernels.reference else "numba"

    def run():
        with kernels.cpu_kernels(name):
            return fn()
    return run


def gelu_cases(shape, dtype, rng):
    x = rng.standard_normal(shape).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    for approximate in ("none", "tanh"):
        def ours(module, approximate=approximate):
            return lambda: (module.gelu_forward(x, approximate),
                            module.gelu_backward(dy, x, approximate))
        yield (f"GELU {'exact' if approximate == 'none' else 'tanh'} {shape}",
               _pair(ours, lambda t, approximate=approximate: _torch_gelu(t, x, dy, approximate)))


def _torch_gelu(torch, x, dy, approximate):
    tx, tdy = torch.from_numpy(x), torch.from_numpy(dy)
    return lambda: (torch.nn.functional.gelu(tx, approximate=approximate),
                    torch.ops.aten.gelu_backward(tdy, tx, approximate=approximate))


def softmax_cases(shape, dtype, rng):
    x = rng.standard_normal(shape).astype(dtype)
    g = rng.standard_normal(shape).astype(dtype)
    for name, forward, backward, op in (
            ("softmax", "softmax_forward", "softmax_backward", "_softmax"),
            ("log-softmax", "log_softmax_forward", "log_softmax_backward", "_log_softmax")):
        def ours(module, forward=forward, backward=backward):
            def run():
                y = getattr(module, forward)(x, -1)
                return getattr(module, backward)(g, y, -1)
            return run

        def theirs(torch, op=op):
            tx, tg = torch.from_numpy(x), torch.from_numpy(g)
            backward_op = getattr(torch.ops.aten, op + "_backward_data")

            def run():
                y = getattr(torch.ops.aten, op)(tx, -1, False)
                return backward_op(tg, y, -1, tx.dtype)
            return run
        yield f"{name} rows {shape}", _pair(ours, theirs)


def attention_cases(shape, dtype, rng):
    B, H, T, E = shape
    C = H * E
    qkv = rng.standard_normal((B, T, 3 * C)).astype(dtype)
    heads = [np.ascontiguousarray(qkv[..., i * C:(i + 1) * C].reshape(B, T, H, E)
                                  .transpose(0, 2, 1, 3)) for i in range(3)]
    dout = rng.standard_normal((B, H, T, E)).astype(dtype)
    scale = 1 / np.sqrt(E)

    def contiguous(module):
        def run():
            out, lse = module.attention_forward(*heads, None, True, scale)
            return module.attention_backward(dout, *heads, out, lse, None, True, scale)
        return run

    def contiguous_torch(torch):
        tq, tk, tv = (torch.from_numpy(a).requires_grad_() for a in heads)
        tdout = torch.from_numpy(dout)

        def run():
            out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
            return torch.autograd.grad(out, (tq, tk, tv), tdout)
        return run
    yield f"causal attention {shape}", _pair(contiguous, contiguous_torch)

    def projection(lib, functional):
        x = lib.tensor(qkv, requires_grad=True)
        grad = lib.tensor(dout)

        def run():
            q, k, v = (t.view(B, T, H, E).transpose(1, 2) for t in x.split(C, dim=2))
            functional.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grad)
            x.grad = None
        return run

    def heads_of_one_projection(module):
        return _on(module, projection(mg, mg.nn.functional))
    yield (f"causal attention {shape}, heads of one projection",
           _pair(heads_of_one_projection, lambda torch: projection(torch, torch.nn.functional)))


def adamw_case(dtype, quick):
    sizes = bench_train.QUICK_SIZES[0] if quick else bench_train.TRAIN_SIZES[0]
    d_model, n_layers, context = sizes[:3]
    model = nn.GPT(64, context, d_model, 4, n_layers, dtype=dtype)
    params = list(model.parameters())
    rng = np.random.default_rng(0)
    for p in params:
        p.grad = mg.tensor(rng.standard_normal(p.shape).astype(dtype))

    def ours(module):
        return _on(module, optim.AdamW(params, lr=1e-3).step)

    def theirs(torch):
        tparams = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in params]
        for t, p in zip(tparams, params):
            t.grad = torch.from_numpy(p.grad.numpy())
        return torch.optim.AdamW(tparams, lr=1e-3).step
    count = sum(p.numel() for p in params)
    yield f"AdamW step, {len(params)} parameters, {count} values", _pair(ours, theirs)


def _pair(ours, theirs):
    """{"reference", "numba", "torch"} -> callable: ``ours(kernel module)`` for the first
    two (where numba imports), ``theirs(torch)`` for the third (where torch imports)."""
    cases = {"reference": ours(kernels.reference)}
    try:
        from microgradnorm.kernels import numba_cpu
    except (ImportError, RuntimeError):
        numba_cpu = None
    if numba_cpu is not None:
        cases["numba"] = ours(numba_cpu)
    if bench_train.torch_available():
        import torch
        cases["torch"] = theirs(torch)
    return cases


def rows(quick=False, repeat=None, dtypes=("float32", "float64")):
    """[(label, dtype, {impl: median seconds})] for every case."""
    if bench_train.torch_available():                   # the state of a training loop
        import torch
        parameter = torch.zeros(1, requires_grad=True)
        parameter.grad = torch.ones(1)
        torch.optim.AdamW([parameter]).step()
    sizes = QUICK_SIZES if quick else SIZES
    repeat = repeat or (3 if quick else 61)
    table = []
    for dtype in dtypes:
        rng = np.random.default_rng(0)
        cases = [*gelu_cases(sizes["rows"], dtype, rng),
                 *softmax_cases(sizes["softmax"], dtype, rng),
                 *attention_cases(sizes["heads"], dtype, rng), *adamw_case(dtype, quick)]
        for label, fns in cases:
            timings = time_interleaved(fns, repeat=repeat, warmup=2, timer=cpu_timer)
            table.append((label, dtype, {k: t.median for k, t in timings.items()}))
    return table


def format_rows(table):
    def ms(medians, impl):
        return f"{medians[impl] * 1e3:9.3f}" if impl in medians else f"{'-':>9}"

    def ratio(medians, top, bottom):
        if top in medians and bottom in medians:
            return f"{medians[top] / medians[bottom]:7.2f}"
        return f"{'-':>7}"
    width = max(len(label) for label, _, _ in table)
    lines = [f"{'case':{width}}  dtype      reference     numba   PyTorch  "
             "numba/PyTorch  reference/numba"]
    for label, dtype, medians in table:
        lines.append(f"{label:{width}}  {dtype:8} {ms(medians, 'reference')} "
                     f"{ms(medians, 'numba')} {ms(medians, 'torch')}  "
                     f"{ratio(medians, 'numba', 'torch'):>13}  "
                     f"{ratio(medians, 'reference', 'numba'):>15}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small shapes, 3 repeats")
    parser.add_argument("--repeat", type=int, help="timed calls per case (default 61)")
    args = parser.parse_args(argv)
    with bench_train.single_thread() as threads, contextlib.redirect_stdout(sys.stderr):
        table = rows(args.quick, args.repeat)
        machine = machine_description() + [threads]
    print("benchmarks/activations.py: ms per forward + backward (AdamW: per step), medians "
          "of process CPU time")
    for line in machine:
        print("  " + line)
    print(format_rows(table))


if __name__ == "__main__":
    main()
