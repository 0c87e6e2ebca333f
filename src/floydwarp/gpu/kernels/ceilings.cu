// floydwarp: microbenchmarks for the device's add-min ceiling (gpu/ceilings.py).
// Each thread runs C independent chains x <- min(x + b, y) in registers: no memory
// traffic, enough independent work to fill every pipeline.  The operands come from
// memory so the compiler cannot fold them, and the result is written out.
#include "lanes.cuh"

template <typename T>
__global__ void ceil_addmin(T* out, const T* in, int iters) {
    constexpr int C = 16;
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    T x[C], b[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        x[c] = in[(tid + c) & 1023];
        b[c] = in[(tid * 7 + c * 13 + 5) & 1023];
    }
    const T y = in[(tid + 17) & 1023];
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < C; ++c) x[c] = fw_addmin(x[c], b[c], y);
    }
    T acc = x[0];
#pragma unroll
    for (int c = 1; c < C; ++c) acc = acc < x[c] ? acc : x[c];
    out[tid] = acc;
}

// Packed int16 pairs: each instruction is two relaxations.
__global__ void ceil_addmin_s16x2(unsigned int* out, const unsigned int* in, int iters) {
    constexpr int C = 16;
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int x[C], b[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        x[c] = in[(tid + c) & 1023];
        b[c] = in[(tid * 7 + c * 13 + 5) & 1023];
    }
    const unsigned int y = in[(tid + 17) & 1023];
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < C; ++c) x[c] = s16x2_addmin(x[c], b[c], y);
    }
    unsigned int acc = x[0];
#pragma unroll
    for (int c = 1; c < C; ++c) acc ^= x[c];
    out[tid] = acc;
}

// Non-negative float32 (NonnegFloat, lanes.cuh): two FADDs and one three-way integer
// min per step are two relaxations.
__global__ void ceil_addmin2_f32_nonneg(float* out, const float* in, int iters) {
    constexpr int C = 16;
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float x[C], b[C], e[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        x[c] = in[(tid + c) & 1023];
        b[c] = in[(tid * 7 + c * 13 + 5) & 1023];
        e[c] = in[(tid * 3 + c * 11 + 9) & 1023];
    }
    const float y = in[(tid + 17) & 1023];
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < C; ++c) x[c] = NonnegFloat::addmin2(x[c], b[c], x[c], e[c], y);
    }
    float acc = x[0];
#pragma unroll
    for (int c = 1; c < C; ++c) acc = fminf(acc, x[c]);
    out[tid] = acc;
}
