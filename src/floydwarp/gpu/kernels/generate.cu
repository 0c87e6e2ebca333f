// Erdos-Renyi graphs drawn on the device: the same edges and weights as the host generator
// (floydwarp/generate.py) for the same seed, from the same NumPy PCG64 streams.
//
// The host generator numbers each block of 1024 rows' candidate pairs row by row and draws,
// from the block's "place" stream, either a geometric gap per edge (p < 0.4: hit k lies at
// q_k = sum_{i<=k} (g_i + 1) - 1, g_i = min(floor(log1p(-u_i) * scale), cells)) or a uniform
// number per pair (p >= 0.4: pair q is an edge when u_q < p); the block's "weight" stream gives
// its k-th edge the k-th accepted bounded draw (NumPy's Lemire method over 32-bit halves of the
// 64-bit outputs, low half first).  PCG64 is an LCG, so a thread jumps straight to its chunk of
// a stream (fw_advance), and the draws of a block are split over many threads: a count pass
// (each chunk's sum of gaps, or of hits, or of accepted draws), a scan per block (one thread
// per block), and a fill pass that recomputes its chunk and writes its edges in place.
#include "common.cuh"

typedef unsigned long long u64;

#define FW_I64_MAX 0x7fffffffffffffffLL
#define FW_I64_MIN (-FW_I64_MAX - 1)

// NumPy's PCG64: 128-bit state and increment, the LCG step and the XSL-RR output.
struct U128 {
    u64 hi, lo;
};

__device__ __forceinline__ U128 fw_mul128(U128 a, U128 b) {
    U128 r;
    r.lo = a.lo * b.lo;
    r.hi = __umul64hi(a.lo, b.lo) + a.hi * b.lo + a.lo * b.hi;
    return r;
}

__device__ __forceinline__ U128 fw_add128(U128 a, U128 b) {
    U128 r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo ? 1ull : 0ull);
    return r;
}

__device__ __forceinline__ U128 fw_pcg_mult() {
    U128 m;
    m.hi = 0x2360ED051FC65DA4ull;
    m.lo = 0x4385DF649FCCF645ull;
    return m;
}

struct Pcg {
    U128 state, inc;

    // the 64-bit output after one step (NumPy steps first, then outputs)
    __device__ __forceinline__ u64 next() {
        state = fw_add128(fw_mul128(state, fw_pcg_mult()), inc);
        u64 x = state.hi ^ state.lo;
        unsigned rot = (unsigned)(state.hi >> 58);
        return (x >> rot) | (x << ((64u - rot) & 63u));
    }

    // NumPy's Generator.random(): 53 bits of the output
    __device__ __forceinline__ double uniform() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); }
};

// Stream ``s`` of ``streams`` (state hi, state lo, inc hi, inc lo), moved ``delta`` steps on
// (the LCG's jump-ahead: O(log delta) 128-bit products).
__device__ Pcg fw_advance(const u64* streams, i64 s, u64 delta) {
    Pcg g;
    g.state.hi = streams[4 * s];
    g.state.lo = streams[4 * s + 1];
    g.inc.hi = streams[4 * s + 2];
    g.inc.lo = streams[4 * s + 3];
    U128 acc_mult = {0ull, 1ull}, acc_plus = {0ull, 0ull};
    U128 cur_mult = fw_pcg_mult(), cur_plus = g.inc, one = {0ull, 1ull};
    while (delta) {
        if (delta & 1ull) {
            acc_mult = fw_mul128(acc_mult, cur_mult);
            acc_plus = fw_add128(fw_mul128(acc_plus, cur_mult), cur_plus);
        }
        cur_plus = fw_mul128(fw_add128(cur_mult, one), cur_plus);
        cur_mult = fw_mul128(cur_mult, cur_mult);
        delta >>= 1;
    }
    g.state = fw_add128(fw_mul128(acc_mult, g.state), acc_plus);
    return g;
}

// The geometric gap of one uniform number, as the host computes it in float64 (the product
// with the host's 1 / log1p(-p), floored, capped at the block's pairs).
__device__ __forceinline__ i64 fw_gap(double u, double scale, i64 cells) {
    double x = floor(log1p(-u) * scale);
    return x < (double)cells ? (i64)x : cells;
}

// The rows of a block and its candidate pairs (i != j; i < j when undirected).
__device__ __forceinline__ i64 fw_rows(i64 b, i64 n, int per_block) {
    i64 start = b * per_block;
    return n - start < per_block ? n - start : per_block;
}

// pairs of the block's first r rows
__device__ __forceinline__ i64 fw_row_offset(i64 r, i64 start, i64 n, bool directed) {
    return directed ? r * (n - 1) : r * (n - 1 - start) - r * (r - 1) / 2;
}

