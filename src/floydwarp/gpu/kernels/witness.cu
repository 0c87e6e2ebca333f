// floydwarp: predecessors recovered after the distance run (gpu/predecessors/witness.py).
//
// With every weight positive, the predecessor of j on a shortest path from i is any
// in-neighbour k of j with d[i][k] + w(k, j) == d[i][j], and such an edge k -> j is *tight*:
// w(k, j) == d[k][j].  Each column's tight edges (its candidates) are listed in segments by
// (column group, chunk of KC vertices k, column), k ascending (fw_witness_count and
// fw_witness_fill, at the end of this file).  A block takes 32 rows i (a lane each) and one
// group of 8 x COLS columns (COLS a warp); for each chunk the 32 row slices d[i][k0 .. k0 +
// KC) sit in shared memory, and a warp walks the candidates of its columns, every lane reading
// its own row at the same k: one bank per lane, no conflicts.  Segments are padded to eight
// candidates, which go together, their loads first, so that eight shared-memory reads are in
// flight per warp; a candidate carries the byte offset of its k in a row slice. The warp's
// candidates reach it through its own window in shared memory, 128 at a time in one coalesced
// load (one latency where each group of eight would wait for its own), and blocks of one
// column group run side by side (blockIdx.x: the rows), so that the group's candidates stay in
// L2.  Each (i, j) keeps the candidate of least d[i][k] + w, the smallest k among equals.
//
// int16 (n <= 65536) runs on keys, as keyed.cu does: a row value d is read as d << 16 and
// a candidate is the word (w << 16) | k, so one add-min (VIADDMNMX) per candidate and row
// orders by sum first and k second; sums stay below 2 INF < 2^15.  Other dtypes compare
// and select.  Padding candidates: the key 2^30 (above any real sum), or the weight INF
// at offset 0 (never accepted: its sum is not below INF).
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

constexpr int WITNESS_WARPS = 8;
constexpr int WITNESS_UNROLL = 8;       // witness.UNROLL: segments are padded to a multiple
constexpr int WITNESS_WINDOW = 128;     // witness.WINDOW: candidates a warp holds at a time
constexpr int WITNESS_PAD_KEY = 1 << 30;  // a padding key: above every key whose sum can be a distance

// A candidate of the compare kernel: the byte offset of k in a row slice, and w(k, j).
template <typename T> struct alignas(sizeof(T) > 4 ? 16 : 8) WitnessEntry {
    int off;
    T w;
};

// Row pitch in elements of type T so that 32 lanes reading element x of their own rows
// hit 32 banks.
template <typename T> __host__ __device__ constexpr int witness_pitch(int cols) {
    return cols + (sizeof(T) == 2 ? 2 : 1);
}

// rows[r][x] = d[i0 + r][k0 + x] for 32 rows and `cols` columns (fill outside n x n),
// 16 bytes a load where the rows are aligned for it.
template <typename T>
__device__ __forceinline__ void witness_rows(T* rows, int pitch, const T* d, i64 p, int n, int i0, int k0, int cols,
                                             T fill) {
    constexpr int V = 16 / sizeof(T);
    const bool aligned = ((reinterpret_cast<size_t>(d) | (size_t)(p * (i64)sizeof(T))) & 15) == 0;
    const int per_row = cols / V;
    for (int e = threadIdx.x; e < 32 * per_row; e += blockDim.x) {
        const int r = e / per_row, x = (e % per_row) * V;
        const T* src = d + (i64)(i0 + r) * p + k0 + x;
        T* dst = rows + r * pitch + x;
        if (aligned && i0 + r < n && k0 + x + V <= n) {
            const int4 q = __ldg(reinterpret_cast<const int4*>(src));
            const T* v = reinterpret_cast<const T*>(&q);
#pragma unroll
            for (int u = 0; u < V; ++u) dst[u] = v[u];
        } else {
#pragma unroll
            for (int u = 0; u < V; ++u) dst[u] = (i0 + r < n && k0 + x + u < n) ? src[u] : fill;
        }
    }
}

