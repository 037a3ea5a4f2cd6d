// Fused row norms: LayerNorm and RMSNorm, each optionally fused with a residual add,
// forward and closed-form backward, plus the second-stage reduction of dweight / dbias.
//
// The math is kernels/reference.py's (docs/derivations.md); docs/gpu.md walks through it.
// kernels/cuda.py compiles it with NVRTC (no host C++ headers: include only what NVRTC has)
// and instantiates the templates from its table, which tests/test_cuda_compile.py reads too.
//
// Template parameters, chosen per call by the launch configuration in cuda.py:
//   T    storage type of x, y, dy, dx, weight, bias: float, __half or __nv_bfloat16.
//        Every sum and every formula runs in float32; T is only loaded and stored, and
//        rounded to where a casting mode says so (below).
//   W    storage type of the RMSNorm weight, last and defaulting to T: float with __half
//        or __nv_bfloat16 input is the mixed precision of real checkpoints (a float32
//        weight, half activations). LayerNorm runs with W = T only.
//   VEC  elements per load/store: 16 / sizeof(T) (a 16-byte vector) when every pointer is
//        16-byte aligned, else 1. A row length that VEC does not divide moves its partial
//        first and last packs element by element (RowSpan below).
//   NV   vectors each thread keeps in registers: a row of D elements is spread over
//        G threads x NV vectors x VEC elements, so it is read from memory exactly once.
//   MAX_BLOCK  __launch_bounds__: 512 where the launcher may use a block of more than 256
//        threads (the budget is then 65536 / 512 = 128 registers a thread), else 256 (255
//        registers, the most a thread has): no small block is held to a large one's budget.
//
// RMSNorm conventions (kernels/reference.py defines them; runtime arguments
// `weight_offset` and `casting`, one launch whatever they are). The weight used is
// w' = offset + w, formed in the weight's compute dtype: float32 for CASTING_FLOAT32, T for
// CASTING_NONE, W for CASTING_LLAMA (the host passes the offset rounded to it). Then, with
// the statistics always in float32 from the values of x:
//   CASTING_FLOAT32 ("gemma", and every LayerNorm): y = (x̂ · w') rounded once to T.
//   CASTING_LLAMA: x̂ = x · rstd rounded to T, y = x̂ · w' in W (float y for a float weight).
//   CASTING_NONE:  rstd rounded to T, x̂ = x · rstd and y = x̂ · w' each rounded to T.
// Each product of two values of T is exact in float32, so rounding it once to T is what an
// operation in T gives. The backward is the same closed form in every mode, with w' for
// the weight; its dy has y's dtype (float for CASTING_LLAMA with a float weight).
// With T = float every rounding to T is the identity: the modes coincide, as they should.
//
// Memory-level parallelism: every kernel issues all the loads of a row before it uses any
// (all NV vectors of a thread in flight at once), and those with one vector a thread issue
// the next row's too (NORM_PREFETCH_NV); docs/gpu.md, "All loads of a row first".
//
// Row mapping (G = threads_per_row, a runtime argument): G == 32 puts one warp on a row and
// several rows in a block (short rows); G == blockDim.x puts one block on a row (long rows).
// Thread `lane` of a row group owns the vectors lane, lane + G, lane + 2G, ... of every row it
// visits, and so always the same columns: that is what lets the backward kernel keep its
// dweight / dbias partial sums in registers across rows.

// Both headers come with the CUDA runtime headers (the "gpu" extra, cupy-cuda12x[ctk]); CuPy
// itself ships neither. bfloat16 is compiled only into the module built with
// -DMICROGRADNORM_BFLOAT16 (cuda.py), so a program that never uses it skips its compile.
// CuPy compiles with -ftz=true: float32 denormals are flushed to zero (docs/gpu.md).
#include <cuda_fp16.h>
#ifdef MICROGRADNORM_BFLOAT16
#include <cuda_bf16.h>
#endif