// Pair number q of a block -> (row, column) in the graph.
__device__ __forceinline__ void fw_pair(i64 q, i64 start, i64 rows, i64 n, bool directed, int* src, int* dst) {
    i64 r, c;
    if (directed) {
        r = q / (n - 1);
        c = q - r * (n - 1);
        i64 row = start + r;
        c += (c >= row) ? 1 : 0;
        *src = (int)row;
        *dst = (int)c;
        return;
    }
    i64 a = 0, z = rows;                          // the last row whose first pair is <= q
    while (z - a > 1) {
        i64 mid = (a + z) / 2;
        if (fw_row_offset(mid, start, n, false) <= q) a = mid; else z = mid;
    }
    r = a;
    c = q - fw_row_offset(r, start, n, false) + start + r + 1;
    *src = (int)(start + r);
    *dst = (int)c;
}

// What one draw adds to its chunk's sum: a gap + 1 (mode 1), a hit (mode 2).
__device__ __forceinline__ i64 fw_place_step(Pcg& g, int mode, double p, double scale, i64 cells) {
    double u = g.uniform();
    return mode == 1 ? fw_gap(u, scale, cells) + 1 : (u < p ? 1 : 0);
}

// Count pass of the places: sums[b * chunks + c] = what chunk c of block b's draws adds.
// Grid: x strides over chunks, y over blocks.
__global__ void fw_gen_place_count(const u64* streams, const i64* draws, i64 nblocks, i64 chunks, int chunk,
                                   i64 n, int per_block, bool directed, int mode, double p, double scale,
                                   i64* sums) {
    for (i64 b = blockIdx.y; b < nblocks; b += gridDim.y) {
        i64 start = b * per_block, rows = fw_rows(b, n, per_block);
        i64 cells = fw_row_offset(rows, start, n, directed);
        for (i64 c = (i64)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (i64)gridDim.x * blockDim.x) {
            i64 first = c * chunk, last = min(first + chunk, draws[b]);
            i64 sum = 0;
            if (first < last) {
                Pcg g = fw_advance(streams, b, (u64)first);
                for (i64 i = first; i < last; ++i)
                    sum += fw_place_step(g, mode, p, scale, cells);
            }
            sums[b * chunks + c] = sum;
        }
    }
}

// Scan of the places, one thread per block: sums become exclusive prefixes, and edges[b] the
// block's edge count -- for gaps the number of hits below ``cells`` (the chunk where the
// running sum passes it is walked draw by draw), -1 when the draws ended before it (more needed).
__global__ void fw_gen_place_scan(const u64* streams, const i64* draws, i64 nblocks, i64 chunks, int chunk,
                                  i64 n, int per_block, bool directed, int mode, double p, double scale,
                                  i64* sums, i64* edges) {
    i64 b = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nblocks) return;
    i64 start = b * per_block, rows = fw_rows(b, n, per_block);
    i64 cells = fw_row_offset(rows, start, n, directed);
    i64* s = sums + b * chunks;
    i64 running = 0, crossing = -1;
    for (i64 c = 0; c < chunks; ++c) {
        i64 v = s[c];
        s[c] = running;
        if (mode == 1 && crossing < 0 && running + v > cells) crossing = c;   // q = running - 1 >= cells
        running += v;
    }
    if (mode != 1) {
        edges[b] = running;
        return;
    }
    if (crossing < 0) {
        edges[b] = -1;
        return;
    }
    i64 first = crossing * chunk, last = min(first + chunk, draws[b]);
    Pcg g = fw_advance(streams, b, (u64)first);
    i64 q = s[crossing] - 1;
    i64 k = first;
    for (; k < last; ++k) {
        q += fw_place_step(g, mode, p, scale, cells);
        if (q >= cells) break;
    }
    edges[b] = k;
}

// Fill pass of the places: the block's edges (src, dst) from index offsets[b], in pair order.
__global__ void fw_gen_place_fill(const u64* streams, const i64* draws, i64 nblocks, i64 chunks, int chunk,
                                  i64 n, int per_block, bool directed, int mode, double p, double scale,
                                  const i64* sums, const i64* edges, const i64* offsets, int* src, int* dst) {
    for (i64 b = blockIdx.y; b < nblocks; b += gridDim.y) {
        i64 start = b * per_block, rows = fw_rows(b, n, per_block);
        i64 cells = fw_row_offset(rows, start, n, directed);
        i64 m = edges[b], at = offsets[b];
        for (i64 c = (i64)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (i64)gridDim.x * blockDim.x) {
            i64 first = c * chunk, last = min(first + chunk, draws[b]);
            if (first >= last) continue;
            Pcg g = fw_advance(streams, b, (u64)first);
            i64 running = sums[b * chunks + c];
            for (i64 i = first; i < last; ++i) {
                i64 v = fw_place_step(g, mode, p, scale, cells);
                i64 k, q;
                if (mode == 1) {                   // hit i at the running sum of gaps
                    running += v;
                    k = i;
                    q = running - 1;
                } else {                           // pair i, the running-th hit
                    if (!v) continue;
                    k = running++;
                    q = i;
                }
                if (k >= m) break;
                fw_pair(q, start, rows, n, directed, src + at + k, dst + at + k);
            }
        }
    }
}