// The warp's candidates of one chunk, column by column: visit(c, e) for each group of
// WITNESS_UNROLL candidates e[] of its column c (compile-time).  `seg_w`: the warp's
// segment offsets in this chunk (COLS + 1); `window`: the warp's WITNESS_WINDOW
// candidates in shared memory, first candidate `base` (kept across chunks: candidates
// are one array); `total`: candidates in all.
template <int COLS, typename E, typename Visit>
__device__ __forceinline__ void witness_walk(const int* __restrict__ seg_w, const E* __restrict__ cand, int total,
                                             E* window, int& base, Visit visit) {
    constexpr int PER = 16 / sizeof(E);                  // candidates per 16 bytes
    const int lane = threadIdx.x & 31;
    // lanes 0..COLS hold the offsets (no further: the last warp's are the array's last)
    const int mine = lane <= COLS ? __ldg(seg_w + lane) : 0, end = __ldg(seg_w + COLS);
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        const int lo = __shfl_sync(0xffffffffu, mine, c);
        const int hi = c + 1 < 32 ? __shfl_sync(0xffffffffu, mine, (c + 1) & 31) : end;
        for (int b = lo; b < hi; b += WITNESS_UNROLL) {
            if (b + WITNESS_UNROLL > base + WITNESS_WINDOW) {       // the same for the whole warp
                __syncwarp();
                base = b;
                const int4* src = reinterpret_cast<const int4*>(cand + b);
                int4* dst = reinterpret_cast<int4*>(window);
                const int have = min(WITNESS_WINDOW, total - b) / PER;
#pragma unroll
                for (int t = lane; t < WITNESS_WINDOW / PER; t += 32)
                    if (t < have) dst[t] = __ldg(src + t);
                __syncwarp();
            }
            E e[WITNESS_UNROLL];
            const int4* q = reinterpret_cast<const int4*>(window + (b - base));
#pragma unroll
            for (int u = 0; u < WITNESS_UNROLL / PER; ++u) {
                const int4 v = q[u];
#pragma unroll
                for (int t = 0; t < PER; ++t) e[u * PER + t] = reinterpret_cast<const E*>(&v)[t];
            }
            visit(c, e);
        }
    }
}

// Every chunk of the block's rows: the 32 row slices into `tile` (pitch P), then the
// warp's candidates of the chunk, visit(k0, c, e) as in witness_walk.
template <int KC, int COLS, typename T, typename E, typename Visit>
__device__ __forceinline__ void witness_chunks(T* tile, int pitch, const T* d, i64 p, int n, int i0, T dinf,
                                               const int* __restrict__ seg, int chunks, const E* __restrict__ cand,
                                               int total, E* window, Visit visit) {
    constexpr int G = WITNESS_WARPS * COLS;
    const int warp = threadIdx.x >> 5;
    int base = -WITNESS_WINDOW;
    for (int ch = 0; ch < chunks; ++ch) {
        const int k0 = ch * KC;
        __syncthreads();
        witness_rows(tile, pitch, d, p, n, i0, k0, KC, dinf);
        __syncthreads();
        witness_walk<COLS>(seg + ((i64)blockIdx.y * chunks + ch) * G + warp * COLS, cand, total, window, base,
                           [&](int c, const E* e) { visit(k0, c, e); });
    }
}

// The block's predecessors, through shared memory (coalesced writes); misses counted per warp.
// `who[c]` of this lane's row and the warp's column c; `ok(c)`: 1 a witness, 0 unreachable,
// -1 a miss.
template <int COLS, typename Ok>
__device__ __forceinline__ void witness_store(int* out, int* who, Ok ok, int* pred, i64 pp, int n, int i0, int j0,
                                              int none, unsigned long long* misses) {
    constexpr int G = WITNESS_WARPS * COLS;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, i = i0 + lane;
    __syncthreads();
    int missed = 0;
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        const int j = j0 + warp * COLS + c;
        int v = none;
        if (i < n && j < n && i != j) {
            const int r = ok(c);
            if (r > 0) v = who[c];
            missed += r < 0;
        }
        out[lane * (G + 1) + warp * COLS + c] = v;
    }
    for (int off = 16; off; off >>= 1) missed += __shfl_xor_sync(0xffffffffu, missed, off);
    if (lane == 0 && missed) atomicAdd(misses, (unsigned long long)missed);
    __syncthreads();
    for (int e = threadIdx.x; e < 32 * G; e += blockDim.x) {
        const int r = e / G, c = e % G;
        if (i0 + r < n && j0 + c < n) pred[(i64)(i0 + r) * pp + j0 + c] = out[r * (G + 1) + c];
    }
}

