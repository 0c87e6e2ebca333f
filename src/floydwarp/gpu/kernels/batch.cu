// floydwarp: many small graphs at once (floydwarp.batch).  Each graph of n <= 16 * RPT
// vertices is solved by one group of threads of one CTA, its whole matrix in shared memory;
// a CTA holds as many groups as its threads and shared memory allow, all of one size n
// (the host buckets graphs by exact size, so no work is spent on padding).
//
// Thread t of a group owns column j = t % n and the RPT rows from (t / n) * RPT of it, in
// registers.  Round k reads d[k][j] and its d[i][k] from shared copies of row k and column k,
// relaxes its cells, and then writes what round k + 1 reads -- row k + 1 and column k + 1 --
// into the other copy (two of each, by the parity of k), so one barrier a round suffices.  A graph with a negative cycle is flagged (negative diagonal) and redone on the host;
// its values here are still lengths of walks and at most the textbook's, so the flag is
// exact.  Without negative cycles the result is exactly the textbook (k-outer) order's,
// predecessors included.
//
// W is the arithmetic type (int for int16/int32 distances, whose sums fit in it), O the
// stored type.  Unreachable entries (>= threshold) and the padding become out_inf;
// with clip, reachable entries above maxd become maxd.
//
// LASTK (with PRED): pred[i][j] is the last pivot k that made d[i][j] strictly smaller, -1
// for none (Graphormer's ``path`` matrix, floydwarp.learn.graphormer), instead of the
// predecessor; as every round reads only round k - 1's values, it is the textbook order's.
#include "common.cuh"

#define FW_NONE (-9999)

template <typename W>
__device__ __forceinline__ void fw_atomic_min(W* a, W v) { atomicMin(a, v); }

template <>
__device__ __forceinline__ void fw_atomic_min<float>(float* a, float v) {
    int* ai = reinterpret_cast<int*>(a);
    int old = *ai;
    while (v < __int_as_float(old)) {
        const int prev = atomicCAS(ai, old, __float_as_int(v));
        if (prev == old) break;
        old = prev;
    }
}

template <>
__device__ __forceinline__ void fw_atomic_min<double>(double* a, double v) {
    unsigned long long* ai = reinterpret_cast<unsigned long long*>(a);
    unsigned long long old = *ai;
    while (v < __longlong_as_double((long long)old)) {
        const unsigned long long prev = atomicCAS(ai, old, (unsigned long long)__double_as_longlong(v));
        if (prev == old) break;
        old = prev;
    }
}

template <>
__device__ __forceinline__ void fw_atomic_min<long long>(long long* a, long long v) {
    atomicMin(a, v);
}

template <typename W, typename O>
__device__ __forceinline__ O fw_store(W v, W threshold, O out_inf, int clip, W maxd) {
    if (v >= threshold) return out_inf;
    if (clip && v > maxd) v = maxd;
    return (O)v;
}

