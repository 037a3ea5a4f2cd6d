// Host emulation of the few CUDA features norms.cu uses (tests/test_cuda_emulated.py).
// A kernel's blocks run one after another on the calling thread; the threads of a block are
// cooperative fibers (ucontext) that switch only at barriers: __syncthreads (the block) and
// the two barriers inside each warp shuffle (the warp). Single-threaded and deterministic.
// It checks what the kernels compute (indexing, reductions, partial sums, dtypes), not how
// fast, and not what only hardware shows (alignment faults, races, register limits).
// Like the GPU build (CuPy compiles every RawModule with -ftz=true), a launch flushes float32
// denormals to zero, inputs and results of every operation alike.
#pragma once
#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static
using std::isfinite;          // a CUDA device function; <cmath> has it in std only

struct dim3 { unsigned x = 1, y = 1, z = 1; };
inline dim3 threadIdx, blockIdx, blockDim, gridDim;

struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int min(int a, int b) { return a < b ? a : b; }

struct EmuFiber {
    ucontext_t context;
    char* stack = nullptr;
    ~EmuFiber() { std::free(stack); }
    EmuFiber() = default;
    EmuFiber(const EmuFiber&) = delete;
    EmuFiber(EmuFiber&&) = delete;
    bool done = false;
    bool waiting = false;
};

struct EmuBlock {
    ucontext_t scheduler;
    std::vector<EmuFiber> fibers;
    unsigned current = 0;
    unsigned block_arrived = 0;
    std::vector<unsigned> warp_arrived;
    std::vector<float> shuffle;          // one value per thread
};
inline EmuBlock* emu_block = nullptr;

// Wait until all `count` threads starting at `first` have arrived here.
inline void emu_barrier(unsigned first, unsigned count, unsigned& arrived) {
    EmuBlock& b = *emu_block;
    const unsigned me = b.current;
    if (++arrived == count) {                       // the last one releases the others
        arrived = 0;
        for (unsigned t = first; t < first + count; ++t) b.fibers[t].waiting = false;
        return;
    }
    b.fibers[me].waiting = true;
    swapcontext(&b.fibers[me].context, &b.scheduler);
    b.current = me;
    threadIdx = {me, 0, 0};
}

inline void __syncthreads() { emu_barrier(0, blockDim.x, emu_block->block_arrived); }

inline float __shfl_xor_sync(unsigned /*mask*/, float value, int offset) {
    const unsigned me = threadIdx.x, warp = me / 32, first = warp * 32;
    emu_block->shuffle[me] = value;
    emu_barrier(first, 32, emu_block->warp_arrived[warp]);
    const float other = emu_block->shuffle[first + ((me % 32) ^ offset)];
    emu_barrier(first, 32, emu_block->warp_arrived[warp]);
    return other;
}

template <typename Body>
struct EmuLaunch {
    static inline Body* body = nullptr;
    static void entry() {
        (*body)();
        emu_block->fibers[emu_block->current].done = true;
    }
};

// -ftz=true on the host: float32 denormal inputs read as zero (DAZ) and denormal results
// become zero (FTZ), for the lifetime of this object.
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
struct EmuFlushDenormals {
    unsigned saved = _mm_getcsr();
    EmuFlushDenormals() { _mm_setcsr(saved | 0x8040u); }      // FTZ (bit 15) | DAZ (bit 6)
    ~EmuFlushDenormals() { _mm_setcsr(saved); }
};
#elif defined(__aarch64__)
struct EmuFlushDenormals {
    unsigned long saved;
    EmuFlushDenormals() {
        asm volatile("mrs %0, fpcr" : "=r"(saved));
        asm volatile("msr fpcr, %0" : : "r"(saved | (1ul << 24)));   // FZ: in and out
    }
    ~EmuFlushDenormals() { asm volatile("msr fpcr, %0" : : "r"(saved)); }
};
#else
#error "the emulation flushes float32 denormals as -ftz=true does: x86 or aarch64 only"
#endif

template <typename Body>
void emu_launch(dim3 grid, unsigned block, Body body) {
    constexpr size_t stack_size = 256 * 1024;
    const EmuFlushDenormals flush;
    EmuLaunch<Body>::body = &body;
    const unsigned blocks = grid.x * grid.y * grid.z;
    for (unsigned b = 0; b < blocks; ++b) {
        EmuBlock state;
        emu_block = &state;
        state.fibers = std::vector<EmuFiber>(block);
        state.warp_arrived.assign((block + 31) / 32, 0);
        state.shuffle.assign(block, 0.0f);
        blockIdx = {b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y)};
        blockDim = {block, 1, 1};
        gridDim = grid;
        for (unsigned t = 0; t < block; ++t) {
            EmuFiber& f = state.fibers[t];
            f.stack = static_cast<char*>(std::malloc(stack_size));
            getcontext(&f.context);
            f.context.uc_stack.ss_sp = f.stack;
            f.context.uc_stack.ss_size = stack_size;
            f.context.uc_link = &state.scheduler;
            makecontext(&f.context, &EmuLaunch<Body>::entry, 0);
        }
        for (;;) {                                  // round robin over runnable fibers
            bool all_done = true, ran = false;
            for (unsigned t = 0; t < block; ++t) {
                EmuFiber& f = state.fibers[t];
                if (f.done) continue;
                all_done = false;
                if (f.waiting) continue;
                state.current = t;
                threadIdx = {t, 0, 0};
                ran = true;
                swapcontext(&state.scheduler, &f.context);
            }
            if (all_done) break;
            if (!ran) { std::fprintf(stderr, "emulation: deadlock at a barrier\n"); std::abort(); }
        }
    }
}
