// floydwarp: predecessors recovered after the distance run (gpu/witness.py).
//
// With every weight positive, the predecessor of j on a shortest path from i is any
// in-neighbour k of j with d[i][k] + w(k, j) == d[i][j], and such an edge k -> j is
// *tight*: w(k, j) == d[k][j].  witness.py lists each column's tight edges (its
// candidates), in segments by (column group, chunk of KC vertices k, column), k
// ascending.  A block takes 32 rows i (a lane each) and one group of 8 x COLS columns
// (COLS a warp); for each chunk the 32 row slices d[i][k0 .. k0 + KC) sit in shared
// memory, and a warp walks the candidates of its columns, every lane reading its own
// row at the same k: one bank per lane, no conflicts.  Each (i, j) keeps the candidate
// of least d[i][k] + w, the smallest k among equals.
//
// Exact runs (integers) find d[i][j] itself, always at a k with d[i][k] < d[i][j], so
// the predecessors cannot form a loop.  Float runs take only candidates with
// d[i][k] < d[i][j] (the same guarantee) and accept a sum within ``slack * d[i][j]``
// of d[i][j] (the rounding of the float run; exact runs: slack 0, the sum itself); a pair
// with no acceptable candidate counts as a miss, and the caller falls back to another
// method.
#include "common.cuh"

template <typename T> struct WitnessSum { typedef T type; };
template <> struct WitnessSum<short> { typedef int type; };
template <typename T> struct WitnessFloat { static constexpr bool value = false; };
template <> struct WitnessFloat<float> { static constexpr bool value = true; };
template <> struct WitnessFloat<double> { static constexpr bool value = true; };

template <typename A> __device__ __forceinline__ A witness_most();
template <> __device__ __forceinline__ int witness_most<int>() { return 0x7fffffff; }
template <> __device__ __forceinline__ float witness_most<float>() { return __int_as_float(0x7f800000); }
template <> __device__ __forceinline__ double witness_most<double>() { return __longlong_as_double(0x7ff0000000000000LL); }

// Row pitch in elements so that 32 lanes reading element x of their own rows hit 32 banks.
template <typename T> __host__ __device__ constexpr int witness_pitch(int cols) {
    return cols + (sizeof(T) == 2 ? 2 : 1);
}

constexpr int WITNESS_WARPS = 8;

// grid: (column groups, row blocks of 32); block: 256 threads.  Dynamic shared memory:
// 32 rows of witness_pitch(max(KC, 8 * COLS)) elements and 32 x (8 * COLS + 1) ints.
template <typename T, int KC, int COLS>
__global__ void __launch_bounds__(32 * WITNESS_WARPS, 2)
fw_witness(const T* __restrict__ d, i64 p, int n, int chunks, const int* __restrict__ seg,
           const int* __restrict__ ek, const T* __restrict__ ew, int* __restrict__ pred, i64 pp, T dinf,
           double slack, int none, unsigned long long* __restrict__ misses) {
    typedef typename WitnessSum<T>::type A;
    constexpr bool FLOAT = WitnessFloat<T>::value;
    constexpr int G = WITNESS_WARPS * COLS;
    constexpr int P = witness_pitch<T>(KC > G ? KC : G);
    extern __shared__ __align__(16) unsigned char witness_smem[];
    T* tile = reinterpret_cast<T*>(witness_smem);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = blockIdx.x, i0 = blockIdx.y * 32, i = i0 + lane, j0 = g * G;

    // the targets d[i][j] of the block, through shared memory (coalesced reads)
    for (int e = threadIdx.x; e < 32 * G; e += blockDim.x) {
        const int r = e / G, c = e % G;
        tile[r * P + c] = (i0 + r < n && j0 + c < n) ? d[(i64)(i0 + r) * p + j0 + c] : dinf;
    }
    __syncthreads();
    A target[COLS], best[COLS];
    int who[COLS];
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        target[c] = (A)tile[lane * P + warp * COLS + c];
        best[c] = witness_most<A>();
        who[c] = none;
    }

    const T* row = tile + lane * P;
    for (int ch = 0; ch < chunks; ++ch) {
        const int k0 = ch * KC;
        __syncthreads();
        for (int e = threadIdx.x; e < 32 * KC; e += blockDim.x) {
            const int r = e / KC, x = e % KC;
            tile[r * P + x] = (i0 + r < n && k0 + x < n) ? d[(i64)(i0 + r) * p + k0 + x] : dinf;
        }
        __syncthreads();
        const int* s = seg + ((i64)g * chunks + ch) * G + warp * COLS;
#pragma unroll
        for (int c = 0; c < COLS; ++c) {
            const int lo = s[c], hi = s[c + 1];
            for (int b = lo; b < hi; b += 32) {
                const int m = min(32, hi - b);
                int mk = 0;
                A mw = 0;
                if (lane < m) {
                    mk = ek[b + lane] - k0;
                    mw = (A)ew[b + lane];
                }
                for (int t = 0; t < m; ++t) {
                    const int x = __shfl_sync(0xffffffffu, mk, t);
                    const A w = __shfl_sync(0xffffffffu, mw, t);
                    const A dk = (A)row[x];
                    const A sum = dk + w;
                    bool better = sum < best[c];
                    if (FLOAT) better = better && dk < target[c];
                    if (better) {
                        best[c] = sum;
                        who[c] = k0 + x;
                    }
                }
            }
        }
    }

    // predecessors through shared memory (coalesced writes); misses counted per warp
    __syncthreads();
    int* out = reinterpret_cast<int*>(witness_smem);
    int missed = 0;
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        const int j = j0 + warp * COLS + c;
        const bool reachable = i < n && j < n && i != j && target[c] < (A)dinf;
        if (!reachable) {
            who[c] = none;
        } else if (!(best[c] <= target[c] + (A)(slack * (double)target[c]) &&
                     best[c] >= target[c] - (A)(slack * (double)target[c]))) {
            who[c] = none;
            ++missed;
        }
        out[lane * (G + 1) + warp * COLS + c] = who[c];
    }
    for (int off = 16; off; off >>= 1) missed += __shfl_xor_sync(0xffffffffu, missed, off);
    if (lane == 0 && missed) atomicAdd(misses, (unsigned long long)missed);
    __syncthreads();
    for (int e = threadIdx.x; e < 32 * G; e += blockDim.x) {
        const int r = e / G, c = e % G;
        if (i0 + r < n && j0 + c < n) pred[(i64)(i0 + r) * pp + j0 + c] = out[r * (G + 1) + c];
    }
}
