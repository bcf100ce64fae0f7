// CHOLMOD and UMFPACK behind direct_detail::suitesparse_factors (detail/suitesparse.hpp), where
// this build found them (LA_HAVE_CHOLMOD, LA_HAVE_UMFPACK); the 64-bit index interfaces
// (cholmod_l_*, umfpack_dl_*), so any A la holds fits.
#include <la/solvers/direct/detail/suitesparse.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <la/error.hpp>
#include <la/memory.hpp>

#if defined(LA_HAVE_CHOLMOD)
#include <cholmod.h>
#endif
#if defined(LA_HAVE_UMFPACK)
#include <umfpack.h>
#endif

namespace la::direct_detail {

bool suitesparse_available(bool spd) noexcept {
#if defined(LA_HAVE_CHOLMOD)
  if (spd) return true;
#endif
#if defined(LA_HAVE_UMFPACK)
  if (!spd) return true;
#endif
  (void)spd;
  return false;
}

std::string blas_description() {
  // OpenBLAS says its version and threads; another BLAS is named as unknown (the set-up installs
  // OpenBLAS: the reference BLAS runs the dense blocks several times slower).
  using config_fn = char* (*)();
  using threads_fn = int (*)();
  const auto config = reinterpret_cast<config_fn>(dlsym(RTLD_DEFAULT, "openblas_get_config"));
  const auto threads = reinterpret_cast<threads_fn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (config && threads) {
    std::string c = config();
    c = c.substr(0, c.find(' ', c.find(' ') + 1));  // "OpenBLAS 0.3.21"
    const int t = threads();
    return c + ", " + std::to_string(t) + " thread" + (t == 1 ? "" : "s");
  }
  return "a BLAS that is not OpenBLAS (maybe the single-threaded reference one)";
}

struct suitesparse_factors::impl {
  bool spd = false, ok = false;
  index_t n = 0, bad = 0;
  std::string how;
  std::vector<long> ptr, idx;  // A's CSR, which is the CSC of A^T (UMFPACK factors A^T)
  std::vector<double> val;
#if defined(LA_HAVE_CHOLMOD)
  cholmod_common cm{};
  cholmod_factor* L = nullptr;
  bool started = false;
#endif
#if defined(LA_HAVE_UMFPACK)
  void* numeric = nullptr;
  double control[UMFPACK_CONTROL];
#endif
  ~impl() {
#if defined(LA_HAVE_CHOLMOD)
    if (L) cholmod_l_free_factor(&L, &cm);
    if (started) cholmod_l_finish(&cm);
#endif
#if defined(LA_HAVE_UMFPACK)
    if (numeric) umfpack_dl_free_numeric(&numeric);
#endif
  }

  void cholmod(fill_ordering o) {
#if defined(LA_HAVE_CHOLMOD)
    cholmod_l_start(&cm);
    started = true;
    cm.print = 0;
    if (o != fill_ordering::automatic) {  // else CHOLMOD's own rule: AMD, and METIS where AMD's fill is high
      cm.nmethods = 1;
      cm.method[0].ordering = o == fill_ordering::metis ? CHOLMOD_METIS : o == fill_ordering::amd ? CHOLMOD_AMD : CHOLMOD_NATURAL;
      cm.postorder = 1;
    }
    cholmod_sparse A{};
    A.nrow = A.ncol = static_cast<size_t>(n);
    A.nzmax = val.size();
    A.p = ptr.data(), A.i = idx.data(), A.x = val.data();
    A.stype = 1;  // symmetric: the upper triangle of the CSC (A's CSR, A = A^T) is read
    A.itype = CHOLMOD_LONG, A.xtype = CHOLMOD_REAL, A.dtype = CHOLMOD_DOUBLE;
    A.sorted = 1, A.packed = 1;
    L = cholmod_l_analyze(&A, &cm);
    if (!L) throw error("CHOLMOD's analysis failed (status " + std::to_string(cm.status) + ")");
    // The factor's values and row indices (supernodal: about lnz of each, and the blocks' padding),
    // refused before the numeric factorization allocates them.
    check_host_memory(16.0 * cm.lnz + 64.0 * double(n), "CHOLMOD's factor (nnz(L) " + std::to_string(static_cast<long long>(cm.lnz)) + ")");
    cholmod_l_factorize(&A, L, &cm);
    ok = cm.status == CHOLMOD_OK;
    if (cm.status == CHOLMOD_NOT_POSDEF) bad = static_cast<index_t>(L->minor) + 1;
    else if (!ok) throw error("CHOLMOD's factorization failed (status " + std::to_string(cm.status) + ")");
    const int m = cm.method[cm.selected].ordering;
    const char* ord = m == CHOLMOD_METIS ? "metis" : m == CHOLMOD_AMD ? "amd" : m == CHOLMOD_NATURAL ? "natural" : "its own";
    char buf[200];
    std::snprintf(buf, sizeof buf, "CHOLMOD %s Cholesky (SuiteSparse %d.%d; %s ordering, nnz(L) %.3g, %.3g flops; BLAS: ",
                  L->is_super ? "supernodal" : "simplicial", SUITESPARSE_MAIN_VERSION, SUITESPARSE_SUB_VERSION, ord,
                  cm.lnz, cm.fl);
    how = buf + blas_description() + ")";
#else
    (void)o;
#endif
  }

