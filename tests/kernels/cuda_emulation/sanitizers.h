// The checks around an emulated launch (tests/kernels/test_cuda_sanitizers.py).
//
// Every launch (emu_run_checked): each array argument is copied into an allocation of exactly
// its size, at the original's address modulo 16 (the kernels pick vector loads by address),
// so AddressSanitizer (the memcheck build) stops at a read one past its end; after the launch
// the pointers to const are checked unchanged and the others copied back.
//
// The racecheck build (-DEMU_RACECHECK, compiled with -fsanitize=thread but linked without
// its runtime): GCC calls __tsan_read4(address), __tsan_write16, ... before every memory
// access of the kernels, and this file implements them. Accesses to shared memory (the
// library's .bss, where the __shared__ statics are; the emulation's own zero-initialised
// globals there are touched only by the scheduler, by code the instrumentation skips
// (EMU_UNCHECKED) or with emu_inside_checks set) and to the array arguments are recorded per
// barrier interval of the block:
//   - two threads of a block touching the same shared byte between two barriers, at least one
//     writing, is a hazard (the GPU runs them in any order);
//   - a shared byte read that no thread of the block wrote is uninitialised (the GPU gives
//     another block's or another launch's data);
//   - a global byte written by one block and read or written by another (no order between
//     blocks), or by two threads of a block between two barriers, is a hazard;
//   - an access at an address that is not a multiple of the alignment the compiler assumed
//     for it (__tsan_read16 is a 16-byte aligned access: a Pack of norms.cu, a float4) is
//     reported: a GPU faults. Built at -O0, so that a pack is copied as one access.
#pragma once
#include <dlfcn.h>

#include <set>
#include <utility>

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

#include "cuda_emulation.h"

inline unsigned long long emu_const_args = 0;     // bit i: argument i points to const

// An instrumented instruction's address as "pc 0x..." relative to this library, which the
// test turns into a line with addr2line.
EMU_UNCHECKED inline std::string emu_pc(const void* pc) {
    Dl_info info;
    std::uintptr_t at = reinterpret_cast<std::uintptr_t>(pc) - 1;     // inside the call
    if (dladdr(pc, &info) != 0) at -= reinterpret_cast<std::uintptr_t>(info.dli_fbase);
    char text[32];
    std::snprintf(text, sizeof text, "pc 0x%zx", static_cast<std::size_t>(at));
    return text;
}

#ifdef EMU_RACECHECK
// Per byte: its last write; the threads that read it in the interval of read_interval, and
// (global memory) the blocks that read it in the launch. -1: none.
struct EmuCell {
    std::uint32_t write_interval = 0, read_interval = 0;
    std::int32_t write_block = -1, read_block = -1;
    std::int16_t write_thread = -1, read_thread = -1;
    bool reads_by_threads = false, reads_by_blocks = false;
    const void* write_pc = nullptr;
    const void* read_pc = nullptr;
};

struct EmuRegion {
    char* begin;
    char* end;
    int argument;                          // -1: shared memory
    std::vector<EmuCell> cells;
};

extern "C" char __bss_start[] __attribute__((visibility("hidden")));   // the linker's
extern "C" char _end[] __attribute__((visibility("hidden")));

struct EmuRaces {
    bool tracking = false;
    std::uint32_t interval = 0;            // between two barriers of a block; never reused
    std::uint32_t block_interval = 0;      // the current block's first
    int block = 0;
    std::vector<EmuRegion> regions;        // [0]: shared memory
    std::set<std::pair<const void*, const void*>> reported;
};
inline EmuRaces emu_races;

EMU_UNCHECKED inline void emu_track_arrays(const std::vector<std::pair<char*, std::size_t>>& arrays,
                                           const std::vector<int>& indices) {
    emu_races.regions.clear();
    emu_races.reported.clear();
    char* begin = __bss_start;
    char* end = _end;
    emu_races.regions.push_back({begin, end, -1, std::vector<EmuCell>(end - begin)});
    for (std::size_t i = 0; i < arrays.size(); ++i) {
        char* at = arrays[i].first;
        emu_races.regions.push_back({at, at + arrays[i].second, indices[i],
                                     std::vector<EmuCell>(arrays[i].second)});
    }
    emu_races.tracking = true;
}

EMU_UNCHECKED inline void emu_untrack() {
    emu_races.tracking = false;
    emu_races.regions.clear();
}

EMU_UNCHECKED inline void emu_block_begins(unsigned block) {
    emu_races.block = static_cast<int>(block);
    emu_races.block_interval = ++emu_races.interval;
}
EMU_UNCHECKED inline void emu_barrier_passed(int warp) {
    if (warp < 0) ++emu_races.interval;     // a warp's shuffle orders nothing in memory here
}