// Buckets: graphs order[first[b] .. first[b] + count[b]) have size size[b]; bucket b runs
// on CTAs cta[b] .. cta[b + 1] - 1, groups[b] graphs a CTA.  Launch with 16 * RPT threads.
template <typename W, typename O, int RPT, bool PRED, bool LASTK>
__global__ void __launch_bounds__(16 * RPT)
fw_batch_small(const int* __restrict__ order, const int* __restrict__ size, const int* __restrict__ first,
               const int* __restrict__ count, const int* __restrict__ groups, const int* __restrict__ cta, int nb,
               const i64* __restrict__ eptr, const int* __restrict__ src, const int* __restrict__ dst,
               const W* __restrict__ weight, O* __restrict__ out, int* __restrict__ pred,
               unsigned char* __restrict__ negative, i64 N, W inf, W ninf, int clamp, W threshold, O out_inf,
               int clip, W maxd) {
    extern __shared__ __align__(16) unsigned char fw_smem[];
    int b = 0;
    while (b + 1 < nb && (int)blockIdx.x >= cta[b + 1]) ++b;
    const int n = size[b];
    const int rt = (n + RPT - 1) / RPT;                   // row-threads of a column
    const int gt = n * rt;                                 // threads of a group
    const int G = groups[b];
    const int group = threadIdx.x / gt;
    const int t = threadIdx.x - group * gt;
    const int slot = (blockIdx.x - cta[b]) * G + group;
    const bool active = group < G && slot < count[b];
    const int g = active ? order[first[b] + slot] : 0;

    // this group's shared memory: the n x n start matrix, then rows k and columns k of
    // the distances (two each, by the parity of k) and two rows of predecessors
    const i64 bytes = ((i64)(n * n + 4 * n) * sizeof(W) + (PRED ? 8 * n : 0) + 15) / 16 * 16;
    W* s = reinterpret_cast<W*>(fw_smem + (active ? group : 0) * bytes);
    W* rowk = s + n * n;                 // rowk[(k & 1) * n + j] = d[k][j]
    W* colk = rowk + 2 * n;              // colk[(k & 1) * n + i] = d[i][k]
    int* prow = reinterpret_cast<int*>(colk + 2 * n);

    const int j = t % n;
    const int i0 = (t / n) * RPT;        // this thread's rows: i0 .. i0 + RPT - 1
    if (active) {
        for (int c = t; c < n * n; c += gt) s[c] = (c / n == c % n) ? W(0) : inf;
    }
    __syncthreads();
    if (active) {
        for (i64 e = eptr[g] + t; e < eptr[g + 1]; e += gt)
            fw_atomic_min(&s[src[e] * n + dst[e]], weight ? weight[e] : W(1));
    }
    __syncthreads();

    W v[RPT];
    int p[PRED ? RPT : 1];
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
        const int i = i0 + r;
        v[r] = (active && i < n) ? s[i * n + j] : inf;
        if (PRED) p[r] = LASTK ? -1 : ((v[r] < inf && i != j) ? i : FW_NONE);
        if (active && i < n) {
            if (i == 0) {
                rowk[j] = v[r];
                if (PRED) prow[j] = p[r];
            }
            if (j == 0) colk[i] = v[r];
        }
    }
    __syncthreads();

    for (int k = 0; k < n; ++k) {
        if (active) {
            const int cur = (k & 1) * n, nxt = n - cur;
            const W bk = rowk[cur + j];
            const int pk = PRED ? prow[cur + j] : 0;
            const W* col = colk + cur + i0;
#pragma unroll
            for (int r = 0; r < RPT; ++r) {
                if (i0 + r < n) {
                    const W c = fw_cand(col[r], bk, ninf, clamp != 0);
                    if (c < v[r]) {
                        v[r] = c;
                        if (PRED) p[r] = LASTK ? k : pk;
                    }
                }
            }
            // what round k + 1 reads: row k + 1 and column k + 1
#pragma unroll
            for (int r = 0; r < RPT; ++r) {
                const int i = i0 + r;
                if (i == k + 1) {
                    rowk[nxt + j] = v[r];
                    if (PRED) prow[nxt + j] = p[r];
                }
                if (j == k + 1 && i < n) colk[nxt + i] = v[r];
            }
        }
        __syncthreads();
    }

    if (!active) return;
    O* o = out + (i64)g * N * N;
    int* po = PRED ? pred + (i64)g * N * N : nullptr;
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
        const int i = i0 + r;
        if (i < n) {
            o[(i64)i * N + j] = fw_store(v[r], threshold, out_inf, clip, maxd);
            if (PRED) po[(i64)i * N + j] = v[r] < threshold ? p[r] : FW_NONE;
            if (i == j && v[r] < W(0)) negative[g] = 1;
        }
    }
    if (n == N) return;
    // the padding: rows and columns n .. N - 1
    for (i64 c = t; c < N * N; c += gt) {
        const i64 i = c / N, jj = c - i * N;
        if (i >= n || jj >= n) {
            o[c] = out_inf;
            if (PRED) po[c] = FW_NONE;
        }
    }
}
