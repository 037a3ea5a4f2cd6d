"""The CUDA kernels: the functions of ``kernels.reference``, same names and signatures, on
CuPy arrays, running the fused kernels of ``norms.cu``.

Importing this module never imports CuPy; the first kernel call does. The row norms in
float32, float16 and bfloat16 (``ml_dtypes.bfloat16`` arrays, read as ``__nv_bfloat16``)
run one launch each, RMSNorm's offset and casting included; float64, other mixed dtypes,
empty arrays, rows too long for the registers and BatchNorm run the reference on CuPy;
integer arrays are a TypeError. The launch configuration is ``kernels.launch``, plain
Python testable without a GPU; docs/gpu.md explains it and ``norms.cu`` the kernels.
"""

import collections
import os

import numpy as np

from .. import backend, dtypes
from . import reference
from .launch import (CASTING_CODES, CXX_TYPES, ITEMSIZE, SUM_WARPS, VECTOR_BYTES,
                     backward_config, backward_grid, compile_options, forward_config,
                     forward_grid, forward_wave, kernel_name, launch_bound, launch_config,
                     module_dtypes, name_expressions, needs_realignment, partial_stride,
                     prefetches, storage_name, sum_partials_launches, sum_partials_name,
                     uniform_heads, vector_width)

SOURCE = os.path.join(os.path.dirname(__file__), "norms.cu")


# ----- loader -------------------------------------------------------------------------------
_modules = {}     # (source path, device id, name expression) -> cupy.RawModule
_functions = {}   # (device id, name expression) -> kernel, looked up once
_sm_counts = {}   # device id -> number of SMs
_occupancy = {}   # (device id, name expression, block) -> resident blocks per SM
# A null pointer argument: an 8-byte zero. (CuPy passes None as a NULL *argument slot*, which
# the driver would dereference, not as a NULL pointer value.)
_NULL = np.uint64(0)


def _module(cp, name):
    """``norms.cu`` compiled with the one instantiation ``name`` for the current device, once:
    the first call of a (norm, dtype, row length class) pays seconds, not the minute all of
    them take (CuPy caches the binary on disk too, so later processes skip the compile)."""
    key = (SOURCE, cp.cuda.Device().id, name)
    if key not in _modules:
        with open(SOURCE, encoding="utf-8") as file:
            code = file.read()
        _modules[key] = cp.RawModule(code=code,
                                     options=compile_options(module_dtypes(name)),
                                     name_expressions=(name,))
    return _modules[key]


def _sm_count(cp):
    device = cp.cuda.Device()
    if device.id not in _sm_counts:
        _sm_counts[device.id] = device.attributes["MultiProcessorCount"]
    return _sm_counts[device.id]


def _blocks_per_sm(cp, name, block):
    """How many blocks of ``block`` threads of kernel ``name`` an SM holds at once (its
    registers, shared memory and the SM's limits), from the driver's occupancy calculator."""
    key = (cp.cuda.Device().id, name, block)
    if key not in _occupancy:
        _occupancy[key] = max(1, cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            _function(cp, name).kernel.ptr, block, 0))      # RawKernel -> driver function
    return _occupancy[key]


def _function(cp, name):
    key = (cp.cuda.Device().id, name)
    if key not in _functions:
        _functions[key] = _module(cp, name).get_function(name)
    return _functions[key]


def _cupy():
    return backend._cupy_with_gpu()     # a clear RuntimeError without CuPy or a GPU


def _empty(cp, shape, dtype):
    """Every output buffer is allocated here (the GPU tests fill them with NaN first)."""
    return cp.ndarray(shape, dtype)           # cupy.empty, less a Python call


# ----- row-norm launches --------------------------------------------------------------------
def _kernels_take(*arrays):
    """True when the kernels take these arrays (None entries ignored): one kernel dtype.
    Other floating dtypes go to the reference; an integer array is an error, not a
    fallback: the reference would normalize the integers (and a uint16 array is most likely
    bfloat16 bits, which the kernels take as a bfloat16 array)."""
    found = {a.dtype for a in arrays if a is not None}
    for dtype in found:
        if not dtypes.is_floating(dtype):
            hint = (" (bfloat16 bits held as uint16 are bits.view(ml_dtypes.bfloat16))"
                    if dtype == np.uint16 else "")
            raise TypeError(f"kernels.cuda: the norms take float16, bfloat16, float32 or "
                            f"float64 arrays, got {dtype}{hint}")
    return len(found) == 1 and storage_name(found.pop()) is not None


