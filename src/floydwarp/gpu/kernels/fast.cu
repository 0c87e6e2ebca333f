// floydwarp "fast": the production blocked Floyd-Warshall kernels.
//
// Phases 1 and 2 (fw_fast_p1, fw_fast_p2) keep each thread's cells in registers and
// publish only the pivot row and column a step reads (see below).  Phase 3 -- all but
// O(1/tiles) of the work -- comes in variants, chosen per dtype by measurement
// (tiles.FAST_DEFAULT_VARIANT; bench/NOTES.md):
//   * fw_fast_p3 ("tiled"): a min-plus "matrix product" written like a GEMM: a block
//     computes a B x B tile (B = 128) with 16 x 16 threads, each 8 x 8 cells in
//     registers; the column tile (i, r) and row tile (r, j) stream through shared memory
//     in chunks of BK values of k as 16-byte vectors; a thread's rows are
//     ty*TM/2 + m and B/2 + ty*TM/2 + m (columns likewise), so the shared-memory reads of
//     a quarter warp are contiguous (no bank conflicts) and global stores coalesce;
//   * fw_fast_p3_async ("async"): the same with the chunks double-buffered by cp.async;
//   * fw_fast_p3_s16 ("tiled", int16): two columns per 32-bit word, s16x2 add-min (two
//     relaxations per instruction), the column tile stored pre-broadcast;
//   * fw_vec_p3_s16 ("vec", int16): blocked.cu's vectorized shape with packed pairs
//     (the "vec" variant of the other dtypes is blocked.cu's fw_blockedvec_p3).
// The inner step is min(a + b, c): one VIADDMNMX on sm_90 for int32 (ptxas fuses it);
// the clamp at -INF is applied once at the end of phase 3 (a and b are fixed there; see
// blocked.cu).
#include "common.cuh"

template <typename T>
__device__ __forceinline__ T fast_addmin(T a, T b, T c) { return fw_addmin(a, b, c); }

// ---------------------------------------------------------------- phase 3, "tiled" and "async"
// The two kernels share a thread's cells and their chunk loop; they differ only in how a
// chunk of the column tile (As[i * AP + kk]) and row tile (Bs[kk * B + j]) reaches shared
// memory.  A thread owns rows ty*TM/2 + m and B/2 + ty*TM/2 + m (columns likewise).
template <int B, int TM>
__device__ __forceinline__ int fast_row(int ty, int m) {
    constexpr int HM = TM / 2;
    return (m < HM) ? ty * HM + m : B / 2 + ty * HM + (m - HM);
}

// The thread's TM x TN cells of tile (oi, oj) into registers.
template <typename T, int B, int TM, int TN>
__device__ __forceinline__ void fast_load_cells(T (&c)[TM][TN], const T* d, i64 p, i64 oi, i64 oj, int tx, int ty) {
    constexpr int V = 16 / sizeof(T), HN = TN / 2;
#pragma unroll
    for (int m = 0; m < TM; ++m) {
        const T* row = d + (oi + fast_row<B, TM>(ty, m)) * p + oj;
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int v = 0; v < HN / V; ++v) {
                const Vec16<T> x = ld16(row + h * (B / 2) + tx * HN + v * V);
#pragma unroll
                for (int u = 0; u < V; ++u) c[m][h * HN + v * V + u] = x.v[u];
            }
    }
}

