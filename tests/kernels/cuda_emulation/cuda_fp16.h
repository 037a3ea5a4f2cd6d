#pragma once
// Emulation: __half as GCC's _Float16 (IEEE binary16, round to nearest even).
#include "cuda_emulation.h"   // stands in for the CUDA header of that name
struct __half { _Float16 value; };
inline float __half2float(__half h) { return static_cast<float>(h.value); }
inline __half __float2half_rn(float f) { return __half{static_cast<_Float16>(f)}; }