def _contiguous(cp, array):
    """``array`` as a C-contiguous array whose rows allow vector loads if its length does."""
    if array is None:
        return None
    array = cp.ascontiguousarray(array)
    if needs_realignment(array.dtype.itemsize, array.shape[-1], array.data.ptr):
        array = array.copy()                 # CuPy allocations are 256-byte aligned
    return array


# ----- launch plans -------------------------------------------------------------------------
# What a launch needs besides its arrays (configuration, grids, kernel handles, constant
# arguments) is worked out once per key (_key) and kept: a call like one seen before costs a
# lookup, its allocations and its launches (docs/gpu.md, "Host cost").
ForwardPlan = collections.namedtuple(
    "ForwardPlan", "cp kernel grid block stat_shape y_dtype subtract_mean head tail")
BackwardPlan = collections.namedtuple(
    "BackwardPlan", "cp kernel grid block partial_shape bias_grad arguments sum_kernel "
                    "sum_steps grad_shape grad_dtype sum_tail round_via")
_plans = {}          # _key(options, *arrays) -> ForwardPlan or BackwardPlan
MAX_PLANS = 4096     # a process of ever new shapes starts the cache again rather than grow


def _key(options, *arrays):
    """A call's options and each array's (shape, dtype, device, C-contiguous, address mod 16)
    or None. Plans are kept under the key of the arrays as launched (copied if need be)."""
    return (options, *[None if a is None else (a.shape, a.dtype, a.device.id,
                                               a.flags.c_contiguous, a.data.ptr % VECTOR_BYTES)
                        for a in arrays])


def _keep(key, plan):
    if len(_plans) >= MAX_PLANS:
        _plans.clear()
    _plans[key] = plan


def _forward_plan(options, x, residual, weight, bias):
    """(plan or None for rows too long, and x, residual, weight, bias as launched: contiguous,
    aligned for vector loads). ``options``: (pass, subtract_mean, offset, casting)."""
    _, subtract_mean, offset, casting = options
    cp = _cupy()
    with x.device:
        x, residual, weight, bias = (_contiguous(cp, a) for a in (x, residual, weight, bias))
        rows, cols = x.shape
        # the outputs are fresh, aligned buffers: the inputs decide the vector width
        config = forward_config(cols, vector_width(ITEMSIZE[storage_name(x.dtype)], cols, [
            a.data.ptr for a in (x, residual, weight, bias) if a is not None]))
        if config is None:
            return None, x, residual, weight, bias
        weight_dtype = None if weight is None else weight.dtype
        name = kernel_name("norm_forward", CXX_TYPES[storage_name(x.dtype)], config.vec,
                           config.nv, launch_bound(config), _weight_cxx(weight_dtype),
                           cols % config.vec != 0)
        grid = forward_grid(rows, config)
        if prefetches(config):          # one wave of blocks looping over the rows
            grid = uniform_heads(forward_wave(rows, config, _sm_count(cp),
                                              _blocks_per_sm(cp, name, config.block)),
                                 rows, cols, config)
        plan = ForwardPlan(
            cp, _function(cp, name), (grid,), (config.block,), (rows,),
            output_dtype(x.dtype, weight_dtype, casting), subtract_mean,
            (np.int64(rows), np.int32(cols), np.int32(config.threads_per_row)),
            (np.int32(subtract_mean), _kernel_offset(x.dtype, weight_dtype, offset, casting),
             np.int32(CASTING_CODES[casting])))
    _keep(_key(options, x, residual, weight, bias), plan)
    return plan, x, residual, weight, bias


def _forward(plan, x, residual, weight, bias, eps):
    """Runs ``norm_forward`` as ``plan`` says; returns (y, s or None, mean or None, rstd)."""
    cp = plan.cp
    with x.device:
        y = _empty(cp, x.shape, plan.y_dtype)
        s = None if residual is None else _empty(cp, x.shape, x.dtype)
        mean = _empty(cp, plan.stat_shape, np.float32) if plan.subtract_mean else None
        rstd = _empty(cp, plan.stat_shape, np.float32)
        # _NULL for an absent array, written out: this is the path every call takes
        plan.kernel(plan.grid, plan.block, (
            x, _NULL if residual is None else residual, _NULL if weight is None else weight,
            _NULL if bias is None else bias, y, _NULL if s is None else s,
            _NULL if mean is None else mean, rstd, *plan.head, np.float32(eps), *plan.tail))
    return y, s, mean, rstd


