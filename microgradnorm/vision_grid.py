"""``F.affine_grid`` and ``F.grid_sample`` with PyTorch's semantics: the sampling grid of an
affine map and the sampling of an input at a grid's positions, the two halves of a spatial
transformer network.

``affine_grid`` is a composition: a constant base grid (torch's ``linspace`` from -1 to 1 per
spatial dim, and a column of ones) times θᵀ (one ``matmul``), so θ's gradient is matmul's,
as torch's (``affine_grid_generator`` is a ``bmm``).

``grid_sample`` is one node, ``GridSample``, with a closed-form backward: a composition of
gathers would record one node per tap and per padding step, and its grid gradient would be
the product rule through ``floor`` (zero) and the clamps, which torch's kernel overrides at
the borders (there a coordinate gets no gradient). Each output position reads a few input
positions ("taps": the 2ᵈ corners around it for bilinear, the nearest one, 4 × 4 for
bicubic), each with a weight; the forward sums weight · value in torch's order, the input's
gradient scatters g · weight back to each tap, the grid's is Σ value · ∂weight/∂position · g
times the unnormalization's scale and the padding's slope (0 where a clamp holds, -1 where a
reflection flips). The positions are computed as torch's CPU kernels compute them: the
vectorized 2-D kernel (``(x + 1) · size/2 - 1/2`` as one FMA, so a position on a pixel's
centre floors as torch's; reflections through a truncated division) and the scalar 3-D one
(``((x + 1) · size - 1) / 2``, reflections through ``fmod``), so float64 values agree with
torch's to the last bit or so (its scatters add in another order)."""

import numbers
import warnings

import numpy as np

from . import backend, dtypes
from .autograd.function import Function
from .dtypes import is_floating, is_half, torch_name
from .ops.base import check_tensor, constant
from .ops.linalg import matmul
from .tensor import Tensor

