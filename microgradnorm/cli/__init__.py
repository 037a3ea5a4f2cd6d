"""The programs built on the library: the ``microgradnorm`` command line, one module per
command, and their shared helpers. Nothing in the library imports from here.

    main.py         the entry point (``microgradnorm``, ``python -m microgradnorm``)
    common.py       argument types, the options several commands share, ``train_config``
    demo.py         ``demo``: every norm composite vs fused, twin graphs, report.md
    graph.py        ``graph``: one norm's twin graphs
    compare.py      ``compare``: one norm's table
    train.py        ``train``: the tiny GPT (the loop is ``microgradnorm.train``'s)
    memory.py       ``memory``: one training step's memory, composite vs fused
    precision.py    ``precision``: low precision against float64
    explain.py      ``explain``: claims about normalization as measured pictures
    bench.py        ``bench``: composite vs fused vs PyTorch per norm, on the CPU
    bench_cuda.py   ``bench --device cuda``: kernels validated, then timed on the GPU
    bench_train.py  ``bench --train``: the tiny GPT's step against PyTorch
    bench_harness.py  the timing, bytes and table the three bench modules share
    plotting.py     matplotlib when installed, for the examples' pictures
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
