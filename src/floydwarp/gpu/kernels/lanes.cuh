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
    // two relaxations of one cell, through k and k + 1
    static __device__ __forceinline__ W addmin2(W a0, W b0, W a1, W b1, W c) {
        return addmin(a1, b1, addmin(a0, b0, c));
    }
    static __device__ __forceinline__ W clampw(W x, T ninf) { return fw_max(x, ninf); }
};
template <> struct Lane<short> {
    typedef unsigned int W;
    static constexpr int EPW = 2;
    static __device__ __forceinline__ W word(short x) { return s16_bcast(x); }
    static __device__ __forceinline__ W addmin(W a, W b, W c) { return s16x2_addmin(a, b, c); }
    static __device__ __forceinline__ W addmin2(W a0, W b0, W a1, W b1, W c) {
        return addmin(a1, b1, addmin(a0, b0, c));
    }
    static __device__ __forceinline__ W clampw(W x, short ninf) { return __vmaxs2(x, s16_bcast(ninf)); }
};

// float32 entries that are all >= 0 (no negative weights; +inf for no path): their IEEE
// order is the integer order of their bits, so two relaxations of a cell share ONE
// three-way integer min (VIMNMX3 on sm_90) after two FADDs.  FADD + FMNMX per
// relaxation fill every issue slot (2 per relaxation); this takes 1.5, the FADDs on the
// FMA pipe, the mins on the integer pipe.  The result is the same float: min picks.
struct NonnegFloat : Lane<float> {
    static __device__ __forceinline__ float addmin2(float a0, float b0, float a1, float b1, float c) {
        const int s0 = __float_as_int(a0 + b0), s1 = __float_as_int(a1 + b1), x = __float_as_int(c);
#if FW_DPX
        return __int_as_float(__vimin3_s32(x, s0, s1));
#else
        return __int_as_float(min(x, min(s0, s1)));
#endif
    }
};

// The lane of a product: NONNEG (every entry >= 0) picks NonnegFloat for float32.
template <typename T, bool NONNEG> struct LaneOf { typedef Lane<T> type; };
template <> struct LaneOf<float, true> { typedef NonnegFloat type; };

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

    // this thread's operands of step k: a_k = row k of the transposed left operand (64
    // words), b_k = row k of the right one
    __device__ __forceinline__ static void operands(const W* a_k, const W* b_k, int tx, int ty, W (&a)[TM],
                                                    W (&b)[TN]) {
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
    }

    // steps k and k + 1 (rows ``sa`` / ``sb`` words further on) in one pass: L::addmin2
    // may merge the two mins of a cell (NonnegFloat); the kernels run k in pairs
    __device__ __forceinline__ void step2(const W* a_k, int sa, const W* b_k, int sb, int tx, int ty) {
        W a0[TM], b0[TN], a1[TM], b1[TN];
        operands(a_k, b_k, tx, ty, a0, b0);
        operands(a_k + sa, b_k + sb, tx, ty, a1, b1);
#pragma unroll
        for (int m = 0; m < TM; ++m)
#pragma unroll
            for (int q = 0; q < TN; ++q) acc[m][q] = L::addmin2(a0[m], b0[q], a1[m], b1[q], acc[m][q]);
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
