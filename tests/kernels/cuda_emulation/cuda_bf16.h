#pragma once
// Emulation: __nv_bfloat16 as its 16 bits, rounding to nearest even.
#include "cuda_emulation.h"   // stands in for the CUDA header of that name
struct __nv_bfloat16 { std::uint16_t bits; };
inline float __bfloat162float(__nv_bfloat16 h) {
    std::uint32_t b = std::uint32_t(h.bits) << 16; float f; std::memcpy(&f, &b, 4); return f;
}
inline __nv_bfloat16 __float2bfloat16_rn(float f) {
    std::uint32_t b; std::memcpy(&b, &f, 4);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return {std::uint16_t((b >> 16) | 0x40)};
    b += 0x7FFFu + ((b >> 16) & 1u);
    return {std::uint16_t(b >> 16)};
}