// Blocks an SM must hold at once, the second __launch_bounds__ argument: two 512-thread
// blocks (64 registers a thread) where a thread holds at most 4 values, so the backward's
// one-wave grid keeps 1024 threads an SM; else one, which leaves the register budget to
// MAX_BLOCK alone (more than 4 values a thread spill at 64 registers; so do 4 of an
// UNEVEN row).
#define MIN_BLOCKS(max_block, values, uneven) \
    (((max_block) == 512 && (values) <= 4 && !(uneven)) ? 2 : 1)

// The widest row the backward kernel's warp mapping takes (cuda.py's FOLD_COLS): its groups
// fold their dweight / dbias sums through shared memory of this many columns.
#define NORM_FOLD_COLS 1024

// Kernels whose threads hold this many vectors of a row prefetch the next row (cuda.py's
// PREFETCH_NV): a second buffer of one vector costs few registers, of more a resident block.
#define NORM_PREFETCH_NV 1

// The `casting` argument (cuda.py's CASTING_CODES).
#define CASTING_FLOAT32 0
#define CASTING_LLAMA 1
#define CASTING_NONE 2

// std::is_same and std::conditional, which NVRTC (no host C++ headers) does not provide.
template <typename A, typename B> struct SameType { static constexpr bool value = false; };
template <typename A> struct SameType<A, A> { static constexpr bool value = true; };
template <bool C, typename A, typename B> struct Select { using type = A; };
template <typename A, typename B> struct Select<false, A, B> { using type = B; };

// ----- storage <-> float32 ------------------------------------------------------------------
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
#ifdef MICROGRADNORM_BFLOAT16
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
#endif

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) {
    return __float2half_rn(v);
}
#ifdef MICROGRADNORM_BFLOAT16
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}
#endif

// The value of v once rounded to T (the identity for float).
template <typename T> __device__ __forceinline__ float round_to(float v) {
    return to_float(from_float<T>(v));
}

// VEC elements that move as one load/store: 16 bytes -> one 128-bit memory instruction. A
// float weight (or float y, dy) beside 16-bit x has VEC = 8: 32 bytes, two 128-bit accesses,
// so a pack is aligned to at most 16 bytes, all the host guarantees.
template <typename T, int VEC>
struct alignas(sizeof(T) * VEC < 16 ? sizeof(T) * VEC : 16) Pack {
    T v[VEC];
};

// A row whose length VEC does not divide (UNEVEN) may start inside an aligned pack, `head`
// elements into it (row * cols % VEC). The row is seen as the aligned packs that cover it:
// element k of pack j is column j * VEC + k - head. Whole packs move as one vector; the
// partial first and last packs element by element, their elements outside the row read as
// 0 and never written. With UNEVEN false (VEC divides cols) head is 0 and every pack whole,
// at compile time: those instantiations carry none of it.
template <int VEC, bool UNEVEN>
struct RowSpan {
    int head, cols;
    __device__ __forceinline__ RowSpan(long long row, int cols_)
        : head(UNEVEN ? (int)((row * cols_) % VEC) : 0), cols(cols_) {}
    __device__ __forceinline__ int packs() const {
        return UNEVEN ? (head + cols + VEC - 1) / VEC : cols / VEC;
    }
    __device__ __forceinline__ int first(int j) const { return j * VEC - head; }
    __device__ __forceinline__ bool holds(int j, int k) const {
        return !UNEVEN || (first(j) + k >= 0 && first(j) + k < cols);
    }
    __device__ __forceinline__ bool whole(int j) const {
        return !UNEVEN || (first(j) >= 0 && first(j) + VEC <= cols);
    }
};

template <typename T, int VEC, bool UNEVEN>
__device__ __forceinline__ Pack<T, VEC> load_elements(const T* row, int j,
                                                      const RowSpan<VEC, UNEVEN>& span) {
    Pack<T, VEC> pack;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
        pack.v[k] = span.holds(j, k) ? row[span.first(j) + k] : from_float<T>(0.0f);
    }
    return pack;
}

// Pack j of a row (`row` points at its first element, span.head elements past an aligned
// address).
template <typename T, int VEC, bool UNEVEN>
__device__ __forceinline__ Pack<T, VEC> load_pack(const T* row, int j,
                                                  const RowSpan<VEC, UNEVEN>& span) {
    if (span.whole(j)) return reinterpret_cast<const Pack<T, VEC>*>(row - span.head)[j];
    return load_elements<T>(row, j, span);
}

