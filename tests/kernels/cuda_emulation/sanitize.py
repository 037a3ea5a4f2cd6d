"""Runs cases of the kernel checks through one emulated library, in this process:
``python sanitize.py LIBRARY CASE...`` (tests/kernels/test_cuda_sanitizers.py starts it, with
AddressSanitizer preloaded for the memcheck build).

A case is ``kernel:NAME:DTYPE:D:M`` (forward and backward of one kernel of
``kernel_checks.KERNELS`` on M rows of D, every output against the float64 reference),
``rms:CASTING:OFFSET:X_DTYPE:WEIGHT_DTYPE:RESIDUAL:D:M`` (RMSNorm's conventions against the
reference kernels) or ``tree:D:M:SMS`` (add_layer_norm on a device of SMS SMs, for the
partial sums of many blocks). Prints one line a case, ``ok CASE`` or ``FAIL CASE: why``;
a sanitizer that stops the process leaves the last ``start CASE`` on stderr.
"""

import sys
import traceback

import emulation
import kernel_checks

from microgradnorm.kernels import cuda


def run(case):
    kind, *fields = case.split(":")
    if kind == "kernel":
        name, dtype, cols, rows = fields
        kernel_checks.check_kernel(name, dtype, int(cols), int(rows))
    elif kind == "rms":
        casting, offset, x_dtype, weight_dtype, residual, cols, rows = fields
        cols = int(cols)
        kernel_checks.check_conventions(casting, float(offset), x_dtype, weight_dtype,
                                        residual == "1", rows=int(rows), cols=cols, seed=cols,
                                        exact=cols & (cols - 1) == 0)
    elif kind == "tree":
        cols, rows, sms = (int(f) for f in fields)
        cuda._sm_count = lambda cp: sms
        kernel_checks.check_kernel("add_layer_norm", "float32", cols, rows)
        cuda._sm_count = lambda cp: 2
    else:
        raise ValueError(f"unknown case {case}")


def main(library, cases):
    emulation.install(library, setattr)
    failed = 0
    for case in cases:
        print(f"start {case}", file=sys.stderr, flush=True)
        try:
            run(case)
        except Exception as error:        # every failure is reported, then the next case
            failed += 1
            why = str(error) if isinstance(error, emulation.KernelFindings) else \
                traceback.format_exc(limit=-2)
            print(f"FAIL {case}: {why}".replace("\n", "\n    "), flush=True)
        else:
            print(f"ok {case}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