// Bytes of the row slices before the windows (16-byte aligned).
template <typename T> __device__ __forceinline__ constexpr int witness_rows_bytes(int cols) {
    return (32 * witness_pitch<T>(cols) * (int)sizeof(T) + 15) / 16 * 16;
}

// Compare and select: any dtype.  grid: (row blocks of 32, column groups); block: 256
// threads, three blocks an SM.  Dynamic shared memory: witness.Shape.smem.
template <typename T, int KC, int COLS>
__global__ void __launch_bounds__(32 * WITNESS_WARPS, 3)
fw_witness(const T* __restrict__ d, i64 p, int n, int chunks, const int* __restrict__ seg,
           const WitnessEntry<T>* __restrict__ cand, int total, int* __restrict__ pred, i64 pp, T dinf,
           double slack, int none, unsigned long long* __restrict__ misses) {
    typedef typename WitnessSum<T>::type A;
    typedef WitnessEntry<T> E;
    constexpr bool FLOAT = WitnessFloat<T>::value;
    constexpr int G = WITNESS_WARPS * COLS;
    constexpr int P = witness_pitch<T>(KC > G ? KC : G);
    extern __shared__ __align__(16) unsigned char witness_smem[];
    T* tile = reinterpret_cast<T*>(witness_smem);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int i0 = blockIdx.x * 32, j0 = blockIdx.y * G;
    E* window = reinterpret_cast<E*>(witness_smem + witness_rows_bytes<T>(KC > G ? KC : G)) + warp * WITNESS_WINDOW;

    witness_rows(tile, P, d, p, n, i0, j0, G, dinf);      // the targets d[i][j]
    __syncthreads();
    A target[COLS], best[COLS];
    int who[COLS];
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        target[c] = (A)tile[lane * P + warp * COLS + c];
        best[c] = witness_most<A>();
        who[c] = none;
    }
    const unsigned char* row = witness_smem + lane * P * sizeof(T);
    witness_chunks<KC, COLS>(tile, P, d, p, n, i0, dinf, seg, chunks, cand, total, window,
                             [&](int k0, int c, const E* e) {
        A dk[WITNESS_UNROLL];
#pragma unroll
        for (int u = 0; u < WITNESS_UNROLL; ++u) dk[u] = (A)*reinterpret_cast<const T*>(row + e[u].off);
#pragma unroll
        for (int u = 0; u < WITNESS_UNROLL; ++u) {
            const A sum = dk[u] + (A)e[u].w;
            bool better = sum < best[c];
            if (FLOAT) better = better && dk[u] < target[c];
            if (better) {
                best[c] = sum;
                who[c] = k0 + e[u].off / (int)sizeof(T);
            }
        }
    });
    witness_store<COLS>(reinterpret_cast<int*>(witness_smem), who, [&](int c) {
        if (!(target[c] < (A)dinf)) return 0;
        const A tol = (A)(slack * (double)target[c]);
        return best[c] <= target[c] + tol && best[c] >= target[c] - tol ? 1 : -1;
    }, pred, pp, n, i0, j0, none, misses);
}

