// Host emulation of the few CUDA features norms.cu uses (tests/test_cuda_emulated.py).
// A kernel's blocks run one after another on the calling thread; the threads of a block are
// cooperative fibers (ucontext) that switch only at barriers: __syncthreads (the block) and
// the two barriers inside each warp shuffle (the warp). Single-threaded and deterministic.
// It checks what the kernels compute (indexing, reductions, partial sums, dtypes), not how
// fast, and not register limits. What it finds wrong on the way (a barrier some threads never
// reach, a shuffle of part of a warp, a misaligned vector, a hazard of the racecheck build,
// sanitizers.h) is written to emu_findings; the launch goes on where it can, else it stops.
// Like the GPU build (CuPy compiles every RawModule with -ftz=true), a launch flushes float32
// denormals to zero, inputs and results of every operation alike.
#pragma once
#include <ucontext.h>

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/common_interface_defs.h>
#endif

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static          // zero-initialised: in .bss, which the racecheck build watches
#define EMU_UNCHECKED __attribute__((no_sanitize_thread))    // emulation, not kernel, memory
using std::isfinite;          // a CUDA device function; <cmath> has it in std only

struct dim3 { unsigned x = 1, y = 1, z = 1; };
inline dim3 threadIdx, blockIdx, blockDim, gridDim;

