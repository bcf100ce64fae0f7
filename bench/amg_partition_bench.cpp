// AMG over several ranks, counted on the host (issue 70, several GPUs): for each system and
// team size, the partitioned hierarchy's CG iterations against the unpartitioned one's, and
// what a team's cycle and setup send, level by level (solvers/amg/partitioned_cycle.hpp and
// partitioned_setup.hpp). No timing: these are the counts a multi-GPU design starts from
// (METHOD.md: bytes and messages first), measured where no GPU is needed.
//
// usage: amg_partition_bench [--systems LIST] [--ranks LIST] [--gather N] [--setup] [--out FILE.csv]
//   LIST (systems): .mtx files and gen specs (poisson3d:N, elasticity3d:N, ...); default
//                   poisson3d:64,elasticity3d:24. elasticity specs carry their coordinates.
//   LIST (ranks):   team sizes; default 1,2,4,8.
//   --gather N:     levels of at most N rows are gathered on every rank (default
//                   partitioned_cycle::default_rows_per_rank a rank).
//   --setup:        also run the setup rank by rank (partitioned_setup; slow, std::map
//                   products) and check it builds the same parts; its traffic goes in the CSV.
//
// Checks (exit 1 on a miss): CG with the team's cycle converges to 1e-8 in the iterations it
// takes with the whole hierarchy's cycle (the same preconditioner to rounding), and those are
// within 10% (or 1) of the unpartitioned hierarchy's; with --setup, the setup's parts equal
// the hierarchy's to 1e-10.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <la/formats/generate.hpp>
#include <la/kernels/reference/pcg.hpp>
#include <la/solvers/amg/partitioned_cycle.hpp>
#include <la/solvers/amg/partitioned_setup.hpp>
#include "systems.hpp"

namespace {
using namespace la;

/// max |x - y| / max |y| over two parts' values, 1 where the patterns differ.
double differ(const matrix_part<double, count_t>& x, const matrix_part<double, count_t>& y) {
  if (x.local.row_ptr() != y.local.row_ptr() || x.local.col_idx() != y.local.col_idx() || x.plan.halo != y.plan.halo) return 1;
  double err = 0, mag = 0;
  for (std::size_t k = 0; k < y.local.values().size(); ++k)
    err = std::max(err, std::abs(x.local.values()[k] - y.local.values()[k])), mag = std::max(mag, std::abs(y.local.values()[k]));
  return mag > 0 ? err / mag : err;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> systems{"poisson3d:64", "elasticity3d:24"};
  std::vector<int> team{1, 2, 4, 8};
  index_t gather = -1;  // partitioned_cycle's default
  bool setup = false;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "amg_partition_bench: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--systems") systems = bench::split(value());
    else if (arg == "--ranks") {
      team.clear();
      for (const auto& s : bench::split(value())) team.push_back(std::stoi(s));
    } else if (arg == "--gather") gather = std::stoi(value());
    else if (arg == "--setup") setup = true;
    else if (arg == "--out") out = value();
    else {
      std::fprintf(stderr, "usage: amg_partition_bench [--systems LIST] [--ranks LIST] [--gather N] [--setup] [--out FILE.csv]\n");
      return 2;
    }
  }
  std::string csv =
      "system,ranks,level,rows,nnz,cycle_values,cycle_messages,gathered_level,gathered_rows,gathered_values,iterations,"
      "iterations_whole,iterations_one_block,operator_complexity,setup_power,setup_t_rows,setup_p_rows,setup_coarse_rows,"
      "setup_r_entries,ok\n";
  bool all_ok = true;
  try {
    for (const auto& spec : systems) {
      const csr_matrix<double> a = bench::load<double>(spec);
      amg_options base;
      bench::attach_coordinates(spec, base);
      const host_amg one(a, base);
      // CG's iterations with one application of m (a hierarchy, or the ranks' cycle) as M^-1.
      auto iterations = [&](const auto& m) {
        return reference::pcg_iterations(a, [&](const std::vector<double>& r, std::vector<double>& z) { m.apply(r, z); });
      };
      const long long its_one = iterations(one);
      for (int ranks : team) {
        amg_options o = base;
        o.partitions = ranks;
        const host_amg h(a, o);
        const amg::partitioned_cycle pc(h, gather);
        const long long its_whole = iterations(h), its = iterations(pc);
        std::vector<double> z;
        pc.apply(std::vector<double>(a.rows(), 1.0), z);  // one cycle's traffic
        const amg::cycle_traffic t = pc.traffic();
        bool ok = its > 0 && its == its_whole && its <= std::max(its_one + 1, its_one * 11 / 10);
        std::vector<amg::setup_traffic> st;
        if (setup) {
          const amg::partitioned_setup ps(a, o);
          st = ps.traffic();
          const amg::partitioned_cycle all(h, 0);
          double worst = static_cast<index_t>(ps.levels().size()) == all.distributed_levels() ? 0 : 1;
          for (std::size_t l = 0; worst < 1 && l < ps.levels().size(); ++l)
            for (int q = 0; q < ranks; ++q) {
              const auto& g = ps.levels()[l].ranks[q];
              const auto& w = all.at(static_cast<index_t>(l)).ranks[q];
              worst = std::max({worst, differ(g.a, w.a), differ(g.p, w.p), differ(g.r, w.r)});
            }
          if (worst > 1e-10) {
            std::fprintf(stderr, "%s, %d ranks: the setup's parts differ from the hierarchy's by %.3g\n", spec.c_str(), ranks, worst);
            ok = false;
          }
        }
        all_ok = all_ok && ok;
        const index_t g = pc.distributed_levels();
        std::printf("%s, %d ranks: %lld iterations (whole hierarchy %lld, one block %lld); %d levels split, level %d "
                    "(%d rows) and below gathered; %s\n", bench::system_name(spec).c_str(), ranks, its, its_whole, its_one,
                    int(g), int(g), int(h.rows(g)), ok ? "ok" : "MISS");
        for (index_t l = 0; l < std::max<index_t>(g, 1); ++l) {
          const amg::setup_traffic s = l < static_cast<index_t>(st.size()) ? st[l] : amg::setup_traffic{};
          const bool split = l < g;
          char line[512];
          std::snprintf(line, sizeof line, "%s,%d,%d,%d,%lld,%lld,%lld,%d,%d,%lld,%lld,%lld,%lld,%.4f,%lld,%lld,%lld,%lld,%lld,%d\n",
                        bench::system_name(spec).c_str(), ranks, int(l), int(h.rows(l)), static_cast<long long>(h.at(l).a.nnz()),
                        split ? t.values[l] : 0LL, split ? t.messages[l] : 0LL, int(g), int(h.rows(g)), t.gathered, its,
                        its_whole, its_one, h.operator_complexity(), s.power, s.t_rows, s.p_rows, s.coarse_rows, s.r_entries,
                        ok ? 1 : 0);
          csv += line;
          if (split)
            std::printf("  level %d: %d rows, a cycle sends %lld values in %lld messages\n", int(l), int(h.rows(l)), t.values[l],
                        t.messages[l]);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "amg_partition_bench: %s\n", e.what());
    return 1;
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << csv;
    if (!f) {
      std::fprintf(stderr, "amg_partition_bench: cannot write %s\n", out.c_str());
      return 1;
    }
  } else {
    std::fputs(csv.c_str(), stdout);
  }
  return all_ok ? 0 : 1;
}