// The columns of a row's pack j from weight or bias, aligned at column 0: one vector where
// the row's packs line up with theirs (head 0).
template <typename T, int VEC, bool UNEVEN>
__device__ __forceinline__ Pack<T, VEC> load_columns(const T* columns, int j,
                                                     const RowSpan<VEC, UNEVEN>& span) {
    if (span.head == 0 && span.whole(j)) {
        return reinterpret_cast<const Pack<T, VEC>*>(columns)[j];
    }
    return load_elements<T>(columns, j, span);
}

// A pack of S loaded and converted to R (the same pack when R is S).
template <typename R, typename S, int VEC, bool UNEVEN>
__device__ __forceinline__ Pack<R, VEC> load_pack_as(const S* row, int j,
                                                     const RowSpan<VEC, UNEVEN>& span) {
    const Pack<S, VEC> loaded = load_pack<S>(row, j, span);
    if constexpr (SameType<R, S>::value) {
        return loaded;
    } else {
        Pack<R, VEC> out;
#pragma unroll
        for (int k = 0; k < VEC; ++k) out.v[k] = from_float<R>(to_float(loaded.v[k]));
        return out;
    }
}

// w' = offset + w in the weight's compute dtype: T when `in_t`, else float32 (or W, the
// same numbers: W is T or float). `offset` comes rounded to that dtype already.
template <typename T, typename W>
__device__ __forceinline__ float effective_weight(W w, float offset, bool in_t) {
    float value = to_float(w);
    if constexpr (!SameType<T, W>::value) {
        if (in_t) value = round_to<T>(value);       // a W value is a T value already
    }
    if (offset != 0.0f) {
        value += offset;
        if (in_t) value = round_to<T>(value);
    }
    return value;
}

// w' in the backward: a float weight was replaced by w' once, before the rows.
template <typename T, typename W>
__device__ __forceinline__ float backward_weight(W w, float offset, bool in_t) {
    if constexpr (SameType<T, W>::value) {
        return effective_weight<T, W>(w, offset, in_t);
    } else {
        return to_float(w);
    }
}

// Whether w' is formed in T (see the conventions above).
template <typename T, typename W>
__device__ __forceinline__ bool weight_in_t(int casting) {
    return casting == CASTING_NONE || (casting == CASTING_LLAMA && SameType<T, W>::value);
}

template <typename T, int VEC, bool UNEVEN>
__device__ __forceinline__ void store_pack(T* row, int j, const RowSpan<VEC, UNEVEN>& span,
                                           const Pack<T, VEC>& pack) {
    if (span.whole(j)) {
        reinterpret_cast<Pack<T, VEC>*>(row - span.head)[j] = pack;
        return;
    }
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
        if (span.holds(j, k)) row[span.first(j) + k] = pack.v[k];
    }
}

// ----- reductions over a row group ----------------------------------------------------------
// Butterfly (xor) shuffle: every lane ends with the same bits, because each step adds the
// same two partial sums on both sides and float addition is commutative.
__device__ __forceinline__ float warp_sum(float value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        value += __shfl_xor_sync(0xffffffffu, value, offset);
    }
    return value;
}

// Shared slots of the block-wide sums: two sets, used in turn, of two values per warp.
struct GroupSlots {
    float value[2][2][32];
};

// Sums of `a` and `b` over the G threads of a row group; every thread gets both totals. A
// warp group needs no shared memory (and no __syncthreads, so warps of one block may visit
// different numbers of rows). A block group (G == blockDim.x) writes one pair per warp into
// the slot set `parity` and adds the warps' pairs in warp order, the same on every thread.
// One barrier per call: the next call writes the other set, and the call after it (this set
// again) comes after the next call's barrier, which every reader of this set has passed.
__device__ __forceinline__ float2 group_sum2(float a, float b, int G, GroupSlots& slots,
                                             int& parity) {
    a = warp_sum(a);
    b = warp_sum(b);
    if (G == 32) return make_float2(a, b);
    const int warp = threadIdx.x / 32;
    float (*set)[32] = slots.value[parity];
    parity ^= 1;
    if (threadIdx.x % 32 == 0) {
        set[0][warp] = a;
        set[1][warp] = b;
    }
    __syncthreads();
    float2 total = make_float2(0.0f, 0.0f);
    for (int w = 0; w < G / 32; ++w) {
        total.x += set[0][w];
        total.y += set[1][w];
    }
    return total;
}

