// floydwarp "fast", variant "pipe": two launches per round, a persistent phase 3.
//
// Round r of blocked Floyd-Warshall with B x B tiles (B = 64):
//
// * fw_pipe_p12 (phases 1 and 2 fused, grid (tiles - 1, 2)): each block closes the
//   pivot tile itself, by repeated min-plus squaring P = min(P, P (x) P) (after s
//   squarings P holds the shortest walks of up to 2^s edges, so 6 squarings reach every
//   simple path of a 64-vertex tile; a squaring that changes nothing ends it early), and
//   then updates its own tile of row r (blockIdx.y == 0) with ONE product, R = min(R,
//   P* (x) R), or, transposed, of column r (blockIdx.y == 1), C = min(C, C (x) P*).
//   Squaring needs a barrier per squaring (2-4 in practice) where Floyd-Warshall's k
//   loop needs one per k (64): the closure is latency bound, and this is what phase 1
//   of every round and every pivot-block closure of "wide" waits for.  Every block
//   computes the same closed pivot (the same sums in the same order; column blocks on
//   its transpose).  Block (0, 0) hands the closed pivot to phase 3 through the
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

// ---------------------------------------------------------------- phases 1 + 2
// Shared memory, three tiles of 4-byte words (Lane<T>: int16 values in pairs):
//   Q:  the pivot, row-major, B / EPW words a row;
//   QT: the pivot transposed, one word per value (int16: broadcast to both halves), so
//       QT[k][i] is the left operand of row i at step k in the product's word format;
//   X:  the own tile, row-major like Q.
// All are "row-panel" oriented: X[k][j] is the own tile's value in pivot row k (column
// blocks store the pivot and their tile transposed).  Thread (tx, ty) of 16 x 16 owns
// rows 4 ty + si (si < 4) and the 4 columns from 4 tx on (4 / EPW words), so a k step
// reads its four left operands with one 16-byte load and its right operands with one
// 16-byte (int16: 8-byte) load, and int16 relaxes two columns per instruction.
constexpr int P12_PITCH = 64 + 4;  // words a row of QT: rows stay 16-byte aligned
constexpr int P12_SQUARINGS = 6;   // 2^6 >= 63 edges: every simple path in a 64-vertex tile

template <typename L> struct P12Tile {
    static constexpr int WPT = 4 / L::EPW;            // words a thread owns in a row
    static constexpr int PITCH = 64 / L::EPW + 4;     // words a row of Q and X
    struct __align__(4 * WPT) Row { typename L::W v[WPT]; };  // a thread's words of a row: one load
};

// Value h of a word.
template <typename T> __device__ __forceinline__ T p12_value(typename Lane<T>::W w, int) { return w; }
template <> __device__ __forceinline__ short p12_value<short>(unsigned int w, int h) {
    return (short)(h ? w >> 16 : w & 0xffffu);
}

// c = min(c, a (x) b) for a thread's 4 rows x WPT words over the B steps of k: a from aT
// (k-major words), b row-major; clamped at -INF once at the end (every operand is >= -INF,
// so the clamp commutes with the mins).
template <typename L, int B, bool CLAMP, typename T>
__device__ __forceinline__ void p12_product(typename L::W (&c)[4][P12Tile<L>::WPT], const typename L::W* aT,
                                            const typename L::W* b, int tx, int ty, T ninf) {
    typedef typename L::W W;
    constexpr int WPT = P12Tile<L>::WPT, PITCH = P12Tile<L>::PITCH;
#pragma unroll 8
    for (int k = 0; k < B; ++k) {
        const W4<W> a = *reinterpret_cast<const W4<W>*>(aT + k * P12_PITCH + 4 * ty);
        const typename P12Tile<L>::Row bb = *reinterpret_cast<const typename P12Tile<L>::Row*>(b + k * PITCH + WPT * tx);
#pragma unroll
        for (int si = 0; si < 4; ++si)
#pragma unroll
            for (int w = 0; w < WPT; ++w) c[si][w] = L::addmin(a.v[si], bb.v[w], c[si][w]);
    }
    if (CLAMP) {
#pragma unroll
        for (int si = 0; si < 4; ++si)
#pragma unroll
            for (int w = 0; w < WPT; ++w) c[si][w] = L::clampw(c[si][w], ninf);
    }
}

