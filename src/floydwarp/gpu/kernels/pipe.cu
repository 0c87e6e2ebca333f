// floydwarp "fast", variant "pipe": two launches per round, a persistent phase 3.
//
// Round r of blocked Floyd-Warshall with B x B tiles (B = 64):
//
// * fw_pipe_p12 (phases 1 and 2 fused, grid (tiles - 1, 2)): each block runs
//   Floyd-Warshall over the pivot's k range on a B x 2B region held in registers --
//   the pivot tile and its own tile of row r (blockIdx.y == 0) or, transposed, of
//   column r (blockIdx.y == 1).  Restricted to rows (or columns) of the pivot, that
//   region is closed under the k steps, so the block needs no phase-1 result: each
//   block redoes the pivot's closure in lockstep with its own tile (B steps instead
//   of phase 1's B steps followed by phase 2's B steps, and one launch instead of
//   two).  Values are minima over the same path sets as in phases 1 and 2, so the
//   results are the same.  Block (0, 0) hands the closed pivot to phase 3 through the
//   scratch tile ``pv``; column blocks also write their tile k-major into the panel
//   ``ap`` in phase 3's word format (int16: each value broadcast to both halves of a
//   32-bit word), so phase 3 reads four rows with one 16-byte shared-memory load.
//   A round with a single tile launches one block (pivot only) that writes d itself.
//
// * fw_pipe_p3 (phase 3, persistent): gridDim.x blocks (as many as fit on the device)
//   split the (tiles - 1)^2 tiles into contiguous runs (no launch per tile, no tail
//   but the last tile).  Per tile: the row-panel tile (r, j) (double buffered) and the
//   tile's own cells (single buffer, copied to registers first) of the NEXT tile are
//   requested by cp.async before the add-mins of this one, so the memory traffic
//   overlaps them; the column panel of the current tile row stays in shared memory
//   until the row changes.  Each thread owns TM x TN words (rows in groups of four,
//   words in groups of four) and reads its operands as 16-byte vectors; the k loop is
//   unrolled KU times (64: fully, no loop overhead on the integer pipe).  The inner
//   step is one VIADDMNMX (int32), VIADDMNMX.S16x2 (int16 pairs) or FADD + FMNMX
//   (float32).  Block 0 also copies the closed pivot from ``pv`` into d.
//   The clamp at -INF (integer dtypes with negative weights) is applied once at the
//   end of a tile, as in blocked.cu (a and b are fixed in phase 3).
#include "lanes.cuh"

template <typename T> struct PipeReg { typedef T type; };
template <> struct PipeReg<short> { typedef int type; };  // int16 cells of phases 1-2 in 32-bit registers

// ---------------------------------------------------------------- phases 1 + 2
// A thread's cells (16 x 16 threads, S x 2S cells, S = B / 16), in one of two layouts:
//   VEC = false: rows ty + 16 si, columns tx + 16 sj (sj < S: pivot, else own tile);
//   VEC = true (B = 64): rows 4 ty + si, columns 4 tx + sj (pivot) and B + 4 tx + sj - S
//   (own tile): the four values of a row or column segment that a step reads lie side
//   by side, one 16-byte shared-memory load (3 loads a step instead of 12).
template <bool VEC, int B> struct P12Map {
    static constexpr int S = B / 16;
    static __device__ __forceinline__ int row(int si, int ty) { return VEC ? 4 * ty + si : ty + 16 * si; }
    static __device__ __forceinline__ int col(int sj, int tx) {
        return VEC ? (sj < S ? 4 * tx + sj : B + 4 * tx + (sj - S)) : tx + 16 * sj;
    }
    // which thread row / column owns region row / column nk, and which of its cells
    static __device__ __forceinline__ int owner(int nk) { return VEC ? nk >> 2 : nk & 15; }
    static __device__ __forceinline__ int sel(int nk) { return VEC ? nk & 3 : nk >> 4; }
};

