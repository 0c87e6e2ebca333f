// floydwarp: the one-launch-per-k kernels of the seed reports, plus the sequential
// and persistent (grid-barrier) versions.  Every kernel is a template on the distance
// type T; clamp and predecessors are run-time flags (these kernels are memory bound).
//
// Matrix layout (layout.py): row i of the distances starts at d + i * p, p a multiple
// of 128 bytes; predecessors likewise with pitch pp.  ``pr`` is null without
// predecessors.  Only vertices 0..n-1 are touched.
#include "common.cuh"

// ---------------------------------------------------------------- sequential (seed 003)
// One GPU thread runs the triple loop.
template <typename T>
__global__ void fw_sequential(T* d, i64 p, int* pr, i64 pp, int n, T ninf, int clamp) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int k = 0; k < n; ++k) {
        const T* rowk = d + (i64)k * p;
        for (int i = 0; i < n; ++i) {
            T* rowi = d + (i64)i * p;
            const T a = rowi[k];
            for (int j = 0; j < n; ++j)
                fw_update(rowi + j, pr ? pr + (i64)i * pp + j : (int*)0, a, rowk[j],
                          pr ? pr + (i64)k * pp + j : (const int*)0, ninf, clamp != 0);
        }
    }
}

// ---------------------------------------------------------------- naive (seeds 000, 002, 004)
// One thread per cell, one launch per k, global memory only.  j runs along x so a
// warp reads a row segment (coalesced).
template <typename T>
__global__ void fw_naive(T* d, i64 p, int* pr, i64 pp, int n, int k, T ninf, int clamp) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;
    const T a = d[(i64)i * p + k];
    const T b = d[(i64)k * p + j];
    fw_update(d + (i64)i * p + j, pr ? pr + (i64)i * pp + j : (int*)0, a, b,
              pr ? pr + (i64)k * pp + j : (const int*)0, ninf, clamp != 0);
}

// ---------------------------------------------------------------- naive-shared-k (seed 002 pre-Volta)
// M[i,k] (and M[k,j]) staged once per thread block in shared memory.
// Block: 32 x BY threads, BY <= 32.
template <typename T>
__global__ void fw_naive_shared(T* d, i64 p, int* pr, i64 pp, int n, int k, T ninf, int clamp) {
    __shared__ T col[32];
    __shared__ T row[32];
    __shared__ int prow[32];
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (threadIdx.x == 0 && i < n) col[threadIdx.y] = d[(i64)i * p + k];
    if (threadIdx.y == 0 && j < n) {
        row[threadIdx.x] = d[(i64)k * p + j];
        if (pr) prow[threadIdx.x] = pr[(i64)k * pp + j];
    }
    __syncthreads();
    if (i >= n || j >= n) return;
    fw_update(d + (i64)i * p + j, pr ? pr + (i64)i * pp + j : (int*)0, col[threadIdx.y], row[threadIdx.x],
              &prow[threadIdx.x], ninf, clamp != 0);
}

// ---------------------------------------------------------------- naive-vec (seed 000 "simple vectorized")
// Each thread owns one 16-byte vector of row i (8 shorts, 4 ints/floats, 2 doubles).
// M[i,k] is read as the vector that holds column k, the component picked by the low
// bits of k (seed 000 picks with the two low bits of k for short4).
template <typename T>
__global__ void fw_naive_vec(T* d, i64 p, int* pr, i64 pp, int n, int k, T ninf, int clamp) {
    constexpr int V = 16 / sizeof(T);
    const int jv = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const int nv = (n + V - 1) / V;
    if (i >= n || jv >= nv) return;
    T* rowi = d + (i64)i * p;
    const Vec16<T> ik = ld16(rowi + (k / V) * V);
    const T a = vec_pick(ik, k % V);
    const Vec16<T> kj = ld16(d + (i64)k * p + jv * V);
    Vec16<T> ij = ld16(rowi + jv * V);
    bool changed = false;
#pragma unroll
    for (int u = 0; u < V; ++u) {
        const T s = fw_cand(a, kj.v[u], ninf, clamp != 0);
        if (s < ij.v[u]) {
            ij.v[u] = s;
            changed = true;
            if (pr) pr[(i64)i * pp + jv * V + u] = pr[(i64)k * pp + jv * V + u];
        }
    }
    if (changed) st16(rowi + jv * V, ij);
}

