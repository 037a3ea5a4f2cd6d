"""The CUDA launch configuration, plain Python (no CuPy): the vector width, threads and
grid of each row-norm launch, the partial-sum tree of the backward, and the names of the
kernel instantiations ``norms.cu`` is compiled with. ``kernels.cuda`` launches with it, and
the nvcc tests and docs/gpu.md's model read it; docs/gpu.md explains the choices.
"""

import collections
import functools
import math

import numpy as np

from .. import dtypes

__all__ = ["backward_config", "BACKWARD_ELEMENTS_PER_THREAD", "backward_grid",
           "BACKWARD_RESIDENT_THREADS", "BACKWARD_TARGET_THREADS", "BFLOAT16_OPTION",
           "CASTING_CODES", "compile_options", "CXX_TYPES", "FOLD_COLS", "forward_config",
           "forward_grid", "FORWARD_TARGET_THREADS", "forward_wave", "ITEMSIZE",
           "kernel_name", "KINDS", "launch_bound", "LAUNCH_BOUNDS", "launch_config",
           "LaunchConfig", "MAX_ELEMENTS_PER_THREAD", "MAX_GRID_BLOCKS", "MAX_THREADS",
           "MIXED_KINDS", "MIXED_WEIGHT", "MODULE_DTYPES", "module_dtypes",
           "name_expressions", "needs_realignment", "NV_CHOICES", "nv_choices",
           "partial_stride", "PREFETCH_NV", "prefetches", "row_packs", "storage_name",
           "SUM_CHUNK", "SUM_COLS", "SUM_WARPS", "sum_partials_launches", "sum_partials_name",
           "UNEVEN_BACKWARD_ELEMENTS", "uniform_heads", "VECTOR_BYTES", "vector_width",
           "WARP_MAX_NV", "WARP_ROWS_PER_BLOCK"]

# The one table of kernel instantiations: storage dtype name -> C++ type. The loader and the
# nvcc compile test both derive their template lists from it (``name_expressions``).
CXX_TYPES = {"float32": "float", "float16": "__half", "bfloat16": "__nv_bfloat16"}
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}
# RMSNorm's weight may also be float32 beside 16-bit x: those dtypes' kernels are
# instantiated a second time with W = float (the last template argument), with their own
# sum_partials<float, __half> (float32 dweight, rounded through float16 for "none").
MIXED_WEIGHT = "float32"
# RMSNorm's casting modes (``reference``) as norms.cu's ``casting`` argument
# (CASTING_FLOAT32, CASTING_LLAMA, CASTING_NONE). LayerNorm runs with 0.
CASTING_CODES = {"gemma": 0, "llama": 1, "none": 2}

VECTOR_BYTES = 16                 # one 128-bit load/store
MAX_ELEMENTS_PER_THREAD = 32      # the most elements of a row one thread holds
BACKWARD_ELEMENTS_PER_THREAD = 16  # backward prefers at most this many (x, dy, weight and two
                                  # dweight/dbias sums per element: no spills at 16)
UNEVEN_BACKWARD_ELEMENTS = 8      # ... and of a row its vec does not divide (partial packs)
NV_CHOICES = (1, 2, 4, 8, 16)     # vectors per thread the kernels are instantiated for
WARP_MAX_NV = 4                   # rows of up to 32 * 4 vectors get one warp each
WARP_ROWS_PER_BLOCK = 4           # warps (rows) per block in the warp mapping
FORWARD_TARGET_THREADS = 256      # a block per row: prefer at most this many threads ...
BACKWARD_TARGET_THREADS = 512     # (backward holds more values: more threads, fewer each)
MAX_THREADS = 512                 # ... and never more
LAUNCH_BOUNDS = (256, 512)        # the __launch_bounds__ an instantiation is compiled with:
                                  # 256 admits 255 registers a thread, the most there are
FOLD_COLS = 1024                  # widest backward row of the warp mapping (NORM_FOLD_COLS)
BACKWARD_RESIDENT_THREADS = 1024  # backward grid: blocks enough for this many threads an SM
SUM_WARPS, SUM_CHUNK, SUM_COLS = 8, 32, 128   # sum_partials: warps, rows and columns a block
                                              # adds (SUM_WARPS, SUM_CHUNK in norms.cu)
