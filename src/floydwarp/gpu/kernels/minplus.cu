// floydwarp: the min-plus panel product C = min(C, A (x) B) on arbitrary pitched buffers.
//
// Blocked Floyd-Warshall with wide rounds (a pivot panel of K columns) is, apart from
// closing the K x K pivot block, nothing but such products: the pivot row panel
// (C = B = row panel, A = closed pivot), the pivot column panel (A = column panel,
// B = closed pivot) and every other tile (A = column panel, B = row panel).  The
// out-of-core engine runs it on tiles streamed through the GPU, the multi-GPU engine on
// each rank's share of the matrix.
//
// * Operands: C is M x N elements (pitch pc), B is K x N elements (pitch pb), and A
//   arrives transposed, k-major, in phase 3's word format: at[k * pa + i] = word(A[i][k])
//   (fw_to_words; int16: each value broadcast to both halves of a 32-bit word), so a
//   thread reads four rows of A with one 16-byte shared-memory load.  M, N and K are
//   multiples of 64.  C may alias B (the row panel update): a block may then read a
//   B value that another block has already lowered, which is the length of a real walk
//   through the pivot panel and no shorter than the closed result (the pivot block is
//   closed), so the result is the same.
// * Rows [rlo, rlo + rskip) and columns [clo, clo + cskip) of C (in 64-tiles) are left
//   out: the pivot rows and columns that an in-place round has already finished.
// * Persistent: gridDim.x blocks split the 64 x 64 output tiles ("units") into
//   contiguous runs.  A unit keeps its cells in registers over all K / 64 chunks; each
//   chunk's A and B tiles are double-buffered with cp.async, and the first chunk of the
//   next unit is requested together with that unit's own cells, so the copies overlap
//   the add-mins.  The clamp at -INF is applied once when a unit is stored.
// * k runs in pairs (RegTile::step2).  For NONNEG float32 (every entry >= 0) a cell's two
//   sums meet it in one three-way integer min (NonnegFloat, lanes.cuh); for every other
//   lane a pair is two add-mins.
#include "lanes.cuh"

