// joint_rs: the textbook joint register/shared-memory tiling. A block of T threads computes
// a T x U tile of C. Each K-step of S = T/U:
//   - the T x S tile of A is staged through shared memory (so the global loads stay
//     coalesced) and each thread copies its own row of it into registers;
//   - the S x U tile of B sits in shared memory (one element per thread);
//   - each thread accumulates its U outputs: acc[u] += a_reg[s] * B_s[s][u]. Every thread
//     of a warp reads the same B_s element at once (a broadcast), so there are no conflicts.
// T = 128, U = 16, S = 8.
#include <la/kernels/gemm/detail/common.cuh>
#include <la/kernels/gemm/detail/variants.hpp>

namespace la::gemm_detail {
namespace {
constexpr int T = 128, U = 16, S = T / U;
static_assert(T % U == 0, "joint_rs: T must be a multiple of U");
static_assert((T * S) % T == 0, "joint_rs: the A tile must split evenly over the threads");

__global__ void __launch_bounds__(T) joint_rs_kernel(gemm_args g) {
  __shared__ float as[T][S + 1];  // [row of the tile][k], +1 against bank conflicts
  __shared__ float bs[S][U];
  const float* a = static_cast<const float*>(g.a);
  const float* b = static_cast<const float*>(g.b);
  const int t = threadIdx.x;
  const index_t row0 = blockIdx.y * T, col0 = blockIdx.x * U;
  float acc[U] = {};
  float areg[S];
  for (index_t k0 = 0; k0 < g.k; k0 += S) {
    // A tile T x S: element e = t + i*T -> (e / S, e % S); consecutive threads walk a row.
#pragma unroll
    for (int i = 0; i < S; ++i) {
      const int e = t + i * T, r = e / S, kk = e % S;
      const index_t gr = row0 + r, gk = k0 + kk;
      as[r][kk] = (gr < g.m && gk < g.k) ? a[static_cast<long>(gr) * g.lda + gk] : 0.0f;
    }
    {  // B tile S x U: one element per thread
      const int r = t / U, c = t % U;
      const index_t gk = k0 + r, gc = col0 + c;
      bs[r][c] = (gk < g.k && gc < g.n) ? b[static_cast<long>(gk) * g.ldb + gc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < S; ++s) areg[s] = as[t][s];
#pragma unroll
    for (int s = 0; s < S; ++s)
#pragma unroll
      for (int u = 0; u < U; ++u) acc[u] += areg[s] * bs[s][u];
    __syncthreads();
  }
  const index_t row = row0 + t;
  if (row >= g.m) return;
#pragma unroll
  for (int u = 0; u < U; ++u)
    if (col0 + u < g.n) store_c(g.c, g.ldc, row, col0 + u, acc[u], g.alpha, g.beta);
}
}  // namespace

void run_joint_rs(const gemm_args& g, cudaStream_t s) {
  const dim3 grid(ceil_div(g.n, U), ceil_div(g.m, T));
  joint_rs_kernel<<<grid, T, 0, s>>>(g);
  LA_CHECK_LAUNCH(s);
}
}  // namespace la::gemm_detail