__all__ = ["affine_grid", "grid_sample", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d"]

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")
CUBIC_A = -0.75                        # the cubic convolution constant, torch's (and OpenCV's)
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


# ----- source positions: unnormalize, then pad, with the slope of each step ------------------
def _unnormalize(coord, size, align_corners, vector):
    """Grid values in [-1, 1] as input positions along a dim of ``size``, and the scale
    d position / d grid: [-1, 1] onto the corner pixels' centres (``align_corners``) or
    onto their outer edges. ``vector``: the 2-D kernel's arithmetic, else the 3-D one's."""
    dtype = coord.dtype.type
    scale = dtype(size - 1) / 2 if align_corners else dtype(size) / 2
    if vector:
        # torch's build contracts the 2-D kernel's multiply and subtract into one FMA
        position = (coord + 1) * scale if align_corners else \
            backend.fused_multiply_add(coord + 1, scale, dtype(-0.5))
    else:
        position = (coord + 1) / 2 * dtype(size - 1) if align_corners else \
            ((coord + 1) * dtype(size) - 1) / 2
    return position, scale


def _clip(position, size):
    # into [0, size - 1]; slope 1 strictly inside, 0 on and beyond the borders (torch's)
    top = position.dtype.type(size - 1)
    inside = (position > 0) & (position < top)
    return np.minimum(np.maximum(position, 0), top), inside.astype(position.dtype)


def _reflect(position, size, align_corners, vector):
    """``position`` reflected into the input's span (the corner centres with
    ``align_corners``, else the outer edges), and its slope ±1."""
    dtype = position.dtype.type
    if align_corners and size <= 1:
        return np.zeros_like(position), np.zeros_like(position)
    low = dtype(0) if align_corners else dtype(-0.5)
    span = dtype(size - 1) if align_corners else dtype(size)
    shifted = position - low
    distance = np.abs(shifted)
    if vector:                          # the 2-D kernel: modulo the double span, then fold
        twice = span * 2
        extra = distance - np.trunc(distance / twice) * twice
        folded = twice - extra
        flip = extra > folded
        reflected = np.where(flip, folded, extra)
    else:                               # the 3-D kernel: fmod by the span, flips by parity
        extra = np.fmod(distance, span)
        flip = np.floor(distance / span) % 2 == 1
        reflected = np.where(flip, span - extra, extra)
    slope = np.where(flip != (shifted < 0), dtype(-1), dtype(1))
    return reflected + low, slope


def _source(coord, size, padding_mode, align_corners, vector):
    """(input positions along one dim, d position / d grid value) of a grid coordinate."""
    position, scale = _unnormalize(coord, size, align_corners, vector)
    slope = np.full_like(position, scale)
    with np.errstate(invalid="ignore"):
        if padding_mode == "reflection":
            position, flips = _reflect(position, size, align_corners, vector)
            slope = slope * flips
        if padding_mode != "zeros":
            position, inside = _clip(position, size)
            slope = slope * inside
            if vector:                  # the 2-D kernel clamps NaN to 0
                position = np.where(np.isnan(position), 0, position)
        if not vector:                  # the 3-D kernel's safe_downgrade_to_int_range
            far = ~np.isfinite(position) | (np.abs(position) > 2.0 ** 31 - 2)
            position = np.where(far, position.dtype.type(-100), position)
    return position, slope


def _in_bounds(index, size):
    return (index >= 0) & (index < size)


def _as_index(position):
    # float positions (whole numbers) as int64; NaN, inf and the far out of range far below
    # 0, where a neighbour (+ 1, + 2) is still outside, as the kernels' int conversion
    finite = np.isfinite(position) & (np.abs(position) < 2.0 ** 62)
    return np.where(finite, position, -2.0 ** 62).astype(np.int64)


# ----- the taps of each mode ------------------------------------------------------------------
class _Taps:
    """What one output position reads: ``index`` (T, N, P) into the flattened spatial input,
    ``valid`` (T, N, P) (a tap outside the input reads 0), ``weight`` (T, N, P), and for
    the grid's gradient ``slopes`` (dims, T, N, P), ∂weight/∂position per spatial dim
    (x first), with ``scales`` (dims, N, P), d position / d grid value."""

    def __init__(self, index, valid, weight, slopes, scales):
        self.index, self.valid, self.weight = index, valid, weight
        self.slopes, self.scales = slopes, scales


def _flat_index(indices, sizes):
    # per-dim indices (x first) into the row-major flattened spatial dims ``sizes`` (D, H, W)
    flat = np.zeros_like(indices[0])
    for index, size in zip(indices[::-1], sizes):
        flat = flat * size + index
    return flat


def _corner_taps(positions, sizes, vector):
    """Bilinear (trilinear) taps: the 2ᵈ corners around each position, the x bit fastest
    (torch's nw, ne, sw, se; tnw ... bse), weight Π per-dim weights (x first)."""
    dims = len(positions)
    spans = sizes[::-1]                                              # W, H(, D)
    lows = [np.floor(p) for p in positions]
    highs_w = [p - f for p, f in zip(positions, lows)]               # weight of f + 1
    lows_w = [1 - w if vector else (f + 1) - p for w, f, p in zip(highs_w, lows, positions)]
    index, valid, weight, slopes = [], [], [], [[] for _ in range(dims)]
    for corner in range(2 ** dims):
        bits = [(corner >> d) & 1 for d in range(dims)]
        idx = [_as_index(f) + b for f, b in zip(lows, bits)]
        ok = np.logical_and.reduce([_in_bounds(i, n) for i, n in zip(idx, spans)])
        per_dim = [hw if b else lw for hw, lw, b in zip(highs_w, lows_w, bits)]
        w = per_dim[0]
        for other in per_dim[1:]:
            w = w * other
        for d in range(dims):           # ∂w/∂x_d: ±1 times the other dims' weights
            rest = [per_dim[e] for e in range(dims) if e != d]
            part = rest[0] if len(rest) == 1 else rest[0] * rest[1]
            slopes[d].append(part if bits[d] else -part)
        index.append(_flat_index([np.where(ok, i, 0) for i in idx], sizes))
        valid.append(ok)
        weight.append(w)
    return index, valid, weight, slopes


def _nearest_taps(positions, sizes):
    # the nearest input position, halves to even (torch's round / nearbyint)
    idx = [_as_index(np.rint(p)) for p in positions]
    ok = np.logical_and.reduce([_in_bounds(i, n) for i, n in zip(idx, sizes[::-1])])
    zero = np.zeros_like(positions[0])
    return ([_flat_index([np.where(ok, i, 0) for i in idx], sizes)], [ok],
            [np.ones_like(positions[0])], [[zero] for _ in positions])


def _cubic(t):
    """The cubic convolution weights of the taps at -1, 0, 1, 2 from a position t in [0, 1)
    past the second, and minus their derivatives in t (torch's polynomials, A = -0.75)."""
    a = CUBIC_A

    def outer(x):                       # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    def inner(x):                       # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1
    weights = (outer(t + 1), inner(t), inner(1 - t), outer(2 - t))
    x0, x1, x2, x3 = -1 - t, 0 - t, 1 - t, 2 - t
    slopes = ((-3 * a * x0 - 10 * a) * x0 - 8 * a, (-3 * (a + 2) * x1 - 2 * (a + 3)) * x1,
              (3 * (a + 2) * x2 - 2 * (a + 3)) * x2, (3 * a * x3 - 10 * a) * x3 + 8 * a)
    return weights, slopes


def _cubic_taps(coords, sizes, padding_mode, align_corners):
    """Bicubic taps (4-D input): 4 × 4 around each position, y rows outer, each tap's
    integer position padded as torch pads it (its slope not applied: torch's bicubic grid
    gradient is the cubic weights' alone, times the unnormalization's scale)."""
    (height, width) = sizes
    positions, scales = [], []
    for coord, size in zip(coords, (width, height)):
        position, scale = _unnormalize(coord, size, align_corners, vector=True)
        positions.append(position)
        scales.append(np.full_like(position, scale))
    (wx, sx), (wy, sy) = (_cubic(p - np.floor(p)) for p in positions)
    base = [np.floor(p) for p in positions]
    index, valid, weight, slopes = [], [], [], [[], []]
    for j in range(4):                  # tap t = 4j + i: rows (y) outer, as torch's forward
        for i in range(4):
            idx = []
            for start, offset, size in ((base[0], i - 1, width), (base[1], j - 1, height)):
                position = start + offset
                if padding_mode != "zeros":
                    position, _ = _source_of_tap(position, size, padding_mode, align_corners)
                idx.append(_as_index(position))
            ok = _in_bounds(idx[0], width) & _in_bounds(idx[1], height)
            index.append(_flat_index([np.where(ok, k, 0) for k in idx], sizes))
            valid.append(ok)
            weight.append((wx[i], wy[j]))               # the pair: g · wx · wy, in order
            slopes[0].append((sx[i], wy[j]))            # -∂w/∂x = -wx' · wy
            slopes[1].append((sy[j], wx[i]))            # -∂w/∂y = -wy' · wx
    return index, valid, weight, slopes, scales


def _source_of_tap(position, size, padding_mode, align_corners):
    # a bicubic tap's position through the padding alone (no unnormalization)
    with np.errstate(invalid="ignore"):
        if padding_mode == "reflection":
            position, _ = _reflect(position, size, align_corners, vector=True)
        return _clip(position, size)


def _plan(grid, sizes, mode, padding_mode, align_corners):
    """The taps of every output position of ``grid`` (N, *out, dims) over an input of
    spatial ``sizes``, flattened to (N, P)."""
    n, dims, points = grid.shape[0], grid.shape[-1], int(np.prod(grid.shape[1:-1]))
    coords = [grid[..., d].reshape(n, points) for d in range(dims)]   # x, y(, z): (N, P)
    if mode == "bicubic":
        return _Taps(*_cubic_taps(coords, sizes, padding_mode, align_corners))
    vector = dims == 2
    positions, scales = zip(*(_source(c, size, padding_mode, align_corners, vector)
                              for c, size in zip(coords, sizes[::-1])))
    if mode == "nearest":
        return _Taps(*_nearest_taps(positions, sizes), scales)
    return _Taps(*_corner_taps(positions, sizes, vector), scales)


def _read(flat, index, valid):
    # flat (N, C, S) at index (N, P), 0 where not valid: (N, C, P)
    values = np.take_along_axis(flat, index[:, None, :], axis=-1)
    return np.where(valid[:, None, :], values, 0)


def _sequential_sum(terms):
    # Σ over axis 1 in order, as a kernel's running sum adds them (np.sum pairs them)
    return np.cumsum(terms, axis=1)[:, -1] if terms.shape[1] else terms.sum(axis=1)


class GridSample(Function):
    r"""``input`` (N, C, *in) sampled at ``grid`` (N, *out, d): out[n, c, p] =
    Σₜ wₜ(p) · input[n, c, iₜ(p)] over the taps of ``mode`` (``_plan``).

    Backward: :math:`g_{input}[n, c, i_t(p)] \mathrel{+}= w_t(p)\, g[n, c, p]` and
    :math:`g_{grid}[n, p, k] = s_k(p) \sum_c \sum_t input[n, c, i_t(p)]\,
    \partial w_t / \partial x_k \; g[n, c, p]`, s_k the position's slope in the grid value
    (0 for nearest, whose weights are constant)."""

    @staticmethod
    def forward(ctx, input, grid, mode, padding_mode, align_corners):
        xp = backend.array_module(input)
        wide = np.float32 if is_half(input.dtype) else input.dtype
        x = backend.to_numpy(input).astype(wide, copy=False)
        g = backend.to_numpy(grid).astype(wide, copy=False)
        ctx.save_for_backward(input, grid)
        ctx.options = mode, padding_mode, align_corners
        n, c, *sizes = x.shape
        taps = _plan(g, tuple(sizes), mode, padding_mode, align_corners)
        flat = x.reshape(n, c, int(np.prod(sizes)))
        if mode == "bicubic":
            out = _bicubic_sum(flat, taps)
        else:
            out = np.zeros((n, c, taps.index[0].shape[1]), wide)
            for index, valid, weight in zip(taps.index, taps.valid, taps.weight):
                out = out + _read(flat, index, valid) * weight[:, None, :]
        out = out.reshape((n, c) + grid.shape[1:-1]).astype(input.dtype, copy=False)
        return xp.asarray(out)

    @staticmethod
    def backward(ctx, grad):
        input, grid = ctx.saved
        mode, padding_mode, align_corners = ctx.options
        xp = backend.array_module(input)
        wide = np.float32 if is_half(input.dtype) else input.dtype
        x = backend.to_numpy(input).astype(wide, copy=False)
        g = backend.to_numpy(grid).astype(wide, copy=False)
        n, c, *sizes = x.shape
        taps = _plan(g, tuple(sizes), mode, padding_mode, align_corners)
        flat = x.reshape(n, c, int(np.prod(sizes)))
        gout = backend.to_numpy(grad).astype(wide, copy=False)
        gout = gout.reshape(n, c, int(np.prod(grid.shape[1:-1])))                  # (N, C, P)
        grad_input = grad_grid = None
        if ctx.needs_input_grad[0]:
            grad_input = _scatter(gout, taps, flat.shape).reshape(x.shape)
            grad_input = xp.asarray(grad_input.astype(input.dtype, copy=False))
        if ctx.needs_input_grad[1]:
            if mode == "nearest":
                grad_grid = np.zeros(grid.shape, wide)
            else:
                grad_grid = _grid_gradient(flat, gout, taps, mode, len(sizes))
                grad_grid = grad_grid.reshape(grid.shape)
            grad_grid = xp.asarray(grad_grid.astype(grid.dtype, copy=False))
        return grad_input, grad_grid


def _weighted(gout, taps, t):
    # g · wₜ; a bicubic weight is a pair (wx, wy), g · wx · wy in torch's order
    weight = taps.weight[t]
    if isinstance(weight, tuple):
        return gout * weight[0][:, None, :] * weight[1][:, None, :]
    return gout * weight[:, None, :]


def _bicubic_sum(flat, taps):
    # torch's order: each row's four taps along x, then the four rows along y
    wy = [taps.weight[4 * j][1] for j in range(4)]
    out = 0
    for j in range(4):
        row = 0
        for i in range(4):
            t = 4 * j + i
            row = row + taps.weight[t][0][:, None, :] * _read(flat, taps.index[t],
                                                              taps.valid[t])
        out = out + wy[j][:, None, :] * row
    return out


def _scatter(gout, taps, shape):
    """Σ over taps of g · weight added into each tap's input position: (N, C, S)."""
    n, c, s = shape
    cells = (np.arange(n)[:, None, None] * c + np.arange(c)[None, :, None]) * s     # (N, C, 1)
    targets, amounts = [], []
    for t, (index, valid) in enumerate(zip(taps.index, taps.valid)):
        keep = np.broadcast_to(valid[:, None, :], gout.shape)
        targets.append((cells + index[:, None, :])[keep])
        amounts.append(_weighted(gout, taps, t)[keep])
    total = np.bincount(np.concatenate(targets), np.concatenate(amounts).astype(np.float64),
                        minlength=n * c * s) if targets else np.zeros(n * c * s)
    return total.reshape(shape).astype(gout.dtype, copy=False)


def _grid_gradient(flat, gout, taps, mode, dims):
    """(N, P, dims): Σ_c Σₜ value · ∂wₜ/∂x_k · g, summed in torch's order, times the
    positions' slopes."""
    values = [_read(flat, index, valid) for index, valid in zip(taps.index, taps.valid)]
    n, c, p = gout.shape
    if mode == "bilinear" and dims == 2:
        # torch's 2-D kernel groups the corners: gx += ((ne - nw) y0 + (se - sw) y1) g, y0
        # and y1 the rows' weights (∂w/∂x of nw is -y0, of sw -y1), the same for gy
        nw, ne, sw, se = values
        (nw_x, _, _, se_x), (nw_y, ne_y, _, _) = taps.slopes     # -y0, y1; -x0, -x1
        y0, y1, x0, x1 = (-nw_x[:, None, :], se_x[:, None, :], -nw_y[:, None, :],
                          -ne_y[:, None, :])
        sums = [_sequential_sum(((ne - nw) * y0 + (se - sw) * y1) * gout),
                _sequential_sum(((sw - nw) * x0 + (se - ne) * x1) * gout)]
    elif mode == "bicubic":
        # per channel, x tap, y tap (torch's loops): g_k -= value · g · (-w_k') · w_other
        order = [4 * j + i for i in range(4) for j in range(4)]
        sums = [_sequential_sum(np.stack(
            [-(values[t] * gout * taps.slopes[k][t][0][:, None, :]
               * taps.slopes[k][t][1][:, None, :]) for t in order], axis=2).reshape(n, -1, p))
            for k in range(2)]
    else:
        # per channel, then per tap: value · ∂w/∂x_k · g
        sums = [_sequential_sum(np.stack([v * taps.slopes[k][t][:, None, :] * gout
                                          for t, v in enumerate(values)], axis=2)
                                .reshape(n, -1, p)) for k in range(dims)]
    return np.stack([total * scale for total, scale in zip(sums, taps.scales)], axis=-1)


# ----- the public functions -------------------------------------------------------------------
def _align(align_corners):
    # torch's default, False, with its warning
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


def _check_sampler(input, grid, mode):
    """torch's checks of ``grid_sampler``, in its order."""
    for position, (name, value) in enumerate((("input", input), ("grid", grid)), start=1):
        if not isinstance(value, Tensor):
            raise TypeError(f"grid_sampler(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.ndim and grid.ndim and input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes}")
    if grid.ndim and grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in "
                           f"last dimension, but got grid with sizes {list(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")
    dims = 4 if input.ndim == 4 else 5
    if input.ndim != dims or grid.ndim != dims:
        raise RuntimeError(f"grid_sampler(): expected {dims}D input and grid with same number of "
                           f"dimensions, but got {sizes}")
    if dims == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not is_floating(input.dtype):
        kernel = "grid_sampler_2d_cpu_kernel_impl" if dims == 4 else "grid_sampler3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{torch_name(input.dtype)}'")
    if grid.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {torch_name(input.dtype)} but found "
                           f"{torch_name(grid.dtype)}")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    r"""Sample ``input`` at the positions of ``grid`` (``F.grid_sample``): output
    [n, c, h, w] is input[n, c] read at (x, y) = grid[n, h, w], x and y in [-1, 1] from
    the left and top edges to the right and bottom ones (5-D: (x, y, z) over (W, H, D)).

    A grid value :math:`g` maps to the input position :math:`(g + 1)(size - 1)/2` with
    ``align_corners=True`` (±1 the corner pixels' centres), else :math:`((g + 1)\,size -
    1)/2` (±1 their outer edges; the default, with torch's warning when not given). One
    node, ``GridSample`` (its docstring: why not a composition of gathers).

    Args:
        input: (N, C, H, W), or (N, C, D, H, W) for "bilinear" and "nearest"; floating.
        grid: (N, H_out, W_out, 2), or (N, D_out, H_out, W_out, 3); input's dtype.
        mode: "bilinear" (trilinear for 5-D), "nearest" (halves to even; no gradient for
            the grid: zeros, as torch's) or "bicubic" (cubic convolution, A = -0.75).
        padding_mode: what a position outside reads: "zeros", "border" (the nearest edge
            value) or "reflection" (the input mirrored at its edges).
        align_corners: as above.

    Shape: (N, C, H_out, W_out) (or (N, C, D_out, H_out, W_out)).

    Example:
        >>> theta = mg.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])        # the identity
        >>> grid = F.affine_grid(theta, [1, 1, 4, 4], align_corners=False)
        >>> F.grid_sample(x, grid, align_corners=False)                    # x itself
    """
    if mode not in MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    align_corners = _align(align_corners)
    _check_sampler(input, grid, mode)
    return GridSample.apply(input, grid, mode=mode, padding_mode=padding_mode,
                            align_corners=align_corners)


