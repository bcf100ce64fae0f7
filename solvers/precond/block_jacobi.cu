// Block-Jacobi on the GPU (device_precond.hpp): the supervariable blocks found by one kernel,
// each block inverted by Cholesky in double by its own thread, applied a thread a row.
#include <la/detail/instantiate.hpp>
#include <la/solvers/detail/precond_device.cuh>

namespace la {
namespace precond_detail {
namespace {

// ---- block-Jacobi --------------------------------------------------------------------------

/// same[i] = 1 when row i has the same columns as row i - 1.
template <typename T, typename O>
__global__ void same_pattern(csr_view<const T, O> a, unsigned char* same) {
  LA_GRID_STRIDE(i, a.rows) {
    bool eq = i > 0 && a.row_ptr[i + 1] - a.row_ptr[i] == a.row_ptr[i] - a.row_ptr[i - 1];
    for (O k = 0; eq && k < a.row_ptr[i + 1] - a.row_ptr[i]; ++k)
      eq = a.col_idx[a.row_ptr[i] + k] == a.col_idx[a.row_ptr[i - 1] + k];
    same[i] = eq;
  }
}

/// Block b's inverse (row-major, at off[b]) by Cholesky in double, as spd_inverse.
template <typename T, typename O>
__global__ void invert_blocks(csr_view<const T, O> a, const index_t* starts, const long long* off, index_t blocks,
                              double* scratch, T* inv, unsigned long long* bad) {
  LA_GRID_STRIDE(b, blocks) {
    const index_t s0 = starts[b];
    const int s = starts[b + 1] - s0;
    double* l = scratch + off[b];
    T* out = inv + off[b];
    for (int r = 0; r < s * s; ++r) l[r] = 0;
    for (int r = 0; r < s; ++r)
      for (O k = a.row_ptr[s0 + r]; k < a.row_ptr[s0 + r + 1]; ++k) {
        const index_t c = a.col_idx[k] - s0;
        if (c >= 0 && c < s) l[r * s + c] = a.values[k];
      }
    if (!dense_cholesky(l, s)) {
      atomicMin(bad, static_cast<unsigned long long>(b));
      continue;
    }
    double y[32];
    for (int c = 0; c < s; ++c) {
      for (int r = 0; r < s; ++r) {
        double v = r == c ? 1 : 0;
        for (int k = 0; k < r; ++k) v -= l[r * s + k] * y[k];
        y[r] = v / l[r * s + r];
      }
      for (int r = s; r-- > 0;) {
        double v = y[r];
        for (int k = r + 1; k < s; ++k) v -= l[k * s + r] * y[k];
        y[r] = v / l[r * s + r];
      }
      for (int r = 0; r < s; ++r) out[r * s + c] = static_cast<T>(y[r]);
    }
  }
}

/// z_i = (block inverse row) . r over the block, a thread per row, summed in double.
template <typename T>
__global__ void apply_blocks(const index_t* row_block, const index_t* starts, const long long* off, const T* inv,
                             index_t n, const T* r, T* z) {
  LA_GRID_STRIDE(i, n) {
    const index_t b = row_block[i], s0 = starts[b];
    const int s = starts[b + 1] - s0;
    const T* row = inv + off[b] + static_cast<long long>(i - s0) * s;
    double v = 0;
    for (int j = 0; j < s; ++j) v += static_cast<double>(row[j]) * r[s0 + j];
    z[i] = static_cast<T>(v);
  }
}


template <typename T, typename O>
struct block_jacobi_impl final : device_preconditioner<T>::impl {
  device_buffer<index_t> starts, row_block;
  device_buffer<long long> off;
  device_buffer<T> inv;
  index_t n = 0;

  block_jacobi_impl(context& ctx, const device_csr<T, O>& a, int max_block) : n(a.rows()) {
    cudaStream_t s = ctx.stream();
    auto same = ctx.allocate<unsigned char>(static_cast<std::size_t>(n));
    if (n > 0) {
      same_pattern<<<grid_for(n), block_threads, 0, s>>>(a.view(), same.data());
      LA_CHECK_LAUNCH(s);
    }
    std::vector<unsigned char> h(static_cast<std::size_t>(n));
    same.copy_to_host_async(h.data(), h.size());
    ctx.synchronize();
    const std::vector<index_t> st = blocks_from_flags(h, max_block);  // supervariable_blocks' rule
    std::vector<index_t> rb(static_cast<std::size_t>(n), 0);
    const index_t blocks = static_cast<index_t>(st.size()) - 1;
    std::vector<long long> of(st.size(), 0);
    index_t largest = 0;
    for (index_t b = 0; b < blocks; ++b) {
      const long long sz = st[b + 1] - st[b];
      largest = std::max<index_t>(largest, static_cast<index_t>(sz));
      of[b + 1] = of[b] + sz * sz;
      for (index_t i = st[b]; i < st[b + 1]; ++i) rb[i] = b;
    }
    starts = ctx.allocate<index_t>(st.size()), starts.copy_from_host_async(st.data(), st.size());
    row_block = ctx.allocate<index_t>(rb.size()), row_block.copy_from_host_async(rb.data(), rb.size());
    off = ctx.allocate<long long>(of.size()), off.copy_from_host_async(of.data(), of.size());
    inv = ctx.allocate<T>(static_cast<std::size_t>(of.back()));
    auto scratch = ctx.allocate<double>(static_cast<std::size_t>(of.back()));
    auto bad = new_flag(ctx);
    if (blocks > 0) {
      invert_blocks<<<grid_for(blocks), block_threads, 0, s>>>(a.view(), starts.data(), off.data(), blocks,
                                                               scratch.data(), inv.data(), bad.data());
      LA_CHECK_LAUNCH(s);
    }
    const unsigned long long b = read_flag(ctx, bad);
    if (b != no_row)
      throw invalid_argument(detail::block_not_spd_message(st[b], st[b + 1]));
    this->rep.detail = std::to_string(blocks) + " blocks of up to " + std::to_string(largest) + " rows";
    this->rep.bytes = double(of.back()) * sizeof(T) + double(n + 2 * st.size()) * sizeof(index_t) + 8.0 * of.size();
  }
  void apply(const T* r, T* z, cudaStream_t s) const override {
    if (n == 0) return;
    apply_blocks<<<grid_for(n), block_threads, 0, s>>>(row_block.data(), starts.data(), off.data(), inv.data(), n, r, z);
    LA_CHECK_LAUNCH(s);
  }
};


}  // namespace

template <typename T, typename O>
impl_ptr<T> make_block_jacobi(context& ctx, const device_csr<T, O>& a, const precond_options& opt) {
  return std::make_unique<block_jacobi_impl<T, O>>(ctx, a, opt.max_block);
}
#define LA_INSTANTIATE(T, O) \
  template impl_ptr<T> make_block_jacobi<T, O>(context&, const device_csr<T, O>&, const precond_options&);
LA_FOR_EACH_VALUE_AND_OFFSET(LA_INSTANTIATE)
#undef LA_INSTANTIATE

}  // namespace precond_detail
}  // namespace la