__device__ __forceinline__ float group_sum(float a, int G, GroupSlots& slots, int& parity) {
    return group_sum2(a, 0.0f, G, slots, parity).x;
}

// ----- forward ------------------------------------------------------------------------------
// y = (s - mean) * rstd * weight + bias   (LayerNorm, subtract_mean = 1)
// y = s * rstd * w'                       (RMSNorm,   subtract_mean = 0, mean_out unused)
// with s = x, or s = x + residual (rounded to T, then written to sum_out) when residual is
// given, and w' = offset + weight with the rounding of `casting` (above). y is T, or float
// for CASTING_LLAMA with a float weight beside 16-bit x. Nullable: residual/sum_out,
// weight, bias, mean_out.
// Two passes over the row held in registers: mean first, then mean((s - mean)^2), the stable
// form of the variance, as in the reference; rstd = 1 / sqrt(var + eps).
template <typename T, int VEC, int NV, int MAX_BLOCK, typename W = T, bool UNEVEN = false>
__global__ void __launch_bounds__(MAX_BLOCK, MIN_BLOCKS(MAX_BLOCK, NV * VEC, UNEVEN))
norm_forward(const T* __restrict__ x, const T* __restrict__ residual,
             const W* __restrict__ weight, const T* __restrict__ bias,
             void* __restrict__ y, T* __restrict__ sum_out,
             float* __restrict__ mean_out, float* __restrict__ rstd_out,
             long long rows, int cols, int threads_per_row, float eps, int subtract_mean,
             float weight_offset, int casting) {
    constexpr bool mixed = !SameType<T, W>::value;
    const bool float_y = mixed && casting == CASTING_LLAMA;
    const bool w_in_t = weight_in_t<T, W>(casting);
    __shared__ GroupSlots slots;
    int parity = 0;
    const int G = threads_per_row;
    const int lane = threadIdx.x % G;
    const int groups_per_block = blockDim.x / G;
    const long long num_groups = (long long)gridDim.x * groups_per_block;
    const float inv_cols = 1.0f / cols;

    // With one vector a thread (NORM_PREFETCH_NV) the launcher gives a one-wave grid whose
    // groups loop over rows: weight and bias are loaded once, and the next row's loads are
    // issued before this row is reduced, so they are in flight through its reductions and
    // stores.
    constexpr bool prefetch = NV == NORM_PREFETCH_NV;
    // Every load of a row (x and the residual; weight and bias too without prefetch),
    // issued before any of them is used.
    struct RowLoads {
        Pack<T, VEC> xs[NV], rs[NV];
    };
    Pack<W, VEC> ws[NV];
    Pack<T, VEC> bs[NV];
    // With prefetch every row of a group has the same head (the launcher's grid).
    auto load_row = [&](long long row, RowLoads& to, bool parameters) {
        const long long offset = row * cols;
        const RowSpan<VEC, UNEVEN> span(row, cols);
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            const int j = i * G + lane;
            if (j < span.packs()) {
                to.xs[i] = load_pack<T>(x + offset, j, span);
                if (residual != nullptr) to.rs[i] = load_pack<T>(residual + offset, j, span);
                if (parameters && weight != nullptr) ws[i] = load_columns<W>(weight, j, span);
                if (parameters && bias != nullptr) bs[i] = load_columns<T>(bias, j, span);
            }
        }
    };
    const long long first_row = (long long)blockIdx.x * groups_per_block + threadIdx.x / G;
    RowLoads current, next;
    if (prefetch && first_row < rows) load_row(first_row, current, true);
    for (long long row = first_row; row < rows; row += num_groups) {
        const long long offset = row * cols;
        const RowSpan<VEC, UNEVEN> span(row, cols);
        const int n_packs = span.packs();
        const bool has_next = row + num_groups < rows;
        if (!prefetch) {
            load_row(row, current, true);
        } else if (has_next) {
            load_row(row + num_groups, next, false);
        }
        Pack<T, VEC>* xs = current.xs;
        const Pack<T, VEC>* rs = current.rs;
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            const int j = i * G + lane;
            if (j < n_packs) {
                if (residual != nullptr) {
#pragma unroll
                    for (int k = 0; k < VEC; ++k) {
                        xs[i].v[k] = from_float<T>(to_float(xs[i].v[k]) + to_float(rs[i].v[k]));
                    }
                    store_pack<T>(sum_out + offset, j, span, xs[i]);
                }
#pragma unroll
                for (int k = 0; k < VEC; ++k) sum += to_float(xs[i].v[k]);
            }
        }
        const float sum_mean = subtract_mean ? group_sum(sum, G, slots, parity) * inv_cols : 0.0f;
        float squares = 0.0f, drift = 0.0f;
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            const int j = i * G + lane;
            if (j < n_packs) {
#pragma unroll
                for (int k = 0; k < VEC; ++k) {
                    const float centered = to_float(xs[i].v[k]) - sum_mean;
                    if (span.holds(j, k)) { squares += centered * centered; drift += centered; }
                }
            }
        }
        // The mean's correction step (exact on a constant row, as on the CPU), with the squares
        const float2 moments = group_sum2(squares, drift, G, slots, parity);
        const float shift = subtract_mean && isfinite(moments.y) ? moments.y * inv_cols : 0.0f;
        const float mean = sum_mean + shift;
        const float rstd = 1.0f / sqrtf(fmaxf(moments.x * inv_cols - shift * shift, 0.f) + eps);
        if (lane == 0) {
            if (mean_out != nullptr) mean_out[row] = mean;
            rstd_out[row] = rstd;
        }
        const float scale = casting == CASTING_NONE ? round_to<T>(rstd) : rstd;
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            const int j = i * G + lane;
            if (j < n_packs) {
                float values[VEC];
#pragma unroll
                for (int k = 0; k < VEC; ++k) {
                    float value = (to_float(xs[i].v[k]) - mean) * scale;         // x̂
                    if (casting != CASTING_FLOAT32) value = round_to<T>(value);
                    if (weight != nullptr) {
                        value *= effective_weight<T, W>(ws[i].v[k], weight_offset, w_in_t);
                    }
                    if (bias != nullptr) value += to_float(bs[i].v[k]);
                    values[k] = value;
                }
                if (float_y) {
                    Pack<float, VEC> out;
#pragma unroll
                    for (int k = 0; k < VEC; ++k) out.v[k] = values[k];
                    store_pack<float>(static_cast<float*>(y) + offset, j, span, out);
                } else {
                    Pack<T, VEC> out;
#pragma unroll
                    for (int k = 0; k < VEC; ++k) out.v[k] = from_float<T>(values[k]);
                    store_pack<T>(static_cast<T*>(y) + offset, j, span, out);
                }
            }
        }
        if (prefetch && has_next) current = next;
    }
}

