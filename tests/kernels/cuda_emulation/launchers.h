// Launchers for the emulated kernels, with cuLaunchKernel's convention: args[i] points at the
// value of argument i. tests/kernels/cuda_emulation/emulation.py generates the table
// (emu_entries) of one launcher per name in kernels.cuda.name_expressions().
#pragma once
#include <cstring>
#include <string>
#include <type_traits>

#include "sanitizers.h"

// Argument i as an A; a pointer to const is recorded as such (checked unchanged after the
// launch), so the launchers' types below must be the kernels' parameter types.
template <typename A>
A arg(void** args, int i) {
    if constexpr (std::is_pointer_v<A> && std::is_const_v<std::remove_pointer_t<A>>) {
        emu_const_args |= 1ull << i;
    }
    A value;
    std::memcpy(&value, args[i], sizeof(A));
    return value;
}

template <typename T, int VEC, int NV, int MAX_BLOCK, typename W = T, bool UNEVEN = false>
void run_norm_forward(dim3 grid, unsigned block, void** a) {
    auto x = arg<const T*>(a, 0), residual = arg<const T*>(a, 1);
    auto weight = arg<const W*>(a, 2);
    auto bias = arg<const T*>(a, 3);
    auto y = arg<void*>(a, 4);
    auto sum = arg<T*>(a, 5);
    auto mean = arg<float*>(a, 6), rstd = arg<float*>(a, 7);
    auto rows = arg<long long>(a, 8);
    auto cols = arg<int>(a, 9), group = arg<int>(a, 10);
    auto eps = arg<float>(a, 11);
    auto subtract_mean = arg<int>(a, 12);
    auto offset = arg<float>(a, 13);
    auto casting = arg<int>(a, 14);
    emu_launch(grid, block, [=] {
        norm_forward<T, VEC, NV, MAX_BLOCK, W, UNEVEN>(x, residual, weight, bias, y, sum, mean, rstd,
                                               rows, cols, group, eps, subtract_mean, offset,
                                               casting);
    });
}

template <typename T, int VEC, int NV, int MAX_BLOCK, typename W = T, bool UNEVEN = false>
void run_norm_backward(dim3 grid, unsigned block, void** a) {
    auto dy = arg<const void*>(a, 0);
    auto dsum = arg<const T*>(a, 1), x = arg<const T*>(a, 2);
    auto weight = arg<const W*>(a, 3);
    auto mean = arg<const float*>(a, 4), rstd = arg<const float*>(a, 5);
    auto dx = arg<T*>(a, 6);
    auto dweight = arg<float*>(a, 7), dbias = arg<float*>(a, 8);
    auto rows = arg<long long>(a, 9);
    auto cols = arg<int>(a, 10), group = arg<int>(a, 11), stride = arg<int>(a, 12);
    auto offset = arg<float>(a, 13);
    auto casting = arg<int>(a, 14);
    emu_launch(grid, block, [=] {
        norm_backward<T, VEC, NV, MAX_BLOCK, W, UNEVEN>(dy, dsum, x, weight, mean, rstd, dx, dweight,
                                                dbias, rows, cols, group, stride, offset,
                                                casting);
    });
}

template <typename T, typename VIA = T>
void run_sum_partials(dim3 grid, unsigned block, void** a) {
    auto dweight = arg<const float*>(a, 0), dbias = arg<const float*>(a, 1);
    auto count = arg<int>(a, 2), stride = arg<int>(a, 3), cols = arg<int>(a, 4);
    auto next_dweight = arg<float*>(a, 5), next_dbias = arg<float*>(a, 6);
    auto out_dweight = arg<T*>(a, 7), out_dbias = arg<T*>(a, 8);
    auto round_via = arg<int>(a, 9);
    emu_launch(grid, block, [=] {
        sum_partials<T, VIA>(dweight, dbias, count, stride, cols, next_dweight, next_dbias,
                        out_dweight, out_dbias, round_via);
    });
}

using Launcher = void (*)(dim3, unsigned, void**);
struct Entry {
    const char* name;
    Launcher launcher;
};
extern const Entry emu_entries[];
extern const int emu_entry_count;

// Launches kernel `name` (bytes: as emu_run_checked); returns its findings, "" for none, or
// null for a name not in the table.
extern "C" const char* emu_run(const char* name, unsigned gx, unsigned gy, unsigned gz,
                               unsigned block, void** args, const long long* bytes, int count) {
    for (int e = 0; e < emu_entry_count; ++e) {
        if (std::string(emu_entries[e].name) == name) {
            return emu_run_checked(emu_entries[e].launcher, dim3{gx, gy, gz}, block, args, bytes,
                                   count);
        }
    }
    return nullptr;
}