MAX_GRID_BLOCKS = 2**31 - 1       # CUDA's limit on gridDim.x; more rows loop in the kernel
PREFETCH_NV = 1                   # kernels with this nv prefetch the next row (norms.cu)

LaunchConfig = collections.namedtuple(
    "LaunchConfig", "vec nv threads_per_row block rows_per_block")
LaunchConfig.__doc__ = """How one row-norm launch maps rows onto threads.

vec: elements per load (16 bytes' worth, or 1); nv: vectors each thread holds;
threads_per_row: 32 (a warp per row) or ``block`` (a block per row);
block: threads per block; rows_per_block: rows a block works on at once."""


# ----- launch configuration (no CuPy needed) ------------------------------------------------
def vector_width(itemsize, cols, addresses):
    """Elements per load: 16 bytes' worth when every address is 16-byte aligned, else 1
    (scalar loads). A row length it does not divide moves the partial packs at the row's
    ends element by element (norms.cu's row_head)."""
    if all(address % VECTOR_BYTES == 0 for address in addresses):
        return VECTOR_BYTES // itemsize
    return 1


def needs_realignment(itemsize, cols, address):
    """True when the address of an array stops vector loads (a view that starts mid-vector):
    such an array is copied to a fresh, aligned buffer first."""
    return address % VECTOR_BYTES != 0


def row_packs(cols, vec):
    """The most aligned packs of ``vec`` elements a row of ``cols`` covers: one more than
    ``cols / vec`` where rows start inside a pack."""
    return cols // vec if cols % vec == 0 else (cols + 2 * vec - 2) // vec


def nv_choices(vec, max_elements=MAX_ELEMENTS_PER_THREAD):
    """The vectors-per-thread counts instantiated for vector width ``vec``."""
    return tuple(nv for nv in NV_CHOICES if nv * vec <= max_elements)