def _linspace_from_minus_one(steps, align_corners, dtype):
    """torch's ``linspace(-1, 1, steps)`` (each half from its own end), scaled by
    (steps - 1)/steps without ``align_corners``; 0 for a single step."""
    if steps <= 1:
        return np.zeros(1, dtype)
    step = dtype.type(2) / dtype.type(steps - 1)
    i = np.arange(steps)
    fma = backend.fused_multiply_add         # torch's linspace rounds each point once
    values = np.where(i < steps // 2, fma(i.astype(dtype), step, dtype.type(-1)),
                      fma((steps - 1 - i).astype(dtype), -step, dtype.type(1))).astype(dtype)
    return values if align_corners else values * dtype.type(steps - 1) / dtype.type(steps)


def affine_grid(theta, size, align_corners=None):
    r"""The sampling grid of affine maps θ (``F.affine_grid``), for ``grid_sample``: output
    position p (its normalized coordinates in [-1, 1], x first, and a 1) maps to θ p.

    A composition: a constant base grid (torch's linspace from -1 to 1 along each spatial
    dim, scaled by (n - 1)/n without ``align_corners``, 0 along a dim of one) times θᵀ,
    one ``matmul``, whose gradient is θ's.

    Args:
        theta: (N, 2, 3) for a 4-D ``size``, (N, 3, 4) for a 5-D one; floating.
        size: the output's size, (N, C, H, W) or (N, C, D, H, W).
        align_corners: as ``grid_sample``'s (False when None, with torch's warning).

    Shape: (N, H, W, 2) or (N, D, H, W, 3).

    Example:
        >>> F.affine_grid(mg.eye(2, 3).unsqueeze(0), [1, 3, 8, 8], align_corners=False).shape
    """
    align_corners = _align(align_corners)
    check_tensor("affine_grid", theta)
    if not is_floating(theta.dtype):
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"torch.{np.dtype(theta.dtype).name}")
    size = [int(n) for n in size] if all(isinstance(n, numbers.Integral) for n in size) \
        else list(size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    dims = len(size) - 2
    if theta.ndim != 3 or theta.shape[-2:] != (dims, dims + 1):
        shape = "Nx2x3" if dims == 2 else "Nx3x4"
        raise ValueError(f"Expected a batch of {dims}D affine matrices of shape {shape} for "
                         f"size {size}. Got {theta.shape}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    if theta.shape[0] != n:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {dims + 1}] but got: [{theta.shape[0]}, {dims + 1}].")
    dtype = np.dtype(np.float32) if is_half(theta.dtype) else np.dtype(theta.dtype)
    axes = [_linspace_from_minus_one(k, align_corners, dtype) for k in spatial]   # z, y, x
    mesh = list(np.meshgrid(*axes, indexing="ij"))[::-1]               # x, y(, z): spatial
    base = np.stack(mesh + [np.ones(tuple(spatial), dtype)], axis=-1)  # (*spatial, dims + 1)
    base = np.broadcast_to(base.reshape(1, -1, dims + 1), (n, base[..., 0].size, dims + 1))
    base = constant(theta.xp.asarray(base.astype(theta.dtype)))
    return matmul(base, theta.mT).reshape(n, *spatial, dims)            # (N, *spatial, dims)


def _modes(fn, interpolation_mode, padding_mode):
    # torch's parser types both as int: a float, a bool, None is its TypeError
    return (dtypes.int_argument(fn, "interpolation_mode", interpolation_mode, 3),
            dtypes.int_argument(fn, "padding_mode", padding_mode, 4))


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler``, the op under ``F.grid_sample``: its mode and padding as
    torch's enums, 0, 1, 2 for "bilinear", "nearest", "bicubic" and for "zeros", "border",
    "reflection"; ``align_corners`` a bool."""
    interpolation_mode, padding_mode = _modes("grid_sampler", interpolation_mode, padding_mode)
    if interpolation_mode not in range(3) or padding_mode not in range(3):
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode and padding_mode in "
                           f"0, 1, 2, got {interpolation_mode} and {padding_mode}")
    return grid_sample(input, grid, MODES[interpolation_mode], PADDINGS[padding_mode],
                       bool(align_corners))


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler_2d``: ``grid_sampler`` of a 4-D input."""
    interpolation_mode, padding_mode = _modes("grid_sampler_2d", interpolation_mode,
                                              padding_mode)
    if getattr(input, "ndim", None) != 4:
        raise RuntimeError(f"grid_sampler_2d(): expected 4D input, got {input.ndim}D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """``torch.grid_sampler_3d``: ``grid_sampler`` of a 5-D input."""
    if getattr(input, "ndim", None) != 5:
        raise RuntimeError(f"grid_sampler_3d(): expected 5D input, got {input.ndim}D")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)