// The chunk loop: BK steps of k on the chunk in shared memory, TM x TN add-mins a step.
template <typename T, int B, int TM, int TN, int BK>
__device__ __forceinline__ void fast_chunk(T (&c)[TM][TN], const T* As, const T* Bs, int tx, int ty) {
    constexpr int V = 16 / sizeof(T), HN = TN / 2;
    constexpr int AP = BK + V;  // row pitch of the column-tile chunk
#pragma unroll 1
    for (int kq = 0; kq < BK; kq += V) {
        Vec16<T> a[TM];
#pragma unroll
        for (int m = 0; m < TM; ++m) a[m] = ld16(As + fast_row<B, TM>(ty, m) * AP + kq);
#pragma unroll
        for (int u = 0; u < V; ++u) {
            T b[TN];
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int v = 0; v < HN / V; ++v) {
                    const Vec16<T> x = ld16(Bs + (kq + u) * B + h * (B / 2) + tx * HN + v * V);
#pragma unroll
                    for (int w = 0; w < V; ++w) b[h * HN + v * V + w] = x.v[w];
                }
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int q = 0; q < TN; ++q) c[m][q] = fast_addmin(a[m].v[u], b[q], c[m][q]);
        }
    }
}

// The cells back into tile (oi, oj), clamped at -INF where CLAMP.
template <typename T, int B, int TM, int TN, bool CLAMP>
__device__ __forceinline__ void fast_store_cells(const T (&c)[TM][TN], T* d, i64 p, i64 oi, i64 oj, int tx, int ty,
                                                 T ninf) {
    constexpr int V = 16 / sizeof(T), HN = TN / 2;
#pragma unroll
    for (int m = 0; m < TM; ++m) {
        T* row = d + (oi + fast_row<B, TM>(ty, m)) * p + oj;
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int v = 0; v < HN / V; ++v) {
                Vec16<T> x;
#pragma unroll
                for (int u = 0; u < V; ++u) {
                    T val = c[m][h * HN + v * V + u];
                    if (CLAMP) val = fw_max(val, ninf);
                    x.v[u] = val;
                }
                st16(row + h * (B / 2) + tx * HN + v * V, x);
            }
    }
}

template <typename T, int B, int TM, int TN, int BK, bool CLAMP>
__global__ void __launch_bounds__((B / TM) * (B / TN), 2)
fw_fast_p3(T* d, i64 p, int r, T ninf) {
    constexpr int NTX = B / TN, NTY = B / TM, NT = NTX * NTY;
    constexpr int V = 16 / sizeof(T);
    constexpr int AP = BK + V;  // row pitch of the column-tile chunk
    static_assert((TN / 2) % V == 0, "a half row of a thread's cells must be whole 16-byte vectors");
    static_assert(BK % V == 0, "BK must be whole vectors");
    static_assert((B * (BK / V)) % NT == 0 && (BK * (B / V)) % NT == 0, "chunks must split evenly over the threads");
    __shared__ __align__(16) T As[B * AP];  // As[i * AP + kk]: tile (bi, r), k chunk
    __shared__ __align__(16) T Bs[BK * B];  // Bs[kk * B + j]:  tile (r, bj), k chunk

    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * NTX + tx;
    const int bi = blockIdx.y + (blockIdx.y >= r), bj = blockIdx.x + (blockIdx.x >= r);
    const i64 o = (i64)r * B, oi = (i64)bi * B, oj = (i64)bj * B;

    T c[TM][TN];
    fast_load_cells<T, B, TM, TN>(c, d, p, oi, oj, tx, ty);
    for (int k0 = 0; k0 < B; k0 += BK) {
#pragma unroll
        for (int it = 0; it < B * (BK / V) / NT; ++it) {
            const int idx = tid + it * NT, row = idx / (BK / V), cv = idx % (BK / V);
            st16(As + row * AP + cv * V, ld16(d + (oi + row) * p + o + k0 + cv * V));
        }
#pragma unroll
        for (int it = 0; it < BK * (B / V) / NT; ++it) {
            const int idx = tid + it * NT, row = idx / (B / V), cv = idx % (B / V);
            st16(Bs + row * B + cv * V, ld16(d + (o + k0 + row) * p + oj + cv * V));
        }
        __syncthreads();
        fast_chunk<T, B, TM, TN, BK>(c, As, Bs, tx, ty);
        __syncthreads();
    }
    fast_store_cells<T, B, TM, TN, CLAMP>(c, d, p, oi, oj, tx, ty, ninf);
}

