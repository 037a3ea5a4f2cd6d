// Launchers for the emulated kernels, with cuLaunchKernel's convention: args[i] points at the
// value of argument i. tests/test_cuda_emulated.py generates the table of one launcher per
// name in kernels.cuda.name_expressions().
#pragma once
#include <cstring>
#include <string>

template <typename A>
A arg(void** args, int i) {
    A value;
    std::memcpy(&value, args[i], sizeof(A));
    return value;
}

template <typename T, int VEC, int NV>
void run_norm_forward(unsigned grid, unsigned block, void** a) {
    auto x = arg<const T*>(a, 0), residual = arg<const T*>(a, 1);
    auto weight = arg<const T*>(a, 2), bias = arg<const T*>(a, 3);
    auto y = arg<T*>(a, 4), sum = arg<T*>(a, 5);
    auto mean = arg<float*>(a, 6), rstd = arg<float*>(a, 7);
    auto rows = arg<long long>(a, 8);
    auto cols = arg<int>(a, 9), group = arg<int>(a, 10);
    auto eps = arg<float>(a, 11);
    auto subtract_mean = arg<int>(a, 12);
    emu_launch(grid, block, [=] {
        norm_forward<T, VEC, NV>(x, residual, weight, bias, y, sum, mean, rstd, rows, cols,
                                 group, eps, subtract_mean);
    });
}

template <typename T, int VEC, int NV>
void run_norm_backward(unsigned grid, unsigned block, void** a) {
    auto dy = arg<const T*>(a, 0), dsum = arg<const T*>(a, 1), x = arg<const T*>(a, 2);
    auto weight = arg<const T*>(a, 3);
    auto mean = arg<const float*>(a, 4), rstd = arg<const float*>(a, 5);
    auto dx = arg<T*>(a, 6);
    auto dweight = arg<float*>(a, 7), dbias = arg<float*>(a, 8);
    auto rows = arg<long long>(a, 9);
    auto cols = arg<int>(a, 10), group = arg<int>(a, 11);
    emu_launch(grid, block, [=] {
        norm_backward<T, VEC, NV>(dy, dsum, x, weight, mean, rstd, dx, dweight, dbias, rows,
                                  cols, group);
    });
}

template <typename T>
void run_sum_partials(unsigned grid, unsigned block, void** a) {
    auto partial = arg<const float*>(a, 0);
    auto count = arg<int>(a, 1), cols = arg<int>(a, 2);
    auto out = arg<T*>(a, 3);
    emu_launch(grid, block, [=] { sum_partials<T>(partial, count, cols, out); });
}

using Launcher = void (*)(unsigned, unsigned, void**);
struct Entry {
    const char* name;
    Launcher launcher;
};
