"""No register spills at the launch configurations the launcher picks for the benchmark's row
lengths (D = 1024, 2048, 4096, 8192) in every dtype (and with a float32 weight beside 16-bit
x), forward and backward: each of those
instantiations is compiled by nvcc with ``-Xptxas -v`` for sm_80 and sm_90, and ptxas's report
must show 0 bytes of spill stores and loads. A spill sends registers to local memory inside
the loop over rows: loads the bandwidth estimate in docs/gpu.md does not count.

A second test reads the PTX of the same instantiations: each row loop must issue all of a
thread's vector loads before it uses the first one.

Without nvcc the tests skip, except in CI (``CI=true``), where they fail.
"""

import re

from nvcc_build import build, nvcc_or_skip

from microgradnorm.kernels import cuda, launch

ARCHS = ("sm_80", "sm_90")
BENCH_COLS = (1024, 2048, 4096, 8192)


def launcher_names(kinds=tuple(launch.CXX_TYPES)):
    """{name expression: [(kind, D, pass)]} of the kernels the launcher runs at
    ``BENCH_COLS`` (aligned arrays: vector loads) for ``kinds`` (``launch.KINDS``; by default
    each dtype with its own weight)."""
    names = {}
    for kind in kinds:
        dtype, _, weight = kind.partition("/")
        for cols in BENCH_COLS:
            vec = launch.vector_width(launch.ITEMSIZE[dtype], cols, [256])
            for kernel, pick in (("norm_forward", launch.forward_config),
                                 ("norm_backward", launch.backward_config)):
                config = pick(cols, vec)
                name = launch.kernel_name(kernel, launch.CXX_TYPES[dtype], config.vec, config.nv,
                                        launch.launch_bound(config),
                                        launch.CXX_TYPES[weight] if weight else None)
                names.setdefault(name, []).append((kind, cols, kernel))
    return names


def ptxas_report(output):
    """{mangled kernel name: (registers, spill store bytes, spill load bytes)}."""
    report = {}
    current = None
    for line in output.splitlines():
        match = re.search(r"Compiling entry function '(\w+)'", line)
        if match:
            current = match.group(1)
        match = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if match and current:
            report[current] = [None, int(match.group(1)), int(match.group(2))]
        match = re.search(r"Used (\d+) registers", line)
        if match and current in report:
            report[current][0] = int(match.group(1))
    return report


def mangled(name):
    """The C++ mangling prefix of a name expression: norm_backward<__half, 8, 2, 512> ->
    _Z13norm_backwardI6__halfLi8ELi2ELi512ES0_Lb0EE, norm_forward<__half, 8, 2, 512, float>
    -> _Z12norm_forwardI6__halfLi8ELi2ELi512EfLb0EE (W defaults to T, UNEVEN to false)."""
    kernel, args = name[:-1].split("<")
    cxx, *rest = (a.strip() for a in args.split(","))
    numbers, weight, uneven = rest[:3], (rest[3:4] or [cxx])[0], (rest[4:5] or ["false"])[0]
    first = "f" if cxx == "float" else f"{len(cxx)}{cxx}"
    # W: f for float, else T's type again, which mangles as the substitution S0_.
    second = "f" if weight == "float" else "S0_" if weight == cxx else f"{len(weight)}{weight}"
    flag = f"Lb{int(uneven == 'true')}E"
    return (f"_Z{len(kernel)}{kernel}I{first}" + "".join(f"Li{n}E" for n in numbers) + second
            + flag + "E")


def test_the_launcher_picks_a_few_instantiations_for_the_benchmark_rows():
    names = launcher_names()
    assert 6 <= len(names) <= 24
    assert all(name in launch.name_expressions() for name in names)


def test_no_spills_at_the_launchers_configurations(tmp_path, sm90_build):
    """Every kind, the float32-weight kernels of 16-bit x included: their backward holds w'
    (formed once, before the rows) and dy in float32 registers. sm_90's report is the one of
    the shared build of every kernel (conftest.py); sm_80 builds these kernels alone."""
    nvcc = nvcc_or_skip()
    names = launcher_names(launch.KINDS)
    builds = {"sm_90": sm90_build,
              "sm_80": build(nvcc, cuda.SOURCE, sorted(names),
                             ["-arch=sm_80", "-Xptxas", "-v", launch.BFLOAT16_OPTION],
                             str(tmp_path))}
    spilling = []
    for arch in ARCHS:
        for unit_names, returncode, output, _ in builds[arch]:
            assert returncode == 0, f"nvcc -arch={arch} failed for {unit_names}:\n{output}"
        report = ptxas_report("\n".join(output for _, _, output, _ in builds[arch]))
        for name, uses in names.items():
            found = [v for k, v in report.items() if k.startswith(mangled(name))]
            assert len(found) == 1, (arch, name, sorted(report))
            registers, stores, loads = found[0]
            if stores or loads:
                spilling.append(f"{arch} {name} ({registers} registers, {stores} B stored, "
                                f"{loads} B loaded) for {uses}")
    assert not spilling, "spills:\n" + "\n".join(spilling)


FIRST_USE = re.compile(r"^\s*\{?\s*((add|sub|mul|fma\.rn)(\.rn)?\.f32|cvt\.f32\.b?f16)\b")


def loads_before_first_use(body, start):
    """16-byte loads in a PTX kernel ``body`` from the first line matching ``start`` to the
    first instruction that uses a loaded value as a number."""
    lines = body.splitlines()
    begin = next(i for i, line in enumerate(lines) if re.search(start, line))
    count = 0
    for line in lines[begin:]:
        if re.search(r"ld\.global(\.nc)?\.v4", line):
            count += 1
        elif FIRST_USE.search(line):
            return count
    return count


def test_every_load_of_a_row_is_issued_before_the_first_use(tmp_path):
    """In the PTX of the launcher's instantiations, the row loop issues all of a thread's
    vector loads (x, and dy in backward: 2·nv of them) before it uses the first: a thread has
    its whole part of the row in flight, not one 16-byte vector at a time. (ptxas may still
    reorder; no SASS tool is at hand here.)"""
    nvcc = nvcc_or_skip()
    names = launcher_names()
    ptx = ""
    for unit_names, returncode, output, text in build(
            nvcc, cuda.SOURCE, sorted(names), ["-arch=sm_90", launch.BFLOAT16_OPTION],
            str(tmp_path), output="-ptx", jobs=1):      # no ptxas: one front end is enough
        assert returncode == 0, f"nvcc -ptx failed for {unit_names}:\n{output}"
        ptx += text.decode()
    kernels = {body.split("(")[0]: body for body in re.split(r"\.visible \.entry ", ptx)[1:]}
    short = []
    for name in names:
        body = next(b for k, b in kernels.items() if k.startswith(mangled(name)))
        nv = int(name.split(",")[2])
        if name.startswith("norm_backward"):
            # the row loop starts with the scalar loads of the row's statistics
            wanted, found = 2 * nv, loads_before_first_use(body, r"ld\.global\.nc\.f32")
        else:
            wanted, found = nv, loads_before_first_use(body, r"ld\.global(\.nc)?\.v4")
        if found < wanted:
            short.append(f"{name}: {found} of {wanted} loads issued before the first use")
    assert not short, "\n".join(short)