// int16 on keys (n <= 65536): candidates are int2 {(w << 16) | k, byte offset of k};
// the row slices hold d as int16 (a chunk of 1024 in the compare kernel's 64 KiB), shifted
// into keys as read.  Exact: the accepted sum is d[i][j] itself.
template <int KC, int COLS>
__global__ void __launch_bounds__(32 * WITNESS_WARPS, 3)
fw_witness_keyed(const short* __restrict__ d, i64 p, int n, int chunks, const int* __restrict__ seg,
                 const int2* __restrict__ cand, int total, int* __restrict__ pred, i64 pp, short dinf, int none,
                 unsigned long long* __restrict__ misses) {
    constexpr int G = WITNESS_WARPS * COLS;
    constexpr int P = witness_pitch<short>(KC > G ? KC : G);
    extern __shared__ __align__(16) unsigned char witness_smem[];
    short* tile = reinterpret_cast<short*>(witness_smem);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int i0 = blockIdx.x * 32, j0 = blockIdx.y * G;
    int2* window = reinterpret_cast<int2*>(witness_smem + witness_rows_bytes<short>(KC > G ? KC : G)) +
                   warp * WITNESS_WINDOW;

    int best[COLS];
#pragma unroll
    for (int c = 0; c < COLS; ++c) best[c] = witness_most<int>();
    const unsigned char* row = witness_smem + lane * P * sizeof(short);
    witness_chunks<KC, COLS>(tile, P, d, p, n, i0, dinf, seg, chunks, cand, total, window,
                             [&](int, int c, const int2* e) {
        int dk[WITNESS_UNROLL];
#pragma unroll
        for (int u = 0; u < WITNESS_UNROLL; ++u) dk[u] = (int)*reinterpret_cast<const short*>(row + e[u].y) << 16;
#pragma unroll
        for (int u = 0; u < WITNESS_UNROLL; ++u) best[c] = fw_addmin(dk[u], e[u].x, best[c]);
    });
    // the targets d[i][j], staged like the rows
    __syncthreads();
    witness_rows(tile, P, d, p, n, i0, j0, G, dinf);
    __syncthreads();
    int who[COLS], target[COLS];
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
        target[c] = tile[lane * P + warp * COLS + c];
        who[c] = best[c] & 0xffff;
    }
    witness_store<COLS>(reinterpret_cast<int*>(witness_smem), who, [&](int c) {
        if (target[c] >= (int)dinf) return 0;
        return (best[c] >> 16) == target[c] ? 1 : -1;
    }, pred, pp, n, i0, j0, none, misses);
}

// ---------------------------------------------------------------------- the candidate lists
//
// Two launches (witness.py: candidates): fw_witness_count sizes every segment, the host adds
// up each block's sizes, and fw_witness_fill writes the segments.  A block of G = 8 x COLS
// threads takes one column group and one chunk -- the G segments of that (group, chunk),
// side by side -- and a thread its column j, walking k down the chunk: each step reads G
// consecutive entries of a row, and the candidates come out k ascending without a sort.

// d + slack * w rounded in T as two operations (no fused multiply-add), as the NumPy model
// computes it; integer runs are exact (slack 0).
template <typename T> __device__ __forceinline__ T witness_add_scaled(T d, double, T) { return d; }
template <> __device__ __forceinline__ float witness_add_scaled<float>(float d, double slack, float w) {
    return __fadd_rn(d, __fmul_rn((float)slack, w));
}
template <> __device__ __forceinline__ double witness_add_scaled<double>(double d, double slack, double w) {
    return __dadd_rn(d, __dmul_rn(slack, w));
}

// Whether the edge k -> j of weight w is a candidate of the distances d = d[k][j]
// (witness.py's rule): below INF, and equal to d (slack 0) or at most d + slack * w.
template <typename T> __device__ __forceinline__ bool witness_tight(T d, T w, T inf, double slack) {
    return w < inf && (slack == 0.0 ? w == d : w <= witness_add_scaled(d, slack, w));
}

// A candidate as fw_witness (WitnessEntry<T>) or fw_witness_keyed (int2) reads it; k < 0:
// padding (weight INF at offset 0, or the padding key).
template <typename T, bool KEYED> struct WitnessCandidate {
    typedef WitnessEntry<T> type;
    static __device__ __forceinline__ type make(int k, int kc, T w, T inf) {
        type e;
        e.off = k < 0 ? 0 : (k % kc) * (int)sizeof(T);
        e.w = k < 0 ? inf : w;
        return e;
    }
};
template <> struct WitnessCandidate<short, true> {
    typedef int2 type;
    static __device__ __forceinline__ int2 make(int k, int kc, short w, short) {
        return k < 0 ? make_int2(WITNESS_PAD_KEY, 0) : make_int2(((int)w << 16) | k, (k % kc) * (int)sizeof(short));
    }
};

