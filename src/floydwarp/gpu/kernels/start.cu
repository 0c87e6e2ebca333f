// The start matrix of a run, built on the device from an edge list (only the edges cross
// the bus): a whole padded matrix (one GPU) or one process's block of it (several GPUs).
//
// The block holds rows r0.. and columns c0.. of the start matrix: ``rows`` rows of ``p``
// elements (the pitch; every element is written, padding included).
#include "common.cuh"

// INF everywhere, 0 where the global row equals the global column (padding included:
// a padding vertex reaches only itself, so its 0 changes no real pair).
template <typename T>
__global__ void fw_fill(T* d, i64 p, int rows, i64 r0, i64 c0, T inf) {
    for (int i = blockIdx.y; i < rows; i += gridDim.y) {
        T* row = d + (i64)i * p;
        i64 diag = r0 + i - c0;
        for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < p; j += (i64)gridDim.x * blockDim.x)
            row[j] = (j == diag) ? (T)0 : inf;
    }
}

// d[src[e] - r0, dst[e] - c0] = w[e] for the distinct edges inside the block (a negative
// self-loop overrides the 0); ids as uint16 (n <= 65536) or int32, weights in the distance
// type (uploaded edges: cast on the host) or as int64 (edges drawn on the device, whose
// weights the dtype choice has checked).
template <typename T, typename IDX, typename W>
__global__ void fw_scatter(T* d, i64 p, int rows, i64 cols, i64 r0, i64 c0,
                           const IDX* src, const IDX* dst, const W* w, i64 m) {
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < m; e += (i64)gridDim.x * blockDim.x) {
        i64 i = (i64)src[e] - r0, j = (i64)dst[e] - c0;
        if (i >= 0 && i < rows && j >= 0 && j < cols)
            d[i * p + j] = (T)w[e];
    }
}

// The predecessors of a start matrix, in all ``rows`` x ``cols`` of ``pr``: i on every edge
// i -> j of its n x n corner (j != i, d below INF), ``none`` elsewhere (padding included).
// Rows stride over y, columns over x.
template <typename T>
__global__ void fw_seed_predecessors(const T* __restrict__ d, i64 pd, int* pr, i64 pp, int rows, int cols, int n,
                                     T inf, int none) {
    for (int i = blockIdx.y; i < rows; i += gridDim.y) {
        const T* drow = d + (i64)i * pd;
        int* prow = pr + (i64)i * pp;
        for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += gridDim.x * blockDim.x)
            prow[j] = (i < n && j < n && j != i && drow[j] < inf) ? i : none;
    }
}
