// floydwarp: Graphormer's edge inputs on the GPU (floydwarp.learn.graphormer_gpu).  One
// thread a pair (g, i, j) of a padded batch spells the path i -> j from the path matrix
// (the last pivot k of each pair, -1 for a direct edge, 510 for unreachable; batch.cu's
// LASTK mode): path(i, j) = path(i, k), k, path(k, j), without recursion, keeping the right
// ends still to go in a stack of at most n entries.  The t-th edge (a, b), t < D, writes
// feat[ids[emap(a, b)]] + shift into out[g, i, j, t, :]; out is filled beforehand.
#include "common.cuh"

#define FW_EI_UNREACHABLE 510
#define FW_EI_STACK 512

__global__ void fw_edge_input(const int* __restrict__ path, const i64* __restrict__ sizes,
                              const int* __restrict__ emap, const i64* __restrict__ ids,
                              const i64* __restrict__ feat, int F, i64 B, int N, int D, i64 shift,
                              i64* __restrict__ out, int* __restrict__ bad) {
    const i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= B * N * N) return;
    const i64 g = t / ((i64)N * N);
    const int r = (int)(t - g * N * N);
    const int i = r / N, j = r - (r / N) * N;
    const int n = (int)sizes[g];
    if (i >= n || j >= n || i == j || D == 0) return;
    const int* p = path + g * N * N;
    if (p[i * N + j] == FW_EI_UNREACHABLE) return;
    short stack[FW_EI_STACK];
    int top = 0, a = i, b = j, s = 0;
    i64* o = out + (g * N * N + (i64)i * N + j) * D * F;
    while (true) {
        int k = p[a * N + b];
        while (k != -1) {
            if (k < 0 || k >= n || top == FW_EI_STACK) {   // no path: cannot come from batch.cu
                atomicExch(bad, 1);
                return;
            }
            stack[top++] = (short)b;
            b = k;
            k = p[a * N + b];
        }
        const int e = emap[g * N * N + (i64)a * N + b];
        if (e < 0) {
            atomicExch(bad, 1);
            return;
        }
        const i64* f = feat + ids[e] * F;
        for (int c = 0; c < F; ++c) o[(i64)s * F + c] = f[c] + shift;
        if (++s == D || top == 0) return;
        a = b;
        b = stack[--top];
    }
}
