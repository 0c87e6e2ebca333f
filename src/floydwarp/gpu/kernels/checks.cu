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