// ---------------------------------------------------------------- pseudo-blocked (seed 000)
// Each thread updates an R x R group of cells.  The group is strided by the block's
// shape (rows i0 + r * blockDim.y, columns j0 + c * blockDim.x) so that every warp
// still reads contiguous row segments; M[i,k] and M[k,j] are loaded once per group.
template <typename T, int R>
__global__ void fw_pseudo(T* d, i64 p, int* pr, i64 pp, int n, int k, T ninf, int clamp) {
    const int j0 = blockIdx.x * blockDim.x * R + threadIdx.x;
    const int i0 = blockIdx.y * blockDim.y * R + threadIdx.y;
    T b[R];
    const T* rowk = d + (i64)k * p;
#pragma unroll
    for (int c = 0; c < R; ++c) {
        const int j = j0 + c * blockDim.x;
        b[c] = j < n ? rowk[j] : ninf;
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int i = i0 + r * blockDim.y;
        if (i >= n) break;
        T* rowi = d + (i64)i * p;
        const T a = rowi[k];
#pragma unroll
        for (int c = 0; c < R; ++c) {
            const int j = j0 + c * blockDim.x;
            if (j < n)
                fw_update(rowi + j, pr ? pr + (i64)i * pp + j : (int*)0, a, b[c],
                          pr ? pr + (i64)k * pp + j : (const int*)0, ninf, clamp != 0);
        }
    }
}

// ---------------------------------------------------------------- work-per-thread (seed 003)
// A fixed amount of work per thread: the grid is sized by the occupancy API (as many
// blocks as fit on the chip at once) and each thread relaxes ``work`` cells, spaced a
// whole grid apart so that warps stay coalesced.
template <typename T>
__global__ void fw_work(T* d, i64 p, int* pr, i64 pp, int n, int k, int work, T ninf, int clamp) {
    const i64 total = (i64)n * n;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    i64 idx = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    int i = (int)(idx / n), j = (int)(idx % n);
    const int di = (int)(stride / n), dj = (int)(stride % n);
    const T* rowk = d + (i64)k * p;
    for (int w = 0; w < work && idx < total; ++w) {
        T* rowi = d + (i64)i * p;
        fw_update(rowi + j, pr ? pr + (i64)i * pp + j : (int*)0, rowi[k], rowk[j],
                  pr ? pr + (i64)k * pp + j : (const int*)0, ninf, clamp != 0);
        idx += stride;
        i += di;
        j += dj;
        if (j >= n) { j -= n; ++i; }
    }
}

// ---------------------------------------------------------------- grid-sync (seed 003)
// One persistent kernel for every k.  Launched cooperatively (cuLaunchCooperativeKernel)
// with no more blocks than fit on the chip at once, so the barrier cannot deadlock.
// Block b relaxes rows b, b + gridDim.x, ...; M[i,k] stays in a register for the whole
// row (seed 003's last version).  Loads bypass L1 (__ldcg): other SMs wrote the data.
//
// bar[0] counts arrivals, bar[1] is the generation; both start at 0.
__device__ __forceinline__ void fw_grid_barrier(unsigned int* bar, unsigned int nblocks) {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        volatile unsigned int* vgen = bar + 1;
        const unsigned int gen = *vgen;
        __threadfence();
        if (atomicAdd(bar, 1u) == nblocks - 1) {
            atomicExch(bar, 0u);
            __threadfence();
            atomicAdd(bar + 1, 1u);
        } else {
            while (*vgen == gen) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}

template <typename T>
__global__ void fw_gridsync(T* d, i64 p, int* pr, i64 pp, int n, T ninf, int clamp, unsigned int* bar) {
    for (int k = 0; k < n; ++k) {
        const T* rowk = d + (i64)k * p;
        for (int i = blockIdx.x; i < n; i += gridDim.x) {
            T* rowi = d + (i64)i * p;
            const T a = __ldcg(rowi + k);
            for (int j = threadIdx.x; j < n; j += blockDim.x) {
                const T s = fw_cand(a, __ldcg(rowk + j), ninf, clamp != 0);
                if (s < __ldcg(rowi + j)) {
                    rowi[j] = s;
                    if (pr) pr[(i64)i * pp + j] = __ldcg(pr + (i64)k * pp + j);
                }
            }
        }
        fw_grid_barrier(bar, gridDim.x);
    }
}