// ---------------------------------------------------------------- phases 1 and 2
// blocked.cu's phases 1 and 2 keep every cell in shared memory and use 1024 threads;
// with B = 128 that costs ~1 us per k step (measured: 12 % of an n = 16384 int32 run,
// 22 % for int16).  Here each of 16 x 16 threads keeps its S x S cells (S = B / 16) in
// registers and only publishes what the next step reads: at step kk the pivot row kk
// and column kk; after updating, the owners of row kk+1 / column kk+1 write them to
// shared memory.  One barrier per step; registers instead of shared-memory traffic.
template <typename T> struct RegOf { typedef T type; };
template <> struct RegOf<short> { typedef int type; };

// Store row ``sel`` of a thread's S x S cells (columns 16 apart) at dst[16 * sj], or
// column ``sel`` (rows 16 apart, a row pitch of P elements) at dst[16 * si * P].  The
// switch gives every case compile-time register indices.
template <typename T, typename R, int B, int S>
__device__ __forceinline__ void publish_row(T* dst, const R (&c)[S][S], int sel) {
    switch (sel) {
#define FW_ROW_CASE(q)                                                         \
    case q:                                                                    \
        if (q < S) {                                                           \
            _Pragma("unroll") for (int sj = 0; sj < S; ++sj) dst[16 * sj] = (T)c[q < S ? q : 0][sj]; \
        }                                                                      \
        break;
        FW_ROW_CASE(0) FW_ROW_CASE(1) FW_ROW_CASE(2) FW_ROW_CASE(3)
        FW_ROW_CASE(4) FW_ROW_CASE(5) FW_ROW_CASE(6) FW_ROW_CASE(7)
#undef FW_ROW_CASE
    }
}

template <typename T, typename R, int P, int S>
__device__ __forceinline__ void publish_col(T* dst, const R (&c)[S][S], int sel) {
    switch (sel) {
#define FW_COL_CASE(q)                                                         \
    case q:                                                                    \
        if (q < S) {                                                           \
            _Pragma("unroll") for (int si = 0; si < S; ++si) dst[16 * si * P] = (T)c[si][q < S ? q : 0]; \
        }                                                                      \
        break;
        FW_COL_CASE(0) FW_COL_CASE(1) FW_COL_CASE(2) FW_COL_CASE(3)
        FW_COL_CASE(4) FW_COL_CASE(5) FW_COL_CASE(6) FW_COL_CASE(7)
#undef FW_COL_CASE
    }
}

template <typename T, int B, bool CLAMP>
__global__ void __launch_bounds__(256)
fw_fast_p1(T* d, i64 p, int r, T ninf) {
    constexpr int S = B / 16;
    static_assert(S <= 8, "publish_row/publish_col handle up to 8 cells a side");
    extern __shared__ __align__(16) unsigned char fw_smem[];
    T* t = reinterpret_cast<T*>(fw_smem);  // B x B
    const int tx = threadIdx.x, ty = threadIdx.y;
    const i64 o = (i64)r * B;
    typedef typename RegOf<T>::type R;  // int16 cells live in 32-bit registers
    const R nin = ninf;
    R c[S][S];
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S; ++sj) {
            const int li = ty + 16 * si, lj = tx + 16 * sj;
            c[si][sj] = d[(o + li) * p + o + lj];
            t[li * B + lj] = (T)c[si][sj];
        }
    __syncthreads();