  void umfpack(fill_ordering o) {
#if defined(LA_HAVE_UMFPACK)
    umfpack_dl_defaults(control);
    control[UMFPACK_IRSTEP] = 0;  // la refines, by its one rule (solvers/detail/refinement.hpp)
    if (o != fill_ordering::automatic)
      control[UMFPACK_ORDERING] = o == fill_ordering::metis ? UMFPACK_ORDERING_METIS
                                  : o == fill_ordering::amd ? UMFPACK_ORDERING_AMD
                                                            : UMFPACK_ORDERING_NONE;
    double info[UMFPACK_INFO];
    void* symbolic = nullptr;
    // A's CSR is the CSC of A^T: UMFPACK factors A^T, and UMFPACK_At solves with A.
    int st = umfpack_dl_symbolic(n, n, ptr.data(), idx.data(), val.data(), &symbolic, control, info);
    if (st == UMFPACK_OK) {
      // UMFPACK's own estimate of its numeric factorization's peak memory, refused before it runs.
      const double peak = info[UMFPACK_PEAK_MEMORY_ESTIMATE] * info[UMFPACK_SIZE_OF_UNIT];
      try {
        check_host_memory(peak, "UMFPACK's LU factors (its peak estimate)");
      } catch (...) {
        umfpack_dl_free_symbolic(&symbolic);
        throw;
      }
    }
    if (st == UMFPACK_OK) st = umfpack_dl_numeric(ptr.data(), idx.data(), val.data(), symbolic, &numeric, control, info);
    if (symbolic) umfpack_dl_free_symbolic(&symbolic);
    if (st == UMFPACK_ERROR_out_of_memory) throw error("UMFPACK ran out of host memory factoring A");
    ok = st == UMFPACK_OK;
    if (st != UMFPACK_OK && st != UMFPACK_WARNING_singular_matrix)
      throw error("UMFPACK's factorization failed (status " + std::to_string(st) + ")");
    const double ord = info[UMFPACK_ORDERING_USED];
    const char* on = ord == UMFPACK_ORDERING_METIS ? "metis" : ord == UMFPACK_ORDERING_AMD ? "amd" : ord == UMFPACK_ORDERING_NONE ? "natural" : "its own";
    char buf[200];
    std::snprintf(buf, sizeof buf, "UMFPACK multifrontal LU with partial pivoting (SuiteSparse %d.%d; %s ordering, nnz(L+U) %.3g, %.3g flops; BLAS: ",
                  SUITESPARSE_MAIN_VERSION, SUITESPARSE_SUB_VERSION, on, info[UMFPACK_LNZ] + info[UMFPACK_UNZ], info[UMFPACK_FLOPS]);
    how = buf + blas_description() + ")";
#else
    (void)o;
#endif
  }
};

suitesparse_factors::suitesparse_factors(const csr_matrix<double, count_t>& a, bool spd, fill_ordering ordering)
    : p_(std::make_unique<impl>()) {
  LA_EXPECTS(suitesparse_available(spd), std::string("this build has no ") + (spd ? "CHOLMOD" : "UMFPACK"));
  impl& p = *p_;
  p.spd = spd, p.n = a.rows();
  p.ptr.assign(a.row_ptr().begin(), a.row_ptr().end());
  p.idx.assign(a.col_idx().begin(), a.col_idx().end());
  p.val.assign(a.values().begin(), a.values().end());
  if (spd) p.cholmod(ordering);
  else p.umfpack(ordering);
}
suitesparse_factors::~suitesparse_factors() = default;

bool suitesparse_factors::ok() const noexcept { return p_->ok; }
index_t suitesparse_factors::bad_column() const noexcept { return p_->bad; }
std::string suitesparse_factors::description() const { return p_->how; }

void suitesparse_factors::solve(double* x, bool transposed) const {
  const impl& p = *p_;
  LA_EXPECTS(p.ok, "suitesparse_factors: solve() without factors");
#if defined(LA_HAVE_CHOLMOD)
  if (p.spd) {  // A^T = A
    (void)transposed;
    return solve_columns(x, 1);
  }
#endif
#if defined(LA_HAVE_UMFPACK)
  if (!p.spd) {
    std::vector<double> b(x, x + p.n);
    double info[UMFPACK_INFO];
    const int st = umfpack_dl_solve(transposed ? UMFPACK_A : UMFPACK_At, p.ptr.data(), p.idx.data(), p.val.data(), x,
                                    b.data(), p.numeric, p.control, info);
    if (st != UMFPACK_OK && st != UMFPACK_WARNING_singular_matrix)
      throw error("UMFPACK's solve failed (status " + std::to_string(st) + ")");
    return;
  }
#endif
  (void)x, (void)transposed;
}

void suitesparse_factors::solve_columns(double* x, index_t k) const {
  impl& p = *p_;
#if defined(LA_HAVE_CHOLMOD)
  if (p.spd) {
    cholmod_dense B{};
    B.nrow = static_cast<size_t>(p.n), B.ncol = static_cast<size_t>(k), B.d = B.nrow, B.nzmax = B.nrow * B.ncol;
    B.x = x, B.xtype = CHOLMOD_REAL, B.dtype = CHOLMOD_DOUBLE;
    cholmod_dense* X = cholmod_l_solve(CHOLMOD_A, p.L, &B, &p.cm);
    if (!X) throw error("CHOLMOD's solve failed (status " + std::to_string(p.cm.status) + ")");
    std::copy(static_cast<const double*>(X->x), static_cast<const double*>(X->x) + B.nzmax, x);
    cholmod_l_free_dense(&X, &p.cm);
    return;
  }
#endif
  for (index_t c = 0; c < k; ++c) solve(x + static_cast<std::size_t>(c) * static_cast<std::size_t>(p.n));
}

}  // namespace la::direct_detail
