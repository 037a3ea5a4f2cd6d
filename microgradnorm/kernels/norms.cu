// Fused row norms: LayerNorm and RMSNorm, each optionally fused with a residual add,
// forward and closed-form backward, plus the second-stage reduction of dweight / dbias.
//
// The math is that of kernels/reference.py (docs/derivations.md); docs/gpu.md walks through
// this file. Loaded by kernels/cuda.py as one cupy.RawModule, compiled with NVRTC; the
// templates are instantiated through name_expressions from the table in cuda.py, which the
// nvcc compile test (tests/test_cuda_compile.py) also reads. NVRTC has no host C++ headers:
// include only what it provides.
//
// Template parameters, chosen per call by the launch configuration in cuda.py:
//   T    storage type of x, y, dy, dx, weight, bias: float, __half or __nv_bfloat16.
//        Every sum and every formula runs in float32; T is only loaded and stored.
//   VEC  elements per load/store: 16 / sizeof(T) (a 16-byte vector) when the row length
//        and every pointer allow it, else 1 (the scalar fallback for odd sizes).
//   NV   vectors each thread keeps in registers: a row of D elements is spread over
//        G threads x NV vectors x VEC elements, so it is read from memory exactly once.
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

// The most threads a row-norm block has (cuda.py's MAX_THREADS). Telling the compiler lets it
// budget registers so that such a block always launches (65536 registers / 512 threads).
#define NORM_MAX_THREADS 512

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

// VEC elements that move as one load/store: 16 bytes -> one 128-bit memory instruction.
template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Pack {
    T v[VEC];
};

template <typename T, int VEC>
__device__ __forceinline__ Pack<T, VEC> load_pack(const T* row, int index) {
    return reinterpret_cast<const Pack<T, VEC>*>(row)[index];
}