// What went wrong in the current launch, one line each (the host reads it after the launch).
inline std::string emu_findings;
inline bool emu_inside_checks = false;     // the racecheck build ignores the checks' accesses
EMU_UNCHECKED inline void emu_report(const char* format, ...) {
    const bool was_inside = emu_inside_checks;
    emu_inside_checks = true;
    char line[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    emu_findings += line;
    emu_findings += '\n';
    emu_inside_checks = was_inside;
}

// CUDA's vector types with CUDA's alignment: a copy from or to a misaligned address (a
// reinterpret_cast of a pointer the host did not align) is reported, as the GPU would fault.
EMU_UNCHECKED inline void emu_check_aligned(const void* at, unsigned alignment, const char* what) {
    if (reinterpret_cast<std::uintptr_t>(at) % alignment != 0) {
        emu_report("misaligned %s: address %p is not a multiple of %u", what, at, alignment);
    }
}
#define EMU_VECTOR(NAME, ALIGN, ...)                                                           \
    struct alignas(ALIGN) NAME {                                                               \
        float __VA_ARGS__;                                                                     \
        NAME() = default;                                                                      \
        NAME(const NAME& other) { *this = other; }                                             \
        NAME& operator=(const NAME& other) {                                                   \
            emu_check_aligned(&other, ALIGN, #NAME " load");                                   \
            emu_check_aligned(this, ALIGN, #NAME " store");                                    \
            std::memcpy(static_cast<void*>(this), &other, sizeof(NAME));                       \
            return *this;                                                                      \
        }                                                                                      \
    }
EMU_VECTOR(float2, 8, x, y);
EMU_VECTOR(float4, 16, x, y, z, w);
inline float2 make_float2(float x, float y) { float2 v; v.x = x; v.y = y; return v; }
inline float4 make_float4(float x, float y, float z, float w) {
    float4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v;
}
inline int min(int a, int b) { return a < b ? a : b; }

struct EmuFiber {
    ucontext_t context;
    char* stack = nullptr;               // one of emu_stacks
    EmuFiber() = default;
    EmuFiber(const EmuFiber&) = delete;
    EmuFiber(EmuFiber&&) = delete;
    bool done = false;
    bool waiting = false;
    int line = 0;                        // of the barrier it waits at
    const char* barrier = "";            // "__syncthreads" or the shuffle's name
    void* fake_stack = nullptr;          // AddressSanitizer's, while switched out
};

struct EmuBlock {
    ucontext_t scheduler;
    const void* scheduler_stack = nullptr;   // bottom and size, for AddressSanitizer
    std::size_t scheduler_stack_size = 0;
    std::vector<EmuFiber> fibers;
    unsigned current = 0;
    unsigned block_arrived = 0;
    std::vector<unsigned> warp_arrived;
    std::vector<float> shuffle;          // one value per thread
    bool stopped = false;                // a barrier no thread can pass: the launch ends
    bool in_thread = false;              // a fiber runs (not the scheduler)
};
inline EmuBlock* emu_block = nullptr;
constexpr std::size_t emu_stack_size = 256 * 1024;
inline std::vector<char*> emu_stacks;    // thread t's, reused by every block and launch

// A new barrier interval of the block (racecheck build: shared accesses before it and after
// it never conflict); `warp` is the warp of a shuffle's barrier, or -1 for __syncthreads.
EMU_UNCHECKED inline void emu_barrier_passed(int warp);

// Thread t leaves for the scheduler, or the scheduler for thread t (AddressSanitizer is told
// of each stack switch, so it keeps track of which stack is live).
EMU_UNCHECKED inline void emu_to_scheduler(EmuFiber& f, bool exiting) {
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_start_switch_fiber(exiting ? nullptr : &f.fake_stack,
                                   emu_block->scheduler_stack, emu_block->scheduler_stack_size);
#endif
    emu_block->in_thread = false;
    if (exiting) return;                 // uc_link switches
    swapcontext(&f.context, &emu_block->scheduler);
    emu_block->in_thread = true;
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_finish_switch_fiber(f.fake_stack, nullptr, nullptr);
#endif
}

EMU_UNCHECKED inline void emu_to_fiber(EmuBlock& b, EmuFiber& f) {
#ifdef __SANITIZE_ADDRESS__
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, f.stack, emu_stack_size);
#endif
    b.in_thread = true;
    swapcontext(&b.scheduler, &f.context);
    b.in_thread = false;
#ifdef __SANITIZE_ADDRESS__
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
}

// Which threads wait at which line, e.g. "threads 0-31 at norms.cu:200 (__syncthreads)".
EMU_UNCHECKED inline std::string emu_where(unsigned first, unsigned count) {
    std::string out;
    const EmuBlock& b = *emu_block;
    for (unsigned t = first; t < first + count;) {
        const EmuFiber& f = b.fibers[t];
        unsigned end = t + 1;
        auto same = [&](const EmuFiber& g) {
            return g.done == f.done && g.waiting == f.waiting && g.line == f.line;
        };
        while (end < first + count && same(b.fibers[end])) ++end;
        char part[160];
        if (f.done) {
            std::snprintf(part, sizeof part, "; threads %u-%u returned", t, end - 1);
        } else if (f.waiting) {
            std::snprintf(part, sizeof part, "; threads %u-%u wait at line %d (%s)", t, end - 1,
                          f.line, f.barrier);
        } else {
            std::snprintf(part, sizeof part, "; threads %u-%u run", t, end - 1);
        }
        out += part;
        t = end;
    }
    return out;
}

// Wait until all `count` threads starting at `first` have arrived here; they should all
// arrive at the same line.
EMU_UNCHECKED inline void emu_barrier(unsigned first, unsigned count, unsigned& arrived,
                                      int line, const char* name, int warp) {
    EmuBlock& b = *emu_block;
    const unsigned me = b.current;
    b.fibers[me].line = line;
    b.fibers[me].barrier = name;
    if (++arrived == count) {                       // the last one releases the others
        for (unsigned t = first; t < first + count; ++t) {
            if (b.fibers[t].line != line) {
                emu_report("barrier divergence in block %u: %s", blockIdx.x,
                           emu_where(first, count).c_str() + 2);
                break;
            }
        }
        arrived = 0;
        for (unsigned t = first; t < first + count; ++t) b.fibers[t].waiting = false;
        emu_barrier_passed(warp);
        return;
    }
    b.fibers[me].waiting = true;
    emu_to_scheduler(b.fibers[me], false);
    b.current = me;
    threadIdx = {me, 0, 0};
}

EMU_UNCHECKED inline void emu_syncthreads(int line) {
    emu_barrier(0, blockDim.x, emu_block->block_arrived, line, "__syncthreads", -1);
}
#define __syncthreads() emu_syncthreads(__LINE__)

EMU_UNCHECKED inline float emu_shfl_xor_sync(unsigned mask, float value, int offset, int line) {
    const unsigned me = threadIdx.x, warp = me / 32, first = warp * 32;
    if (mask != 0xffffffffu) {
        emu_report("__shfl_xor_sync at line %d with the partial mask 0x%08x (thread %u)", line,
                   mask, me);
    }
    if (first + 32 > blockDim.x) {
        emu_report("__shfl_xor_sync at line %d in the partial warp %u: the block has %u "
                   "threads, not a multiple of 32", line, warp, blockDim.x);
        emu_block->stopped = true;
        emu_to_scheduler(emu_block->fibers[me], false);     // never resumed
    }
    emu_block->shuffle[me] = value;
    emu_barrier(first, 32, emu_block->warp_arrived[warp], line, "__shfl_xor_sync", warp);
    const float other = emu_block->shuffle[first + ((me % 32) ^ offset)];
    emu_barrier(first, 32, emu_block->warp_arrived[warp], line, "__shfl_xor_sync", warp);
    return other;
}
#define __shfl_xor_sync(mask, value, offset) emu_shfl_xor_sync(mask, value, offset, __LINE__)

template <typename Body>
struct EmuLaunch {
    static inline Body* body = nullptr;
    EMU_UNCHECKED static void entry() {
#ifdef __SANITIZE_ADDRESS__
        __sanitizer_finish_switch_fiber(nullptr, &emu_block->scheduler_stack,
                                        &emu_block->scheduler_stack_size);
#endif
        (*body)();
        EmuFiber& f = emu_block->fibers[emu_block->current];
        f.done = true;
        emu_to_scheduler(f, true);
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

// Called as each block starts (racecheck build: its bookkeeping).
EMU_UNCHECKED inline void emu_block_begins(unsigned block);

template <typename Body>
EMU_UNCHECKED void emu_launch(dim3 grid, unsigned block, Body body) {
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
        emu_block_begins(b);
        while (emu_stacks.size() < block) {
            emu_stacks.push_back(static_cast<char*>(std::malloc(emu_stack_size)));
        }
        for (unsigned t = 0; t < block; ++t) {
            EmuFiber& f = state.fibers[t];
            f.stack = emu_stacks[t];
            getcontext(&f.context);
            f.context.uc_stack.ss_sp = f.stack;
            f.context.uc_stack.ss_size = emu_stack_size;
            f.context.uc_link = &state.scheduler;
            makecontext(&f.context, &EmuLaunch<Body>::entry, 0);
        }
        while (!state.stopped) {                    // round robin over runnable fibers
            bool all_done = true, ran = false;
            for (unsigned t = 0; t < block && !state.stopped; ++t) {
                EmuFiber& f = state.fibers[t];
                if (f.done) continue;
                all_done = false;
                if (f.waiting) continue;
                state.current = t;
                threadIdx = {t, 0, 0};
                ran = true;
                emu_to_fiber(state, f);
            }
            if (all_done) break;
            if (!ran) {                             // every live thread waits: none can pass
                emu_report("barrier divergence in block %u (a barrier not every thread "
                           "reaches): %s", b, emu_where(0, block).c_str() + 2);
                state.stopped = true;
            }
        }
        if (state.stopped) {        // the waiting fibers are dropped, and with them their
            emu_stacks.clear();     // stacks, which hold their frames (and ASan's redzones)
            break;
        }
    }
    emu_block = nullptr;
}