// Publish row ``sel`` (cells c[sel][0..SC-1]) or column ``sel`` (cells c[0..SR-1][sel])
// of a thread's cells; the switch gives compile-time register indices.
template <typename M, typename R, int SR, int SC>
__device__ __forceinline__ void pp_publish_row(R* dst, const R (&c)[SR][SC], int sel, int tx) {
    switch (sel) {
#define PP_ROW_CASE(q)                                                                  \
    case q:                                                                             \
        if (q < SR) {                                                                   \
            _Pragma("unroll") for (int sj = 0; sj < SC; ++sj) dst[M::col(sj, tx)] = c[q < SR ? q : 0][sj]; \
        }                                                                               \
        break;
        PP_ROW_CASE(0) PP_ROW_CASE(1) PP_ROW_CASE(2) PP_ROW_CASE(3)
        PP_ROW_CASE(4) PP_ROW_CASE(5) PP_ROW_CASE(6) PP_ROW_CASE(7)
#undef PP_ROW_CASE
    }
}

template <typename M, typename R, int SR, int SC>
__device__ __forceinline__ void pp_publish_col(R* dst, const R (&c)[SR][SC], int sel, int ty) {
    switch (sel) {
#define PP_COL_CASE(q)                                                                  \
    case q:                                                                             \
        if (q < SC) {                                                                   \
            _Pragma("unroll") for (int si = 0; si < SR; ++si) dst[M::row(si, ty)] = c[si][q < SC ? q : 0]; \
        }                                                                               \
        break;
        PP_COL_CASE(0) PP_COL_CASE(1) PP_COL_CASE(2) PP_COL_CASE(3)
        PP_COL_CASE(4) PP_COL_CASE(5) PP_COL_CASE(6) PP_COL_CASE(7)
#undef PP_COL_CASE
    }
}

// Four consecutive 4-byte values from shared memory (16-byte aligned) as one load.
template <typename R>
__device__ __forceinline__ void pp_ld4(const R* p, R& a, R& b, R& c, R& e) {
    const W4<R> v = *reinterpret_cast<const W4<R>*>(p);
    a = v.v[0];
    b = v.v[1];
    c = v.v[2];
    e = v.v[3];
}

// Shared memory: B x PITCH elements of T (the region), then 2 x 2B (row buffers) and
// 2 x B (column buffers) 4-byte values; PITCH makes the row stride an odd number of
// 4-byte words, so the transposed accesses of the column blocks are free of bank
// conflicts (and B * PITCH * sizeof(T) keeps the buffers 16-byte aligned for B = 64).
template <typename T, int B> struct P12Shape {
    static constexpr int PITCH = 2 * B + (sizeof(T) >= 4 ? 1 : 4 / (int)sizeof(T));
    static constexpr int SMEM = B * PITCH * (int)sizeof(T) + 6 * B * 4;
};