template <typename T, int B, bool CLAMP>
__global__ void __launch_bounds__(256, 4)
fw_pipe_p12(T* d, i64 p, typename Lane<T>::W* ap, T* pv, int r, T ninf, int tiles) {
    static_assert(B == 64, "a 16 x 16 block of threads with 4 x 4 cells each covers a 64 x 64 tile");
    typedef Lane<T> L;
    typedef typename L::W W;
    static_assert(sizeof(W) == 4, "4-byte words");
    constexpr int EPW = L::EPW, WPT = P12Tile<L>::WPT, PITCH = P12Tile<L>::PITCH;
    constexpr int VPITCH = PITCH * EPW;  // values a row of Q and X
    extern __shared__ __align__(16) unsigned char fw_smem[];
    W* const QT = reinterpret_cast<W*>(fw_smem);
    W* const Q = QT + B * P12_PITCH;
    W* const X = Q + B * PITCH;
    T* const Qv = reinterpret_cast<T*>(Q);  // the same tiles, one value at a time
    T* const Xv = reinterpret_cast<T*>(X);
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    const bool pivot_only = tiles == 1;
    const bool is_row = blockIdx.y == 0;
    const int t = pivot_only ? r : blockIdx.x + (blockIdx.x >= r);
    const i64 o = (i64)r * B, ot = (i64)t * B;

    for (int idx = tid; idx < B * B; idx += 256) {
        const int i = idx / B, j = idx % B;
        const T pvv = d[(o + i) * p + o + j];
        const int qi = is_row ? i : j, qj = is_row ? j : i;
        Qv[qi * VPITCH + qj] = pvv;
        QT[qj * P12_PITCH + qi] = L::word(pvv);
        if (!pivot_only) Xv[qi * VPITCH + qj] = is_row ? d[(o + i) * p + ot + j] : d[(ot + i) * p + o + j];
    }
    __syncthreads();
    const int cell = 4 * ty * PITCH + WPT * tx;  // this thread's first word of Q or X
    W q[4][WPT];
#pragma unroll
    for (int si = 0; si < 4; ++si)
#pragma unroll
        for (int w = 0; w < WPT; ++w) q[si][w] = Q[cell + si * PITCH + w];

#pragma unroll 1
    for (int sq = 0; sq < P12_SQUARINGS; ++sq) {
        W before[4][WPT];
        bool changed = false;
#pragma unroll
        for (int si = 0; si < 4; ++si)
#pragma unroll
            for (int w = 0; w < WPT; ++w) before[si][w] = q[si][w];
        p12_product<L, B, CLAMP>(q, QT, Q, tx, ty, ninf);
#pragma unroll
        for (int si = 0; si < 4; ++si)
#pragma unroll
            for (int w = 0; w < WPT; ++w) changed |= q[si][w] != before[si][w];
        if (!__syncthreads_or(changed)) break;  // (every read of this squaring is done)
#pragma unroll
        for (int si = 0; si < 4; ++si)
#pragma unroll
            for (int w = 0; w < WPT; ++w) {
                Q[cell + si * PITCH + w] = q[si][w];
#pragma unroll
                for (int h = 0; h < EPW; ++h)
                    QT[(4 * tx + EPW * w + h) * P12_PITCH + 4 * ty + si] = L::word(p12_value<T>(q[si][w], h));
            }
        __syncthreads();
    }

    if (is_row && blockIdx.x == 0) {
        // the closed pivot: into d (single tile) or the scratch tile for phase 3
        T* dst = pivot_only ? d + o * p + o : pv;
        const i64 dp = pivot_only ? p : (i64)B;
#pragma unroll
        for (int si = 0; si < 4; ++si)
#pragma unroll
            for (int w = 0; w < WPT; ++w) reinterpret_cast<W*>(dst + (4 * ty + si) * dp + 4 * tx)[w] = q[si][w];
    }
    if (pivot_only) return;

    W x[4][WPT];
#pragma unroll
    for (int si = 0; si < 4; ++si)
#pragma unroll
        for (int w = 0; w < WPT; ++w) x[si][w] = X[cell + si * PITCH + w];
    p12_product<L, B, CLAMP>(x, QT, X, tx, ty, ninf);

    if (is_row) {
#pragma unroll
        for (int si = 0; si < 4; ++si)
#pragma unroll
            for (int w = 0; w < WPT; ++w) reinterpret_cast<W*>(d + (o + 4 * ty + si) * p + ot + 4 * tx)[w] = x[si][w];
        return;
    }
    // Value h of word (si, w) is own[i][kk], kk = 4 ty + si, i = 4 tx + EPW w + h.
    W* a_out = ap + ot * B;  // k-major: a_out[kk * B + i]
    __syncthreads();         // every thread is done reading X
#pragma unroll
    for (int si = 0; si < 4; ++si)
#pragma unroll
        for (int w = 0; w < WPT; ++w) {
#pragma unroll
            for (int h = 0; h < EPW; ++h) a_out[(4 * ty + si) * B + 4 * tx + EPW * w + h] = L::word(p12_value<T>(x[si][w], h));
            X[cell + si * PITCH + w] = x[si][w];
        }
    __syncthreads();
    for (int idx = tid; idx < B * B; idx += 256) {
        const int i = idx / B, j = idx % B;
        d[(ot + i) * p + o + j] = Xv[j * VPITCH + i];
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