def _backward_plan(options, dy, dsum, x, weight, mean, rstd):
    """(plan, dy, dsum, x, weight, mean, rstd) as ``_forward_plan``'s; ``options``: (pass,
    need_bias_grad, offset, casting). dy has y's dtype, dweight the weight's."""
    _, need_bias_grad, offset, casting = options
    cp = _cupy()
    with x.device:
        arrays = [_contiguous(cp, a) for a in (dy, dsum, x, weight, mean, rstd)]
        dy, dsum, x, weight, mean, rstd = arrays
        rows, cols = x.shape
        config = backward_config(cols, vector_width(ITEMSIZE[storage_name(x.dtype)], cols, [
            a.data.ptr for a in (dy, dsum, x, weight) if a is not None]))
        if config is None:
            return (None, *arrays)
        weight_dtype = None if weight is None else weight.dtype
        name = kernel_name("norm_backward", CXX_TYPES[storage_name(x.dtype)], config.vec,
                           config.nv, launch_bound(config), _weight_cxx(weight_dtype),
                           cols % config.vec != 0)
        grid = uniform_heads(backward_grid(rows, config, _sm_count(cp),
                                           _blocks_per_sm(cp, name, config.block)),
                             rows, cols, config)
        stride = partial_stride(cols)
        mixed = weight_dtype is not None and weight_dtype != x.dtype   # a float32 weight
        grad_dtype = x.dtype if weight is None else weight_dtype
        sum_kernel, sum_steps = None, ()
        if weight is not None or need_bias_grad:
            # (grid, stride) float32 partial sums -> (cols,) gradients in grad_dtype (x's
            # dtype beside a float32 weight: rounded through it for casting "none"), by a
            # fixed tree of launches: (launch grid, rows read, rows written) each
            sum_kernel = _function(cp, sum_partials_name(
                CXX_TYPES[storage_name(grad_dtype)],
                CXX_TYPES[storage_name(x.dtype)] if mixed else None))
            launches = sum_partials_launches(grid, cols)
            reads = [grid] + [chunks for _, chunks, _ in launches[:-1]]
            sum_steps = tuple((g, np.int32(n), g[1]) for g, n in zip(launches, reads))
        round_via = mixed and weight_compute_dtype(x.dtype, weight_dtype, casting) == x.dtype
        plan = BackwardPlan(
            cp, _function(cp, name), (grid,), (config.block,), (grid, stride), need_bias_grad,
            (np.int64(rows), np.int32(cols), np.int32(config.threads_per_row),
             np.int32(stride), _kernel_offset(x.dtype, weight_dtype, offset, casting),
             np.int32(CASTING_CODES[casting])),
            sum_kernel, sum_steps, (cols,), grad_dtype, (np.int32(stride), np.int32(cols)),
            np.int32(round_via))
    _keep(_key(options, *arrays), plan)
    return (plan, *arrays)


def _backward(plan, dy, dsum, x, weight, mean, rstd):
    """Runs ``norm_backward`` and ``sum_partials`` per ``plan``: (dx, dweight, dbias)."""
    cp = plan.cp
    with x.device:
        dx = _empty(cp, x.shape, x.dtype)
        dweight = None if weight is None else _empty(cp, plan.partial_shape, np.float32)
        dbias = _empty(cp, plan.partial_shape, np.float32) if plan.bias_grad else None
        plan.kernel(plan.grid, plan.block, (
            dy, _NULL if dsum is None else dsum, x, _NULL if weight is None else weight,
            _NULL if mean is None else mean, rstd, dx, _NULL if dweight is None else dweight,
            _NULL if dbias is None else dbias, *plan.arguments))
        if plan.sum_kernel is not None:
            dweight, dbias = _sum_partials(plan, dweight, dbias)
    return dx, dweight, dbias