template <typename T, int B, bool VEC, bool CLAMP>
__global__ void __launch_bounds__(256, 4)
fw_pipe_p12(T* d, i64 p, typename Lane<T>::W* ap, T* pv, int r, T ninf, int tiles) {
    constexpr int S = B / 16, S2 = 2 * S;
    constexpr int PITCH = P12Shape<T, B>::PITCH;
    static_assert(S2 <= 8, "the publish switches handle up to 8 cells a side");
    static_assert(!VEC || B == 64, "the vector layout is for 64 x 64 tiles");
    static_assert((B * PITCH * sizeof(T)) % 16 == 0, "row buffers must stay 16-byte aligned");
    typedef typename PipeReg<T>::type R;
    static_assert(sizeof(R) == 4, "4-byte cells");
    typedef Lane<T> L;
    typedef P12Map<VEC, B> M;
    extern __shared__ __align__(16) unsigned char fw_smem[];
    T* st = reinterpret_cast<T*>(fw_smem);                                // B x PITCH
    R* rowbuf = reinterpret_cast<R*>(fw_smem + B * PITCH * sizeof(T));   // 2 x 2B
    R* colbuf = rowbuf + 4 * B;                                           // 2 x B
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const bool pivot_only = tiles == 1;
    const bool is_row = blockIdx.y == 0;
    const int t = pivot_only ? r : blockIdx.x + (blockIdx.x >= r);
    const i64 o = (i64)r * B, ot = (i64)t * B;

    // The region, "row-panel" orientation: st[x][y] for x < B (pivot rows), y < 2B:
    // y < B the pivot, y >= B the own tile.  Column blocks store both transposed.
    for (int idx = tid; idx < B * B; idx += 256) {
        const int i = idx / B, j = idx % B;
        const T pvv = d[(o + i) * p + o + j];
        if (is_row) {
            st[i * PITCH + j] = pvv;
            st[i * PITCH + B + j] = d[(o + i) * p + ot + j];
        } else {
            st[j * PITCH + i] = pvv;
            st[j * PITCH + B + i] = d[(ot + i) * p + o + j];
        }
    }
    __syncthreads();
    const R nin = ninf;
    R c[S][S2];
#pragma unroll
    for (int si = 0; si < S; ++si)
#pragma unroll
        for (int sj = 0; sj < S2; ++sj) c[si][sj] = st[M::row(si, ty) * PITCH + M::col(sj, tx)];
    if (tid < 2 * B) rowbuf[tid] = st[tid];
    if (tid < B) colbuf[tid] = st[tid * PITCH];
    __syncthreads();

#pragma unroll 1
    for (int kk = 0; kk < B; ++kk) {
        const R* rb = rowbuf + (kk & 1) * 2 * B;
        const R* cb = colbuf + (kk & 1) * B;
        R a[S], b[S2];
        if (VEC) {
            pp_ld4(cb + 4 * ty, a[0], a[1], a[2], a[3 % S]);
            pp_ld4(rb + 4 * tx, b[0], b[1], b[2], b[3 % S2]);
            pp_ld4(rb + B + 4 * tx, b[S % S2], b[(S + 1) % S2], b[(S + 2) % S2], b[(S + 3) % S2]);
        } else {
#pragma unroll
            for (int si = 0; si < S; ++si) a[si] = cb[M::row(si, ty)];
#pragma unroll
            for (int sj = 0; sj < S2; ++sj) b[sj] = rb[M::col(sj, tx)];
        }
#pragma unroll
        for (int si = 0; si < S; ++si)
#pragma unroll
            for (int sj = 0; sj < S2; ++sj) {
                const R s = fw_cand(a[si], b[sj], nin, CLAMP);
                c[si][sj] = s < c[si][sj] ? s : c[si][sj];
            }
        const int nk = kk + 1;
        if (nk < B) {
            // The owners of row nk / column nk publish them for the next step; the
            // outer tests are uniform over half warps or true for one lane in 16 (4).
            if (ty == M::owner(nk)) pp_publish_row<M, R, S, S2>(rowbuf + (nk & 1) * 2 * B, c, M::sel(nk), tx);
            if (tx == M::owner(nk)) pp_publish_col<M, R, S, S2>(colbuf + (nk & 1) * B, c, M::sel(nk), ty);
        }
        __syncthreads();
    }

    if (is_row) {
        if (blockIdx.x == 0) {
            // the closed pivot: into d (single tile) or the scratch tile for phase 3
            T* dst = pivot_only ? d + o * p + o : pv;
            const i64 dp = pivot_only ? p : (i64)B;
#pragma unroll
            for (int si = 0; si < S; ++si)
#pragma unroll
                for (int sj = 0; sj < S; ++sj) dst[M::row(si, ty) * dp + M::col(sj, tx)] = (T)c[si][sj];
        }
        if (!pivot_only) {
#pragma unroll
            for (int si = 0; si < S; ++si)
#pragma unroll
                for (int sj = S; sj < S2; ++sj)
                    d[(o + M::row(si, ty)) * p + ot + (M::col(sj, tx) - B)] = (T)c[si][sj];
        }
    } else {
        // Cell (si, sj >= S) holds own[i][kk], i = col - B, kk = row.
        typename L::W* a_out = ap + ot * B;  // k-major: a_out[kk * B + i]
#pragma unroll
        for (int si = 0; si < S; ++si)
#pragma unroll
            for (int sj = S; sj < S2; ++sj) {
                const int kk = M::row(si, ty), i = M::col(sj, tx) - B;
                a_out[kk * B + i] = L::word((T)c[si][sj]);
                st[kk * PITCH + B + i] = (T)c[si][sj];
            }
        __syncthreads();
        for (int idx = tid; idx < B * B; idx += 256) {
            const int i = idx / B, j = idx % B;
            d[(ot + i) * p + o + j] = st[j * PITCH + B + i];
        }
    }
}

