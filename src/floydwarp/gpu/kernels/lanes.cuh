// floydwarp GPU kernels: the "word" view of a distance type and the asynchronous
// copies shared by the persistent phase-3 kernels (pipe.cu, minplus.cu).
#ifndef FLOYDWARP_LANES_CUH
#define FLOYDWARP_LANES_CUH
#include "common.cuh"

// A phase-3 "word": one distance (int, float) or two int16 distances.
template <typename T> struct Lane {
    typedef T W;
    static constexpr int EPW = 1;  // elements per word
    static __device__ __forceinline__ W word(T x) { return x; }
    static __device__ __forceinline__ W addmin(W a, W b, W c) { return fw_addmin(a, b, c); }
    static __device__ __forceinline__ W clampw(W x, T ninf) { return fw_max(x, ninf); }
};
template <> struct Lane<short> {
    typedef unsigned int W;
    static constexpr int EPW = 2;
    static __device__ __forceinline__ W word(short x) { return s16_bcast(x); }
    static __device__ __forceinline__ W addmin(W a, W b, W c) { return s16x2_addmin(a, b, c); }
    static __device__ __forceinline__ W clampw(W x, short ninf) { return __vmaxs2(x, s16_bcast(ninf)); }
};

template <typename W> struct __align__(16) W4 { W v[4]; };

// A word with only the bits of ``keep`` left: keyed predecessors (gpu/keyed.py) clear the
// predecessor bits of the left operand of a product; other words pass unchanged.
template <typename W> __device__ __forceinline__ W fw_keep(W x, int) { return x; }
template <> __device__ __forceinline__ int fw_keep<int>(int x, int keep) { return x & keep; }

__device__ __forceinline__ void pp_cp_async16(void* smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned int s = (unsigned int)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
#else
    *reinterpret_cast<uint4*>(smem) = *reinterpret_cast<const uint4*>(gmem);
#endif
}

__device__ __forceinline__ void pp_cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void pp_cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// One 16-byte global store (STG.E.128).  Written as PTX: NVVM split the plain uint4
// store of this kernel into four 4-byte stores.
__device__ __forceinline__ void pp_st_global16(void* p, unsigned int a, unsigned int b, unsigned int c,
                                               unsigned int e) {
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "r"(a), "r"(b), "r"(c), "r"(e)
                 : "memory");
}

// Four words (16 or 32 bytes) with 16-byte stores.
template <typename W>
__device__ __forceinline__ void st_w4(void* p, const W4<W>& v) {
    constexpr int Q = sizeof(W4<W>) / 16;
    union { W4<W> w; uint4 u[Q]; } x;
    x.w = v;
#pragma unroll
    for (int q = 0; q < Q; ++q)
        pp_st_global16(static_cast<char*>(p) + 16 * q, x.u[q].x, x.u[q].y, x.u[q].z, x.u[q].w);
}

// ---------------------------------------------------------------- a thread's register tile
// In a 64-row tile of BW words per row (shared memory), thread (tx, ty) of NTX x NTY owns
// TM x TN words: rows g * NTY * 4 + ty * 4 + j, words h * NTX * 4 + tx * 4 + q, so its
// operands are 16-byte vectors and a quarter warp reads contiguous words.
template <typename L, int TM, int TN, int NTX, int NTY, int BW>
struct RegTile {
    typedef typename L::W W;
    W acc[TM][TN];

    // the cells from a tile in shared memory (cbase = ty * 4 * BW + tx * 4)
    __device__ __forceinline__ void load(const W* cs, int cbase) {
#pragma unroll
        for (int g = 0; g < TM / 4; ++g)
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int h = 0; h < TN / 4; ++h) {
                    const W4<W> v = *reinterpret_cast<const W4<W>*>(cs + cbase + (g * NTY * 4 + j) * BW + h * NTX * 4);
#pragma unroll
                    for (int q = 0; q < 4; ++q) acc[g * 4 + j][h * 4 + q] = v.v[q];
                }
    }

    // one step of k: a_k = row k of the transposed left operand (64 words), b_k = row k of the right one
    __device__ __forceinline__ void step(const W* a_k, const W* b_k, int tx, int ty) {
        W a[TM], b[TN];
#pragma unroll
        for (int g = 0; g < TM / 4; ++g) {
            const W4<W> v = *reinterpret_cast<const W4<W>*>(a_k + g * NTY * 4 + ty * 4);
#pragma unroll
            for (int q = 0; q < 4; ++q) a[g * 4 + q] = v.v[q];
        }
#pragma unroll
        for (int h = 0; h < TN / 4; ++h) {
            const W4<W> v = *reinterpret_cast<const W4<W>*>(b_k + h * NTX * 4 + tx * 4);
#pragma unroll
            for (int q = 0; q < 4; ++q) b[h * 4 + q] = v.v[q];
        }
#pragma unroll
        for (int m = 0; m < TM; ++m)
#pragma unroll
            for (int q = 0; q < TN; ++q) acc[m][q] = L::addmin(a[m], b[q], acc[m][q]);
    }

    // the cells into global memory at cdst (this thread's first cell; p elements per row),
    // clamped at -INF when asked
    template <bool CLAMP, typename T>
    __device__ __forceinline__ void store(T* cdst, i64 p, T ninf) const {
#pragma unroll
        for (int g = 0; g < TM / 4; ++g)
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int h = 0; h < TN / 4; ++h) {
                    W4<W> v;
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        W xv = acc[g * 4 + j][h * 4 + q];
                        if (CLAMP) xv = L::clampw(xv, ninf);
                        v.v[q] = xv;
                    }
                    st_w4(cdst + (g * NTY * 4 + j) * p + h * NTX * 4 * L::EPW, v);
                }
    }
};

#endif  // FLOYDWARP_LANES_CUH