#pragma unroll 1
    for (int kk = 0; kk < B; ++kk) {
        R a[S], b[S];
#pragma unroll
        for (int si = 0; si < S; ++si) a[si] = t[(ty + 16 * si) * B + kk];
#pragma unroll
        for (int sj = 0; sj < S; ++sj) b[sj] = t[kk * B + tx + 16 * sj];
#pragma unroll
        for (int si = 0; si < S; ++si)
#pragma unroll
            for (int sj = 0; sj < S; ++sj) {
                const R s = fw_cand(a[si], b[sj], nin, CLAMP);
                c[si][sj] = s < c[si][sj] ? s : c[si][sj];
            }
        const int nk = kk + 1;
        // Publish row nk and column nk.  The outer tests are uniform over half warps or
        // true for one lane in 16, so the stores of the switch's one case are all that
        // the owners execute (predicated stores in every thread measured slower).
        if (ty == (nk & 15)) publish_row<T, R, B, S>(t + nk * B + tx, c, nk >> 4);
        if (tx == (nk & 15)) publish_col<T, R, B, S>(t + ty * B + nk, c, nk >> 4);
        __syncthreads();
    }
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S; ++sj) d[(o + ty + 16 * si) * p + o + tx + 16 * sj] = (T)c[si][sj];
}

// grid (tiles - 1, 2): blockIdx.y == 0 -> tile (r, t) of row r, 1 -> tile (t, r) of column r.
// Shared memory: the pivot tile (B x B) and a double-buffered row (row tile) or column
// (column tile) of the block's own tile: (B*B + 2*B) * sizeof(T).
template <typename T, int B, bool CLAMP>
__global__ void __launch_bounds__(256, 2)
fw_fast_p2(T* d, i64 p, int r, T ninf) {
    constexpr int S = B / 16;
    extern __shared__ __align__(16) unsigned char fw_smem[];
    T* piv = reinterpret_cast<T*>(fw_smem);  // B x B
    T* buf = piv + B * B;                     // 2 x B
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int t = blockIdx.x + (blockIdx.x >= r);
    const bool is_row = blockIdx.y == 0;
    const i64 o = (i64)r * B;
    const i64 oi = is_row ? o : (i64)t * B, oj = is_row ? (i64)t * B : o;
    typedef typename RegOf<T>::type R;  // int16 cells live in 32-bit registers
    const R nin = ninf;
    R c[S][S];
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S; ++sj) {
            const int li = ty + 16 * si, lj = tx + 16 * sj;
            piv[li * B + lj] = d[(o + li) * p + o + lj];
            c[si][sj] = d[(oi + li) * p + oj + lj];
            if (is_row && li == 0) buf[lj] = (T)c[si][sj];
            if (!is_row && lj == 0) buf[li] = (T)c[si][sj];
        }
    __syncthreads();
#pragma unroll 1
    for (int kk = 0; kk < B; ++kk) {
        const T* cur = buf + (kk & 1) * B;
        T* nxt = buf + ((kk + 1) & 1) * B;
        R a[S], b[S];
        if (is_row) {
#pragma unroll
            for (int si = 0; si < S; ++si) a[si] = piv[(ty + 16 * si) * B + kk];
#pragma unroll
            for (int sj = 0; sj < S; ++sj) b[sj] = cur[tx + 16 * sj];
        } else {
#pragma unroll
            for (int si = 0; si < S; ++si) a[si] = cur[ty + 16 * si];
#pragma unroll
            for (int sj = 0; sj < S; ++sj) b[sj] = piv[kk * B + tx + 16 * sj];
        }
#pragma unroll
        for (int si = 0; si < S; ++si)
#pragma unroll
            for (int sj = 0; sj < S; ++sj) {
                const R s = fw_cand(a[si], b[sj], nin, CLAMP);
                c[si][sj] = s < c[si][sj] ? s : c[si][sj];
            }
        const int nk = kk + 1;
        if (is_row) {
            if (ty == (nk & 15)) publish_row<T, R, B, S>(nxt + tx, c, nk >> 4);
        } else {
            if (tx == (nk & 15)) publish_col<T, R, 1, S>(nxt + ty, c, nk >> 4);
        }
        __syncthreads();
    }
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S; ++sj) d[(oi + ty + 16 * si) * p + oj + tx + 16 * sj] = (T)c[si][sj];
}