template <typename T, int VEC>
__device__ __forceinline__ void store_pack(T* row, int index, const Pack<T, VEC>& pack) {
    reinterpret_cast<Pack<T, VEC>*>(row)[index] = pack;
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

// Sum of `value` over the G threads of a row group; every thread gets the total. A warp group
// needs no shared memory (and no __syncthreads, so warps of one block may visit different
// numbers of rows); a block group adds the warps' sums in warp order, the same on every thread.
__device__ __forceinline__ float group_sum(float value, int threads_per_row, float* shared) {
    value = warp_sum(value);
    if (threads_per_row == 32) return value;
    const int warp = threadIdx.x / 32;
    __syncthreads();                      // the previous call's readers are done with `shared`
    if (threadIdx.x % 32 == 0) shared[warp] = value;
    __syncthreads();
    float total = 0.0f;
    for (int w = 0; w < threads_per_row / 32; ++w) total += shared[w];
    return total;
}

// ----- forward ------------------------------------------------------------------------------
// y = (s - mean) * rstd * weight + bias   (LayerNorm, subtract_mean = 1)
// y = s * rstd * weight                   (RMSNorm,   subtract_mean = 0, mean_out unused)
// with s = x, or s = x + residual (rounded to T, then written to sum_out) when residual is
// given. Nullable: residual/sum_out, weight, bias, mean_out.
// Two passes over the row held in registers: mean first, then mean((s - mean)^2), the stable
// form of the variance, as in the reference; rstd = 1 / sqrt(var + eps).
template <typename T, int VEC, int NV>
__global__ void __launch_bounds__(NORM_MAX_THREADS)
norm_forward(const T* __restrict__ x, const T* __restrict__ residual,
                             const T* __restrict__ weight, const T* __restrict__ bias,
                             T* __restrict__ y, T* __restrict__ sum_out,
                             float* __restrict__ mean_out, float* __restrict__ rstd_out,
                             long long rows, int cols, int threads_per_row, float eps,
                             int subtract_mean) {
    __shared__ float shared[32];
    const int G = threads_per_row;
    const int lane = threadIdx.x % G;
    const int groups_per_block = blockDim.x / G;
    const long long num_groups = (long long)gridDim.x * groups_per_block;
    const int n_vec = cols / VEC;             // the host guarantees cols % VEC == 0
    const float inv_cols = 1.0f / cols;

    const long long first_row = (long long)blockIdx.x * groups_per_block + threadIdx.x / G;
    for (long long row = first_row; row < rows; row += num_groups) {
        const long long offset = row * cols;
        float v[NV][VEC];                     // this thread's part of the row, as float32
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            const int index = i * G + lane;
            if (index < n_vec) {
                Pack<T, VEC> p = load_pack<T, VEC>(x + offset, index);
                if (residual != nullptr) {
                    const Pack<T, VEC> r = load_pack<T, VEC>(residual + offset, index);
#pragma unroll
                    for (int k = 0; k < VEC; ++k) {
                        p.v[k] = from_float<T>(to_float(p.v[k]) + to_float(r.v[k]));
                    }
                    store_pack<T, VEC>(sum_out + offset, index, p);
                }
#pragma unroll
                for (int k = 0; k < VEC; ++k) {
                    v[i][k] = to_float(p.v[k]);
                    sum += v[i][k];
                }
            }
        }
        const float mean = subtract_mean ? group_sum(sum, G, shared) * inv_cols : 0.0f;
        float squares = 0.0f;
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            if (i * G + lane < n_vec) {
#pragma unroll
                for (int k = 0; k < VEC; ++k) {
                    const float centered = v[i][k] - mean;
                    squares += centered * centered;
                }
            }
        }
        const float rstd = 1.0f / sqrtf(group_sum(squares, G, shared) * inv_cols + eps);
        if (lane == 0) {
            if (mean_out != nullptr) mean_out[row] = mean;
            rstd_out[row] = rstd;
        }
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            const int index = i * G + lane;
            if (index < n_vec) {
                Pack<T, VEC> w, b, out;
                if (weight != nullptr) w = load_pack<T, VEC>(weight, index);
                if (bias != nullptr) b = load_pack<T, VEC>(bias, index);
#pragma unroll
                for (int k = 0; k < VEC; ++k) {
                    float value = (v[i][k] - mean) * rstd;              // x̂
                    if (weight != nullptr) value *= to_float(w.v[k]);
                    if (bias != nullptr) value += to_float(b.v[k]);
                    out.v[k] = from_float<T>(value);
                }
                store_pack<T, VEC>(y + offset, index, out);
            }
        }
    }
}

