// gpu/bfs: all-pairs breadth-first search with one bit per target (floydwarp/bfs.py says what is
// computed, gpu/bfs.py runs it).
//
// Bit sets are n x words 64-bit words, vertex-major (words = ceil(n / 64)); bit t of word
// [v, t / 64] stands for target t.  The distances are a pitched n x pitch matrix of T (pitch a
// multiple of 64 entries), so the 64 entries of a word start 8-byte aligned and new bits are
// written with 64-bit read-modify-writes, 8 / sizeof(T) entries at a time.
//
// One thread per (vertex, word), the word fastest: a warp reads the frontier words of one
// out-neighbour side by side.  INF arrives as a parameter (numeric.py owns it).
#include "common.cuh"

typedef unsigned long long u64;

// All bits of the last word whose targets exist, all bits of the others.
__device__ __forceinline__ u64 fw_bfs_valid(int w, int words, u64 last) {
    return w == words - 1 ? last : ~0ull;
}

// The number of bits of T and a mask of one T in a 64-bit word.
template <typename T>
struct fw_bfs_lane {
    static constexpr int E = 8 / sizeof(T);               // entries per 64-bit word
    static constexpr int BITS = 8 * sizeof(T);
    static constexpr u64 ONES = BITS == 64 ? ~0ull : ((1ull << (BITS % 64)) - 1);

    // `value` in every lane of a 64-bit word
    static __device__ __forceinline__ u64 spread(T value) {
        u64 lanes = 0;
#pragma unroll
        for (int i = 0; i < E; ++i) lanes |= ((u64)value & ONES) << (BITS * i);
        return lanes;
    }
};

// dist[v, 64 w + i] = level for every bit i of x, into the 64 entries at `chunk`.
template <typename T>
__device__ __forceinline__ void fw_bfs_write(T* chunk, u64 x, T level) {
    typedef fw_bfs_lane<T> L;
    const u64 lanes = L::spread(level);
    u64* words = reinterpret_cast<u64*>(chunk);
#pragma unroll 8
    for (int g = 0; g < 64 / L::E; ++g) {
        unsigned bits = (unsigned)(x >> (g * L::E)) & (unsigned)((1ull << L::E) - 1);
        if (!bits) continue;
        u64 mask = 0;
#pragma unroll
        for (int i = 0; i < L::E; ++i)
            if ((bits >> i) & 1u) mask |= L::ONES << (L::BITS * i);
        words[g] = (words[g] & ~mask) | (lanes & mask);
    }
}

// Level 0: every vertex reaches itself.  visited = frontier = its own bit; its row is INF but
// for a 0 on the diagonal (the pitch's padding columns too, which no bit ever reaches).
template <typename T>
__global__ void fw_bfs_start(u64* __restrict__ visited, u64* __restrict__ frontier, T* __restrict__ dist,
                             long long pitch, int n, int words, T inf) {
    long long total = (long long)n * words;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        int v = (int)(t / words), w = (int)(t % words);
        u64 own = (v >> 6) == w ? 1ull << (v & 63) : 0ull;
        visited[t] = own;
        frontier[t] = own;
        T* chunk = dist + (long long)v * pitch + 64LL * w;
        u64* words64 = reinterpret_cast<u64*>(chunk);
        const u64 lanes = fw_bfs_lane<T>::spread(inf);
#pragma unroll 8
        for (int g = 0; g < 64 / fw_bfs_lane<T>::E; ++g) words64[g] = lanes;
        if (own) chunk[v & 63] = (T)0;
    }
}

// One level, pulled: next[v] = (OR over out-neighbours u of v of frontier[u]) AND NOT visited[v];
// the new bits join visited and are written into v's row as `level`.  *found becomes 1 when a
// bit was new (a plain store: every writer writes the same value).
template <typename T>
__global__ void fw_bfs_level(const long long* __restrict__ out_ptr, const int* __restrict__ out_idx,
                             const u64* __restrict__ frontier, u64* __restrict__ next, u64* __restrict__ visited,
                             T* __restrict__ dist, long long pitch, int n, int words, u64 last, T level,
                             int* __restrict__ found) {
    long long total = (long long)n * words;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        int v = (int)(t / words), w = (int)(t % words);
        u64 seen = visited[t];
        u64 x = 0;
        if (seen != fw_bfs_valid(w, words, last)) {       // else every target is reached already
            u64 acc = 0;
            for (long long e = out_ptr[v], end = out_ptr[v + 1]; e < end; ++e)
                acc |= frontier[(long long)out_idx[e] * words + w];
            x = acc & ~seen;
        }
        next[t] = x;
        if (x) {
            visited[t] = seen | x;
            fw_bfs_write(dist + (long long)v * pitch + 64LL * w, x, level);
            *found = 1;
        }
    }
}

// Predecessors from the distances: pred[i, j] = the first in-neighbour x of j (ascending) with
// dist[i, x] = dist[i, j] - 1; NO_PREDECESSOR (`none`) on the diagonal and for unreached pairs.
template <typename T>
__global__ void fw_bfs_pred(const long long* __restrict__ in_ptr, const int* __restrict__ in_idx,
                            const T* __restrict__ dist, long long pitch, int* __restrict__ pred, int n, T inf,
                            int none) {
    long long total = (long long)n * n;
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < total;
         t += (long long)gridDim.x * blockDim.x) {
        int i = (int)(t / n), j = (int)(t % n);
        const T* row = dist + (long long)i * pitch;
        T d = row[j];
        int p = none;
        if (j != i && d < inf) {
            for (long long e = in_ptr[j], end = in_ptr[j + 1]; e < end; ++e) {
                int x = in_idx[e];
                if (row[x] == (T)(d - 1)) { p = x; break; }
            }
        }
        pred[t] = p;
    }
}
