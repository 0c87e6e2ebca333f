// Checks over a whole (pitched) distance matrix after a run.
//
// CuPy's own reductions (``(a >= lo).any()``) compile a kernel anew for some array sizes,
// seconds each where its disk cache is cold: these compile once per dtype.
#include "common.cuh"

// *found |= 1 when some entry of the rows x cols matrix (rows ``pitch`` entries apart)
// lies in [lo, hi).  Blocks stride over rows (y) and columns (x); each block
// writes at most once.
template <typename T>
__global__ void fw_any_in_range(const T* __restrict__ a, i64 pitch, int rows, int cols, T lo, T hi, int* found) {
    int hit = 0;
    for (int i = blockIdx.y; i < rows; i += gridDim.y) {
        const T* row = a + (i64)i * pitch;
        for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += gridDim.x * blockDim.x) {
            T v = row[j];
            hit |= (v >= lo) & (v < hi);
        }
    }
    if (__syncthreads_or(hit) && threadIdx.x == 0) atomicOr(found, 1);
}

// a + slack * b rounded as CuPy computes it in T (two roundings, never one fused multiply-add).
template <typename T> __device__ __forceinline__ T checks_add_scaled(T a, double, T) {
    return a;                       // integer runs are exact: slack is 0
}
template <> __device__ __forceinline__ float checks_add_scaled<float>(float a, double slack, float b) {
    return __fadd_rn(a, __fmul_rn((float)slack, b));
}
template <> __device__ __forceinline__ double checks_add_scaled<double>(double a, double slack, double b) {
    return __dadd_rn(a, __dmul_rn(slack, b));
}

// *count += the off-diagonal entries (i, j) of the n x n matrices ``w`` and ``d`` (rows ``pw``
// and ``pd`` entries apart) with w[i][j] == 0 (``zero``), else with w[i][j] a *tight* edge of the
// distances d (witness.py's ``tight``): below ``inf`` and equal to d[i][j] (``slack`` 0) or at most
// d[i][j] + slack * w[i][j].  Blocks stride over rows (y) and columns (x); a warp adds its sum once.
template <typename T>
__global__ void fw_count_off_diagonal(const T* __restrict__ d, i64 pd, const T* __restrict__ w, i64 pw, int n, T inf,
                                      double slack, int zero, unsigned long long* count) {
    unsigned long long c = 0;
    for (int i = blockIdx.y; i < n; i += gridDim.y) {
        const T* drow = d + (i64)i * pd;
        const T* wrow = w + (i64)i * pw;
        for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
            const T x = wrow[j];
            bool hit;
            if (zero) hit = x == T(0);
            else if (slack == 0.0) hit = x < inf && x == drow[j];
            else hit = x < inf && x <= checks_add_scaled(drow[j], slack, x);
            c += hit && i != j;
        }
    }
    for (int s = 16; s > 0; s >>= 1) c += __shfl_down_sync(0xffffffffu, c, s);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(count, c);
}