def launch_config(cols, vec, target_threads=FORWARD_TARGET_THREADS,
                  max_elements=MAX_ELEMENTS_PER_THREAD):
    """The row mapping for rows of ``cols`` elements loaded ``vec`` at a time, at most
    ``max_elements`` a thread, or None when a row does not fit one block (the caller falls
    back): a warp a row for short rows, else a block a row (docs/gpu.md, "Row mapping")."""
    n_vec = row_packs(cols, vec)                         # vectors per row
    choices = nv_choices(vec, max_elements)
    warp_choices = [nv for nv in choices if nv <= WARP_MAX_NV and 32 * nv >= n_vec]
    if warp_choices:
        return LaunchConfig(vec, warp_choices[0], 32, 32 * WARP_ROWS_PER_BLOCK,
                            WARP_ROWS_PER_BLOCK)
    fitting = [nv for nv in choices if n_vec <= nv * target_threads]
    nv = fitting[0] if fitting else choices[-1]
    threads = 32 * -(-n_vec // (32 * nv))                # round up to whole warps
    if threads > MAX_THREADS:
        return None
    return LaunchConfig(vec, nv, threads, threads, 1)


def backward_config(cols, vec):
    """The backward's row mapping: the forward's for short rows; for long ones at most
    ``BACKWARD_ELEMENTS_PER_THREAD`` values a thread where 512 threads hold the row. Rows
    ``vec`` does not divide (their partial packs cost registers): at most 8 values a thread
    in 512 threads, else the most values a thread in at most 256 threads (all 255 registers),
    else scalar loads."""
    config = launch_config(cols, vec, BACKWARD_TARGET_THREADS)
    if config is not None and config.threads_per_row == 32:
        return config
    if cols % vec:
        config = launch_config(cols, vec, BACKWARD_TARGET_THREADS, UNEVEN_BACKWARD_ELEMENTS)
        if config is None:
            config = launch_config(cols, vec, 32)           # 32 threads each: the most nv
            config = config if config is not None and config.block <= 256 else None
        return config or backward_config(cols, 1)
    return (launch_config(cols, vec, BACKWARD_TARGET_THREADS, BACKWARD_ELEMENTS_PER_THREAD)
            or config)


def forward_config(cols, vec):
    config = launch_config(cols, vec, FORWARD_TARGET_THREADS)
    return _uneven_or_scalar(cols, config, forward_config) if cols % vec else config


def _uneven_or_scalar(cols, config, pick):
    """``config`` for a row that its vec does not divide, unless it needs more than 256
    threads with more than 16 values each (a row just past 256 · nv packs: the 128-register
    budget of such blocks would spill): then scalar loads, ``pick(cols, 1)``."""
    if config is not None and config.block > 256 and config.nv * config.vec > 16:
        return pick(cols, 1)
    return config


def launch_bound(config):
    """The ``__launch_bounds__`` of the instantiation that runs ``config``: 512 for big
    blocks or few values a thread, else 256 (all 255 registers for 32 values a thread)."""
    if config.block > 256 or config.nv * config.vec <= BACKWARD_ELEMENTS_PER_THREAD:
        return MAX_THREADS
    return LAUNCH_BOUNDS[0]


def forward_grid(rows, config):
    """Blocks for a forward launch: every row group gets one row, up to CUDA's grid limit
    (``MAX_GRID_BLOCKS``); beyond it each group loops over rows ``group + k·groups``."""
    return min(-(-rows // config.rows_per_block), MAX_GRID_BLOCKS)


def prefetches(config):
    """True when the kernels of ``config`` prefetch the next row (one vector a thread,
    ``PREFETCH_NV``): their groups should loop over rows (``forward_wave``)."""
    return config.nv == PREFETCH_NV


def forward_wave(rows, config, sm_count, blocks_per_sm):
    """Blocks for a prefetching forward: one wave, as many as the SMs hold, each group
    looping over rows with weight and bias loaded once."""
    return max(1, min(forward_grid(rows, config), blocks_per_sm * sm_count))


def uniform_heads(grid, rows, cols, config):
    """``grid`` made such that every row a group visits starts at the same place in its
    first pack (groups · cols a multiple of vec), which lets a thread keep its columns' weight
    and dweight across rows: rounded down to that step, but never below it, nor above
    ``forward_grid`` (where every group gets one row at most)."""
    step = config.vec // math.gcd(config.vec, config.rows_per_block * cols)
    full = forward_grid(rows, config)
    if grid >= full:
        return full
    return min(full, max(step, grid - grid % step))


def backward_grid(rows, config, sm_count, blocks_per_sm):
    """Blocks for a backward launch: one wave of groups looping over rows, per SM enough for
    ``BACKWARD_RESIDENT_THREADS`` threads but no more than fit (``blocks_per_sm``): each block
    writes a row of partials the second stage reads back (docs/gpu.md)."""
    per_sm = max(1, min(blocks_per_sm, -(-BACKWARD_RESIDENT_THREADS // config.block)))
    return max(1, min(forward_grid(rows, config), per_sm * sm_count))


def partial_stride(cols):
    """Row stride of the partial buffers: a multiple of 4 floats, for sum_partials' float4
    loads."""
    return -(-cols // 4) * 4


def sum_partials_launches(num_partials, cols):
    """The grids of the sum_partials launches that reduce ``num_partials`` rows: (strips,
    chunks, 2) each, chunks of ``SUM_CHUNK`` rows, until one chunk is left."""
    strips = -(-cols // SUM_COLS)
    launches = []
    while True:
        chunks = -(-num_partials // SUM_CHUNK)
        launches.append((strips, chunks, 2))
        if chunks == 1:
            return launches
        num_partials = chunks


# The kinds of kernels: a dtype's own ("float16": x, weight and y in float16), and 16-bit x
# with a float32 weight ("float16/float32"), derived from CXX_TYPES and MIXED_WEIGHT.
MIXED_KINDS = tuple(f"{dtype}/{MIXED_WEIGHT}" for dtype in CXX_TYPES if ITEMSIZE[dtype] == 2)
KINDS = tuple(CXX_TYPES) + MIXED_KINDS

# The loader compiles each instantiation on first use, alone (seconds, not a minute for all);
# MODULE_DTYPES groups the kinds by compile options: float32 and float16 (cuda_fp16.h),
# bfloat16 with BFLOAT16_OPTION (also cuda_bf16.h), each 16-bit dtype for a float32 weight.
# CuPy ships neither header: both come with the "gpu" extra, cupy-cuda12x[ctk]. CuPy adds
# -ftz=true to every compile (docs/gpu.md, Denormals).
MODULE_DTYPES = (("float32", "float16"), ("bfloat16",)) + tuple((k,) for k in MIXED_KINDS)
BFLOAT16_OPTION = "-DMICROGRADNORM_BFLOAT16"


def compile_options(dtypes):
    """The preprocessor options of a module holding ``dtypes``' kernels (kinds)."""
    return (BFLOAT16_OPTION,) if any(k.split("/")[0] == "bfloat16" for k in dtypes) else ()


def name_expressions(dtypes=KINDS):
    """Every template instantiation the loader (and the nvcc compile test) compiles for
    ``dtypes``, kinds of ``KINDS``: each (vec, nv, launch bound) the launch configuration
    picks for some row length, e.g. ``norm_forward<__half, 8, 4, 256>`` (with ``, float>``
    for "float16/float32"), and the kind's ``sum_partials``."""
    names = []
    for kind in dtypes:
        dtype, _, weight = kind.partition("/")
        cxx = CXX_TYPES[dtype]
        weight_cxx = CXX_TYPES[weight] if weight else None
        for kernel, vec, nv, bound, uneven in _instantiations(ITEMSIZE[dtype]):
            names.append(kernel_name(kernel, cxx, vec, nv, bound, weight_cxx, uneven))
        names.append(sum_partials_name(weight_cxx or cxx, cxx))
    return names


def sum_partials_name(cxx, via_cxx=None):
    """``sum_partials<float>``, or ``sum_partials<float, __half>``: float32 gradients
    beside float16 x (rounded through float16 on the way if the launch asks)."""
    return f"sum_partials<{cxx}>" if via_cxx in (None, cxx) else f"sum_partials<{cxx}, {via_cxx}>"


@functools.lru_cache(maxsize=None)
def _instantiations(itemsize):
    found = set()
    for vec in sorted({VECTOR_BYTES // itemsize, 1}):
        for n_vec in range(1, MAX_THREADS * max(nv_choices(vec)) + 1):
            # a row of n_vec packs, and (vec > 1) one that vec does not divide
            for cols in {n_vec * vec, n_vec * vec + 1 if vec > 1 else n_vec}:
                for kernel, pick in (("norm_forward", forward_config),
                                     ("norm_backward", backward_config)):
                    config = pick(cols, vec)
                    if config is not None:
                        found.add((kernel, config.vec, config.nv, launch_bound(config),
                                   cols % config.vec != 0))
    return sorted(found, key=lambda k: (k[0] != "norm_forward", k[1:]))


def module_dtypes(name):
    """The ``MODULE_DTYPES`` entry whose module holds the kernel ``name``, found from its
    type arguments: ``norm_forward<__half, 8, 4>`` -> float16's, ``norm_forward<__half, 8,
    4, 256, float>`` and ``sum_partials<float, __half>`` -> "float16/float32"'s."""
    arguments = (a.strip() for a in name[name.index("<") + 1:].rstrip(">").split(","))
    dtypes = [d for a in arguments for d, c in CXX_TYPES.items() if c == a]
    if name.startswith("sum_partials"):
        dtypes.reverse()                          # <float, __half>: x's type is VIA's
    kind = "/".join(dict.fromkeys(dtypes))        # "float16", or "float16/float32"
    return next(group for group in MODULE_DTYPES if kind in group)


def kernel_name(kernel, cxx, vec, nv, bound, weight_cxx=None, uneven=False):
    """``norm_forward<__half, 8, 4, 256>``; with a weight type other than x's,
    ``norm_forward<__half, 8, 4, 256, float>``; for rows ``vec`` does not divide
    (``uneven``), ``norm_forward<__half, 8, 4, 256, __half, true>``."""
    if uneven:
        return f"{kernel}<{cxx}, {vec}, {nv}, {bound}, {weight_cxx or cxx}, true>"
    if weight_cxx in (None, cxx):
        return f"{kernel}<{cxx}, {vec}, {nv}, {bound}>"
    return f"{kernel}<{cxx}, {vec}, {nv}, {bound}, {weight_cxx}>"


# The kernel dtype name of each dtype the kernels take: a lookup, as dtype.name is a
# Python-level property that costs more than a launch's other host work.
_STORAGE_NAMES = {np.dtype(name): name for name in ("float32", "float16")}
if dtypes.bfloat16 is not None:
    _STORAGE_NAMES[np.dtype(dtypes.bfloat16)] = "bfloat16"


def storage_name(dtype):
    """The kernel dtype name of an array dtype ("float32", "float16", "bfloat16"); None if
    the kernels do not take it (float64 goes to the reference)."""
    return _STORAGE_NAMES.get(np.dtype(dtype))