def _sum_partials(plan, dweight_partial, dbias_partial):
    """(rows, stride) float32 partial sums -> (cols,) gradients by ``plan``'s tree of launches,
    dweight and dbias in the same ones; a None partial buffer gives a None gradient."""
    cp, (_, stride) = plan.cp, plan.partial_shape
    dweight = None if dweight_partial is None else _empty(cp, plan.grad_shape, plan.grad_dtype)
    dbias = None if dbias_partial is None else _empty(cp, plan.grad_shape, plan.grad_dtype)
    for grid, rows, chunks in plan.sum_steps:
        more = chunks > 1                    # another level of the tree reads these
        next_dweight = _empty(cp, (chunks, stride), np.float32) if (
            more and dweight_partial is not None) else None
        next_dbias = _empty(cp, (chunks, stride), np.float32) if (
            more and dbias_partial is not None) else None
        plan.sum_kernel(grid, (SUM_WARPS * 32,), (
            _NULL if dweight_partial is None else dweight_partial,
            _NULL if dbias_partial is None else dbias_partial, rows, *plan.sum_tail,
            _NULL if next_dweight is None else next_dweight,
            _NULL if next_dbias is None else next_dbias, _NULL if dweight is None else dweight,
            _NULL if dbias is None else dbias, plan.round_via))
        dweight_partial, dbias_partial = next_dweight, next_dbias
    return dweight, dbias


# ----- RMSNorm's offset, casting mode and weight dtype ----------------------------------------
def output_dtype(x_dtype, weight_dtype, casting):
    """y's dtype, and so dy's: float32 for "llama" with a float32 weight beside 16-bit x
    (Hugging Face's ``weight * x̂.to(input dtype)``), else x's."""
    if (casting == "llama" and weight_dtype is not None and dtypes.is_half(x_dtype)
            and np.dtype(weight_dtype) == np.float32):
        return np.dtype(np.float32)
    return np.dtype(x_dtype)


def weight_compute_dtype(x_dtype, weight_dtype, casting):
    """The dtype w' = offset + w is formed in (``reference.weight_dtype_for``)."""
    return reference.weight_dtype_for(x_dtype, weight_dtype, casting)


def _kernel_offset(x_dtype, weight_dtype, offset, casting):
    """``offset`` rounded to w''s dtype as ``reference.effective_weight`` rounds it, as the
    float32 the kernel adds (exact: float16 and bfloat16 values are float32 values); 0
    without a weight."""
    if weight_dtype is None or not offset:
        return np.float32(0.0)
    dtype = weight_compute_dtype(x_dtype, weight_dtype, casting)
    return np.float32(np.asarray(offset, dtype))


def _weight_cxx(weight_dtype):
    """The W template argument: None (W = T) unless the weight is float32 beside 16-bit x;
    the caller has checked the dtypes (``_rms_plan``)."""
    return None if weight_dtype is None else CXX_TYPES[storage_name(weight_dtype)]


def _rms_plan(x, weight, casting, same=(), dy=None):
    """True when the RMSNorm kernels take these arrays: x in a kernel dtype, the weight in
    x's dtype or float32 beside 16-bit x, the arrays of ``same`` in x's dtype and dy in y's
    (``output_dtype``). Else False, and the reference runs them; an integer array is a
    TypeError (``_kernels_take``)."""
    _kernels_take(*(a for a in (x, weight, *same, dy) if a is not None))   # integers refused
    weight_dtype = None if weight is None else weight.dtype
    takes = (storage_name(x.dtype) is not None
             and (weight is None or weight.dtype == x.dtype
                  or (dtypes.is_half(x.dtype) and weight.dtype == np.float32))
             and all(a is None or a.dtype == x.dtype for a in same)
             and (dy is None or dy.dtype == output_dtype(x.dtype, weight_dtype, casting)))
    return takes


# ----- input checks ---------------------------------------------------------------------------
# The kernels trust their pointers: a weight of the wrong length, a dy of the wrong shape or a
# statistic of another dtype would be read out of bounds, silently. So every call checks the
# shapes (and the statistics' dtype) first and raises before anything is allocated or
# launched. The other argument checks belong to the public functions (``functional``).
def _check(function, x_name, x, like=None, parameters=None, statistics=None):
    """x is 2-D (M, D); each array of ``like`` (None allowed) has x's shape, each of
    ``parameters`` (D,), each of ``statistics`` (M,) and float32 when the kernels take x's
    dtype (as the forward returns them)."""
    if getattr(x, "ndim", None) != 2:
        raise ValueError(f"{function}: {x_name} must be a 2-D array of rows (M, D), got "
                         f"shape {getattr(x, 'shape', type(x).__name__)}")
    rows, cols = x.shape
    expected = [(name, a, tuple(x.shape), f"{x_name}'s shape")
                for name, a in (like or {}).items()]
    expected += [(name, a, (cols,), f"the length of {x_name}'s rows")
                 for name, a in (parameters or {}).items()]
    expected += [(name, a, (rows,), f"one value per row of {x_name}")
                 for name, a in (statistics or {}).items()]
    for name, array, shape, meaning in expected:
        if array is not None and tuple(array.shape) != shape:
            raise ValueError(f"{function}: {name} must have shape {shape}, {meaning}, got "
                             f"{tuple(array.shape)}")
    for name, array in (statistics or {}).items():
        if (array is not None and storage_name(x.dtype) is not None
                and array.dtype != np.float32):
            raise TypeError(f"{function}: {name} must be float32 (as the forward returns "
                            f"it) for {x_name} of dtype {x.dtype}, got {array.dtype}")


