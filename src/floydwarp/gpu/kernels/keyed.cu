// floydwarp: keyed predecessors (gpu/keyed.py): packing, unpacking, the 64 x 64 closure.
//
// A key is one int32: distance * 2^b + predecessor.  A relaxation through k is
// key[i][j] = min(key[i][j], (key[i][k] & keep) + key[k][j]) with keep = -2^b: the
// left operand's predecessor bits are cleared, so the sum carries key[k][j]'s
// predecessor -- the textbook update pred[i][j] = pred[k][j] -- and one integer add-min
// orders by distance first.  Everything but the 64 x 64 pivot tiles runs as
// fw_minplus<int> products on words cleared by fw_to_words; this kernel closes one tile.
#include "common.cuh"

// Floyd-Warshall in place on the 64 x 64 keys at d (pitch p), one block of 32 x 32
// threads, four cells each.  Every step reads row and column k, then writes: two
// barriers keep the reads of step k apart from its writes even when a negative cycle
// changes row k at step k.
__global__ void __launch_bounds__(1024) fw_key_close64(int* d, i64 p, int keep, int ninf, int clamp) {
    __shared__ int t[64][65];
    const int tx = threadIdx.x, ty = threadIdx.y;
    int c[2][2];
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
        for (int b = 0; b < 2; ++b) {
            c[a][b] = d[(i64)(ty + 32 * a) * p + tx + 32 * b];
            t[ty + 32 * a][tx + 32 * b] = c[a][b];
        }
    __syncthreads();
#pragma unroll 1
    for (int k = 0; k < 64; ++k) {
        const int a0 = t[ty][k] & keep, a1 = t[ty + 32][k] & keep;
        const int b0 = t[k][tx], b1 = t[k][tx + 32];
        c[0][0] = min(c[0][0], fw_cand(a0, b0, ninf, clamp));
        c[0][1] = min(c[0][1], fw_cand(a0, b1, ninf, clamp));
        c[1][0] = min(c[1][0], fw_cand(a1, b0, ninf, clamp));
        c[1][1] = min(c[1][1], fw_cand(a1, b1, ninf, clamp));
        __syncthreads();
#pragma unroll
        for (int a = 0; a < 2; ++a)
#pragma unroll
            for (int b = 0; b < 2; ++b) t[ty + 32 * a][tx + 32 * b] = c[a][b];
        __syncthreads();
    }
#pragma unroll
    for (int a = 0; a < 2; ++a)
#pragma unroll
        for (int b = 0; b < 2; ++b) d[(i64)(ty + 32 * a) * p + tx + 32 * b] = c[a][b];
}

// Keys from the start matrix d (INF dinf for no edge): predecessor i on every edge
// i -> j, none (2^bits - 1) on the diagonal and where there is no edge.  Rows i =
// blockIdx.y, blockIdx.y + gridDim.y, ...; columns by x.
template <typename T>
__global__ void fw_key_pack(const T* d, i64 pd, int* key, i64 pk, int n, int bits, T dinf, int kinf) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const int none = (1 << bits) - 1;
    for (int i = blockIdx.y; i < n; i += gridDim.y) {
        const T x = d[(i64)i * pd + j];
        const bool edge = x < dinf;
        key[(i64)i * pk + j] = (edge ? (int)x : kinf) * (1 << bits) + (edge && i != j ? i : none);
    }
}

// Distances (dinf at or above ``unreachable``) and predecessors (nopred for none) from keys.
// The diagonal keeps none unless a negative cycle runs through it: a zero-weight cycle ties
// with the start key (0, none), and the tie went to its smaller predecessor.
template <typename T>
__global__ void fw_key_unpack(const int* key, i64 pk, T* d, i64 pd, int* pred, i64 pp, int n, int bits,
                              int unreachable, T dinf, int nopred) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const int none = (1 << bits) - 1;
    for (int i = blockIdx.y; i < n; i += gridDim.y) {
        const int k = key[(i64)i * pk + j];
        const int dist = k >> bits;   // arithmetic shift: the floor of k / 2^bits
        const int p = k & none;
        const bool reach = dist < unreachable;
        d[(i64)i * pd + j] = reach ? (T)dist : dinf;
        pred[(i64)i * pp + j] = reach && p != none && (i != j || dist < 0) ? p : nopred;
    }
}
