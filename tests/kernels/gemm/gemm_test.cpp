// Every GEMM registry entry against the host reference (accumulated in double) on random
// inputs of awkward shapes, with alpha/beta, beta = 0 over a NaN-poisoned C, padded leading
// dimensions, and split-K determinism. GPU tests skip without a GPU; selection is host-only.
#include <cmath>
#include <cstring>

#include <la/kernels/gemm/detail/variants.hpp>
#include <la/kernels/gemm/gemm.hpp>
#include <la/kernels/reference/gemm.hpp>
#include "test_util.hpp"

namespace la {
namespace {

struct shape {
  index_t m, n, k;
};

// Sizes from {1, 7, 16, 17, 63, 64, 65, 127, 1000} in combination, plus long-K skinny ones
// that make split-K split and an empty K.
const std::vector<shape> shapes = {{1, 1, 1},      {7, 16, 17},    {17, 7, 63},     {16, 16, 16},   {63, 65, 64},
                                   {64, 64, 64},   {65, 63, 127},  {127, 1000, 65}, {1000, 127, 17}, {1, 1000, 1000},
                                   {1000, 1, 7},   {64, 63, 8191}, {17, 127, 4096}, {129, 257, 1000}, {33, 31, 0},
                                   // three rows of 128-row tiles (the wgmma kernels' TMA-store epilogue on a ragged last row)
                                   {300, 132, 200},
                                   // reg_tiled's edge tiles moved back inside (place_tile): by a multiple of 4 (n % 4 == 0),
                                   // and by an odd number of columns, so groups of 4 straddle the first column stored
                                   {200, 260, 40}, {70, 131, 9}};

/// dense rows x cols with leading dimension cols + pad, random nonzero values, junk padding.
dense_matrix<float> random_dense(index_t rows, index_t cols, index_t pad, std::mt19937& g) {
  dense_matrix<float> d(rows, cols, cols + pad, test::random_vector<float>(static_cast<std::size_t>(rows) * (cols + pad), g));
  return d;
}

dense_matrix<float> abs_of(dense_matrix<float> d) {
  for (float& v : d.values()) v = std::abs(v);
  return d;
}

dense_matrix<float> rounded(dense_matrix<float> d, gemm_input in) {
  for (float& v : d.values()) v = round_to_input(in, v);
  return d;
}

device_dense<float> upload(context& ctx, const dense_matrix<float>& h) { return to_device(ctx, h); }

/// Sets a tuning knob (a measured rule the library exposes to tests) for one scope.
template <typename T>
struct scoped_set {
  T& at;
  T kept;
  scoped_set(T& knob, T value) : at(knob), kept(knob) { knob = value; }
  ~scoped_set() { at = kept; }
  scoped_set(const scoped_set&) = delete;
  scoped_set& operator=(const scoped_set&) = delete;
};

struct param {
  std::string variant;
  shape s;
};

void PrintTo(const param& p, std::ostream* os) { *os << p.variant << " " << p.s.m << "x" << p.s.n << "x" << p.s.k; }

class GemmVariants : public ::testing::TestWithParam<param> {};

/// v (by name through gemm()), or with `forced`, one of v's tile shapes called directly: with
/// no workspace, or with `sms` > 0 as if the device had that many multiprocessors, with the
/// workspace the tile asks for then.
void check_variant(const gemm_variant& v, const shape& s, float alpha, float beta, index_t pad, std::uint32_t seed,
                   const gemm_detail::gemm_tile* forced = nullptr, int sms = 0) {
  context ctx;
  std::mt19937 g(seed);
  const auto a = random_dense(s.m, s.k, pad, g), b = random_dense(s.k, s.n, pad, g);
  auto c0 = random_dense(s.m, s.n, pad, g);
  if (beta == 0.0f) std::fill(c0.values().begin(), c0.values().end(), std::numeric_limits<float>::quiet_NaN());
  const bool sixteen_bit = v.input != gemm_input::f32;  // half or bfloat16
  const auto ar = rounded(a, v.input), br = rounded(b, v.input);

  dense_matrix<float> want = c0, mag(s.m, s.n);
  reference::gemm(alpha, ar, br, beta, want);
  reference::gemm(1.0f, abs_of(ar), abs_of(br), 0.0f, mag);

  auto dc = upload(ctx, c0);
  const auto da = upload(ctx, a), db = upload(ctx, b);
  // The inputs as v takes them: 16-bit ones rounded once on the device.
  device_dense<__half> ah, bh;
  device_dense<__nv_bfloat16> abf, bbf;
  if (v.input == gemm_input::f16) ah = to_half(ctx, da), bh = to_half(ctx, db);
  if (v.input == gemm_input::bf16) abf = to_bf16(ctx, da), bbf = to_bf16(ctx, db);
  auto multiply = [&](const auto& x, const auto& y) {
    if (!forced) return gemm(ctx, x, y, dc, alpha, beta, v.name);
    gemm_args args{s.m,   s.n,  s.k,     x.view().values, x.ld(), y.view().values, y.ld(), dc.view().values,
                   dc.ld(), alpha, beta, nullptr, sms > 0 ? sms : ctx.sm_count()};
    device_buffer<unsigned char> ws;
    if (sms > 0) {
      ws = ctx.allocate<unsigned char>(forced->workspace_bytes({s.m, s.n, s.k, sms, x.ld(), y.ld()}));
      args.workspace = ws.data(), args.workspace_size = ws.size();
    }
    if (s.m > 0 && s.n > 0) forced->run(args, ctx.stream());
  };
  if (v.input == gemm_input::f16)
    multiply(ah, bh);
  else if (v.input == gemm_input::bf16)
    multiply(abf, bbf);
  else
    multiply(da, db);
  const auto got = to_host(ctx, dc);

  const double tol = gemm_tolerance(v.precision, s.k);  // the one rule (gemm.hpp)
  int bad = 0;
  for (index_t i = 0; i < s.m && bad < 5; ++i)
    for (index_t j = 0; j < s.n && bad < 5; ++j) {
      const double scale = std::abs(alpha) * mag(i, j) + (beta == 0.0f ? 0.0 : std::abs(beta * c0(i, j)));
      const double err = std::abs(double(got(i, j)) - want(i, j));
      if (!(err <= tol * scale + 1e-30)) {  // NaN fails
        ++bad;
        ADD_FAILURE() << v.name << (forced ? std::string(" ") + forced->name : "") << " " << s.m << "x" << s.n << "x" << s.k << " alpha " << alpha << " beta " << beta
                      << " pad " << pad << ": C(" << i << "," << j << ") = " << got(i, j) << ", reference " << want(i, j)
                      << ", |err| " << err << " > " << tol << " * " << scale;
      }
    }
  // The padding between rows of C is never written.
  for (index_t i = 0; i < s.m; ++i)
    for (index_t j = s.n; j < s.n + pad; ++j)
      ASSERT_TRUE(std::memcmp(&got.values()[i * got.ld() + j], &c0.values()[i * c0.ld() + j], 4) == 0) << "padding written";
  if (sixteen_bit) {  // the same result against the unrounded float inputs
    dense_matrix<float> full = c0;
    reference::gemm(alpha, a, b, beta, full);
    const double tol_float_inputs = gemm_tolerance(v.precision, s.k, /*reference_from_float_inputs=*/true);
    for (index_t i = 0; i < s.m; ++i)
      for (index_t j = 0; j < s.n; ++j) {
        const double scale = std::abs(alpha) * mag(i, j) + (beta == 0.0f ? 0.0 : std::abs(beta * c0(i, j)));
        ASSERT_LE(std::abs(double(got(i, j)) - full(i, j)), tol_float_inputs * scale + 1e-30)
            << v.name << " " << s.m << "x" << s.n << "x" << s.k << " alpha " << alpha << " beta " << beta << " pad " << pad
            << ": C(" << i << "," << j << ") = " << got(i, j) << ", from rounded inputs " << want(i, j) << ", from float inputs "
            << full(i, j) << ", scale " << scale;
      }
  }
}

TEST_P(GemmVariants, MatchesReference) {
  LA_SKIP_WITHOUT_GPU();
  const auto& p = GetParam();
  const gemm_variant& v = find_gemm(p.variant);
  if (v.sm90a && !sm90a_kernels_available())
    GTEST_SKIP() << v.name << " needs a compute capability 9.0 device and a build for architecture 90";
  check_variant(v, p.s, 1.0f, 0.0f, 0, 1);      // plain product, C poisoned with NaN
  check_variant(v, p.s, -0.5f, 1.25f, 0, 2);    // alpha, beta
  check_variant(v, p.s, 2.0f, 0.0f, 3, 3);      // padded (unaligned) leading dimensions
}

std::vector<param> all_params() {
  std::vector<param> out;
  for (const auto& v : gemm_variants())
    for (const auto& s : shapes) {
      // The slow rungs skip the long-K shapes: they add nothing there but minutes.
      if ((v.name == "naive" || v.name == "smem_tiled" || v.name == "joint_rs") && s.k > 1000) continue;
      // Under a sanitizer the three largest products go: 17x127x4096 still makes split-K split,
      // and the tiles' edges are the small shapes' (a launch is 10-100x slower there).
      if (test::under_sanitizer() && double(s.m) * s.n * s.k > 9e6) continue;
      // A variant for some shapes only (gemv: M or N is 1) runs those (the sm_90a ones skip at run time).
      if (!v.sm90a && !v.can_implement({s.m, s.n, s.k, 132})) continue;
      out.push_back({std::string(v.name), s});
    }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Registry, GemmVariants, ::testing::ValuesIn(all_params()), [](const auto& info) {
  const auto& p = info.param;
  return p.variant + "_" + std::to_string(p.s.m) + "x" + std::to_string(p.s.n) + "x" + std::to_string(p.s.k);
});

TEST(Gemm, GemvMatchesReference) {
  // N == 1: a warp a row. M <= 16: a thread the 16 bytes of B's columns (4 floats, 8 halves)
  // for 1, 4, 8 or 16 rows of A (16-bit: two block rows of 8 past 8 rows), 4 lanes of K a
  // column group added in shared memory. K cut into ranges summed in order where rows or
  // columns are few (the long-K shapes here). Both forms on 16-byte loads and on the element
  // path (rows not aligned, K < 4, a last column group past N: 9 x 1001 x 601 padded by 3 is
  // aligned for floats), for float, half and bfloat16 inputs.
  LA_SKIP_WITHOUT_GPU();
  for (const char* name : {"gemv", "gemv_f16", "gemv_bf16"}) {
    const gemm_variant& v = find_gemm(name);
    for (const shape s : {shape{1, 1, 1}, shape{1, 1, 5000}, shape{1000, 1, 7}, shape{1025, 1, 3001}, shape{500, 1, 20000},
                          shape{7, 1, 100000}, shape{1, 1027, 5000}, shape{1, 33, 100000}, shape{1, 4096, 130},
                          shape{2, 2, 100}, shape{3, 1000, 256}, shape{5, 517, 1299}, shape{8, 64, 3}, shape{9, 1001, 601},
                          shape{12, 1024, 520}, shape{16, 2056, 132}, shape{13, 2, 20000}, shape{4, 64, 30000}}) {
      ASSERT_TRUE(v.can_implement({s.m, s.n, s.k, 132}));
      check_variant(v, s, 1.0f, 0.0f, 0, 1);  // C poisoned with NaN
      // Under a sanitizer the long shapes check the first form only (the same paths; the
      // alpha, beta and padding forms run on the short ones).
      if (test::under_sanitizer() && double(s.m) * s.n * s.k > 2e6) continue;
      check_variant(v, s, -0.5f, 1.25f, 0, 2);  // alpha, beta
      check_variant(v, s, 2.0f, 0.0f, 3, 3);    // padded rows (float inputs; 16-bit ones are packed copies)
    }
    EXPECT_TRUE(v.can_implement({16, 2, 100, 132}));
    EXPECT_FALSE(v.can_implement({17, 2, 100, 132}));
  }
}

TEST(Gemm, EveryRegTiledTileShapeMatchesReference) {
  // reg_tiled picks its tile by size (reg_tiled_shape_for); each tile on every shape.
  LA_SKIP_WITHOUT_GPU();
  const gemm_variant& v = find_gemm("reg_tiled");
  for (const auto& r : gemm_detail::reg_tiled_shapes())
    for (const auto& s : shapes) {
      check_variant(v, s, 1.0f, 0.0f, 0, 1, &r);
      check_variant(v, s, -0.5f, 1.25f, 0, 2, &r);
      check_variant(v, s, 2.0f, 0.0f, 3, 3, &r);
    }
}

TEST(Gemm, RegTiledCopiesUnalignedOperands) {
  // Rows not 16-byte aligned (padded by 3): reg_tiled copies A and B to a 16-byte pitch in the
  // workspace first, their rows zero to the pitch, and runs its 16-byte path on the copies,
  // reading B's copy to the next multiple of 4 (PadB): the right edge's tiles move back inside
  // by a multiple of 4 and store from the first column their neighbour does not. The rule is
  // set to copy at any size here. Through the variant itself, as if the device had 1 SM and
  // 132: on 1 SM the first two shapes run 128x128x8 (right tile moved by 4; N below the tile,
  // read to its pad), the others 64x64x16 either way (moved by 60, by 56 with N = 70, by 60).
  LA_SKIP_WITHOUT_GPU();
  const scoped_set<gemm_detail::reg_tiled_copy_rule> copy_always(gemm_detail::rt_copy_rule, {0.0, 0});
  ASSERT_EQ(gemm_detail::reg_tiled_shape_for({250, 251, 40, 1}), 0);
  ASSERT_EQ(gemm_detail::reg_tiled_shape_for({250, 102, 18, 1}), 0);
  const gemm_variant& v = find_gemm("reg_tiled");
  const gemm_detail::gemm_tile whole{"(as auto runs it)", v.run, v.workspace_bytes};
  std::uint32_t seed = 3;
  for (const shape s : {shape{250, 251, 40}, shape{250, 102, 18}, shape{70, 131, 9}, shape{131, 70, 33}, shape{200, 259, 1}})
    for (int sms : {1, 132}) {
      ASSERT_GT(v.workspace_bytes({s.m, s.n, s.k, sms, s.k + 3, s.n + 3}), std::size_t(0));
      check_variant(v, s, 2.0f, 0.0f, 3, ++seed, &whole, sms);    // C poisoned with NaN
      check_variant(v, s, -0.5f, 1.25f, 3, ++seed, &whole, sms);  // alpha, beta
    }
  check_variant(v, {1601, 1603, 200}, 2.0f, 0.0f, 3, ++seed, &whole, 132);  // 64x64x16, several rounds
}

TEST(Gemm, EveryWgmmaTileMatchesReference) {
  // wgmma_f16 and wgmma_bf16 pick a tile width by size (wgmma_tile_for); the registry test
  // runs the one picked, this one every other tile on every shape.
  LA_SKIP_WITHOUT_GPU();
  if (!sm90a_kernels_available()) GTEST_SKIP() << "the wgmma kernels need a compute capability 9.0 device";
  const int sms = context().sm_count();
  for (const char* name : {"wgmma_f16", "wgmma_bf16"}) {
    const gemm_variant& v = find_gemm(name);
    const auto& tiles = gemm_detail::wgmma_tiles(v.input);
    for (std::size_t t = 0; t < tiles.size(); ++t)
      for (const auto& s : shapes) {
        if (gemm_detail::wgmma_tile_for({s.m, s.n, s.k, sms}) == static_cast<int>(t)) continue;
        check_variant(v, s, 1.0f, 0.0f, 0, 1, &tiles[t]);
        check_variant(v, s, -0.5f, 1.25f, 0, 2, &tiles[t]);
      }
  }
}

TEST(Gemm, WgmmaBetaReadsC) {
  // beta != 0 with C's rows 16-byte aligned and N a multiple of 4: the plain 16-bit kernel
  // loads each 64 x 32 chunk of C by TMA into its staging buffer, the next chunk's load in
  // flight, and stores alpha * acc + beta * C back by TMA (launch_wgmma, load_c). Every tile
  // width; as if the device had 1 multiprocessor (every block walks several tiles: the
  // barriers' phases carry over), 5 (a last round cut in K where a width plans one: those
  // tiles go through reduce_tail instead) and as it has (no workspace). N = 260 and 36 end in
  // a chunk of 4 valid columns; 300 and 129 rows end in a partial row of tiles; C padded by 4
  // stays aligned (the padding must stay unwritten), by 1 it is not (the register path).
  // Then wgmma_tf32 with beta != 0 on the same shapes.
  LA_SKIP_WITHOUT_GPU();
  if (!sm90a_kernels_available()) GTEST_SKIP() << "the wgmma kernels need a compute capability 9.0 device";
  const shape cases[] = {{300, 260, 200}, {129, 516, 64}, {64, 36, 700}};
  std::uint32_t seed = 40;
  // alpha/beta over aligned C, beta 1 over C padded by 4, and over C padded by 1.
  auto with_betas = [&](const gemm_variant& v, const shape& s, const gemm_detail::gemm_tile* t, int sms) {
    check_variant(v, s, -0.5f, 1.25f, 0, ++seed, t, sms);
    check_variant(v, s, 1.0f, 1.0f, 4, ++seed, t, sms);
    check_variant(v, s, 2.0f, -1.0f, 1, ++seed, t, sms);
  };
  for (const char* name : {"wgmma_f16", "wgmma_bf16"}) {
    const gemm_variant& v = find_gemm(name);
    for (const auto& t : gemm_detail::wgmma_tiles(v.input))
      for (const shape& s : cases)
        for (int sms : {1, 5, 0}) with_betas(v, s, &t, sms);
  }
  // wgmma_tf32 reads C from its registers' epilogue in groups of 16 loads, the tile's C
  // prefetched into L2 where C's rows are aligned.
  for (const shape& s : cases) with_betas(find_gemm("wgmma_tf32"), s, nullptr, 0);
}

TEST(Gemm, WgmmaTailMatchesReference) {
  // Where the plain 16-bit kernel's tiles take more than one round of the multiprocessors and
  // the last round would leave at least half of them idle, that round's tiles are cut in K and
  // reduce_tail sums them (launch_wgmma, plan_tail). Run here as if the device had 4-6
  // multiprocessors, on every tile width that plans a tail: tails of 1-3 tiles in 2-4 ranges,
  // ragged edges and K, alpha/beta, padded rows of C (the whole tiles then stored from
  // registers, the tail's partials still through TMA). fp16 with all three forms, bf16 (the
  // same kernel but for its MMA instruction) with alpha/beta.
  LA_SKIP_WITHOUT_GPU();
  if (!sm90a_kernels_available()) GTEST_SKIP() << "the wgmma kernels need a compute capability 9.0 device";
  // Shapes this small would not pay the tail's fixed cost: count it as nothing here.
  const scoped_set<long> cut_small_shapes(gemm_detail::wgmma_tail_overhead_ns, 0);
  const std::vector<std::pair<shape, int>> cases = {{{300, 300, 1024}, 4}, {{129, 1000, 777}, 5},
                                                    {{300, 520, 1100}, 4}, {{1000, 64, 600}, 6}};
  int tails = 0;
  for (const char* name : {"wgmma_f16", "wgmma_bf16"}) {
    const gemm_variant& v = find_gemm(name);
    for (const auto& [s, sms] : cases)
      for (const auto& t : gemm_detail::wgmma_tiles(v.input)) {
        // The tile's workspace grows by the partials exactly where a tail is planned.
        if (t.workspace_bytes({s.m, s.n, s.k, sms}) == t.workspace_bytes({s.m, s.n, s.k, 100000})) continue;
        ++tails;
        check_variant(v, s, -0.5f, 1.25f, 0, 2, &t, sms);
        if (v.input == gemm_input::bf16) continue;
        check_variant(v, s, 1.0f, 0.0f, 0, 1, &t, sms);
        check_variant(v, s, 2.0f, 0.0f, 3, 3, &t, sms);
      }
  }
  EXPECT_EQ(tails, 2 * 10);  // 10 of the 12 case and width pairs (the others: a fuller last round)
}

TEST(Gemm, SplitKWorkspaceIsBitIdenticalRunToRun) {
  // Every variant that reduces its splits through a workspace (split_k_workspace, the three
  // wgmma split-K forms where the device runs them): bit-identical results run to run.
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  std::mt19937 g(9);
  const shape s{100, 90, 20000};
  const gemm_problem p{s.m, s.n, s.k, ctx.sm_count()};
  const auto a = upload(ctx, random_dense(s.m, s.k, 0, g)), b = upload(ctx, random_dense(s.k, s.n, 0, g));
  int checked = 0;
  for (const auto& v : gemm_variants()) {
    if (!v.splits || v.workspace_bytes(p) == 0 || !v.can_implement(p)) continue;
    ASSERT_GT(v.splits(p), 1) << v.name;
    ++checked;
    std::vector<std::vector<float>> runs;
    const void* workspace = nullptr;
    for (int r = 0; r < 3; ++r) {
      device_dense<float> c(ctx, s.m, s.n);
      gemm(ctx, a, b, c, 1.0f, 0.0f, v.name);  // 16-bit variants: rounded from the same floats
      runs.push_back(to_host(ctx, c).values());
      // The partials live in the context's scratch, allocated once and reused.
      EXPECT_GE(ctx.scratch_bytes(), v.workspace_bytes(p)) << v.name;
      if (r == 0) workspace = ctx.scratch(0);
      EXPECT_EQ(ctx.scratch(0), workspace) << v.name << ": the workspace was reallocated on call " << r;
    }
    EXPECT_EQ(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * 4), 0) << v.name;
    EXPECT_EQ(std::memcmp(runs[0].data(), runs[2].data(), runs[0].size() * 4), 0) << v.name;
  }
  EXPECT_GE(checked, sm90a_kernels_available() ? 4 : 1);
}

TEST(Gemm, WgmmaRepitchedBMatchesReference) {
  // 16-bit B whose rows are 16- but not 64-byte aligned (N = 72: 144 bytes) is copied to a
  // 128-byte pitch first where M >= 2048 (launch_wgmma). 2049 rows: a ragged last row of
  // tiles; with alpha/beta and with padded rows of C. N = 68 (136-byte rows, copied at any M)
  // makes the copy move 8-byte units; the registry test's N = 7 shapes move 2-byte ones.
  LA_SKIP_WITHOUT_GPU();
  if (!sm90a_kernels_available()) GTEST_SKIP() << "the wgmma kernels need a compute capability 9.0 device";
  for (const shape s : {shape{2049, 72, 100}, shape{2049, 68, 100}})
    for (const char* name : {"wgmma_f16", "wgmma_bf16"}) {
      const gemm_variant& v = find_gemm(name);
      check_variant(v, s, 1.0f, 0.0f, 0, 1);
      check_variant(v, s, -0.5f, 1.25f, 0, 2);
      check_variant(v, s, 2.0f, 0.0f, 3, 3);
    }
}

TEST(Gemm, WgmmaOperandCopiesLiveInTheContextScratch) {
  // 16-bit B of N = 68 (136-byte rows, not the 16-byte rows TMA needs) is copied to a 128-byte
  // pitch (128 halves) in the workspace, which gemm() takes from the context's scratch: after
  // each of three calls the scratch holds B's rows at that pitch from its first byte (a plain
  // product has no partials before them), at the same address, and the results are
  // bit-identical. (The copy's correctness on every shape: the registry and repitch tests.)
  LA_SKIP_WITHOUT_GPU();
  if (!sm90a_kernels_available()) GTEST_SKIP() << "the wgmma kernels need a compute capability 9.0 device";
  context ctx;
  std::mt19937 g(21);
  const index_t m = 300, n = 68, k = 104, pitch = 128;  // A's 208-byte rows are read as they are
  const auto a = to_half(ctx, upload(ctx, random_dense(m, k, 0, g)));
  const auto b = to_half(ctx, upload(ctx, random_dense(k, n, 0, g)));
  const auto want_b = to_host(ctx, b);
  const gemm_variant& v = find_gemm("wgmma_f16");
  const std::size_t bytes = v.workspace_bytes({m, n, k, ctx.sm_count()});
  ASSERT_EQ(bytes, std::size_t(k) * pitch * 2 + 128);
  std::vector<float> first;
  const void* where = nullptr;
  for (int r = 0; r < 3; ++r) {
    device_dense<float> c(ctx, m, n);
    gemm(ctx, a, b, c, 1.0f, 0.0f, "wgmma_f16");
    const auto got = to_host(ctx, c).values();
    ASSERT_GE(ctx.scratch_bytes(), bytes);
    if (r == 0) first = got, where = ctx.scratch(0);
    EXPECT_EQ(ctx.scratch(0), where) << "the scratch was reallocated on call " << r;
    EXPECT_EQ(std::memcmp(got.data(), first.data(), got.size() * 4), 0) << "call " << r;
    std::vector<__half> held(static_cast<std::size_t>(k) * pitch);
    LA_CUDA_TRY(cudaMemcpy(held.data(), ctx.scratch(0), held.size() * 2, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (index_t i = 0; i < k; ++i)
      for (index_t j = 0; j < n; ++j)
        bad += std::memcmp(&held[i * pitch + j], &want_b(i, j), 2) != 0;
    EXPECT_EQ(bad, 0) << "elements of B's copy not in the scratch after call " << r;
  }
}

TEST(Gemm, WgmmaClusteredSplitMatchesReference) {
  // The 16-bit split-K forms run in 2-block clusters along M where M has more than one row of
  // tiles: 300 x 132 x 2048 has three (the last cluster's second block past M), two columns of
  // tiles, 2 splits, and N % 4 == 0 (TMA-stored partials). Only these variants: the shape is
  // too long in K for the whole registry's reference time.
  LA_SKIP_WITHOUT_GPU();
  if (!sm90a_kernels_available()) GTEST_SKIP() << "the wgmma kernels need a compute capability 9.0 device";
  const shape s{300, 132, 2048};
  const int sms = context().sm_count();
  int checked = 0;
  for (const auto& v : gemm_variants()) {
    if (!v.sm90a || !v.splits || v.input == gemm_input::f32) continue;
    ASSERT_GT(v.splits({s.m, s.n, s.k, sms}), 1) << v.name;
    check_variant(v, s, 1.0f, 0.0f, 0, 1);
    check_variant(v, s, -0.5f, 1.25f, 0, 2);
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(Gemm, WgmmaShortTileMatchesReference) {
  // M of at most 64 rows: the 16-bit kernels run 64 x 64 tiles (wgmma_short_tile), both
  // consumer warpgroups on the whole tile, each multiplying half of every k-block, the first
  // adding the second's sums before it stores. Split in K (2 and 4 ways: TMA-stored partials
  // where N % 4 == 0, stored from registers where not) and unsplit (C through TMA, and C read
  // back through TMA where beta != 0; 132 tiles, one round on an H100); M = 1 (63 rows of TMA's
  // zeros), 17, 33, 50. Plain and split variants alike; the plain ones run the split shapes on
  // the 64-row tile unsplit.
  LA_SKIP_WITHOUT_GPU();
  if (!sm90a_kernels_available()) GTEST_SKIP() << "the wgmma kernels need a compute capability 9.0 device";
  const int sms = context().sm_count();
  struct tiled {
    shape s;
    int splits;  // wgmma_split_count on 132 SMs
  };
  for (const tiled t : {tiled{{64, 1000, 2048}, 2}, tiled{{33, 1003, 2048}, 2}, tiled{{1, 130, 5000}, 4},
                        tiled{{64, 8448, 100}, 1}, tiled{{50, 4500, 64}, 1}, tiled{{17, 2201, 2048}, 2}}) {
    const shape s = t.s;
    // The split counts these shapes were chosen for, on the 132 SMs of an H100 (elsewhere the
    // tiles are still 64 rows where the rule says so, and the check below still runs).
    if (sms == 132) {
      ASSERT_TRUE(gemm_detail::wgmma_short_tile({s.m, s.n, s.k, sms})) << s.m << "x" << s.n << "x" << s.k;
      EXPECT_EQ(gemm_detail::wgmma_split_count({s.m, s.n, s.k, sms}), t.splits) << s.m << "x" << s.n << "x" << s.k;
    }
    for (const char* name : {"wgmma_f16", "wgmma_f16_split_k", "wgmma_bf16", "wgmma_bf16_split_k"}) {
      const gemm_variant& v = find_gemm(name);
      check_variant(v, s, 1.0f, 0.0f, 0, 1);
      check_variant(v, s, -0.5f, 1.25f, 0, 2);
      // Padded rows: 16-bit inputs are packed copies, so the kernel sees the same operands
      // (left out under a sanitizer).
      if (!test::under_sanitizer()) check_variant(v, s, 2.0f, 0.0f, 3, 3);
    }
  }
}

TEST(Gemm, Tf32RoundsToNearest) {
  // Every TF32 variant rounds both operands to nearest (wgmma_tf32 through TMA's TFLOAT32
  // tensor maps, wmma_tf32 in registers), where truncation would be twice as coarse. With
  // every a = b = 1 + 3 * 2^-12 (three quarters of a TF32 ulp above 1): rounding gives
  // (1 + 2^-10)^2 per product, truncation 1, the exact product (1 + 3 * 2^-12)^2 (5e-4 and
  // 2e-3 below rounding's sum). K = 77 and 33 x 130 are not tile multiples; float sums of 77
  // terms stay within 77 * 2^-24 < 1e-5 of the rounded sum.
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  const index_t m = 33, n = 130, k = 77;
  const float x = 1.0f + 3 * 0x1p-12f;
  const dense_matrix<float> ah(m, k, k, std::vector<float>(static_cast<std::size_t>(m) * k, x));
  const dense_matrix<float> bh(k, n, n, std::vector<float>(static_cast<std::size_t>(k) * n, x));
  const auto a = upload(ctx, ah), b = upload(ctx, bh);
  const double rounded = k * (1 + 0x1p-10) * (1 + 0x1p-10), truncated = k;
  int checked = 0;
  for (const auto& v : gemm_variants()) {
    if (v.precision != gemm_precision::tf32 || !v.can_implement({m, n, k, ctx.sm_count()})) continue;
    ++checked;
    device_dense<float> c(ctx, m, n);
    gemm(ctx, a, b, c, 1.0f, 0.0f, v.name);
    const auto got = to_host(ctx, c);
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j)
        ASSERT_NEAR(got(i, j), rounded, 1e-5 * rounded)
            << v.name << " C(" << i << "," << j << "); truncating both operands gives " << truncated;
  }
  EXPECT_GE(checked, sm90a_kernels_available() ? 2 : 1);
}

TEST(Gemm, Tf32x3CarriesTheTails) {
  // tf32x3 multiplies each operand's TF32 head and the TF32 rounding of its tail (three
  // products), so it keeps what TF32 rounds away. (1) Every a = b = 1 + 3 * 2^-12, K = 77 (33 x
  // 130: not tile multiples): the exact sum 77 (1 + 3 * 2^-12)^2 within 1e-6 relative; TF32
  // alone is 5e-4 off (Tf32RoundsToNearest). (2) Inputs in [0, 1] over K = 65549: no
  // cancellation, so the tensor cores' truncating float accumulation, left to run over all of
  // K, errs one way by about K/8 * 2^-24 of sum |a b| (4.5e-4 measured at K = 65536, as much as
  // TF32); drained every 256 of K into float sums rounded to nearest, tf32x3 measured 2e-6
  // there (cuBLAS's float GEMM: 2.3e-6). Bound: 2e-5.
  LA_SKIP_WITHOUT_GPU();
  if (!sm90a_kernels_available()) GTEST_SKIP() << "tf32x3 needs a compute capability 9.0 device and a build for architecture 90";
  context ctx;
  for (const char* name : {"wgmma_tf32x3", "wgmma_tf32x3_split_k"}) {
    {
      const index_t m = 33, n = 130, k = 77;
      const float x = 1.0f + 3 * 0x1p-12f;
      const auto a = upload(ctx, dense_matrix<float>(m, k, k, std::vector<float>(static_cast<std::size_t>(m) * k, x)));
      const auto b = upload(ctx, dense_matrix<float>(k, n, n, std::vector<float>(static_cast<std::size_t>(k) * n, x)));
      device_dense<float> c(ctx, m, n);
      gemm(ctx, a, b, c, 1.0f, 0.0f, name);
      const double exact = k * double(x) * double(x);
      const auto got = to_host(ctx, c);
      for (index_t i = 0; i < m; ++i)
        for (index_t j = 0; j < n; ++j) ASSERT_NEAR(got(i, j), exact, 1e-6 * exact) << name << " C(" << i << "," << j << ")";
    }
    const index_t m = 64, n = 40, k = 65549;
    std::mt19937 g(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    auto fill = [&](index_t r, index_t c) {
      std::vector<float> v(static_cast<std::size_t>(r) * c);
      for (float& e : v) e = u(g);
      return dense_matrix<float>(r, c, c, std::move(v));
    };
    const auto ah = fill(m, k), bh = fill(k, n);
    device_dense<float> c(ctx, m, n);
    gemm(ctx, upload(ctx, ah), upload(ctx, bh), c, 1.0f, 0.0f, name);
    const auto got = to_host(ctx, c);
    double worst = 0;
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) {
        double want = 0;  // all terms >= 0: the sum is also sum |a b|
        for (index_t q = 0; q < k; ++q) want += double(ah(i, q)) * bh(q, j);
        worst = std::max(worst, std::abs(got(i, j) - want) / want);
      }
    EXPECT_LE(worst, 2e-5) << name << ": largest error relative to sum |a b|";
  }
}

TEST(Gemm, Tf32x3SpecialValues) {
  // The operand split (tf32x3_split_kernel) on the values that break a naive one: a NaN input
  // makes its row NaN; an infinite one makes its row not finite (IEEE's float GEMM gives +-inf
  // there where no NaN meets it; tf32x3 can give NaN, as the infinite head also meets the other
  // operand's tail: documented in gemm.hpp); values within a TF32 rounding of the largest
  // float (whose head would round to infinity) and tiny ones (tails near the subnormals) keep
  // float accuracy.
  LA_SKIP_WITHOUT_GPU();
  if (!sm90a_kernels_available()) GTEST_SKIP() << "tf32x3 needs a compute capability 9.0 device and a build for architecture 90";
  context ctx;
  const index_t m = 4, n = 3, k = 9;
  std::mt19937 g(11);
  std::uniform_real_distribution<float> u(0.5f, 1.0f);
  dense_matrix<float> a(m, k, k, std::vector<float>(static_cast<std::size_t>(m) * k)), b(k, n, n, std::vector<float>(k * n));
  for (index_t q = 0; q < k; ++q) {
    a(0, q) = u(g), a(1, q) = u(g);
    a(2, q) = std::numeric_limits<float>::max() * u(g);  // heads of the largest ones round past it
    a(3, q) = 1e-36f * u(g);                             // tails of 1e-40 and below: subnormal
    for (index_t j = 0; j < n; ++j) b(q, j) = (j == 2 ? 1e30f : 1e-30f) * (q % 2 ? u(g) : -u(g));
  }
  a(0, 4) = std::numeric_limits<float>::infinity();
  a(1, 5) = std::numeric_limits<float>::quiet_NaN();
  for (const char* name : {"wgmma_tf32x3", "wgmma_tf32x3_split_k"}) {
    device_dense<float> c(ctx, m, n);
    gemm(ctx, upload(ctx, a), upload(ctx, b), c, 1.0f, 0.0f, name);
    const auto got = to_host(ctx, c);
    for (index_t j = 0; j < n; ++j) {
      EXPECT_FALSE(std::isfinite(got(0, j))) << name << " C(0," << j << ") from an infinite input";
      EXPECT_TRUE(std::isnan(got(1, j))) << name << " C(1," << j << ") from a NaN input";
      for (index_t i = 2; i < m; ++i) {
        // The largest floats times 1e30 overflow, and 1e-36 times 1e-30 underflows, in float itself.
        if ((i == 2) == (j == 2)) continue;
        double want = 0, mag = 0;
        for (index_t q = 0; q < k; ++q) want += double(a(i, q)) * b(q, j), mag += std::abs(double(a(i, q)) * b(q, j));
        EXPECT_LE(std::abs(got(i, j) - want), gemm_tolerance(gemm_precision::tf32x3, k) * mag)
            << name << " C(" << i << "," << j << ") = " << got(i, j) << ", reference " << want;
      }
    }
  }
}

TEST(Gemm, BadArgumentsAreErrors) {
  LA_SKIP_WITHOUT_GPU();
  context ctx;
  device_dense<float> a(ctx, 4, 5), b(ctx, 6, 3), c(ctx, 4, 3);
  test::expect_throw_with<invalid_argument>([&] { gemm(ctx, a, b, c, 1, 0); }, {"A is 4x5 but B is 6x3"});
  device_dense<float> b2(ctx, 5, 3), c2(ctx, 3, 3);
  test::expect_throw_with<invalid_argument>([&] { gemm(ctx, a, b2, c2, 1, 0); }, {"C is 3x3, expected 4x3"});
  test::expect_throw_with<invalid_argument>([&] { gemm(ctx, a, b2, c, 1, 0, "cutlass"); },
                                            {"unknown GEMM algorithm 'cutlass'", "reg_tiled"});
  const auto ah = to_half(ctx, a), bh = to_half(ctx, b2);
  test::expect_throw_with<invalid_argument>([&] { gemm(ctx, ah, bh, c, 1, 0, "reg_tiled"); },
                                            {"takes float inputs", "wmma_f16"});
  const auto ab = to_bf16(ctx, a), bb = to_bf16(ctx, b2);
  test::expect_throw_with<invalid_argument>([&] { gemm(ctx, ab, bb, c, 1, 0, "wmma_f16"); },
                                            {"'wmma_f16' takes half inputs", "wmma_bf16"});
}

TEST(GemmTolerance, OneRule) {
  // Hand-checked values of the rule in gemm.hpp that the tests, `la gemm` and the benchmark share.
  EXPECT_DOUBLE_EQ(gemm_tolerance(gemm_precision::fp32, 1), 1e-5);
  EXPECT_NEAR(gemm_tolerance(gemm_precision::fp32, 1 << 20), 4 * 1024 * 1.1920928955078125e-7, 1e-12);
  EXPECT_DOUBLE_EQ(gemm_tolerance(gemm_precision::tf32, 16), 1e-3 + 1e-5);
  EXPECT_DOUBLE_EQ(gemm_tolerance(gemm_precision::tf32x3, 16), 1e-5 + 3.0 / (1 << 22));  // 4 sqrt(48) eps < 1e-5
  EXPECT_NEAR(gemm_tolerance(gemm_precision::tf32x3, 1 << 20), 4 * 1024 * std::sqrt(3.0) * 1.1920928955078125e-7 + 3.0 / (1 << 22),
              1e-12);
  EXPECT_DOUBLE_EQ(gemm_tolerance(gemm_precision::fp16, 16), 2e-4 + 1e-5);
  EXPECT_DOUBLE_EQ(gemm_tolerance(gemm_precision::fp16, 16, true), 2e-4 + 1e-5 + 1.01 / 1024);
  EXPECT_DOUBLE_EQ(gemm_tolerance(gemm_precision::bf16, 16), 2e-4 + 1e-5);
  EXPECT_DOUBLE_EQ(gemm_tolerance(gemm_precision::bf16, 16, true), 2e-4 + 1e-5 + 1.01 / 128);
}

TEST(GemmInputs, RoundToNearest) {  // host-only: what the 16-bit variants multiply
  EXPECT_EQ(round_to_input(gemm_input::f32, 1.0f + 0x1p-20f), 1.0f + 0x1p-20f);
  EXPECT_EQ(round_to_input(gemm_input::f16, 1.0f + 0x1p-12f), 1.0f);            // below half an ulp (2^-11)
  EXPECT_EQ(round_to_input(gemm_input::f16, 1.0f + 0x1p-10f), 1.0f + 0x1p-10f);  // representable
  EXPECT_EQ(round_to_input(gemm_input::bf16, 1.0f + 0x1p-9f), 1.0f);             // below half an ulp (2^-8)
  EXPECT_EQ(round_to_input(gemm_input::bf16, 1.0f + 0x1p-8f), 1.0f);             // a tie, to even
  EXPECT_EQ(round_to_input(gemm_input::bf16, 1.0f + 0x1p-7f + 0x1p-8f), 1.0f + 0x1p-6f);  // a tie, to even
  EXPECT_NEAR(round_to_input(gemm_input::bf16, 3.0e38f), 3.0e38f, 3.0e38f * 0x1p-8f);  // bf16 keeps float's range
  EXPECT_TRUE(std::isinf(round_to_input(gemm_input::f16, 70000.0f)));  // half does not
}

TEST(GemmSelect, FollowsShapeAndPrecision) {  // host-only
  EXPECT_EQ(select_gemm({256, 256, 65536, 132}, gemm_input::f32, false).name, "split_k_workspace");
  EXPECT_EQ(select_gemm({128, 128, 262144, 132}, gemm_input::f32, false).name, "split_k_workspace");
  EXPECT_EQ(select_gemm({4096, 4096, 4096, 132}, gemm_input::f32, false).name, "reg_tiled");
  EXPECT_EQ(select_gemm({2048, 2048, 2048, 132}, gemm_input::f32, false).name, "reg_tiled");
  EXPECT_EQ(select_gemm({1024, 1024, 1024, 132}, gemm_input::f32, false).name, "reg_tiled");  // 64x64 tiles fill it
  EXPECT_EQ(select_gemm({512, 512, 4096, 132}, gemm_input::f32, false).name, "split_k_workspace");
  EXPECT_EQ(select_gemm({1024, 1024, 512, 132}, gemm_input::f32, false).name, "reg_tiled");
  EXPECT_EQ(select_gemm({31, 33, 1000, 132}, gemm_input::f32, false).name, "split_k_workspace");  // 1 tile
  EXPECT_EQ(select_gemm({8192, 1, 8192, 132}, gemm_input::f32, false).name, "gemv");  // a matrix times a vector
  EXPECT_EQ(select_gemm({1, 8192, 8192, 132}, gemm_input::f32, true).name, "gemv");
  EXPECT_EQ(select_gemm({8192, 1, 8192, 132}, gemm_input::f16, false).name, "gemv_f16");
  EXPECT_EQ(select_gemm({4, 4096, 4096, 132}, gemm_input::bf16, false).name, "gemv_bf16");  // a few rows
  EXPECT_EQ(select_gemm({16, 4096, 4096, 132}, gemm_input::f32, true).name, "gemv");  // floats: up to 16 rows
  EXPECT_EQ(select_gemm({5, 4096, 4096, 132}, gemm_input::f16, false).name,
            sm90a_kernels_available() ? "wgmma_f16_split_k" : "wmma_f16");  // 16-bit: up to 4
  EXPECT_EQ(select_gemm({17, 4096, 4096, 132}, gemm_input::f32, false).name, "split_k_workspace");
  EXPECT_EQ(select_gemm({31, 33, 400, 132}, gemm_input::f32, false).name, "reg_tiled");   // K too short
  EXPECT_EQ(select_gemm({700, 700, 700, 132}, gemm_input::f32, false).name, "reg_tiled");  // 121 tiles
  EXPECT_EQ(select_gemm({4096, 4096, 4096, 132}, gemm_input::f32, true).name,
            sm90a_kernels_available() ? "wgmma_tf32" : "wmma_tf32");
  EXPECT_EQ(select_gemm({4096, 4096, 128, 132}, gemm_input::f32, false).name, "reg_tiled");
  // TF32 allowed: wgmma_tf32, split over K where its 256x128 tiles leave SMs idle.
  EXPECT_EQ(select_gemm({256, 256, 65536, 132}, gemm_input::f32, true).name,
            sm90a_kernels_available() ? "wgmma_tf32_split_k" : "split_k_workspace");
  EXPECT_EQ(select_gemm({4096, 4096, 128, 132}, gemm_input::f32, true).name,
            sm90a_kernels_available() ? "wgmma_tf32" : "wmma_tf32");
  EXPECT_EQ(select_gemm({64, 4096, 4096, 132}, gemm_input::f32, false).name, "split_k_workspace");
  // Tiles that fill more than half the SMs are not split: a second split would take a second round.
  EXPECT_EQ(select_gemm({2048, 2048, 20000, 132}, gemm_input::f32, true).name,
            sm90a_kernels_available() ? "wgmma_tf32" : "wmma_tf32");
  EXPECT_EQ(select_gemm({1024, 2048, 20000, 132}, gemm_input::f32, true).name,
            sm90a_kernels_available() ? "wgmma_tf32_split_k" : "wmma_tf32");
  EXPECT_EQ(select_gemm({1024, 1280, 8192, 132}, gemm_input::f16, false).name,
            sm90a_kernels_available() ? "wgmma_f16" : "wmma_f16");
  // 64 rows whose 64 x 64 tiles fill one round unsplit: the plain kernel (on those tiles).
  EXPECT_EQ(select_gemm({64, 8192, 8192, 132}, gemm_input::f16, false).name,
            sm90a_kernels_available() ? "wgmma_f16" : "wmma_f16");
  // Half inputs: wgmma where the device runs sm_90a code, else WMMA.
  EXPECT_EQ(select_gemm({4096, 4096, 4096, 132}, gemm_input::f16, false).name,
            sm90a_kernels_available() ? "wgmma_f16" : "wmma_f16");
  EXPECT_EQ(select_gemm({4096, 4096, 4096, 132}, gemm_input::bf16, false).name,
            sm90a_kernels_available() ? "wgmma_bf16" : "wmma_bf16");
  EXPECT_EQ(select_gemm({256, 256, 65536, 132}, gemm_input::bf16, false).name,
            sm90a_kernels_available() ? "wgmma_bf16_split_k" : "wmma_bf16");
  EXPECT_LT(find_gemm("split_k_workspace").workspace_bytes({1000, 1000, 1 << 24, 132}), std::size_t(64) << 20);
  // The registry's properties hold for what auto picks: never a teaching rung; a split-K
  // variant only where K is split.
  for (index_t m : {1, 64, 1000, 4096})
    for (index_t k : {1, 700, 4096, 262144})
      for (bool reduced : {false, true})
        for (gemm_input in : {gemm_input::f32, gemm_input::f16, gemm_input::bf16}) {
          const gemm_problem p{m, m, k, 132};
          const gemm_variant& v = select_gemm(p, in, reduced);
          EXPECT_FALSE(v.teaching) << v.name;
          EXPECT_EQ(v.input, in) << v.name;
          if (v.splits) EXPECT_GT(v.splits(p), 1) << v.name << " " << m << "x" << k;
        }
}

TEST(GemmSelect, WgmmaWorkspaceCountsOperandCopies) {  // host-only
  // launch_wgmma copies A to 16-byte rows and B to 128-byte rows where TMA needs it, and 16-bit
  // B with rows not 64-byte aligned where M >= 2048 (speed_extras); workspace_bytes counts
  // each copy's rows at its pitch plus room to align its start, then the plain kernel's tail.
  const auto& f16 = find_gemm("wgmma_f16");
  const auto& tf32 = find_gemm("wgmma_tf32");
  const auto& split = find_gemm("wgmma_f16_split_k");
  // On 4096 multiprocessors every tile of these fits in one round: no tail (below).
  const int sms = 4096;
  EXPECT_EQ(f16.workspace_bytes({4096, 4096, 4096, sms}), 0u);
  EXPECT_EQ(f16.workspace_bytes({5000, 5000, 5000, sms}), std::size_t(5000) * 5056 * 2 + 128);  // B only
  EXPECT_EQ(f16.workspace_bytes({1000, 5000, 5000, sms}), 0u);  // M < 2048: B read as it is
  EXPECT_EQ(f16.workspace_bytes({4096, 1000, 4096, sms, 0, 1032}), std::size_t(4096) * 1024 * 2 + 128);  // 2064-byte rows
  gemm_problem lean{4096, 1000, 4096, sms, 0, 1032};
  lean.speed_extras = false;
  EXPECT_EQ(f16.workspace_bytes(lean), 0u);
  EXPECT_EQ(f16.workspace_bytes({100, 64, 4099, sms}), std::size_t(100) * 4104 * 2 + 16);  // A's rows: 8198 bytes
  lean = {100, 68, 4099, sms};
  lean.speed_extras = false;  // both copies needed
  EXPECT_EQ(f16.workspace_bytes(lean), std::size_t(100) * 4104 * 2 + 16 + std::size_t(4099) * 128 * 2 + 128);
  EXPECT_EQ(tf32.workspace_bytes({5000, 5000, 5001, 132}), std::size_t(5000) * 5004 * 4 + 16);  // A only
  EXPECT_EQ(tf32.workspace_bytes({5000, 5000, 5000, 132, 5000, 5002}), std::size_t(5000) * 5024 * 4 + 128);
  EXPECT_EQ(f16.workspace_bytes({0, 5000, 5001, sms}), 0u);  // nothing to multiply, nothing copied
  // The tail on 132 multiprocessors. 5000^3 in 128 x 256 tiles: 800, 6 rounds and 8 tiles,
  // cut into 16 ranges of 5 of the 79 k-blocks. 4096^3: 512 tiles, a last round of 116, not
  // cut; in 128 x 192 tiles 704, a last round of 44, cut into 3 ranges.
  const auto& wide = gemm_detail::wgmma_tiles(gemm_input::f16)[0];
  const auto& mid = gemm_detail::wgmma_tiles(gemm_input::f16)[1];
  EXPECT_EQ(wide.workspace_bytes({5000, 5000, 5000, 132}) - wide.workspace_bytes({5000, 5000, 5000, sms}),
            std::size_t(8) * 16 * 128 * 256 * 4 + 128);
  EXPECT_EQ(wide.workspace_bytes({4096, 4096, 4096, 132}), 0u);
  EXPECT_EQ(mid.workspace_bytes({4096, 4096, 4096, 132}), std::size_t(44) * 3 * 128 * 192 * 4 + 128);
  lean = {5000, 5000, 5000, 132};
  lean.speed_extras = false;  // where memory is short: neither the copy of B nor the tail
  EXPECT_EQ(wide.workspace_bytes(lean), 0u);
  const int splits = gemm_detail::wgmma_split_count({256, 250, 65536, 132});
  ASSERT_GT(splits, 1);
  EXPECT_EQ(split.workspace_bytes({256, 250, 65536, 132}),
            std::size_t(splits) * 256 * 250 * 4 + std::size_t(65536) * 256 * 2 + 128);  // partials, then B
}

TEST(GemmSelect, RegTiledCopiesOnlyWhereThatPays) {  // host-only
  // Unaligned rows are copied where 2mnk >= 2e9 and K >= 512 (rt_copy_rule): copies cost 3-8 us.
  const gemm_variant& v = find_gemm("reg_tiled");
  EXPECT_GT(v.workspace_bytes({1001, 1001, 1001, 132}), std::size_t(0));  // 2.006e9 flops
  EXPECT_GT(v.workspace_bytes({4097, 4097, 4097, 132}), std::size_t(0));  // 128 x 128 tiles too
  EXPECT_EQ(v.workspace_bytes({4100, 4100, 4100, 132}), std::size_t(0));  // rows aligned
  EXPECT_EQ(v.workspace_bytes({4096, 4096, 4096, 132, 4099, 4100}), std::size_t(4096) * 4096 * 4 + 16)
      << "A alone: its 4096 rows of 4096 floats, +16 bytes to align";
  EXPECT_EQ(v.workspace_bytes({701, 701, 701, 132}), std::size_t(0));     // too small: 0.69e9 flops
  EXPECT_EQ(v.workspace_bytes({1601, 1603, 200, 132}), std::size_t(0));  // K too short
  EXPECT_EQ(v.workspace_bytes({8191, 8191, 63, 132}), std::size_t(0));
  gemm_problem tight{4097, 4097, 4097, 132};
  tight.speed_extras = false;
  EXPECT_EQ(v.workspace_bytes(tight), std::size_t(0));
  // B alone, k rows of n rounded up to a multiple of 4 floats: 2000 x 1004 (+16 to align).
  EXPECT_EQ(v.workspace_bytes({1000, 1001, 2000, 132}), std::size_t(2000) * 1004 * 4 + 16);
}

TEST(GemmSelect, RegTiledTileFollowsShape) {  // host-only
  const auto& shapes = gemm_detail::reg_tiled_shapes();
  auto tile = [&](const gemm_problem& p) { return std::string(shapes.at(gemm_detail::reg_tiled_shape_for(p)).name); };
  EXPECT_EQ(tile({4096, 4096, 4096, 132}), "128x128x8");
  EXPECT_EQ(tile({2048, 2048, 2048, 132}), "128x128x8");  // 256 tiles of 128x128
  EXPECT_EQ(tile({1024, 1024, 1024, 132}), "64x64x16");   // 64 tiles of 128x128: SMs idle
  EXPECT_EQ(tile({4096, 4096, 128, 132}), "128x128x8");   // short K alone does not pick the small tile
  EXPECT_EQ(tile({1500, 1500, 1500, 132}), "64x64x16");   // 144 tiles: 12 SMs would run two
  EXPECT_EQ(tile({3000, 3000, 3000, 132}), "64x64x16");   // 576 tiles: a busiest SM's 5 against 17 quarters
  EXPECT_EQ(tile({3500, 3500, 3500, 132}), "128x128x8");  // 784 tiles: 6 against 23 quarters
  EXPECT_EQ(tile({100000, 64, 64, 132}), "64x64x16");     // N = 64 would pad half of every 128-wide tile
  EXPECT_EQ(tile({5000000, 1, 100, 132}), "128x128x8");   // 64-row tiles: grid too tall
}

TEST(GemmSelect, WgmmaTileFollowsShape) {  // host-only
  // The busiest SM's time decides (wgmma_tile_for; bench/history/tuning-notes-the-code-cites.md, note T11).
  for (gemm_input in : {gemm_input::f16, gemm_input::bf16}) {
    const auto& tiles = gemm_detail::wgmma_tiles(in);
    auto tile = [&](index_t m, index_t n, index_t k) {
      return std::string(tiles.at(gemm_detail::wgmma_tile_for({m, n, k, 132})).name);
    };
    EXPECT_EQ(tile(4096, 4096, 4096), "128x256");
    EXPECT_EQ(tile(8192, 8192, 8192), "128x256");  // 16 rounds against 21 of 192 columns
    EXPECT_EQ(tile(2048, 2048, 2048), "128x256");  // 128 tiles: one round
    EXPECT_EQ(tile(3584, 3584, 3584), "128x256");  // 392 tiles: 3 rounds, against 5 of 128 x 192
    EXPECT_EQ(tile(4096, 4096, 128), "128x256");
    EXPECT_EQ(tile(3072, 3072, 3072), "128x192");  // 3 rounds of 192 columns, against 2 of 256 and a tail
    EXPECT_EQ(tile(2304, 2304, 2304), "128x192");  // 2 rounds either way
    EXPECT_EQ(tile(2560, 2560, 2560), "128x256");  // 2 rounds, against 2 of 192 and a tail of 16 tiles
    EXPECT_EQ(tile(5000, 5000, 5000), "128x256");  // 6 rounds and a tail of 8 tiles in 16 pieces
    EXPECT_EQ(tile(1536, 1536, 1536), "128x192");  // 96 tiles: one round
    EXPECT_EQ(tile(1024, 1024, 1024), "128x128");  // 64 tiles: one round, half the columns
    EXPECT_EQ(tile(1, 1, 1), "128x128");
  }
}

TEST(GemmSelect, SplitCountScalesWithShape) {  // host-only
  EXPECT_EQ(detail::split_k_count({4096, 4096, 4096, 132}), 1);
  EXPECT_GT(detail::split_k_count({128, 128, 262144, 132}), 100);
  EXPECT_EQ(detail::split_k_count({128, 128, 200, 132}), 1);  // K too short to split
  EXPECT_EQ(detail::split_k_count({128, 128, 700, 132}), 5);  // at least 128 of K a split
  EXPECT_EQ(detail::split_k_count({300, 300, 3000, 132}), 23);  // 9 tiles: 29 fill 264 slots; K caps it
  // M = 64: 64x64 tiles (4 blocks an SM): 64 tiles, 8 splits fill 528 slots in one round (9
  // would start a second).
  EXPECT_TRUE(gemm_detail::split_k_small_tile({64, 4096, 4096, 132}));
  EXPECT_FALSE(gemm_detail::split_k_small_tile({256, 256, 65536, 132}));
  EXPECT_EQ(detail::split_k_count({64, 4096, 4096, 132}), 8);
  EXPECT_EQ(detail::split_k_count({64, 4096, 65536, 132}), 8);
  EXPECT_EQ(detail::split_k_count({256, 256, 65536, 132}), 66);
  // wgmma: 128x128 tiles (16-bit) or 256x128 (tf32), as many splits as fill the SMs in one
  // round, each >= 1024 of K; none where the tiles alone fill more than half the SMs.
  EXPECT_EQ(gemm_detail::wgmma_split_count({256, 256, 65536, 132}), 33);
  // M of at most 64 rows: 64 x 64 tiles where they fill one round in at most 4 splits
  // (wgmma_short_tile), else the 128 x 128 tiles' count.
  EXPECT_TRUE(gemm_detail::wgmma_short_tile({64, 4096, 4096, 132}));
  EXPECT_EQ(gemm_detail::wgmma_split_count({64, 4096, 4096, 132}), 2);    // 64 tiles (was 32 x 4)
  EXPECT_EQ(gemm_detail::wgmma_split_count({64, 2048, 8192, 132}), 4);    // 32 tiles
  EXPECT_EQ(gemm_detail::wgmma_split_count({64, 8192, 8192, 132}), 1);    // 128 tiles: one round, unsplit
  EXPECT_FALSE(gemm_detail::wgmma_short_tile({65, 4096, 4096, 132}));     // two rows of 64
  EXPECT_FALSE(gemm_detail::wgmma_short_tile({64, 8512, 4096, 132}));     // 133 tiles: two rounds
  EXPECT_FALSE(gemm_detail::wgmma_short_tile({48, 1024, 65536, 132}));    // 16 tiles would take 8 splits
  EXPECT_EQ(gemm_detail::wgmma_split_count({48, 1024, 65536, 132}), 16);  // 128 x 128: 8 tiles
  EXPECT_EQ(gemm_detail::wgmma_split_count({1024, 1024, 8192, 132}), 2);   // 64 tiles
  EXPECT_EQ(gemm_detail::wgmma_split_count({1024, 1280, 8192, 132}), 1);   // 80 tiles: 2 splits take 2 rounds
  EXPECT_EQ(gemm_detail::wgmma_tf32_split_count({2048, 2048, 20000, 132}), 1);  // 128 tiles
  EXPECT_EQ(gemm_detail::wgmma_tf32_split_count({1024, 1024, 20000, 132}), 4);  // 32 tiles: 4 x 32 <= 132
  EXPECT_EQ(gemm_detail::wgmma_tf32_split_count({256, 256, 65536, 132}), 64);  // 2 tiles; K caps it
  EXPECT_EQ(gemm_detail::wgmma_tf32_split_count({128, 128, 262144, 132}), 132);
  EXPECT_EQ(gemm_detail::wgmma_tf32_split_count({4096, 4096, 4096, 132}), 1);
  EXPECT_EQ(gemm_detail::wgmma_tf32_split_count({256, 256, 1500, 132}), 1);  // K too short for 2 splits
  // tf32x3: 128 x 128 tiles over the three products' 3 K (rounded up to 32 each).
  EXPECT_EQ(gemm_detail::wgmma_tf32x3_split_count({256, 256, 65536, 132}), 33);  // 4 tiles
  EXPECT_EQ(gemm_detail::wgmma_tf32x3_split_count({4096, 4096, 4096, 132}), 1);
  EXPECT_EQ(gemm_detail::wgmma_tf32x3_split_count({128, 128, 300, 132}), 1);  // 3 x 320 of K: too short for 2
  EXPECT_EQ(gemm_detail::wgmma_tf32x3_split_count({128, 128, 700, 132}), 2);  // 3 x 704 of K: 2 ranges of 1056
  // Its workspace: [head | tail] of A (100 rows of 2 x 96 floats) and B's head rows over its
  // tail rows (192 rows of 50 floats at a pitch of 64), each with 128 bytes to align it; the
  // split form's partials first.
  EXPECT_EQ(find_gemm("wgmma_tf32x3").workspace_bytes({100, 50, 70, 132}), std::size_t(100) * 192 * 4 + 128 + 192 * 64 * 4 + 128);
  EXPECT_EQ(find_gemm("wgmma_tf32x3_split_k").workspace_bytes({128, 128, 700, 132}),
            std::size_t(2) * 128 * 128 * 4 + 128 * 1408 * 4 + 128 + 1408 * 128 * 4 + 128);
  EXPECT_EQ(find_gemm("wgmma_tf32x3").workspace_bytes({100, 50, 0, 132}), 0u);
  for (const auto& v : gemm_variants()) {
    if (v.name.substr(0, 4) == "gemv") {  // a matrix times a vector or a few only, however tall
      EXPECT_FALSE(v.can_implement({1000, 1000, 1000, 132}));
      EXPECT_TRUE(v.can_implement({1 << 30, 1, 1, 132}));
      continue;
    }
    // The sm_90a kernels run on a 9.0 device of a build for 90 only (none here without a GPU).
    EXPECT_EQ(v.can_implement({1000, 1000, 1000, 132}), !v.sm90a || sm90a_kernels_available()) << v.name;
    if (!v.sm90a) EXPECT_FALSE(v.can_implement({1 << 30, 1, 1, 132})) << v.name;  // grid too tall
  }
}

}  // namespace
}  // namespace la
