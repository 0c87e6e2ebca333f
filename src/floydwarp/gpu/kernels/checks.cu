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

// *count += the zeros of the n x n matrix w (rows pw entries apart) off its diagonal.  Blocks
// stride over rows (y) and columns (x); a warp adds its sum once.
template <typename T>
__global__ void fw_count_zeros_off_diagonal(const T* __restrict__ w, i64 pw, int n, unsigned long long* count) {
    unsigned long long c = 0;
    for (int i = blockIdx.y; i < n; i += gridDim.y) {
        const T* row = w + (i64)i * pw;
        for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x)
            c += row[j] == T(0) && i != j;
    }
    for (int s = 16; s > 0; s >>= 1) c += __shfl_down_sync(0xffffffffu, c, s);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(count, c);
}