def _empty_rows(x):
    """No rows, or rows of no elements: nothing to launch (a zero-sized grid is a CUDA
    error); the reference gives the results, on CuPy through ``xp``."""
    return x.shape[0] == 0 or x.shape[1] == 0


# ----- the reference's interface ------------------------------------------------------------
# Each function takes the plan of a call like this one (checked when it was made), else
# checks its arrays and plans the kernels when they take them, else runs the reference.
_LAYER_NORM = ("forward", True, 0.0, "gemma")       # _forward_plan's options for LayerNorm


def layer_norm_forward(x, weight, bias, eps):
    """As ``reference.layer_norm_forward``: returns y, mean (float32), rstd (float32)."""
    plan = _plans.get(_key(_LAYER_NORM, x, None, weight, bias))
    if plan is None:
        _check("layer_norm_forward", "x", x, parameters={"weight": weight, "bias": bias})
        if _kernels_take(x, weight, bias) and not _empty_rows(x):
            plan, x, _, weight, bias = _forward_plan(_LAYER_NORM, x, None, weight, bias)
        if plan is None:
            return reference.layer_norm_forward(x, weight, bias, eps)
    y, _, mean, rstd = _forward(plan, x, None, weight, bias, eps)
    return y, mean, rstd


def layer_norm_backward(dy, x, weight, mean, rstd, need_bias_grad=True):
    """As ``reference.layer_norm_backward``: returns dx, dweight or None, dbias or None."""
    options = ("backward", need_bias_grad, 0.0, "gemma")
    plan = _plans.get(_key(options, dy, None, x, weight, mean, rstd))
    if plan is None:
        _check("layer_norm_backward", "x", x, like={"dy": dy}, parameters={"weight": weight},
               statistics={"mean": mean, "rstd": rstd})
        if _kernels_take(dy, x, weight) and not _empty_rows(x):
            plan, dy, _, x, weight, mean, rstd = _backward_plan(options, dy, None, x, weight,
                                                                mean, rstd)
        if plan is None:
            return reference.layer_norm_backward(dy, x, weight, mean, rstd, need_bias_grad)
    return _backward(plan, dy, None, x, weight, mean, rstd)


def rms_norm_forward(x, weight, eps, offset=0.0, casting="llama"):
    """As ``reference.rms_norm_forward`` (w' = offset + w and ``casting`` in the one
    launch; ``weight`` may be float32 beside float16 / bfloat16 x): returns y (x's dtype;
    float32 for "llama" with a float32 weight beside 16-bit x) and rstd (float32)."""
    options = ("forward", False, offset, casting)
    plan = _plans.get(_key(options, x, None, weight, None))
    if plan is None:
        _check("rms_norm_forward", "x", x, parameters={"weight": weight})
        if _rms_plan(x, weight, casting) and not _empty_rows(x):
            plan, x, _, weight, _ = _forward_plan(options, x, None, weight, None)
        if plan is None:
            return reference.rms_norm_forward(x, weight, eps, offset, casting)
    y, _, _, rstd = _forward(plan, x, None, weight, None, eps)
    return y, rstd


def rms_norm_backward(dy, x, weight, rstd, offset=0.0, casting="llama"):
    """As ``reference.rms_norm_backward`` (dy in y's dtype): returns dx (x's dtype) and
    dweight (the weight's) or None."""
    options = ("backward", False, offset, casting)
    plan = _plans.get(_key(options, dy, None, x, weight, None, rstd))
    if plan is None:
        _check("rms_norm_backward", "x", x, like={"dy": dy}, parameters={"weight": weight},
               statistics={"rstd": rstd})
        if _rms_plan(x, weight, casting, dy=dy) and not _empty_rows(x):
            plan, dy, _, x, weight, _, rstd = _backward_plan(options, dy, None, x, weight,
                                                             None, rstd)
        if plan is None:
            return reference.rms_norm_backward(dy, x, weight, rstd, offset, casting)
    return _backward(plan, dy, None, x, weight, None, rstd)[:2]