// ----- backward -----------------------------------------------------------------------------
// With x̂ = (s - mean) * rstd and g = dy * weight (means over the row):
//   LayerNorm: dx = rstd * (g - mean(g) - x̂ * mean(g * x̂))
//   RMSNorm:   dx = rstd * (g - x̂ * mean(g * x̂))          (mean == nullptr)
//   plus dsum (the gradient of the returned residual stream) when given.
// dweight = Σ_rows dy * x̂ and dbias = Σ_rows dy are summed per thread in registers over the
// rows its group visits, then written once per group to row `group` of the partial buffers
// (num_groups x cols, float32); sum_partials adds those rows in a fixed order. No atomics:
// the same launch gives the same bits every time.
// Nullable: dsum, weight, mean, dweight_partial, dbias_partial.
template <typename T, int VEC, int NV>
__global__ void __launch_bounds__(NORM_MAX_THREADS)
norm_backward(const T* __restrict__ dy, const T* __restrict__ dsum,
                              const T* __restrict__ x, const T* __restrict__ weight,
                              const float* __restrict__ mean, const float* __restrict__ rstd,
                              T* __restrict__ dx, float* __restrict__ dweight_partial,
                              float* __restrict__ dbias_partial, long long rows, int cols,
                              int threads_per_row) {
    __shared__ float shared[32];
    const int G = threads_per_row;
    const int lane = threadIdx.x % G;
    const int groups_per_block = blockDim.x / G;
    const int num_groups = gridDim.x * groups_per_block;
    const int group = blockIdx.x * groups_per_block + threadIdx.x / G;
    const int n_vec = cols / VEC;
    const float inv_cols = 1.0f / cols;

    float dweight_sum[NV][VEC];
    float dbias_sum[NV][VEC];
#pragma unroll
    for (int i = 0; i < NV; ++i) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
            dweight_sum[i][k] = 0.0f;
            dbias_sum[i][k] = 0.0f;
        }
    }

    for (long long row = group; row < rows; row += num_groups) {
        const long long offset = row * cols;
        const float row_mean = mean != nullptr ? mean[row] : 0.0f;
        const float row_rstd = rstd[row];
        float xhat[NV][VEC], g[NV][VEC];
        float sum_g = 0.0f, sum_g_xhat = 0.0f;
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            const int index = i * G + lane;
            if (index < n_vec) {
                const Pack<T, VEC> xs = load_pack<T, VEC>(x + offset, index);
                const Pack<T, VEC> dys = load_pack<T, VEC>(dy + offset, index);
                Pack<T, VEC> w;
                if (weight != nullptr) w = load_pack<T, VEC>(weight, index);
#pragma unroll
                for (int k = 0; k < VEC; ++k) {
                    const float d = to_float(dys.v[k]);
                    xhat[i][k] = (to_float(xs.v[k]) - row_mean) * row_rstd;  // recomputed
                    g[i][k] = weight != nullptr ? d * to_float(w.v[k]) : d;
                    dweight_sum[i][k] += d * xhat[i][k];
                    dbias_sum[i][k] += d;
                    sum_g += g[i][k];
                    sum_g_xhat += g[i][k] * xhat[i][k];
                }
            }
        }
        const float mean_g_xhat = group_sum(sum_g_xhat, G, shared) * inv_cols;
        const float mean_g = mean != nullptr ? group_sum(sum_g, G, shared) * inv_cols : 0.0f;
#pragma unroll
        for (int i = 0; i < NV; ++i) {
            const int index = i * G + lane;
            if (index < n_vec) {
                Pack<T, VEC> ds, out;
                if (dsum != nullptr) ds = load_pack<T, VEC>(dsum + offset, index);
#pragma unroll
                for (int k = 0; k < VEC; ++k) {
                    float value = row_rstd * (g[i][k] - mean_g - xhat[i][k] * mean_g_xhat);
                    if (dsum != nullptr) value += to_float(ds.v[k]);
                    out.v[k] = from_float<T>(value);
                }
                store_pack<T, VEC>(dx + offset, index, out);
            }
        }
    }

    // Every group writes its row of partials, zeros included, so no buffer needs clearing.
#pragma unroll
    for (int i = 0; i < NV; ++i) {
        const int index = i * G + lane;
        if (index < n_vec) {
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
                const long long at = (long long)group * cols + (long long)index * VEC + k;
                if (dweight_partial != nullptr) dweight_partial[at] = dweight_sum[i][k];
                if (dbias_partial != nullptr) dbias_partial[at] = dbias_sum[i][k];
            }
        }
    }
}

// ----- second stage of dweight / dbias ------------------------------------------------------
// out[c] = Σ_p partial[p, c], p = 0, 1, ... in order, in float32; one thread per column, so
// neighbouring threads read neighbouring addresses.
template <typename T>
__global__ void sum_partials(const float* __restrict__ partial, int num_partials, int cols,
                             T* __restrict__ out) {
    for (int col = blockIdx.x * blockDim.x + threadIdx.x; col < cols;
         col += gridDim.x * blockDim.x) {
        float total = 0.0f;
        for (int p = 0; p < num_partials; ++p) total += partial[(long long)p * cols + col];
        out[col] = from_float<T>(total);
    }
}