// ---------------------------------------------------------------- phase 3
// Shared memory (4-byte words): the column panel (B x B), two row-panel tiles and one
// own tile (B x BW each).  Per tile: wait for its loads, copy the own tile into
// registers, then start the next tile's loads (own tile into the single buffer, row
// panel into the other half) before the add-mins, so they overlap them.
template <typename T, int B, int TM, int TN, int NT> struct P3Shape {
    typedef Lane<T> L;
    static constexpr int BW = B / L::EPW;  // words per tile row
    static constexpr int NTX = BW / TN, NTY = B / TM;
    static constexpr int AW = B * B;       // words of the column panel (k-major)
    static constexpr int TW = B * BW;      // words of a row-panel tile or an own tile
    static constexpr int SMEM = (AW + 3 * TW) * 4;
};

template <typename T, int B, int TM, int TN, int NT, int MINB, int KU, bool CLAMP>
__global__ void __launch_bounds__(NT, MINB)
fw_pipe_p3(T* d, i64 p, const typename Lane<T>::W* __restrict__ ap, const T* __restrict__ pv, int r, T ninf,
           int tiles) {
    typedef Lane<T> L;
    typedef typename L::W W;
    typedef P3Shape<T, B, TM, TN, NT> Sh;
    constexpr int EPW = L::EPW, BW = Sh::BW, NTX = Sh::NTX, NTY = Sh::NTY, AW = Sh::AW, TW = Sh::TW;
    constexpr int CH = BW / 4;               // 16-byte chunks per tile row
    constexpr int NCH = TW / 4 / NT;         // chunks per thread of a tile
    static_assert(sizeof(W) == 4, "words are 4 bytes");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "a thread's rows and words come in groups of four");
    static_assert(NTX * NTY == NT, "the threads must cover the tile");
    static_assert((TW / 4) % NT == 0 && (AW / 4) % NT == 0, "tiles must split evenly over the threads");
    extern __shared__ __align__(16) unsigned char fw_smem[];
    W* const As = reinterpret_cast<W*>(fw_smem);  // column panel of the current tile row, As[kk * B + i]
    W* const Cs = As + AW;                         // own tile, Cs[i * BW + w]
    W* const Bs0 = Cs + TW;                        // 2 x row-panel tile, Bs[kk * BW + w]

    const int tid = threadIdx.x, tx = tid % NTX, ty = tid / NTX;
    const int tpr = tiles - 1, total = tpr * tpr;
    const int G = gridDim.x, bid = blockIdx.x;
    const int per = total / G, extra = total % G;
    const int begin = bid * per + (bid < extra ? bid : extra);
    const int end = begin + per + (bid < extra ? 1 : 0);
    const i64 o = (i64)r * B;

    if (bid == 0) {
        constexpr int V = 16 / sizeof(T);
        for (int idx = tid; idx < B * B / V; idx += NT) {
            const int i = idx / (B / V), cv = idx % (B / V);
            const uint4 x = *reinterpret_cast<const uint4*>(pv + i * B + cv * V);
            pp_st_global16(d + (o + i) * p + o + cv * V, x.x, x.y, x.z, x.w);
        }
    }
    if (begin >= end) return;

    // this thread's chunks of a tile: element offsets in global memory, word offsets in shared
    // (unsigned: an address is then one IMAD.WIDE.U32 on the FMA pipe, not integer-ALU
    // work beside the add-mins)
    unsigned int goff[NCH], soff[NCH];