def add_layer_norm_forward(x, residual, weight, bias, eps):
    """As ``reference.add_layer_norm_forward``: returns y, s = x + residual, mean, rstd."""
    plan = _plans.get(_key(_LAYER_NORM, x, residual, weight, bias))
    if plan is None:
        _check("add_layer_norm_forward", "x", x, like={"residual": residual},
               parameters={"weight": weight, "bias": bias})
        if _kernels_take(x, residual, weight, bias) and not _empty_rows(x):
            plan, x, residual, weight, bias = _forward_plan(_LAYER_NORM, x, residual, weight,
                                                            bias)
        if plan is None:
            return reference.add_layer_norm_forward(x, residual, weight, bias, eps)
    return _forward(plan, x, residual, weight, bias, eps)


def add_layer_norm_backward(dy, ds, s, weight, mean, rstd, need_bias_grad=True):
    """As ``reference.add_layer_norm_backward``: returns d_sum, dweight, dbias."""
    options = ("backward", need_bias_grad, 0.0, "gemma")
    plan = _plans.get(_key(options, dy, ds, s, weight, mean, rstd))
    if plan is None:
        _check("add_layer_norm_backward", "s", s, like={"dy": dy, "ds": ds},
               parameters={"weight": weight}, statistics={"mean": mean, "rstd": rstd})
        if _kernels_take(dy, ds, s, weight) and not _empty_rows(s):
            plan, dy, ds, s, weight, mean, rstd = _backward_plan(options, dy, ds, s, weight,
                                                                 mean, rstd)
        if plan is None:
            return reference.add_layer_norm_backward(dy, ds, s, weight, mean, rstd,
                                                     need_bias_grad)
    return _backward(plan, dy, ds, s, weight, mean, rstd)


def add_rms_norm_forward(x, residual, weight, eps, offset=0.0, casting="llama"):
    """As ``reference.add_rms_norm_forward`` (``offset``, ``casting`` and a float32 weight
    as in ``rms_norm_forward``): returns y, s = x + residual (x's dtype), rstd."""
    options = ("forward", False, offset, casting)
    plan = _plans.get(_key(options, x, residual, weight, None))
    if plan is None:
        _check("add_rms_norm_forward", "x", x, like={"residual": residual},
               parameters={"weight": weight})
        if _rms_plan(x, weight, casting, same=(residual,)) and not _empty_rows(x):
            plan, x, residual, weight, _ = _forward_plan(options, x, residual, weight, None)
        if plan is None:
            return reference.add_rms_norm_forward(x, residual, weight, eps, offset, casting)
    y, s, _, rstd = _forward(plan, x, residual, weight, None, eps)
    return y, s, rstd


def add_rms_norm_backward(dy, ds, s, weight, rstd, offset=0.0, casting="llama"):
    """As ``reference.add_rms_norm_backward`` (ds in s's dtype): returns d_sum and
    dweight."""
    options = ("backward", False, offset, casting)
    plan = _plans.get(_key(options, dy, ds, s, weight, None, rstd))
    if plan is None:
        _check("add_rms_norm_backward", "s", s, like={"dy": dy, "ds": ds},
               parameters={"weight": weight}, statistics={"rstd": rstd})
        if _rms_plan(s, weight, casting, same=(ds,), dy=dy) and not _empty_rows(s):
            plan, dy, ds, s, weight, _, rstd = _backward_plan(options, dy, ds, s, weight,
                                                              None, rstd)
        if plan is None:
            return reference.add_rms_norm_backward(dy, ds, s, weight, rstd, offset, casting)
    return _backward(plan, dy, ds, s, weight, None, rstd)[:2]


# Every other kernel is the reference's, whose array code runs on CuPy unchanged: BatchNorm
# (it reduces over (N, L) per channel, not over rows: CuPy's own reduction kernels), and
# the elementwise DyT and GELU (CuPy's expressions, cupyx's erf).
__getattr__ = reference.fallback(__name__)

__all__ = ["add_layer_norm_backward", "add_layer_norm_forward", "add_rms_norm_backward",
           "add_rms_norm_forward", "backward_config", "forward_config", "launch_config",
           "layer_norm_backward", "layer_norm_forward", "name_expressions",
           "rms_norm_backward", "rms_norm_forward", "vector_width"]
