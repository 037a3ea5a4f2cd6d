"""nvcc builds of norms.cu's instantiations for the compile and resources tests, split over
the machine's cores.

A translation unit includes the ``.cu`` file and takes the address of each instantiation,
which makes nvcc compile it. nvcc compiles one unit on one core, and ptxas's time grows with
the kernels in it, so ``build`` splits the names into one unit per core and runs them at
once. ``TIMEOUT`` is sized for a machine four times slower than a loaded 2-core one: the
whole sm_90 build took 126 s there in one unit at load average 6 (20 s quiet).
"""

import os
import shutil
import subprocess

import pytest

TIMEOUT = 1200   # seconds for one nvcc call


def nvcc_or_skip():
    """nvcc's path; skips without it, except in CI (``CI=true``), where it fails."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nvcc is not on PATH in CI: the CUDA sources cannot be checked")
        pytest.skip("nvcc is not on PATH")
    return nvcc


def instantiating_unit(source, names):
    """A translation unit that compiles ``source`` and each of the template ``names``."""
    lines = [f'#include "{source}"', "", "// Taking an address instantiates the template.",
             "void* microgradnorm_instances[] = {"]
    lines += [f"    (void*)&{name}," for name in names]
    return "\n".join(lines + ["};", ""])


def build(nvcc, source, names, options, directory, output="-cubin", jobs=None):
    """Compile ``names`` of ``source`` with ``nvcc output options``, in ``jobs`` units (one
    per core by default) at once. Returns [(names, return code, nvcc's output, the binary's
    bytes or None)] per unit."""
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(names)))
    units = [names[i::jobs] for i in range(jobs)]
    runs = []
    for i, unit_names in enumerate(units):
        unit = os.path.join(directory, f"unit{i}.cu")
        with open(unit, "w", encoding="utf-8") as file:
            file.write(instantiating_unit(source, unit_names))
        binary = os.path.join(directory, f"unit{i}.out")
        runs.append((unit_names, binary, subprocess.Popen(
            [nvcc, output, *options, "-o", binary, unit],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    results = []
    for unit_names, binary, run in runs:
        text, _ = run.communicate(timeout=TIMEOUT)
        data = None
        if run.returncode == 0:
            with open(binary, "rb") as file:
                data = file.read()
        results.append((unit_names, run.returncode, text, data))
    return results
