// floydwarp: 3-phase blocked Floyd-Warshall (seeds 000, 001, 004).
//
// The matrix (n padded to a multiple of B with INF, diagonal 0 on the padding) is cut
// into B x B tiles.  Round r: phase 1 closes the diagonal tile (r, r); phase 2 the
// tiles of row r and column r through it; phase 3 every other tile (i, j) from tiles
// (i, r) and (r, j), which phase 3 never writes, so its blocks need no barrier.
//
// Threads: TB x TB with TB = min(B, 32); each thread owns S x S cells (S = B / TB),
// rows ty + si * TB and columns tx + sj * TB (seed 001's hw3-2: 64 x 64 tiles, 32 x 32
// threads, 4 cells each).  Tiles live in dynamic shared memory:
//   phase 1: B*B*sizeof(T) (+ B*B*4 with predecessors)
//   phase 2, phase 3: 2*B*B*sizeof(T) (+ B*B*4 with predecessors)
// blocked-vec's phase 3 moves tiles and cells as 16-byte vectors.
#include "common.cuh"

template <int B> struct Threads { static constexpr int TB = B < 32 ? B : 32; static constexpr int S = B / TB; };

// ---------------------------------------------------------------- phase 1
template <typename T, int B, bool CLAMP, bool PRED>
__global__ void __launch_bounds__(Threads<B>::TB * Threads<B>::TB)
fw_blocked_p1(T* d, i64 p, int* pr, i64 pp, int r, T ninf) {
    constexpr int TB = Threads<B>::TB, S = Threads<B>::S;
    extern __shared__ __align__(16) unsigned char fw_smem[];
    T* t = reinterpret_cast<T*>(fw_smem);
    int* tp = reinterpret_cast<int*>(t + B * B);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const i64 o = (i64)r * B;
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S; ++sj) {
            const int li = ty + si * TB, lj = tx + sj * TB;
            t[li * B + lj] = d[(o + li) * p + o + lj];
            if (PRED) tp[li * B + lj] = pr[(o + li) * pp + o + lj];
        }
    __syncthreads();
    for (int kk = 0; kk < B; ++kk) {
#pragma unroll
        for (int si = 0; si < S; ++si) {
            const int li = ty + si * TB;
            const T a = t[li * B + kk];
#pragma unroll
            for (int sj = 0; sj < S; ++sj) {
                const int lj = tx + sj * TB;
                const T s = fw_cand(a, t[kk * B + lj], ninf, CLAMP);
                if (s < t[li * B + lj]) {
                    t[li * B + lj] = s;
                    if (PRED) tp[li * B + lj] = tp[kk * B + lj];
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S; ++sj) {
            const int li = ty + si * TB, lj = tx + sj * TB;
            d[(o + li) * p + o + lj] = t[li * B + lj];
            if (PRED) pr[(o + li) * pp + o + lj] = tp[li * B + lj];
        }
}

// ---------------------------------------------------------------- phase 2
// grid (tiles - 1, 2): blockIdx.y == 0 -> tile (r, t) of row r, 1 -> tile (t, r) of column r.
template <typename T, int B, bool CLAMP, bool PRED>
__global__ void __launch_bounds__(Threads<B>::TB * Threads<B>::TB)
fw_blocked_p2(T* d, i64 p, int* pr, i64 pp, int r, T ninf) {
    constexpr int TB = Threads<B>::TB, S = Threads<B>::S;
    extern __shared__ __align__(16) unsigned char fw_smem[];
    T* piv = reinterpret_cast<T*>(fw_smem);
    T* own = piv + B * B;
    // predecessors: the row tile's own (others read row kk of it), or the pivot's
    int* sp = reinterpret_cast<int*>(own + B * B);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int t = blockIdx.x + (blockIdx.x >= r);
    const bool is_row = blockIdx.y == 0;
    const i64 o = (i64)r * B;
    const i64 oi = is_row ? o : (i64)t * B, oj = is_row ? (i64)t * B : o;
    int pc[S][S];
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S; ++sj) {
            const int li = ty + si * TB, lj = tx + sj * TB;
            piv[li * B + lj] = d[(o + li) * p + o + lj];
            own[li * B + lj] = d[(oi + li) * p + oj + lj];
            if (PRED) {
                pc[si][sj] = pr[(oi + li) * pp + oj + lj];
                sp[li * B + lj] = is_row ? pc[si][sj] : pr[(o + li) * pp + o + lj];
            }
        }
    __syncthreads();
    for (int kk = 0; kk < B; ++kk) {
#pragma unroll
        for (int si = 0; si < S; ++si) {
            const int li = ty + si * TB;
            const T a = is_row ? piv[li * B + kk] : own[li * B + kk];
#pragma unroll
            for (int sj = 0; sj < S; ++sj) {
                const int lj = tx + sj * TB;
                const T b = is_row ? own[kk * B + lj] : piv[kk * B + lj];
                const T s = fw_cand(a, b, ninf, CLAMP);
                if (s < own[li * B + lj]) {
                    own[li * B + lj] = s;
                    if (PRED) {
                        const int pb = sp[kk * B + lj];
                        pc[si][sj] = pb;
                        if (is_row) sp[li * B + lj] = pb;
                    }
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S; ++sj) {
            const int li = ty + si * TB, lj = tx + sj * TB;
            d[(oi + li) * p + oj + lj] = own[li * B + lj];
            if (PRED) pr[(oi + li) * pp + oj + lj] = pc[si][sj];
        }
}

// ---------------------------------------------------------------- phase 3
// grid (tiles - 1, tiles - 1), skipping row r and column r.  Own cells in registers;
// tile (i, r) and tile (r, j) in shared memory; no barrier inside the k loop.
// Without predecessors the clamp is applied once at the end: a and b are fixed here,
// and max(min(c, s1, s2, ...), -INF) equals clamping after every step.
template <typename T, int B, bool CLAMP, bool PRED>
__global__ void __launch_bounds__(Threads<B>::TB * Threads<B>::TB)
fw_blocked_p3(T* d, i64 p, int* pr, i64 pp, int r, T ninf) {
    constexpr int TB = Threads<B>::TB, S = Threads<B>::S;
    extern __shared__ __align__(16) unsigned char fw_smem[];
    T* ct = reinterpret_cast<T*>(fw_smem);   // tile (bi, r)
    T* rt = ct + B * B;                       // tile (r, bj)
    int* rp = reinterpret_cast<int*>(rt + B * B);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int bi = blockIdx.y + (blockIdx.y >= r), bj = blockIdx.x + (blockIdx.x >= r);
    const i64 o = (i64)r * B, oi = (i64)bi * B, oj = (i64)bj * B;
    T c[S][S];
    int pc[S][S];
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S; ++sj) {
            const int li = ty + si * TB, lj = tx + sj * TB;
            ct[li * B + lj] = d[(oi + li) * p + o + lj];
            rt[li * B + lj] = d[(o + li) * p + oj + lj];
            c[si][sj] = d[(oi + li) * p + oj + lj];
            if (PRED) {
                rp[li * B + lj] = pr[(o + li) * pp + oj + lj];
                pc[si][sj] = pr[(oi + li) * pp + oj + lj];
            }
        }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < B; ++kk) {
#pragma unroll
        for (int si = 0; si < S; ++si) {
            const T a = ct[(ty + si * TB) * B + kk];
#pragma unroll
            for (int sj = 0; sj < S; ++sj) {
                const int lj = tx + sj * TB;
                if (PRED) {
                    const T s = fw_cand(a, rt[kk * B + lj], ninf, CLAMP);
                    if (s < c[si][sj]) {
                        c[si][sj] = s;
                        pc[si][sj] = rp[kk * B + lj];
                    }
                } else {
                    c[si][sj] = fw_addmin(a, rt[kk * B + lj], c[si][sj]);
                }
            }
        }
    }
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S; ++sj) {
            const int li = ty + si * TB, lj = tx + sj * TB;
            T v = c[si][sj];
            if (CLAMP && !PRED) v = fw_max(v, ninf);
            d[(oi + li) * p + oj + lj] = v;
            if (PRED) pr[(oi + li) * pp + oj + lj] = pc[si][sj];
        }
}

// ---------------------------------------------------------------- blocked-vec phase 3 (seed 000)
// Threads (B/V) x TY, V = 16 / sizeof(T) elements per vector: thread (tx, ty) owns the
// vector of columns tx*V .. tx*V+V-1 in rows ty, ty + TY, ...  Tiles move between
// global and shared memory as 16-byte vectors; the column tile's rows are padded by one
// vector so that the rows a warp reads fall in different banks.
template <typename T, int B> struct VecShape {
    static constexpr int V = 16 / sizeof(T);
    static constexpr int BV = B / V;
    static constexpr int TY = (256 / BV) < B ? (256 / BV) : B;
    static constexpr int RY = B / TY;
    static constexpr int CP = B + V;  // column-tile pitch
};

template <typename T, int B, bool CLAMP>
__global__ void __launch_bounds__(VecShape<T, B>::BV * VecShape<T, B>::TY)
fw_blockedvec_p3(T* d, i64 p, int r, T ninf) {
    typedef VecShape<T, B> Sh;
    constexpr int V = Sh::V, BV = Sh::BV, TY = Sh::TY, RY = Sh::RY, CP = Sh::CP;
    constexpr int NT = BV * TY;
    extern __shared__ __align__(16) unsigned char fw_smem[];
    T* ct = reinterpret_cast<T*>(fw_smem);  // B x CP
    T* rt = ct + B * CP;                     // B x B
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BV + tx;
    const int bi = blockIdx.y + (blockIdx.y >= r), bj = blockIdx.x + (blockIdx.x >= r);
    const i64 o = (i64)r * B, oi = (i64)bi * B, oj = (i64)bj * B;
    for (int idx = tid; idx < B * BV; idx += NT) {
        const int row = idx / BV, cv = idx % BV;
        st16(ct + row * CP + cv * V, ld16(d + (oi + row) * p + o + cv * V));
        st16(rt + row * B + cv * V, ld16(d + (o + row) * p + oj + cv * V));
    }
    Vec16<T> c[RY];
#pragma unroll
    for (int q = 0; q < RY; ++q) c[q] = ld16(d + (oi + ty + q * TY) * p + oj + tx * V);
    __syncthreads();
#pragma unroll 4
    for (int kk = 0; kk < B; ++kk) {
        const Vec16<T> b = ld16(rt + kk * B + tx * V);
#pragma unroll
        for (int q = 0; q < RY; ++q) {
            const T a = ct[(ty + q * TY) * CP + kk];
#pragma unroll
            for (int u = 0; u < V; ++u) c[q].v[u] = fw_addmin(a, b.v[u], c[q].v[u]);
        }
    }
#pragma unroll
    for (int q = 0; q < RY; ++q) {
        if (CLAMP) {
#pragma unroll
            for (int u = 0; u < V; ++u) c[q].v[u] = fw_max(c[q].v[u], ninf);
        }
        st16(d + (oi + ty + q * TY) * p + oj + tx * V, c[q]);
    }
}