EMU_UNCHECKED inline void emu_hazard(const char* kind, const EmuRegion& region, char* at,
                                     const char* first, int first_block, int first_thread,
                                     const void* first_pc, const char* second, int thread,
                                     const void* pc) {
    if (!emu_races.reported.insert({first_pc, pc}).second || emu_races.reported.size() > 20) {
        return;
    }
    char where[64];
    if (region.argument < 0) {
        std::snprintf(where, sizeof where, "shared memory byte %td", at - region.begin);
    } else {
        std::snprintf(where, sizeof where, "argument %d byte %td", region.argument,
                      at - region.begin);
    }
    emu_report("%s hazard at %s: %s by block %d thread %d (%s), %s by block %d thread %d (%s)",
               kind, where, first, first_block, first_thread, emu_pc(first_pc).c_str(), second,
               emu_races.block, thread, emu_pc(pc).c_str());
}

EMU_UNCHECKED inline void emu_check_access(char* at, std::size_t size, bool write,
                                           std::size_t alignment, const void* pc);
EMU_UNCHECKED inline void emu_access(void* address, std::size_t size, bool write,
                                     std::size_t alignment, const void* pc) {
    if (!emu_races.tracking || emu_block == nullptr || !emu_block->in_thread ||
        emu_inside_checks) {
        return;
    }
    emu_inside_checks = true;                   // the bookkeeping's own accesses: not recorded
    emu_check_access(static_cast<char*>(address), size, write, alignment, pc);
    emu_inside_checks = false;
}

EMU_UNCHECKED inline void emu_check_access(char* at, std::size_t size, bool write,
                                           std::size_t alignment, const void* pc) {
    for (EmuRegion& region : emu_races.regions) {
        if (at < region.begin || at >= region.end) continue;
        if (alignment > 1 && reinterpret_cast<std::uintptr_t>(at) % alignment != 0 &&
            emu_races.reported.insert({pc, pc}).second) {
            emu_report("misaligned %zu-byte access at %p (a multiple of %zu assumed), thread %u "
                       "(%s)", size, static_cast<void*>(at), alignment, threadIdx.x,
                       emu_pc(pc).c_str());
        }
        const bool shared = region.argument < 0;
        const int block = emu_races.block, thread = static_cast<int>(threadIdx.x);
        const std::uint32_t now = emu_races.interval;
        for (char* byte = at; byte < at + size && byte < region.end; ++byte) {
            EmuCell& cell = region.cells[byte - region.begin];
            const bool written = cell.write_thread >= 0;
            // by another thread of this block since the last barrier, or by another block
            const bool other_write = written && ((cell.write_interval == now &&
                                                  cell.write_thread != thread) ||
                                                 (!shared && cell.write_block != block));
            if (write) {
                const bool other_read =
                    (cell.read_thread >= 0 && cell.read_interval == now &&
                     (cell.read_thread != thread || cell.reads_by_threads)) ||
                    (!shared && cell.read_block >= 0 &&
                     (cell.read_block != block || cell.reads_by_blocks));
                if (other_write) {
                    emu_hazard("write-after-write", region, byte, "written", cell.write_block,
                               cell.write_thread, cell.write_pc, "written", thread, pc);
                } else if (other_read) {
                    emu_hazard("write-after-read", region, byte, "read", cell.read_block,
                               cell.read_thread, cell.read_pc, "written", thread, pc);
                }
                cell.write_interval = now;
                cell.write_block = block;
                cell.write_thread = static_cast<std::int16_t>(thread);
                cell.write_pc = pc;
            } else {
                if (other_write) {
                    emu_hazard("read-after-write", region, byte, "written", cell.write_block,
                               cell.write_thread, cell.write_pc, "read", thread, pc);
                } else if (shared && (!written || cell.write_interval < emu_races.block_interval)
                           && emu_races.reported.insert({nullptr, pc}).second) {
                    emu_report("uninitialised shared memory read at byte %td by block %d thread "
                               "%d (%s): no thread of the block wrote it", byte - region.begin,
                               block, thread, emu_pc(pc).c_str());
                }
                if (cell.read_thread < 0 || cell.read_interval != now) {
                    cell.read_thread = static_cast<std::int16_t>(thread);
                    cell.reads_by_threads = false;
                    cell.read_pc = pc;
                } else if (cell.read_thread != thread) {
                    cell.reads_by_threads = true;
                }
                if (cell.read_block < 0) {
                    cell.read_block = block;
                } else if (cell.read_block != block) {
                    cell.reads_by_blocks = true;
                }
                cell.read_interval = now;
            }
        }
        return;
    }
}

