// The Galerkin product of a partitioned hierarchy, block by block, on the host (issue 70,
// several GPUs): the oracle a distributed build is compared with, and the exchange it needs.
// Block q holds its fine rows of A and P and its coarse rows (its aggregates); it forms
// C_q = P_q^T (A_q P), where A_q P needs the rows of P at A_q's columns outside the block (the
// halo, received), and C_q holds rows of coarse unknowns other blocks own (sent to them and
// summed there). The sum of the C_q is P^T A P.
#pragma once

#include <string>
#include <vector>

#include <la/formats/csr.hpp>
#include <la/kernels/reference/spgemm.hpp>

namespace la::amg {

struct partitioned_galerkin {
  csr_matrix<double, count_t> ac;   // sum over the blocks of C_q (P^T A P)
  std::vector<long long> halo_rows;  // per block: rows of P it receives (A_q's columns in other blocks)
  std::vector<long long> sent_rows;  // per block: rows of C_q that other blocks own
  std::vector<long long> sent_entries;  // per block: the entries of those rows
};

/// Rows of m whose block is q (a matrix of m's columns with only those rows nonzero).
inline csr_matrix<double, count_t> rows_in_block(const csr_matrix<double, count_t>& m, const std::vector<int>& part, int q) {
  std::vector<count_t> ptr{0};
  std::vector<index_t> idx;
  std::vector<double> val;
  for (index_t i = 0; i < m.rows(); ++i) {
    if (part[i] == q)
      for (count_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) idx.push_back(m.col_idx()[k]), val.push_back(m.values()[k]);
    ptr.push_back(static_cast<count_t>(idx.size()));
  }
  return csr_matrix<double, count_t>(detail::trusted, m.rows(), m.cols(), std::move(ptr), std::move(idx), std::move(val));
}

/// P^T A P block by block: row_part the fine rows' blocks, coarse_part the coarse unknowns'.
inline partitioned_galerkin galerkin_by_blocks(const csr_matrix<double, count_t>& a, const csr_matrix<double, count_t>& p,
                                               const std::vector<int>& row_part, const std::vector<int>& coarse_part,
                                               int blocks) {
  LA_EXPECTS(row_part.size() == static_cast<std::size_t>(a.rows()) && coarse_part.size() == static_cast<std::size_t>(p.cols()),
             "galerkin_by_blocks: a block for every fine row and every coarse unknown");
  partitioned_galerkin out;
  const index_t nc = p.cols();
  std::vector<double> sum;
  std::vector<std::vector<std::pair<index_t, double>>> rows(static_cast<std::size_t>(nc));
  for (int q = 0; q < blocks; ++q) {
    const auto aq = rows_in_block(a, row_part, q);
    std::vector<char> seen(static_cast<std::size_t>(a.cols()), 0);
    long long halo = 0;
    for (index_t i = 0; i < aq.rows(); ++i)
      for (count_t k = aq.row_ptr()[i]; k < aq.row_ptr()[i + 1]; ++k) {
        const index_t j = aq.col_idx()[k];
        if (row_part[j] != q && !seen[j]) seen[j] = 1, ++halo;
      }
    out.halo_rows.push_back(halo);
    const auto cq = reference::spgemm(reference::transpose(rows_in_block(p, row_part, q)), reference::spgemm(aq, p));
    long long sent = 0, entries = 0;
    for (index_t r = 0; r < nc; ++r) {
      const count_t b = cq.row_ptr()[r], e = cq.row_ptr()[r + 1];
      if (b == e) continue;
      if (coarse_part[r] != q) ++sent, entries += e - b;
      for (count_t k = b; k < e; ++k) rows[r].push_back({cq.col_idx()[k], cq.values()[k]});
    }
    out.sent_rows.push_back(sent);
    out.sent_entries.push_back(entries);
  }
  std::vector<count_t> ptr{0};
  std::vector<index_t> idx;
  std::vector<double> val;
  std::vector<double> acc(static_cast<std::size_t>(nc), 0.0);
  std::vector<char> mark(static_cast<std::size_t>(nc), 0);
  for (index_t r = 0; r < nc; ++r) {  // each coarse row's contributions summed in block order
    std::vector<index_t> cols;
    for (const auto& [c, v] : rows[r]) {
      if (!mark[c]) mark[c] = 1, cols.push_back(c);
      acc[c] += v;
    }
    std::sort(cols.begin(), cols.end());
    for (index_t c : cols) idx.push_back(c), val.push_back(acc[c]), acc[c] = 0, mark[c] = 0;
    ptr.push_back(static_cast<count_t>(idx.size()));
  }
  out.ac = csr_matrix<double, count_t>(detail::trusted, nc, nc, std::move(ptr), std::move(idx), std::move(val));
  return out;
}

}  // namespace la::amg