// ---------------------------------------------------------------- two-stage variant (sm_80+)
// The same tiling with the k chunks double-buffered: cp.async copies chunk c+1 from
// global to shared memory while the block computes on chunk c, so the loads' latency
// hides behind the add-mins instead of behind the other resident block.  Dynamic shared
// memory: 2 * (B*(BK+V) + BK*B) * sizeof(T).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned int s = (unsigned int)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
#else
    *reinterpret_cast<uint4*>(smem) = *reinterpret_cast<const uint4*>(gmem);
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

template <typename T, int B, int TM, int TN, int BK, bool CLAMP>
__global__ void __launch_bounds__((B / TM) * (B / TN), 2)
fw_fast_p3_async(T* d, i64 p, int r, T ninf) {
    constexpr int NTX = B / TN, NTY = B / TM, NT = NTX * NTY;
    constexpr int V = 16 / sizeof(T);
    constexpr int AP = BK + V;
    constexpr int STAGE = B * AP + BK * B;  // elements per stage
    static_assert((TN / 2) % V == 0, "a half row of a thread's cells must be whole 16-byte vectors");
    static_assert(BK % V == 0, "BK must be whole vectors");
    static_assert((B * (BK / V)) % NT == 0 && (BK * (B / V)) % NT == 0, "chunks must split evenly over the threads");
    extern __shared__ __align__(16) unsigned char fw_smem[];
    T* const smem = reinterpret_cast<T*>(fw_smem);

    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * NTX + tx;
    const int bi = blockIdx.y + (blockIdx.y >= r), bj = blockIdx.x + (blockIdx.x >= r);
    const i64 o = (i64)r * B, oi = (i64)bi * B, oj = (i64)bj * B;

    auto issue = [&](int k0, int stage) {
        T* As = smem + stage * STAGE;
        T* Bs = As + B * AP;
#pragma unroll
        for (int it = 0; it < B * (BK / V) / NT; ++it) {
            const int idx = tid + it * NT, row = idx / (BK / V), cv = idx % (BK / V);
            cp_async16(As + row * AP + cv * V, d + (oi + row) * p + o + k0 + cv * V);
        }
#pragma unroll
        for (int it = 0; it < BK * (B / V) / NT; ++it) {
            const int idx = tid + it * NT, row = idx / (B / V), cv = idx % (B / V);
            cp_async16(Bs + row * B + cv * V, d + (o + k0 + row) * p + oj + cv * V);
        }
        cp_async_commit();
    };

    issue(0, 0);

    T c[TM][TN];
    fast_load_cells<T, B, TM, TN>(c, d, p, oi, oj, tx, ty);
#pragma unroll 1
    for (int chunk = 0; chunk < B / BK; ++chunk) {
        if (chunk + 1 < B / BK) {
            issue((chunk + 1) * BK, (chunk + 1) & 1);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
        const T* As = smem + (chunk & 1) * STAGE;
        fast_chunk<T, B, TM, TN, BK>(c, As, As + B * AP, tx, ty);
        __syncthreads();  // this stage is refilled by the issue two chunks on
    }
    fast_store_cells<T, B, TM, TN, CLAMP>(c, d, p, oi, oj, tx, ty, ninf);
}

// ---------------------------------------------------------------- int16: two columns per word
// Words (pairs of int16 columns): BW = B/2 words per tile row; each thread TM rows x
// TNW words (2*TNW columns).  The column tile is stored pre-broadcast: As[i][kk] holds
// (a, a) for a = d[i, kk], so the inner loop needs no unpacking.
template <int B, int TM, int TNW, int BK, bool CLAMP>
__global__ void __launch_bounds__((B / 2 / TNW) * (B / TM), 2)
fw_fast_p3_s16(short* d, i64 p, int r, short ninf) {
    constexpr int BW = B / 2;
    constexpr int NTX = BW / TNW, NTY = B / TM, NT = NTX * NTY;
    constexpr int HM = TM / 2, HN = TNW / 2;  // HN words per half: 2 -> 8-byte accesses
    constexpr int AP = BK + 4;                 // words
    static_assert(HN == 2, "this kernel moves a thread's half rows as 8-byte pairs of words");
    __shared__ __align__(16) unsigned int As[B * AP];
    __shared__ __align__(16) unsigned int Bs[BK * BW];

    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * NTX + tx;
    const int bi = blockIdx.y + (blockIdx.y >= r), bj = blockIdx.x + (blockIdx.x >= r);
    const i64 o = (i64)r * B, oi = (i64)bi * B, oj = (i64)bj * B;

    unsigned int c[TM][TNW];
#pragma unroll
    for (int m = 0; m < TM; ++m) {
        const int li = (m < HM) ? ty * HM + m : B / 2 + ty * HM + (m - HM);
        const unsigned int* row = reinterpret_cast<const unsigned int*>(d + (oi + li) * p + oj);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const uint2 x = *reinterpret_cast<const uint2*>(row + h * (BW / 2) + tx * HN);
            c[m][h * HN] = x.x;
            c[m][h * HN + 1] = x.y;
        }
    }

    for (int k0 = 0; k0 < B; k0 += BK) {
        // column tile chunk: B rows x BK shorts, read as 8-short vectors, stored broadcast
        static_assert((B * (BK / 8)) % NT == 0 && (BK * (BW / 4)) % NT == 0, "chunks must split evenly");
#pragma unroll
        for (int it = 0; it < B * (BK / 8) / NT; ++it) {
            const int idx = tid + it * NT, row = idx / (BK / 8), cv = idx % (BK / 8);
            const Vec16<short> x = ld16(d + (oi + row) * p + o + k0 + cv * 8);
            uint4 lo, hi;
            lo.x = s16_bcast(x.v[0]); lo.y = s16_bcast(x.v[1]); lo.z = s16_bcast(x.v[2]); lo.w = s16_bcast(x.v[3]);
            hi.x = s16_bcast(x.v[4]); hi.y = s16_bcast(x.v[5]); hi.z = s16_bcast(x.v[6]); hi.w = s16_bcast(x.v[7]);
            *reinterpret_cast<uint4*>(As + row * AP + cv * 8) = lo;
            *reinterpret_cast<uint4*>(As + row * AP + cv * 8 + 4) = hi;
        }
        // row tile chunk: BK rows x BW words
#pragma unroll
        for (int it = 0; it < BK * (BW / 4) / NT; ++it) {
            const int idx = tid + it * NT, row = idx / (BW / 4), cv = idx % (BW / 4);
            *reinterpret_cast<uint4*>(Bs + row * BW + cv * 4) =
                *reinterpret_cast<const uint4*>(d + (o + k0 + row) * p + oj + cv * 8);
        }
        __syncthreads();
#pragma unroll 2
        for (int kq = 0; kq < BK; kq += 4) {
            uint4 a[TM];
#pragma unroll
            for (int m = 0; m < TM; ++m) {
                const int li = (m < HM) ? ty * HM + m : B / 2 + ty * HM + (m - HM);
                a[m] = *reinterpret_cast<const uint4*>(As + li * AP + kq);
            }
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                unsigned int b[TNW];
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const uint2 x = *reinterpret_cast<const uint2*>(Bs + (kq + u) * BW + h * (BW / 2) + tx * HN);
                    b[h * HN] = x.x;
                    b[h * HN + 1] = x.y;
                }
#pragma unroll
                for (int m = 0; m < TM; ++m) {
                    const unsigned int am = u == 0 ? a[m].x : u == 1 ? a[m].y : u == 2 ? a[m].z : a[m].w;
#pragma unroll
                    for (int q = 0; q < TNW; ++q) c[m][q] = s16x2_addmin(am, b[q], c[m][q]);
                }
            }
        }
        __syncthreads();
    }

    const unsigned int nb = s16_bcast(ninf);