// The exclusive prefix sum of x over the block's threads (whole warps, at most WITNESS_WARPS);
// `sums`: WITNESS_WARPS ints of shared memory.
__device__ __forceinline__ int witness_block_prefix(int x, int* sums) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int inc = x;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, inc, off);
        if (lane >= off) inc += y;
    }
    if (lane == 31) sums[warp] = inc;
    __syncthreads();
    int before = 0;
#pragma unroll
    for (int w = 0; w < WITNESS_WARPS; ++w) before += w < warp ? sums[w] : 0;
    return before + inc - x;
}

// Segment sizes: sizes[s] = column j's candidates in chunk c, padded to WITNESS_UNROLL
// (s = (g * chunks + c) * G + j % G; block b = g * chunks + c), and per block
// totals[b] = {candidates, padded size}.  grid: one block per (column group, chunk);
// block: G = 8 x COLS threads.
template <typename T, int KC, int COLS>
__global__ void __launch_bounds__(32 * WITNESS_WARPS)
fw_witness_count(const T* __restrict__ d, i64 pd, const T* __restrict__ w, i64 pw, int n, int chunks, T inf,
                 double slack, int* __restrict__ sizes, int2* __restrict__ totals) {
    constexpr int G = WITNESS_WARPS * COLS;
    __shared__ int sums[2][WITNESS_WARPS];
    const int b = blockIdx.x, j = b / chunks * G + threadIdx.x, k0 = b % chunks * KC, k1 = min(n, k0 + KC);
    int found = 0;
    if (j < n) {
#pragma unroll 4
        for (int k = k0; k < k1; ++k) found += k != j && witness_tight(d[(i64)k * pd + j], w[(i64)k * pw + j], inf, slack);
    }
    const int padded = (found + WITNESS_UNROLL - 1) / WITNESS_UNROLL * WITNESS_UNROLL;
    sizes[(i64)b * G + threadIdx.x] = padded;
    const int before_found = witness_block_prefix(found, sums[0]);
    const int before_padded = witness_block_prefix(padded, sums[1]);
    if (threadIdx.x == G - 1) totals[b] = make_int2(before_found + found, before_padded + padded);
}

// The segments: seg[s] = where segment s starts (base[b]: where block b's segments start),
// seg[last + 1] = the total, and each segment's candidates k ascending, then its padding.
// Same grid and block as fw_witness_count, whose sizes it reads.
template <typename T, int KC, int COLS, bool KEYED>
__global__ void __launch_bounds__(32 * WITNESS_WARPS)
fw_witness_fill(const T* __restrict__ d, i64 pd, const T* __restrict__ w, i64 pw, int n, int chunks, T inf,
                double slack, const int* __restrict__ sizes, const int* __restrict__ base, int* __restrict__ seg,
                typename WitnessCandidate<T, KEYED>::type* __restrict__ cand) {
    typedef WitnessCandidate<T, KEYED> C;
    constexpr int G = WITNESS_WARPS * COLS;
    __shared__ int sums[WITNESS_WARPS];
    const int b = blockIdx.x, j = b / chunks * G + threadIdx.x, k0 = b % chunks * KC, k1 = min(n, k0 + KC);
    const i64 s = (i64)b * G + threadIdx.x;
    const int size = sizes[s];
    const int at = base[b] + witness_block_prefix(size, sums), end = at + size;
    seg[s] = at;
    if (b == gridDim.x - 1 && threadIdx.x == G - 1) seg[s + 1] = end;
    int e = at;
    if (j < n) {
        for (int k = k0; k < k1; ++k) {
            const T x = w[(i64)k * pw + j];
            if (k != j && witness_tight(d[(i64)k * pd + j], x, inf, slack)) cand[e++] = C::make(k, KC, x, inf);
        }
    }
    for (; e < end; ++e) cand[e] = C::make(-1, KC, inf, inf);
}