// NumPy's bounded draw of a 32-bit half ``v`` in 0..range-1: accepted unless its low product
// falls below ``threshold`` = (2^32 - range) % range (Lemire's rejection), then the high product.
__device__ __forceinline__ bool fw_accepted(unsigned v, u64 range, unsigned threshold) {
    return (unsigned)((u64)v * range) >= threshold;
}

// Count pass of the weights: accepted[b * chunks + c] = accepted 32-bit draws of chunk c (of
// ``chunk`` halves, an even number) of block b's weight stream.
__global__ void fw_gen_weight_count(const u64* streams, const i64* draws, i64 nblocks, i64 chunks, int chunk,
                                    u64 range, unsigned threshold, i64* accepted) {
    for (i64 b = blockIdx.y; b < nblocks; b += gridDim.y) {
        for (i64 c = (i64)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (i64)gridDim.x * blockDim.x) {
            i64 first = c * chunk, last = min(first + chunk, draws[b]);
            i64 count = 0;
            if (first < last) {
                Pcg g = fw_advance(streams, b, (u64)(first / 2));
                for (i64 i = first; i < last; i += 2) {
                    u64 x = g.next();
                    count += fw_accepted((unsigned)x, range, threshold);
                    if (i + 1 < last) count += fw_accepted((unsigned)(x >> 32), range, threshold);
                }
            }
            accepted[b * chunks + c] = count;
        }
    }
}

// Exclusive prefixes of each block's counts, one thread per block; totals[b] the block's sum.
__global__ void fw_gen_scan(i64 nblocks, i64 chunks, i64* counts, i64* totals) {
    i64 b = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nblocks) return;
    i64* s = counts + b * chunks;
    i64 running = 0;
    for (i64 c = 0; c < chunks; ++c) {
        i64 v = s[c];
        s[c] = running;
        running += v;
    }
    totals[b] = running;
}

// Fill pass of the weights: w[offsets[b] + k] = lo + the k-th accepted draw's value, k < edges[b].
__global__ void fw_gen_weight_fill(const u64* streams, const i64* draws, i64 nblocks, i64 chunks, int chunk,
                                   u64 range, unsigned threshold, i64 lo, const i64* prefix, const i64* edges,
                                   const i64* offsets, i64* w) {
    for (i64 b = blockIdx.y; b < nblocks; b += gridDim.y) {
        i64 m = edges[b], at = offsets[b];
        for (i64 c = (i64)blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += (i64)gridDim.x * blockDim.x) {
            i64 first = c * chunk, last = min(first + chunk, draws[b]);
            i64 k = prefix[b * chunks + c];
            if (first >= last || k >= m) continue;
            Pcg g = fw_advance(streams, b, (u64)(first / 2));
            for (i64 i = first; i < last && k < m; i += 2) {
                u64 x = g.next();
                unsigned halves[2] = {(unsigned)x, (unsigned)(x >> 32)};
                for (int h = 0; h < 2 && i + h < last && k < m; ++h) {
                    if (fw_accepted(halves[h], range, threshold))
                        w[at + k++] = lo + (i64)(((u64)halves[h] * range) >> 32);
                }
            }
        }
    }
}

// The last touches, edge by edge: the weight ``lo`` where the range holds one value
// (``constant``: nothing is drawn), the mirror (dst, src) at m + e of an undirected graph with
// the drawn weight, the potential h(src) - h(dst) of each (when ``h`` is given), and the
// weights' extremes in extremes[0] (min) and extremes[1] (max), one atomic per warp.
__global__ void fw_gen_finish(int* src, int* dst, i64* w, i64 m, const i64* h, bool mirror, bool constant, i64 lo,
                              i64* extremes) {
    i64 low = FW_I64_MAX, high = FW_I64_MIN;
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < m; e += (i64)gridDim.x * blockDim.x) {
        int s = src[e], t = dst[e];
        i64 drawn = constant ? lo : w[e];
        i64 x = h ? drawn + h[s] - h[t] : drawn;
        if (h || constant) w[e] = x;
        low = min(low, x);
        high = max(high, x);
        if (mirror) {
            i64 y = h ? drawn + h[t] - h[s] : drawn;
            src[m + e] = t;
            dst[m + e] = s;
            w[m + e] = y;
            low = min(low, y);
            high = max(high, y);
        }
    }
    for (int d = 16; d > 0; d /= 2) {
        low = min(low, __shfl_down_sync(0xffffffffu, low, d));
        high = max(high, __shfl_down_sync(0xffffffffu, high, d));
    }
    if ((threadIdx.x & 31) == 0 && low <= high) {
        atomicMin(extremes, low);
        atomicMax(extremes + 1, high);
    }
}
