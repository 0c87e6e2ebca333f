// floydwarp GPU kernels: definitions shared by every .cu file.
//
// No sentinel lives here: INF arrives as a kernel parameter (numeric.py owns it),
// and kernels only ever see ``ninf = -INF`` for the clamp.  Integer sums of two
// entries never overflow because every entry lies in [-2 INF, INF] (see numeric.py).
// The module loader (modules.py) inlines this file into each .cu source, so NVRTC
// needs no include path and CuPy's cache key covers the header too.
#ifndef FLOYDWARP_COMMON_CUH
#define FLOYDWARP_COMMON_CUH

typedef long long i64;

// Hopper's DPX instructions (VIADDMNMX) exist from sm_90; NVRTC of CUDA 12+ knows the
// intrinsics.  Elsewhere the portable min(a + b, c) is used.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDACC_VER_MAJOR__) && (__CUDACC_VER_MAJOR__ >= 12)
#define FW_DPX 1
#else
#define FW_DPX 0
#endif

// The candidate a + b, clamped at -INF when asked (integer dtypes with negative weights).
template <typename T>
__device__ __forceinline__ T fw_cand(T a, T b, T ninf, bool clamp) {
    T s = (T)(a + b);
    if (clamp && s < ninf) s = ninf;
    return s;
}

// min(c, a + b) for one cell: integers and floats alike (a float candidate wins only
// when a + b < c, so a NaN never wins).
template <typename T>
__device__ __forceinline__ T fw_addmin(T a, T b, T c) {
    T s = (T)(a + b);
    return s < c ? s : c;
}

#if FW_DPX
template <>
__device__ __forceinline__ int fw_addmin<int>(int a, int b, int c) { return __viaddmin_s32(a, b, c); }
#endif
// fminf/fmin return the other operand for a NaN, like the comparison above, in one
// FMNMX instruction instead of a compare and a select.
template <>
__device__ __forceinline__ float fw_addmin<float>(float a, float b, float c) { return fminf(a + b, c); }
template <>
__device__ __forceinline__ double fw_addmin<double>(double a, double b, double c) { return fmin(a + b, c); }

template <typename T>
__device__ __forceinline__ T fw_max(T a, T b) { return a > b ? a : b; }

// One relaxation through k of a cell held in global memory: writes only on a strict
// improvement, and copies pred[k, j] into pred[i, j] then.
template <typename T>
__device__ __forceinline__ void fw_update(T* cell, int* pcell, T a, T b, const int* pk, T ninf, bool clamp) {
    T s = fw_cand(a, b, ninf, clamp);
    if (s < *cell) {
        *cell = s;
        if (pcell) *pcell = *pk;
    }
}

// 16 bytes viewed as a vector of elements (short x8, int/float x4, long long/double x2).
template <typename T>
union Vec16 {
    uint4 raw;
    T v[16 / sizeof(T)];
};

template <typename T>
__device__ __forceinline__ Vec16<T> ld16(const T* p) {
    Vec16<T> x;
    x.raw = *reinterpret_cast<const uint4*>(p);
    return x;
}

template <typename T>
__device__ __forceinline__ void st16(T* p, const Vec16<T>& x) {
    *reinterpret_cast<uint4*>(p) = x.raw;
}

// Component ``idx`` of a vector, selected with compile-time indices only (a run-time
// index into a register array would send it to local memory).
template <typename T>
__device__ __forceinline__ T vec_pick(const Vec16<T>& x, int idx) {
    constexpr int V = 16 / sizeof(T);
    T r = x.v[0];
#pragma unroll
    for (int u = 1; u < V; ++u)
        if (idx == u) r = x.v[u];
    return r;
}

// Packed int16 pairs: per-halfword min(a + b, c) (VIADDMNMX.S16x2 on sm_90: two
// relaxations per instruction) and a value broadcast into both halves.
__device__ __forceinline__ unsigned int s16x2_addmin(unsigned int a, unsigned int b, unsigned int c) {
#if FW_DPX
    return __viaddmin_s16x2(a, b, c);
#else
    return __vmins2(__vadd2(a, b), c);
#endif
}

__device__ __forceinline__ unsigned int s16_bcast(short a) {
    const unsigned int u = (unsigned short)a;
    return u | (u << 16);
}

#endif  // FLOYDWARP_COMMON_CUH