// ----- backward -----------------------------------------------------------------------------
// With x̂ = (s - mean) * rstd and g = dy * w' (w' = offset + weight as in the forward's
// `casting`; means over the row):
//   LayerNorm: dx = rstd * (g - mean(g) - x̂ * mean(g * x̂))
//   RMSNorm:   dx = rstd * (g - x̂ * mean(g * x̂))          (mean == nullptr)
//   plus dsum (the gradient of the returned residual stream) when given.
// The weight is loaded once per thread and kept in registers for every row. x, dy and dsum
// stay in registers as loaded (in T); x̂ and g are recomputed from them where needed, which
// costs a few multiplies and halves the registers of 16-bit rows.
// dweight = Σ_rows dy * x̂ and dbias = Σ_rows dy are summed per thread in registers over the
// rows its group visits; then the groups of a block fold their sums into group 0's, in group
// order, and each block writes one row of the partial buffers (gridDim.x x partial_stride,
// float32), every column, zeros included. sum_partials adds those rows. No atomics: the same
// launch gives the same bits every time.
// dy has y's dtype: T, or float for CASTING_LLAMA with a float weight (held in float
// registers then; so is a T dy beside a float weight, which costs that instantiation alone).
// Nullable: dsum, weight, mean, dweight_partial, dbias_partial.
template <typename T, int VEC, int NV, int MAX_BLOCK, typename W = T, bool UNEVEN = false>
__global__ void __launch_bounds__(MAX_BLOCK, MIN_BLOCKS(MAX_BLOCK, NV * VEC, UNEVEN))
norm_backward(const void* __restrict__ dy, const T* __restrict__ dsum,
              const T* __restrict__ x, const W* __restrict__ weight,
              const float* __restrict__ mean, const float* __restrict__ rstd,
              T* __restrict__ dx, float* __restrict__ dweight_partial,
              float* __restrict__ dbias_partial, long long rows, int cols,
              int threads_per_row, int partial_stride, float weight_offset,
              int casting) {
    constexpr bool mixed = !SameType<T, W>::value;
    using DY = typename Select<mixed, float, T>::type;      // dy's type in registers
    const bool float_dy = mixed && casting == CASTING_LLAMA;
    const bool w_in_t = weight_in_t<T, W>(casting);
    __shared__ GroupSlots slots;
    int parity = 0;
    const int G = threads_per_row;
    const int lane = threadIdx.x % G;
    const int group_in_block = threadIdx.x / G;
    const int groups_per_block = blockDim.x / G;
    const int num_groups = gridDim.x * groups_per_block;   // a one-wave grid: small
    const float inv_cols = 1.0f / cols;
    // Every row of a group has the same head (the launcher's grid: num_groups * cols is a
    // multiple of VEC), so a thread keeps the same columns: its weight and its dweight sums.
    const int first_row = blockIdx.x * groups_per_block + group_in_block;
    const RowSpan<VEC, UNEVEN> span(first_row, cols);
    const int n_packs = span.packs();

    Pack<W, VEC> ws[NV];
    float dweight_sum[NV][VEC];
    float dbias_sum[NV][VEC];
#pragma unroll
    for (int i = 0; i < NV; ++i) {
        if (weight != nullptr && i * G + lane < n_packs) {
            ws[i] = load_columns<W>(weight, i * G + lane, span);
        }
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            // A float weight holds w' itself: formed once, not once a row.
            if constexpr (mixed) {
                ws[i].v[k] = effective_weight<T, W>(ws[i].v[k], weight_offset, w_in_t);
            }
            dweight_sum[i][k] = 0.0f;
            dbias_sum[i][k] = 0.0f;
        }
    }

    // Every load of a row (its statistics, x and dy), issued before any of them is used.
    struct RowLoads {
        float mean, rstd;
        Pack<T, VEC> xs[NV];
        Pack<DY, VEC> dys[NV];
    };
    auto load_row = [&](long long row, RowLoads& to) {
        const long long offset = row * cols;
        to.mean = mean != nullptr ? mean[row] : 0.0f;
        to.rstd = rstd[row];
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            const int j = i * G + lane;
            if (j < n_packs) {
                to.xs[i] = load_pack<T>(x + offset, j, span);
                if (float_dy) {
                    to.dys[i] = load_pack_as<DY, float>(static_cast<const float*>(dy) + offset,
                                                        j, span);
                } else {
                    to.dys[i] = load_pack_as<DY, T>(static_cast<const T*>(dy) + offset, j, span);
                }
            }
        }
    };
    // With one vector a thread (NORM_PREFETCH_NV), the next row's loads are issued before
    // this row is reduced, so they are in flight through its reduction and stores.
    constexpr bool prefetch = NV == NORM_PREFETCH_NV;
    RowLoads current, next;
    if (prefetch && first_row < rows) load_row(first_row, current);
    for (long long row = first_row; row < rows; row += num_groups) {
        const long long offset = row * cols;
        const bool has_next = row + num_groups < rows;
        if (!prefetch) {
            load_row(row, current);
        } else if (has_next) {
            load_row(row + num_groups, next);
        }
        const float row_mean = current.mean, row_rstd = current.rstd;
        const Pack<T, VEC>* xs = current.xs;
        const Pack<DY, VEC>* dys = current.dys;
        Pack<T, VEC> dss[NV];
        float sum_g = 0.0f, sum_g_xhat = 0.0f;
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            if (i * G + lane < n_packs) {             // outside the row: d = 0, adds 0
#pragma unroll
                for (int k = 0; k < VEC; ++k) {
                    const float d = to_float(dys[i].v[k]);
                    const float xhat = (to_float(xs[i].v[k]) - row_mean) * row_rstd;
                    const float g = weight != nullptr ? d * backward_weight<T, W>(
                        ws[i].v[k], weight_offset, w_in_t) : d;
                    dweight_sum[i][k] += d * xhat;
                    dbias_sum[i][k] += d;
                    sum_g += g;
                    sum_g_xhat += g * xhat;
                }
            }
        }
        // One reduction (one barrier) for both sums; RMSNorm leaves mean(g) out.
        const float2 sums = group_sum2(sum_g_xhat, sum_g, G, slots, parity);
        const float mean_g_xhat = sums.x * inv_cols;
        const float mean_g = mean != nullptr ? sums.y * inv_cols : 0.0f;
        // dsum is only added at the end: its loads, all issued together, wait here rather
        // than hold registers through the reduction.
        if (dsum != nullptr) {
#pragma unroll
            for (int i = 0; i < NV; ++i) {
                const int j = i * G + lane;
                if (j < n_packs) dss[i] = load_pack<T>(dsum + offset, j, span);
            }
        }
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            const int j = i * G + lane;
            if (j < n_packs) {
                Pack<T, VEC> out;
#pragma unroll
                for (int k = 0; k < VEC; ++k) {
                    const float d = to_float(dys[i].v[k]);
                    const float xhat = (to_float(xs[i].v[k]) - row_mean) * row_rstd;
                    const float g = weight != nullptr ? d * backward_weight<T, W>(
                        ws[i].v[k], weight_offset, w_in_t) : d;
                    float value = row_rstd * (g - mean_g - xhat * mean_g_xhat);
                    if (dsum != nullptr) value += to_float(dss[i].v[k]);
                    out.v[k] = from_float<T>(value);
                }
                store_pack<T>(dx + offset, j, span, out);
            }
        }
        if (prefetch && has_next) current = next;
    }

    // Several groups per block (the warp mapping): fold groups 1, 2, ... into group 0, in
    // that order, through shared memory (rows of such blocks are at most NORM_FOLD_COLS).
    if (groups_per_block > 1) {
        __shared__ float fold[2][NORM_FOLD_COLS];
        for (int from = 1; from < groups_per_block; ++from) {
            __syncthreads();                  // group 0 is done with the previous fold
            if (group_in_block == from) {
#pragma unroll
                for (int i = 0; i < NV; ++i) {
#pragma unroll
                    for (int k = 0; k < VEC; ++k) {
                        const int column = span.first(i * G + lane) + k;
                        if (i * G + lane < n_packs && span.holds(i * G + lane, k)) {
                            fold[0][column] = dweight_sum[i][k];
                            fold[1][column] = dbias_sum[i][k];
                        }
                    }
                }
            }
            __syncthreads();
            if (group_in_block == 0) {
#pragma unroll
                for (int i = 0; i < NV; ++i) {
#pragma unroll
                    for (int k = 0; k < VEC; ++k) {
                        const int column = span.first(i * G + lane) + k;
                        if (i * G + lane < n_packs && span.holds(i * G + lane, k)) {
                            dweight_sum[i][k] += fold[0][column];
                            dbias_sum[i][k] += fold[1][column];
                        }
                    }
                }
            }
        }
    }

    // Group 0 of every block writes the block's row of partials, zeros included, so no
    // buffer needs clearing: the padding columns up to partial_stride too (zeros), which
    // sum_partials' float4 loads read.
    if (group_in_block == 0) {
        const long long at = (long long)blockIdx.x * partial_stride;
        if (lane < partial_stride - cols) {
            if (dweight_partial != nullptr) dweight_partial[at + cols + lane] = 0.0f;
            if (dbias_partial != nullptr) dbias_partial[at + cols + lane] = 0.0f;
        }
#pragma unroll
        for (int i = 0; i < NV; ++i) {
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
                const int column = span.first(i * G + lane) + k;
                if (i * G + lane < n_packs && span.holds(i * G + lane, k)) {
                    if (dweight_partial != nullptr) {
                        dweight_partial[at + column] = dweight_sum[i][k];
                    }
                    if (dbias_partial != nullptr) dbias_partial[at + column] = dbias_sum[i][k];
                }
            }
        }
    }
}

