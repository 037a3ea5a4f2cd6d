"""docs/gpu.md's predicted-bandwidth table is what benchmarks/gpu_model.py computes for this
norms.cu: the mapping is the launcher's, the blocks an SM fit the registers shown, and the
KiB in flight and the predicted share follow from them (no nvcc: the registers are the doc's,
which the script read from ptxas)."""

import os
import re
import sys

import pytest

from microgradnorm.kernels import cuda

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import gpu_model  # noqa: E402


def doc_rows():
    with open(os.path.join(ROOT, "docs", "gpu.md"), encoding="utf-8") as file:
        text = file.read()
    section = text[text.index("### Predicted bandwidth"):text.index("### What is saved")]
    return [[c.strip() for c in line.strip("|").split("|")]
            for line in section.splitlines() if re.match(r"\| \d", line)]


def test_the_table_covers_every_row_length_dtype_and_pass():
    found = {(int(r[0]), r[1], r[2]) for r in doc_rows()}
    assert found == {(c, d, p) for c in gpu_model.COLS for d in gpu_model.DTYPES
                     for p in ("fwd", "bwd")}


@pytest.mark.parametrize("row", doc_rows(), ids=lambda r: "-".join(r[:3]))
def test_the_after_columns_follow_from_the_model(row):
    cols, dtype, kind = int(row[0]), row[1], row[2]
    kernel = "norm_forward" if kind == "fwd" else "norm_backward"
    config = next(c for k, c, _ in gpu_model.configurations(dtype, cols) if k == kernel)
    assert row[8] == gpu_model.mapping(config)
    registers = int(row[9].split()[0])
    resident, block = (int(v) for v in row[10].split(" × "))
    assert block == config.block
    assert resident <= gpu_model.resident_blocks(kernel, config, (registers, 0, 0))
    prefetch = config.nv == gpu_model.prefetches(cuda.SOURCE)
    in_flight, share = gpu_model.predict(kernel, dtype, cols, config, resident, prefetch)
    assert row[11] == f"{in_flight:.1f}"
    assert row[12] == f"{int(100 * share)} %"