#pragma unroll
    for (int m = 0; m < TM; ++m) {
        const int li = (m < HM) ? ty * HM + m : B / 2 + ty * HM + (m - HM);
        unsigned int* row = reinterpret_cast<unsigned int*>(d + (oi + li) * p + oj);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            uint2 x;
            x.x = c[m][h * HN];
            x.y = c[m][h * HN + 1];
            if (CLAMP) { x.x = __vmaxs2(x.x, nb); x.y = __vmaxs2(x.y, nb); }
            *reinterpret_cast<uint2*>(row + h * (BW / 2) + tx * HN) = x;
        }
    }
}

// ---------------------------------------------------------------- int16, blocked-vec shape
// blocked.cu's vectorized phase 3 with packed pairs: B = 64 tiles, threads (B/8) x TY,
// thread (tx, ty) owns the 8 columns tx*8 .. tx*8+7 (4 words) of rows ty, ty + TY, ...
// The column tile is stored pre-broadcast ((a, a) per word) with an odd pitch, so the
// rows a warp reads fall in different banks; the row tile is read as 16-byte vectors.
// Shared memory: (B * B/2 + B * (B + 1)) * 4 bytes.
template <int B, int TY, bool CLAMP>
__global__ void __launch_bounds__((B / 8) * TY)
fw_vec_p3_s16(short* d, i64 p, int r, short ninf) {
    constexpr int BV = B / 8, BW = B / 2, RY = B / TY, NT = BV * TY, CP = B + 1;
    extern __shared__ __align__(16) unsigned char fw_smem[];
    unsigned int* rt = reinterpret_cast<unsigned int*>(fw_smem);  // B x BW words
    unsigned int* ct = rt + B * BW;                                 // B x CP words
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * BV + tx;
    const int bi = blockIdx.y + (blockIdx.y >= r), bj = blockIdx.x + (blockIdx.x >= r);
    const i64 o = (i64)r * B, oi = (i64)bi * B, oj = (i64)bj * B;
    for (int idx = tid; idx < B * BV; idx += NT) {
        const int row = idx / BV, cv = idx % BV;
        *reinterpret_cast<uint4*>(rt + row * BW + cv * 4) =
            *reinterpret_cast<const uint4*>(d + (o + row) * p + oj + cv * 8);
        const Vec16<short> x = ld16(d + (oi + row) * p + o + cv * 8);
        unsigned int* dst = ct + row * CP + cv * 8;
#pragma unroll
        for (int u = 0; u < 8; ++u) dst[u] = s16_bcast(x.v[u]);
    }
    uint4 c[RY];
#pragma unroll
    for (int q = 0; q < RY; ++q)
        c[q] = *reinterpret_cast<const uint4*>(d + (oi + ty + q * TY) * p + oj + tx * 8);
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < B; ++kk) {
        const uint4 b = *reinterpret_cast<const uint4*>(rt + kk * BW + tx * 4);
#pragma unroll
        for (int q = 0; q < RY; ++q) {
            const unsigned int a = ct[(ty + q * TY) * CP + kk];
            c[q].x = s16x2_addmin(a, b.x, c[q].x);
            c[q].y = s16x2_addmin(a, b.y, c[q].y);
            c[q].z = s16x2_addmin(a, b.z, c[q].z);
            c[q].w = s16x2_addmin(a, b.w, c[q].w);
        }
    }
    const unsigned int nb = s16_bcast(ninf);
#pragma unroll
    for (int q = 0; q < RY; ++q) {
        if (CLAMP) {
            c[q].x = __vmaxs2(c[q].x, nb);
            c[q].y = __vmaxs2(c[q].y, nb);
            c[q].z = __vmaxs2(c[q].z, nb);
            c[q].w = __vmaxs2(c[q].w, nb);
        }
        *reinterpret_cast<uint4*>(d + (oi + ty + q * TY) * p + oj + tx * 8) = c[q];
    }
}