// ----- second stage of dweight / dbias ------------------------------------------------------
// Adds the rows of a partial buffer (num_partials x stride floats; stride a multiple of 4) in
// chunks of SUM_CHUNK rows: block (x, y) adds rows y·SUM_CHUNK ... of the 128 columns of strip
// x, blockIdx.z picks dweight (0) or dbias (1). Each of the 8 warps adds every 8th row of the
// chunk, lane l holding columns 4l ... 4l + 3 (one float4 load per row, all of a warp's loads
// issued before they are added); then warp 0 adds the 8 warps' sums in warp order. With one
// chunk (gridDim.y == 1) the sums are the gradients and go to out_* in T; with more, each
// chunk's sums go to row y of next_* (float32) and the host launches again on those rows.
// VIA (default T) is x's type beside a float weight (T = float): with `round_via` the
// gradients are rounded to VIA on their way to T, for w' formed in 16-bit (CASTING_NONE):
// dweight in w''s dtype, then the weight's. (One instantiation for both, in the module of
// x's kernels for a float weight.)
// A fixed tree: the same bits every time, no atomics.
#define SUM_WARPS 8
#define SUM_CHUNK 32
template <typename T, typename VIA = T>
__global__ void __launch_bounds__(SUM_WARPS * 32)
sum_partials(const float* __restrict__ dweight_partial, const float* __restrict__ dbias_partial,
             int num_partials, int stride, int cols, float* __restrict__ next_dweight,
             float* __restrict__ next_dbias, T* __restrict__ out_dweight,
             T* __restrict__ out_dbias, int round_via) {
    const float* partial = blockIdx.z == 0 ? dweight_partial : dbias_partial;
    if (partial == nullptr) return;
    __shared__ float4 warp_sums[SUM_WARPS][32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int col = (blockIdx.x * 32 + lane) * 4;
    const int first = blockIdx.y * SUM_CHUNK;
    const int count = min(SUM_CHUNK, num_partials - first);
    float4 loaded[SUM_CHUNK / SUM_WARPS];
#pragma unroll
    for (int j = 0; j < SUM_CHUNK / SUM_WARPS; ++j) {
        const int p = j * SUM_WARPS + warp;
        if (p < count && col < stride) {
            loaded[j] = *reinterpret_cast<const float4*>(partial + (long long)(first + p)
                                                         * stride + col);
        }
    }
    float4 total = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int j = 0; j < SUM_CHUNK / SUM_WARPS; ++j) {
        if (j * SUM_WARPS + warp < count && col < stride) {
            total.x += loaded[j].x;
            total.y += loaded[j].y;
            total.z += loaded[j].z;
            total.w += loaded[j].w;
        }
    }
    warp_sums[warp][lane] = total;
    __syncthreads();
    if (warp != 0 || col >= stride) return;
    total = warp_sums[0][lane];
    for (int w = 1; w < SUM_WARPS; ++w) {
        total.x += warp_sums[w][lane].x;
        total.y += warp_sums[w][lane].y;
        total.z += warp_sums[w][lane].z;
        total.w += warp_sums[w][lane].w;
    }
    const float values[4] = {total.x, total.y, total.z, total.w};
    if (gridDim.y == 1) {
        T* out = blockIdx.z == 0 ? out_dweight : out_dbias;
        for (int k = 0; k < 4 && col + k < cols; ++k) {
            out[col + k] = from_float<T>(round_via ? round_to<VIA>(values[k]) : values[k]);
        }
    } else {
        float* next = (blockIdx.z == 0 ? next_dweight : next_dbias)
                      + (long long)blockIdx.y * stride;
        // The padding columns too (sums of zeros): the next launch's float4 loads read them.
        for (int k = 0; k < 4; ++k) next[col + k] = values[k];
    }
}