template <typename T, int TM, int TN, int NT, int MINB, bool CLAMP, bool NONNEG>
__global__ void __launch_bounds__(NT, MINB)
fw_minplus(T* c, i64 pc, const typename Lane<T>::W* __restrict__ at, i64 pa, const T* b, i64 pb, int mt, int nt,
           int kt, int rlo, int rskip, int clo, int cskip, T ninf) {
    typedef typename LaneOf<T, NONNEG>::type L;
    typedef typename L::W W;
    constexpr int B = 64, EPW = L::EPW, BW = B / EPW;
    constexpr int NTX = BW / TN, NTY = B / TM;
    constexpr int AW = B * B, TW = B * BW;    // words of an A tile, of a B or C tile
    constexpr int WPC = 16 / sizeof(W);       // words per 16-byte copy
    constexpr int CH = BW / WPC;              // 16-byte copies per tile row (B, C)
    constexpr int CHA = B / WPC;              // ... per row of an A tile
    constexpr int NCH = TW / WPC / NT;        // copies per thread of a B or C tile
    constexpr int NCHA = AW / WPC / NT;       // ... of an A tile
    static_assert(TM % 4 == 0 && TN % 4 == 0, "a thread's rows and words come in groups of four");
    static_assert(NTX * NTY == NT, "the threads must cover the tile");
    static_assert(NCH * NT * WPC == TW && NCHA * NT * WPC == AW, "tiles must split evenly over the threads");
    extern __shared__ __align__(16) unsigned char fw_smem[];
    W* const As0 = reinterpret_cast<W*>(fw_smem);  // 2 x A tile, As[kk * B + i]
    W* const Bs0 = As0 + 2 * AW;                    // 2 x B tile, Bs[kk * BW + w]
    W* const Cs = Bs0 + 2 * TW;                     // the next unit's cells, Cs[i * BW + w]

    const int tid = threadIdx.x, tx = tid % NTX, ty = tid / NTX;
    const int total = mt * nt, G = gridDim.x, bid = blockIdx.x;
    const int per = total / G, extra = total % G;
    const int begin = bid * per + (bid < extra ? bid : extra);
    const int end = begin + per + (bid < extra ? 1 : 0);
    if (begin >= end) return;

    // this thread's 16-byte copies: element (word) offsets in global memory, word offsets in shared
    unsigned int gb[NCH], gc[NCH], sbc[NCH], ga[NCHA], sa[NCHA];
#pragma unroll
    for (int it = 0; it < NCH; ++it) {
        const int idx = tid + it * NT, row = idx / CH, cv = idx % CH;
        gb[it] = (unsigned int)(row * pb + cv * WPC * EPW);
        gc[it] = (unsigned int)(row * pc + cv * WPC * EPW);
        sbc[it] = (unsigned int)(row * BW + cv * WPC);
    }
#pragma unroll
    for (int it = 0; it < NCHA; ++it) {
        const int idx = tid + it * NT, row = idx / CHA, cv = idx % CHA;
        ga[it] = (unsigned int)(row * pa + cv * WPC);
        sa[it] = (unsigned int)(row * B + cv * WPC);
    }
    auto tile_of = [&](int u, int& bi, int& bj) {
        const int y = u / nt, x = u - (u / nt) * nt;
        bi = y + (y >= rlo ? rskip : 0);
        bj = x + (x >= clo ? cskip : 0);
    };
    // chunk kk of unit (bi, bj) into buffer s
    auto issue = [&](int bi, int bj, int kk, int s) {
        const W* asrc = at + (i64)kk * B * pa + (i64)bi * B;
        const T* bsrc = b + (i64)kk * B * pb + (i64)bj * B;
        W* As = As0 + s * AW;
        W* Bs = Bs0 + s * TW;
#pragma unroll
        for (int it = 0; it < NCHA; ++it) pp_cp_async16(As + sa[it], asrc + ga[it]);
#pragma unroll
        for (int it = 0; it < NCH; ++it) pp_cp_async16(Bs + sbc[it], bsrc + gb[it]);
    };
    auto issue_cells = [&](int bi, int bj) {
        const T* csrc = c + (i64)bi * B * pc + (i64)bj * B;
#pragma unroll
        for (int it = 0; it < NCH; ++it) pp_cp_async16(Cs + sbc[it], csrc + gc[it]);
    };

    int u = begin, kk = 0, s = 0, bi, bj;
    tile_of(u, bi, bj);
    issue_cells(bi, bj);
    issue(bi, bj, 0, 0);
    pp_cp_async_commit();
    const int cbase = ty * 4 * BW + tx * 4;  // this thread's first cell in a tile (RegTile)
    RegTile<L, TM, TN, NTX, NTY, BW> tile;
#pragma unroll 1
    for (;;) {
        pp_cp_async_wait<0>();
        __syncthreads();
        if (kk == 0) tile.load(Cs, cbase);
        // the next chunk: of this unit, or the first of the next one
        int nu = u, nk = kk + 1, nbi = bi, nbj = bj;
        if (nk == kt) {
            nu = u + 1;
            nk = 0;
        }
        const bool more = nu < end;
        if (more && nu != u) tile_of(nu, nbi, nbj);
        __syncthreads();  // the cells are in registers and the other buffer is free
        if (more) {
            if (nk == 0) issue_cells(nbi, nbj);
            issue(nbi, nbj, nk, s ^ 1);
            pp_cp_async_commit();
        }
        const W* As = As0 + s * AW;
        const W* Bs = Bs0 + s * TW;
#pragma unroll
        for (int k = 0; k < B; k += 2) tile.step2(As + k * B, B, Bs + k * BW, BW, tx, ty);
        if (kk == kt - 1)
            tile.template store<CLAMP>(c + ((i64)bi * B + ty * 4) * pc + (i64)bj * B + tx * 4 * EPW, pc, ninf);
        if (!more) break;
        u = nu;
        kk = nk;
        bi = nbi;
        bj = nbj;
        s ^= 1;
    }
}

// out[k * po + i] = word(a[i * pa + k]) for i < rows, k < cols: a panel transposed into
// fw_minplus's A format (int32 words AND ``keep``, see fw_keep).  32 x 32 tiles through
// shared memory, blocks of 32 x 8 threads.
template <typename T>
__global__ void fw_to_words(const T* a, i64 pa, typename Lane<T>::W* out, i64 po, int rows, int cols, int keep) {
    typedef Lane<T> L;
    __shared__ T t[32][33];
    const int i0 = blockIdx.y * 32, k0 = blockIdx.x * 32;
    for (int y = threadIdx.y; y < 32; y += 8) {
        const int i = i0 + y, k = k0 + threadIdx.x;
        if (i < rows && k < cols) t[y][threadIdx.x] = a[(i64)i * pa + k];
    }
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += 8) {
        const int k = k0 + y, i = i0 + threadIdx.x;
        if (i < rows && k < cols) out[(i64)k * po + i] = fw_keep(L::word(t[threadIdx.x][y]), keep);
    }
}