// The instrumentation's entry points (GCC's -fsanitize=thread ABI).
#define EMU_TSAN_ACCESS(N)                                                                      \
    extern "C" EMU_UNCHECKED void __tsan_read##N(void* a) {                                    \
        emu_access(a, N, false, N, __builtin_return_address(0));                               \
    }                                                                                           \
    extern "C" EMU_UNCHECKED void __tsan_write##N(void* a) {                                   \
        emu_access(a, N, true, N, __builtin_return_address(0));                                \
    }                                                                                           \
    extern "C" EMU_UNCHECKED void __tsan_unaligned_read##N(void* a) {                          \
        emu_access(a, N, false, 1, __builtin_return_address(0));                               \
    }                                                                                           \
    extern "C" EMU_UNCHECKED void __tsan_unaligned_write##N(void* a) {                         \
        emu_access(a, N, true, 1, __builtin_return_address(0));                                \
    }
EMU_TSAN_ACCESS(1)
EMU_TSAN_ACCESS(2)
EMU_TSAN_ACCESS(4)
EMU_TSAN_ACCESS(8)
EMU_TSAN_ACCESS(16)
// An aggregate of another size (a Pack of 32 bytes): the alignment its size implies, at most 16.
constexpr std::size_t emu_size_alignment(std::size_t n) {
    return (n & (~n + 1)) < 16 ? (n & (~n + 1)) : 16;     // the lowest set bit, at most 16
}
extern "C" EMU_UNCHECKED void __tsan_read_range(void* a, std::size_t n) {
    emu_access(a, n, false, emu_size_alignment(n), __builtin_return_address(0));
}
extern "C" EMU_UNCHECKED void __tsan_write_range(void* a, std::size_t n) {
    emu_access(a, n, true, emu_size_alignment(n), __builtin_return_address(0));
}
extern "C" EMU_UNCHECKED void __tsan_init() {}
// The guard of a function-local static: a plain load (one thread).
extern "C" EMU_UNCHECKED char __tsan_atomic8_load(const volatile char* a, int) { return *a; }
extern "C" EMU_UNCHECKED void __tsan_func_entry(void*) {}
extern "C" EMU_UNCHECKED void __tsan_func_exit() {}
#else
EMU_UNCHECKED inline void emu_track_arrays(const std::vector<std::pair<char*, std::size_t>>&,
                                           const std::vector<int>&) {}
EMU_UNCHECKED inline void emu_untrack() {}
EMU_UNCHECKED inline void emu_block_begins(unsigned) {}
EMU_UNCHECKED inline void emu_barrier_passed(int) {}
#endif

// Runs `launcher` on copies of the array arguments (bytes[i] > 0: argument i points to that
// many bytes, or is null); returns the findings of the launch, "" when there are none.
template <typename Launcher>
EMU_UNCHECKED const char* emu_run_checked(Launcher launcher, dim3 grid, unsigned block,
                                          void** args, const long long* bytes, int count) {
    struct Array { int index; char* original; char* allocation; char* copy; std::size_t bytes; };
    std::vector<Array> arrays;
    std::vector<void*> values(count), pointers(args, args + count);
    for (int i = 0; i < count; ++i) {
        char* original;
        std::memcpy(&original, args[i], sizeof original);
        if (bytes[i] <= 0 || original == nullptr) continue;
        const std::size_t n = static_cast<std::size_t>(bytes[i]);
        const std::size_t offset = reinterpret_cast<std::uintptr_t>(original) % 16;
        void* allocation = nullptr;
        if (posix_memalign(&allocation, 16, offset + n) != 0) std::abort();
        char* copy = static_cast<char*>(allocation) + offset;
        std::memcpy(copy, original, n);
#ifdef __SANITIZE_ADDRESS__
        ASAN_POISON_MEMORY_REGION(allocation, offset);     // reads before the start, too
#endif
        arrays.push_back({i, original, static_cast<char*>(allocation), copy, n});
        values[i] = copy;
        pointers[i] = &values[i];
    }
    std::vector<std::pair<char*, std::size_t>> tracked;
    std::vector<int> indices;
    for (const Array& a : arrays) {
        tracked.emplace_back(a.copy, a.bytes);
        indices.push_back(a.index);
    }
    emu_findings.clear();
    emu_const_args = 0;
    emu_track_arrays(tracked, indices);
    launcher(grid, block, pointers.data());
    emu_untrack();
    for (const Array& a : arrays) {
        if (emu_const_args >> a.index & 1) {
            if (std::memcmp(a.copy, a.original, a.bytes) != 0) {
                emu_report("argument %d points to const, and the launch changed it", a.index);
            }
        } else {
            std::memcpy(a.original, a.copy, a.bytes);
        }
#ifdef __SANITIZE_ADDRESS__
        ASAN_UNPOISON_MEMORY_REGION(a.allocation, a.copy - a.allocation);
#endif
        std::free(a.allocation);
    }
    return emu_findings.c_str();
}