#pragma unroll
    for (int it = 0; it < NCH; ++it) {
        const int idx = tid + it * NT, row = idx / CH, cv = idx % CH;
        goff[it] = (unsigned int)(row * (int)p + cv * 4 * EPW);
        soff[it] = (unsigned int)(row * BW + cv * 4);
    }
    const T* const brow = d + o * p;  // row r of tiles
    auto issue = [&](int bi, int bj, int s) {
        const T* bsrc = brow + (i64)bj * B;
        const T* csrc = d + (i64)bi * B * p + (i64)bj * B;
        W* Bs = Bs0 + s * TW;
#pragma unroll
        for (int it = 0; it < NCH; ++it) {
            pp_cp_async16(Bs + soff[it], bsrc + goff[it]);
            pp_cp_async16(Cs + soff[it], csrc + goff[it]);
        }
    };
    auto issue_panel = [&](int bi) {
        const W* src = ap + (i64)bi * AW;
#pragma unroll
        for (int it = 0; it < AW / 4 / NT; ++it) {
            const int idx = tid + it * NT;
            pp_cp_async16(As + idx * 4, src + idx * 4);
        }
    };

    // tile coordinates, advanced without divisions
    int y = begin / tpr, x = begin - (begin / tpr) * tpr;
    int bi = y + (y >= r), bj = x + (x >= r);
    issue_panel(bi);
    issue(bi, bj, 0);
    pp_cp_async_commit();
    int s = 0;
    const int cbase = ty * 4 * BW + tx * 4;  // this thread's first cell in a tile (RegTile)
#pragma unroll 1
    for (int lin = begin; lin < end; ++lin) {
        pp_cp_async_wait<0>();
        __syncthreads();
        RegTile<L, TM, TN, NTX, NTY, BW> tile;
        tile.load(Cs, cbase);
        // the next tile of the run
        const bool more = lin + 1 < end;
        int nbi = bi, nbj = bj;
        if (more) {
            if (++x == tpr) {
                x = 0;
                ++y;
            }
            nbi = y + (y >= r);
            nbj = x + (x >= r);
        }
        __syncthreads();  // every thread has its cells: the own-tile buffer may be refilled
        if (more) {
            issue(nbi, nbj, s ^ 1);
            pp_cp_async_commit();
        }
        const W* Bs = Bs0 + s * TW;

        // k in pairs (as fw_minplus): KU steps of k per unrolled block
#pragma unroll KU / 2
        for (int kk = 0; kk < B; kk += 2) tile.step2(As + kk * B, B, Bs + kk * BW, BW, tx, ty);

        tile.template store<CLAMP>(d + ((i64)bi * B + ty * 4) * p + (i64)bj * B + tx * 4 * EPW, p, ninf);
        if (more && nbi != bi) {
            __syncthreads();  // every thread is done with the panel
            issue_panel(nbi);
            pp_cp_async_commit();
        }
        bi = nbi;
        bj = nbj;
        s ^= 1;
    }
}

// ---------------------------------------------------------------- start matrix
// INF everywhere, 0 on the diagonal (padding included): N rows of p elements.
template <typename T>
__global__ void fw_fill(T* d, i64 p, int N, T inf) {
    for (int i = blockIdx.y; i < N; i += gridDim.y) {
        T* row = d + (i64)i * p;
        for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < p; j += (i64)gridDim.x * blockDim.x)
            row[j] = (j == i) ? (T)0 : inf;
    }
}

// d[src[e], dst[e]] = w[e] for distinct edges (a negative self-loop overrides the 0);
// ids as uint16 (n <= 65536) or int32, weights already in the distance type.
template <typename T, typename IDX>
__global__ void fw_scatter(T* d, i64 p, const IDX* src, const IDX* dst, const T* w, i64 m) {
    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < m; e += (i64)gridDim.x * blockDim.x)
        d[(i64)src[e] * p + dst[e]] = w[e];
}
