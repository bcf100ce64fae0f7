// Matrix Market reader and writer: every variant, every malformed case with its message and
// line number, the shared edge-case files, and exact write/read round trips.
#include <cmath>
#include <complex>
#include <random>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include <sys/resource.h>
#include <sys/stat.h>
#include <csignal>
#include <filesystem>
#include <unistd.h>
#include <cstdlib>


#include <la/formats/matrix_market.hpp>
#include <la/memory.hpp>
#include <la/parallel.hpp>
#include "test_util.hpp"

namespace la {
namespace {

using test::expect_throw_with;

dense_matrix<double> parse_dense(const std::string& text) { return to_dense(parse_matrix_market<double>(text)); }

// ---- variants ----------------------------------------------------------------------------

TEST(MatrixMarket, CoordinateRealGeneral) {
  mm_header h;
  auto m = parse_matrix_market<double>(
      "%%MatrixMarket matrix coordinate real general\n% c\n2 3 3\n1 1 1.5\n2 3 -2e-3\n1 3 +4\n", "t", &h);
  EXPECT_EQ(h.format, mm_format::coordinate);
  EXPECT_EQ(h.entries, 3);
  EXPECT_EQ(m.rows(), 2);
  EXPECT_EQ(m.cols(), 3);
  EXPECT_EQ(m.row_idx(), (std::vector<index_t>{0, 1, 0}));
  EXPECT_EQ(m.col_idx(), (std::vector<index_t>{0, 2, 2}));
  EXPECT_EQ(m.values(), (std::vector<double>{1.5, -2e-3, 4}));
}

TEST(MatrixMarket, IntegerAndPatternFields) {
  auto i = parse_matrix_market<float>("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 -7\n2 2 +3\n");
  EXPECT_EQ(i.values(), (std::vector<float>{-7, 3}));
  auto p = parse_matrix_market<double>("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n");
  EXPECT_EQ(p.values(), (std::vector<double>{1, 1}));
}

TEST(MatrixMarket, SymmetricIsExpanded) {
  auto d = parse_dense("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 2\n3 1 5\n2 2 4\n");
  dense_matrix<double> e(3, 3, 3, {2, 0, 5, 0, 4, 0, 5, 0, 0});
  EXPECT_EQ(d, e);
}

TEST(MatrixMarket, SkewSymmetricIsExpandedWithNegation) {
  auto d = parse_dense("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n3 1 10\n3 2 20\n");
  dense_matrix<double> e(3, 3, 3, {0, 0, -10, 0, 0, -20, 10, 20, 0});
  EXPECT_EQ(d, e);
}

TEST(MatrixMarket, ArrayIsColumnMajor) {
  auto d = parse_dense("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n");
  dense_matrix<double> e(2, 3, 3, {1, 3, 5, 2, 4, 6});
  EXPECT_EQ(d, e);
}

TEST(MatrixMarket, ArraySymmetricAndSkew) {
  auto s = parse_dense("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n");
  EXPECT_EQ(s, (dense_matrix<double>(3, 3, 3, {1, 2, 3, 2, 4, 5, 3, 5, 6})));
  auto k = parse_dense("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
  EXPECT_EQ(k, (dense_matrix<double>(3, 3, 3, {0, -1, -2, 1, 0, -3, 2, 3, 0})));
}

TEST(MatrixMarket, CommentsBlankLinesCrlfAndSpacing) {
  auto d = parse_dense(
      "%%MatrixMarket Matrix COORDINATE Real General\r\n\r\n% comment\r\n  \t\r\n 2  2   2 \r\n"
      "% inside the data\r\n\r\n1\t1   1.\r\n   2 2 .5\r\n\r\n% trailing comment\r\n");
  EXPECT_EQ(d, (dense_matrix<double>(2, 2, 2, {1, 0, 0, 0.5})));
}

TEST(MatrixMarket, NoFinalNewline) {
  auto m = parse_matrix_market<double>("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 3.25");
  EXPECT_EQ(m.values(), (std::vector<double>{3.25}));
}

TEST(MatrixMarket, NanAndInfAreReadAsValues) {
  auto m = parse_matrix_market<double>("%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 nan\n1 2 -inf\n");
  EXPECT_TRUE(std::isnan(m.values()[0]));
  EXPECT_TRUE(std::isinf(m.values()[1]) && m.values()[1] < 0);
}

TEST(MatrixMarket, FloatUnderflowRoundsAndOverflowIsAnError) {
  auto m = parse_matrix_market<float>("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e-60\n");
  EXPECT_EQ(m.values()[0], 0.0f);
  expect_throw_with<parse_error>(
      [] { parse_matrix_market<float>("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e300\n", "f"); },
      {"f:3:", "overflows float", "double precision"});
  EXPECT_EQ(parse_matrix_market<double>("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e300\n").values()[0], 1e300);
}

// ---- malformed input: message and line number --------------------------------------------

struct bad_case {
  const char* name;
  const char* text;
  std::vector<std::string> parts;  // substrings the message must contain
};

class Malformed : public ::testing::TestWithParam<bad_case> {};

TEST_P(Malformed, IsRejectedWithLineNumber) {
  const bad_case& c = GetParam();
  try {
    parse_matrix_market<double>(c.text, "in.mtx");
    FAIL() << "accepted malformed input: " << c.name;
  } catch (const parse_error& e) {
    for (const auto& p : c.parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\nlacks: " << p;
  }
}

const char* hdr = "%%MatrixMarket matrix coordinate real general\n";
std::string with_hdr(const char* rest) { return std::string(hdr) + rest; }

INSTANTIATE_TEST_SUITE_P(
    Cases, Malformed,
    ::testing::Values(
        bad_case{"empty", "", {"in.mtx:1:", "empty file"}},
        bad_case{"no banner", "3 3 1\n1 1 1\n", {"in.mtx:1:", "no Matrix Market banner"}},
        bad_case{"short banner", "%%MatrixMarket matrix coordinate real\n1 1 0\n", {"in.mtx:1:", "bad banner"}},
        bad_case{"long banner", "%%MatrixMarket matrix coordinate real general extra\n1 1 0\n", {"in.mtx:1:", "bad banner"}},
        bad_case{"bad format", "%%MatrixMarket matrix sparse real general\n1 1 0\n", {":1:", "unknown format 'sparse'"}},
        bad_case{"bad field", "%%MatrixMarket matrix coordinate double general\n1 1 0\n", {":1:", "unknown field 'double'"}},
        bad_case{"bad symmetry", "%%MatrixMarket matrix coordinate real upper\n1 1 0\n", {":1:", "unknown symmetry 'upper'"}},
        bad_case{"bad object", "%%MatrixMarket tensor coordinate real general\n1 1 0\n", {":1:", "unknown object"}},
        bad_case{"array pattern", "%%MatrixMarket matrix array pattern general\n1 1\n", {":1:", "only valid with the 'coordinate'"}},
        bad_case{"no size line", "%%MatrixMarket matrix coordinate real general\n% only a comment\n", {":2:", "before the size line"}},
        bad_case{"size line short", "%%MatrixMarket matrix coordinate real general\n% c\n3 3\n", {"in.mtx:3:", "bad size line", "'rows cols entries'"}},
        bad_case{"size line text", "%%MatrixMarket matrix coordinate real general\n3 x 3\n", {":2:", "bad size line"}},
        bad_case{"size line extra", "%%MatrixMarket matrix array real general\n3 3 9\n", {":2:", "extra text '9'"}},
        bad_case{"size negative", "%%MatrixMarket matrix coordinate real general\n-3 3 1\n", {":2:", "bad size line"}},
        bad_case{"symmetric not square", "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n", {":2:", "must be square"}},
        bad_case{"too big", "%%MatrixMarket matrix coordinate real general\n3000000000 2 1\n", {":2:", "32-bit index limit"}},
        bad_case{"too few", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n\n2 2 2\n", {"in.mtx:5:", "file ends after 2 of the 3 entries declared on line 2"}},
        bad_case{"too many", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n% fine\n2 2 2\n", {"in.mtx:5:", "more entries than the 1 declared on line 2"}},
        bad_case{"index zero", "%%MatrixMarket matrix coordinate real general\n3 3 1\n0 1 1\n", {"in.mtx:3:", "row index 0", "1-based"}},
        bad_case{"col zero", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 0 1\n", {":3:", "column index 0"}},
        bad_case{"row beyond", "%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n", {":3:", "row index 4 is beyond the matrix's 3 rows"}},
        bad_case{"col beyond", "%%MatrixMarket matrix coordinate real general\n3 2 1\n1 3 1\n", {":3:", "column index 3 is beyond the matrix's 2 columns"}},
        bad_case{"negative index", "%%MatrixMarket matrix coordinate real general\n3 3 1\n-1 1 1\n", {":3:", "expected a row index, found '-1'"}},
        bad_case{"bad value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", {":3:", "value 'abc' is not a number"}},
        bad_case{"half number", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1.5x\n", {":3:", "value '1.5x' is not a number"}},
        bad_case{"missing value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", {":3:", "missing value"}},
        bad_case{"not integer", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", {":3:", "'1.5' is not an integer"}},
        bad_case{"upper triangle", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 1\n1 3 2\n", {"in.mtx:4:", "(1, 3) is in the upper triangle"}},
        bad_case{"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", {":3:", "not below the diagonal"}},
        bad_case{"trailing garbage", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1.0 xyz\n", {":3:", "unexpected text 'xyz'"}},
        bad_case{"pattern with value", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1.0\n", {":3:", "unexpected text '1.0'"}},
        bad_case{"array two values", "%%MatrixMarket matrix array real general\n1 2\n1 2\n", {":3:", "unexpected text '2'"}},
        bad_case{"array too few", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", {":5:", "file ends after 3 of the 4"}}),
    [](const auto& info) { return test::test_name(info.param.name); });

TEST(MatrixMarket, NotSupportedFieldsAndObjects) {
  expect_throw_with<not_supported>([] { parse_matrix_market<double>("%%MatrixMarket matrix coordinate complex general\n1 1 0\n", "c.mtx"); },
                                   {"c.mtx:1:", "complex values", "read as real (double)", "std::complex<double>"});
  expect_throw_with<not_supported>([] { parse_matrix_market_csr<float>("%%MatrixMarket matrix array complex hermitian\n1 1\n1 0\n", "h.mtx"); },
                                   {"h.mtx:1:", "complex values", "(float)"});
  expect_throw_with<parse_error>([] { parse_matrix_market<std::complex<double>>("%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n"); },
                                 {":1:", "symmetry 'hermitian' needs field 'complex'", "'symmetric'"});
  expect_throw_with<not_supported>([] { parse_matrix_market<double>("%%MatrixMarket vector coordinate real general\n4 1\n"); },
                                   {"vector", "not supported"});
}

TEST(MatrixMarket, MissingFileIsAnIoError) {
  expect_throw_with<io_error>([] { read_matrix_market<double>("/nonexistent/x.mtx"); },
                              {"cannot open '/nonexistent/x.mtx'", "No such file"});
}

// ---- the shared edge-case files (tests/data/edge, from ../shared/data/edge) --------------

struct edge_case {
  const char* file;
  int outcome;  // 0 read, 1 parse_error, 2 not_supported
  index_t rows, cols, nnz;  // when read: full storage, before duplicates are summed
  std::int64_t line;        // when parse_error: the line it names
  const char* message;      // substring of the error
};

class EdgeFiles : public ::testing::TestWithParam<edge_case> {};

TEST_P(EdgeFiles, ReadOrRejectedAsDocumented) {
  const edge_case& c = GetParam();
  const std::string path = test::edge_dir() + "/" + c.file;
  try {
    const auto m = read_matrix_market<double>(path);
    ASSERT_EQ(c.outcome, 0) << c.file << " was read but should be rejected";
    EXPECT_EQ(m.rows(), c.rows);
    EXPECT_EQ(m.cols(), c.cols);
    EXPECT_EQ(m.nnz(), c.nnz);
  } catch (const parse_error& e) {
    ASSERT_EQ(c.outcome, 1) << c.file << ": " << e.what();
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(":" + std::to_string(c.line) + ":"), std::string::npos) << e.what();
  } catch (const not_supported& e) {
    ASSERT_EQ(c.outcome, 2) << c.file << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shared, EdgeFiles,
    ::testing::Values(
        edge_case{"nist_ex1.mtx", 0, 5, 5, 8, 0, ""},
        edge_case{"nist_ex1_more_freeformat.mtx", 0, 5, 5, 8, 0, ""},
        edge_case{"nist_ex1_crlf.mtx", 0, 5, 5, 8, 0, ""},
        edge_case{"banner_leading_space.mtx", 1, 0, 0, 0, 1, "no Matrix Market banner"},
        edge_case{"lines_indented.mtx", 1, 0, 0, 0, 1, "no Matrix Market banner"},
        edge_case{"eye3_pattern.mtx", 0, 3, 3, 3, 0, ""},
        edge_case{"row_3by4_integer.mtx", 0, 3, 4, 4, 0, ""},
        edge_case{"skew_symmetric.mtx", 0, 3, 3, 4, 0, ""},
        edge_case{"hermitian_complex.mtx", 2, 0, 0, 0, 0, "complex values"},
        edge_case{"pattern_symmetric.mtx", 0, 3, 3, 4, 0, ""},
        edge_case{"array_general.mtx", 0, 3, 3, 9, 0, ""},
        edge_case{"array_symmetric.mtx", 0, 3, 3, 9, 0, ""},
        edge_case{"vector_coordinate.mtx", 2, 0, 0, 0, 0, "vector"},
        edge_case{"duplicates_int8.mtx", 0, 3, 1, 4, 0, ""},
        edge_case{"dim_over_32bit.mtx", 1, 0, 0, 0, 3, "32-bit index limit"},
        edge_case{"invalid_index_out_of_range.mtx", 1, 0, 0, 0, 5, "row index 5000 is beyond"},
        edge_case{"invalid_truncated.mtx", 1, 0, 0, 0, 1, "unknown field 'double'"},
        edge_case{"invalid_bad_banner.mtx", 1, 0, 0, 0, 1, "no Matrix Market banner"},
        edge_case{"empty_3x4.mtx", 0, 3, 4, 0, 0, ""},
        edge_case{"zero_cols_3x0.mtx", 0, 3, 0, 0, 0, ""},
        edge_case{"array_real_3x3.mtx", 0, 3, 3, 9, 0, ""},
        edge_case{"array_complex_3x3.mtx", 2, 0, 0, 0, 0, "complex values"},
        edge_case{"skew_integer.mtx", 0, 3, 3, 6, 0, ""},
        edge_case{"west0067_nan.mtx", 0, 67, 67, 295, 0, ""},
        edge_case{"west0067_noheader.mtx", 1, 0, 0, 0, 1, "no Matrix Market banner"},
        edge_case{"west0067_jumbled.mtx", 0, 67, 67, 294, 0, ""},
        edge_case{"LFAT5_hypersparse.mtx", 0, 2000, 2000, 46, 0, ""},
        edge_case{"mangled_bad_value.mtx", 1, 0, 0, 0, 5, "missing value"}),
    [](const auto& info) { return test::test_name(info.param.file); });

TEST(EdgeFileValues, NistVariantsAgreeAndValuesParse) {
  const auto a = to_csr(read_matrix_market<double>(test::edge_dir() + "/nist_ex1.mtx"));
  EXPECT_EQ(to_csr(read_matrix_market<double>(test::edge_dir() + "/nist_ex1_more_freeformat.mtx")), a);
  EXPECT_EQ(to_csr(read_matrix_market<double>(test::edge_dir() + "/nist_ex1_crlf.mtx")), a);
  EXPECT_EQ(to_dense(a)(3, 3), -280.0);
  const auto d = to_dense(read_matrix_market<double>(test::edge_dir() + "/array_real_3x3.mtx"));
  EXPECT_EQ(d(0, 0), 0.646);
  EXPECT_EQ(d(0, 1), 0.276);  // column-major
  const auto dup = to_csr(read_matrix_market<double>(test::edge_dir() + "/duplicates_int8.mtx"));
  EXPECT_EQ(dup.nnz(), 3);
  EXPECT_EQ(dup.values()[2], 2.0);  // (3,1) given twice, summed
  const auto nan = read_matrix_market<double>(test::edge_dir() + "/west0067_nan.mtx");
  EXPECT_TRUE(std::isnan(nan.values()[0]));
}

// ---- complex values (issue 69) ---------------------------------------------------------

using zd = std::complex<double>;
using zf = std::complex<float>;

TEST(ComplexMatrixMarket, CoordinateGeneralReadsBothParts) {
  mm_header h;
  const auto m = parse_matrix_market<zd>(
      "%%MatrixMarket matrix coordinate complex general\n2 3 3\n1 1 1.5 -2\n2 3 -2e-3 +4\n1 3 0 1e300\n", "t", &h);
  EXPECT_EQ(h.field, mm_field::complex);
  EXPECT_EQ(m.values(), (std::vector<zd>{{1.5, -2}, {-2e-3, 4}, {0, 1e300}}));
  // The same text in single precision, and an imaginary part that overflows float.
  EXPECT_EQ(parse_matrix_market<zf>("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 0.5 -0.25\n").values(),
            (std::vector<zf>{{0.5f, -0.25f}}));
  expect_throw_with<parse_error>(
      [] { parse_matrix_market<zf>("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 0 1e300\n"); },
      {":3:", "overflows float"});
}

TEST(ComplexMatrixMarket, HermitianMirrorsConjugatedAndSymmetricAndSkewDoNot) {
  const auto herm = to_dense(read_matrix_market<zd>(test::edge_dir() + "/hermitian_complex.mtx"));
  EXPECT_EQ(herm(2, 0), zd(10, 1));
  EXPECT_EQ(herm(0, 2), zd(10, -1));
  EXPECT_EQ(herm(2, 1), zd(20, 2));
  EXPECT_EQ(herm(1, 2), zd(20, -2));
  EXPECT_EQ(herm(2, 2), zd(30, 0));
  const auto sym = to_dense(parse_matrix_market<zd>("%%MatrixMarket matrix coordinate complex symmetric\n2 2 2\n2 1 1 2\n1 1 3 4\n"));
  EXPECT_EQ(sym(0, 1), zd(1, 2));  // complex symmetric: A = A^T, no conjugate
  EXPECT_EQ(sym(1, 0), zd(1, 2));
  EXPECT_EQ(sym(0, 0), zd(3, 4));  // a complex symmetric diagonal may be complex
  const auto skew = to_dense(parse_matrix_market<zd>("%%MatrixMarket matrix coordinate complex skew-symmetric\n2 2 1\n2 1 1 2\n"));
  EXPECT_EQ(skew(0, 1), zd(-1, -2));
  // A capital H, as the SuiteSparse collection spells it, and the full count after the mirror.
  mm_header h;
  const auto mhd = read_matrix_market_csr<zd>(test::data_dir() + "/mhd1280b.mtx", &h);
  EXPECT_EQ(h.symmetry, mm_symmetry::hermitian);
  EXPECT_EQ(mhd.rows(), 1280);
  EXPECT_EQ(mhd.nnz(), 22778);
  const auto mt = to_csc(mhd);  // A^H = A: the transpose's values are the conjugates
  ASSERT_EQ(mt.col_ptr(), mhd.row_ptr());
  for (std::size_t k = 0; k < mhd.values().size(); ++k) ASSERT_EQ(std::conj(mt.values()[k]), mhd.values()[k]) << k;
}

TEST(ComplexMatrixMarket, ArrayComplexIsColumnMajorPairs) {
  const auto d = to_dense(read_matrix_market<zd>(test::edge_dir() + "/array_complex_3x3.mtx"));
  EXPECT_EQ(d(0, 0), zd(0.646, 0.959));
  EXPECT_EQ(d(1, 0), zd(0.709, 0.340));
  EXPECT_EQ(d(0, 1), zd(0.276, 0.228));  // column-major
  EXPECT_EQ(d(2, 2), zd(0.498, 0.890));
  const auto h = to_dense(parse_matrix_market<zd>("%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n4 0\n"));
  EXPECT_EQ(h(1, 0), zd(2, 3));
  EXPECT_EQ(h(0, 1), zd(2, -3));
  EXPECT_EQ(h(1, 1), zd(4, 0));
}

TEST(ComplexMatrixMarket, RealIntegerAndPatternFilesReadWithZeroImaginaryParts) {
  EXPECT_EQ(parse_matrix_market<zd>("%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 -1.5\n1 2 2\n").values(),
            (std::vector<zd>{{-1.5, 0}, {2, 0}}));
  EXPECT_EQ(parse_matrix_market<zf>("%%MatrixMarket matrix coordinate integer symmetric\n2 2 1\n2 1 -7\n").values(),
            (std::vector<zf>{{-7, 0}, {-7, 0}}));
  EXPECT_EQ(parse_matrix_market<zd>("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1\n").values(),
            (std::vector<zd>{{1, 0}}));
  // Every real system of data/ reads as complex with the same real parts.
  const auto real = read_matrix_market_csr<double>(test::data_dir() + "/west0479.mtx");
  const auto cplx = read_matrix_market_csr<zd>(test::data_dir() + "/west0479.mtx");
  ASSERT_EQ(cplx.col_idx(), real.col_idx());
  for (std::size_t k = 0; k < real.values().size(); ++k) ASSERT_EQ(cplx.values()[k], zd(real.values()[k], 0));
}

TEST(ComplexMatrixMarket, MalformedComplexEntriesNameTheLine) {
  const std::string head = "%%MatrixMarket matrix coordinate complex general\n2 2 2\n1 1 1 2\n";
  expect_throw_with<parse_error>([&] { parse_matrix_market<zd>(head + "2 2 3\n"); },
                                 {":4:", "missing imaginary part", "'real imaginary'"});
  expect_throw_with<parse_error>([&] { parse_matrix_market<zd>(head + "2 2\n"); }, {":4:", "missing value", "a real and an imaginary part"});
  expect_throw_with<parse_error>([&] { parse_matrix_market<zd>(head + "2 2 1 i\n"); }, {":4:", "'i' is not a number"});
  expect_throw_with<parse_error>([&] { parse_matrix_market<zd>(head + "2 2 1 2 3\n"); }, {":4:", "unexpected text '3'"});
  const std::string herm = "%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n";
  expect_throw_with<parse_error>([&] { parse_matrix_market<zd>(herm + "1 1 1 0\n2 2 1 0.5\n"); },
                                 {":4:", "diagonal entry (2, 2) of a hermitian matrix", "imaginary part 0.5", "diagonal is real"});
  expect_throw_with<parse_error>([&] { parse_matrix_market<zd>(herm + "1 2 1 0\n2 2 1 0\n"); },
                                 {":3:", "upper triangle", "a hermitian file stores only the lower triangle"});
  expect_throw_with<parse_error>([] { parse_matrix_market<zd>("%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n4 1\n"); },
                                 {":5:", "diagonal entry (2, 2)"});
}

TEST(ComplexMatrixMarket, ParallelParseMatchesTheSequentialOne) {
  std::mt19937 g(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::string text = "%%MatrixMarket matrix coordinate complex hermitian\n300 300 2000\n";
  for (int e = 0; e < 2000; ++e) {
    const int i = 1 + static_cast<int>(g() % 300), j = 1 + static_cast<int>(g() % static_cast<unsigned>(i));
    text += std::to_string(i) + " " + std::to_string(j) + " " + std::to_string(u(g)) + " " + (i == j ? "0" : std::to_string(u(g))) + "\n";
  }
  mm_read_options one, many;
  one.threads = 1;
  many.threads = 4, many.min_bytes_per_thread = 1;
  EXPECT_EQ(parse_matrix_market_csr<zd>(text, "t", nullptr, many), parse_matrix_market_csr<zd>(text, "t", nullptr, one));
  EXPECT_EQ(parse_matrix_market<zd>(text, "t", nullptr, many).values(), parse_matrix_market<zd>(text, "t", nullptr, one).values());
}

template <typename Z>
csr_matrix<Z> random_complex(index_t n, std::mt19937& g, bool hermitian) {
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  std::vector<index_t> r, c;
  std::vector<Z> v;
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j <= i; ++j) {
      if (g() % 4 != 0 && i != j) continue;
      using R = real_of_t<Z>;
      const Z x(static_cast<R>(u(g)), i == j && hermitian ? R(0) : static_cast<R>(u(g) * 1e-7));
      r.push_back(i), c.push_back(j), v.push_back(x);
      if (i != j) r.push_back(j), c.push_back(i), v.push_back(hermitian ? std::conj(x) : x);
    }
  return to_csr(coo_matrix<Z>(n, n, std::move(r), std::move(c), std::move(v)));
}

template <typename Z>
class ComplexWrite : public ::testing::Test {};
using complex_types = ::testing::Types<zf, zd>;
TYPED_TEST_SUITE(ComplexWrite, complex_types);

TYPED_TEST(ComplexWrite, EveryFormAndSymmetryRoundTripsExactly) {
  using Z = TypeParam;
  std::mt19937 g(11);
  for (index_t n : {1, 31, 33}) {
    const auto herm = random_complex<Z>(n, g, true), sym = random_complex<Z>(n, g, false);
    for (mm_format f : {mm_format::coordinate, mm_format::array}) {
      // An array holds every element, zeros included: compared as dense matrices.
      const auto same = [&](const std::string& text, const csr_matrix<Z>& want, mm_header* h) {
        if (f == mm_format::coordinate) EXPECT_EQ(parse_matrix_market_csr<Z>(text, "w", h), want);
        else EXPECT_EQ(to_dense(parse_matrix_market<Z>(text, "w", h)), to_dense(want));
      };
      mm_header h;
      const std::string general = format_matrix_market(sym, {f, mm_symmetry::general});
      EXPECT_EQ(general.rfind(std::string("%%MatrixMarket matrix ") + to_string(f) + " complex general\n", 0), 0u);
      same(general, sym, &h);
      same(format_matrix_market(sym, {f, mm_symmetry::symmetric}), sym, &h);
      EXPECT_EQ(h.symmetry, mm_symmetry::symmetric);
      same(format_matrix_market(herm, {f, mm_symmetry::hermitian}), herm, &h);
      EXPECT_EQ(h.symmetry, mm_symmetry::hermitian);
      EXPECT_EQ(h.field, mm_field::complex);
    }
    if (n > 1) {  // a complex symmetric matrix is not Hermitian, and the other way round
      expect_throw_with<invalid_argument>([&] { format_matrix_market(sym, {mm_format::coordinate, mm_symmetry::hermitian}); },
                                          {"cannot write as hermitian", "not exactly Hermitian (A != A^H)"});
      expect_throw_with<invalid_argument>([&] { format_matrix_market(herm, {mm_format::coordinate, mm_symmetry::symmetric}); },
                                          {"cannot write as symmetric", "not exactly symmetric (A != A^T)"});
    }
  }
  const std::vector<Z> v = {Z(1, -2), Z(0.1f, 3e-5f), Z(-0.0f, 0)};
  const std::string vt = format_matrix_market_vector(v);
  EXPECT_EQ(vt.rfind("%%MatrixMarket matrix array complex general\n", 0), 0u);
  EXPECT_EQ(matrix_market_vector(parse_matrix_market<Z>(vt), "v"), v);
}

TEST(ComplexMatrixMarket, HermitianOutputIsForComplexValues) {
  const csr_matrix<double> a = to_csr(coo_matrix<double>(1, 1, {0}, {0}, {2.0}));
  expect_throw_with<invalid_argument>([&] { format_matrix_market(a, {mm_format::coordinate, mm_symmetry::hermitian}); },
                                      {"hermitian output is for complex values", "written as symmetric"});
  EXPECT_GT(matrix_market_text_bytes(10, 10, 100, mm_format::coordinate, 16, true),
            matrix_market_text_bytes(10, 10, 100, mm_format::coordinate, 8));
}

// ---- writing -----------------------------------------------------------------------------

template <typename T>
class Write : public ::testing::Test {};
TYPED_TEST_SUITE(Write, test::value_types);

TYPED_TEST(Write, CoordinateGeneralRoundTripsExactly) {
  using T = TypeParam;
  std::mt19937 g(3);
  auto a = test::random_csr<T>({41, 29, 0.2, true, true, true}, g);
  for (T& v : a.values()) v *= static_cast<T>(std::pow(10.0, std::uniform_int_distribution<int>(-30, 30)(g)));
  const std::string text = format_matrix_market(a);
  EXPECT_EQ(text.rfind("%%MatrixMarket matrix coordinate real general\n", 0), 0u);
  EXPECT_EQ(to_csr(parse_matrix_market<T>(text)), a);
}

TYPED_TEST(Write, SymmetricWritesLowerTriangleAndRoundTrips) {
  using T = TypeParam;
  std::mt19937 g(4);
  auto l = to_dense(test::random_csr<T>({30, 30, 0.2, false, false}, g));
  dense_matrix<T> s(30, 30);
  for (index_t i = 0; i < 30; ++i)
    for (index_t j = 0; j <= i; ++j) s(i, j) = s(j, i) = l(i, j);
  const auto a = to_csr(s);
  const std::string text = format_matrix_market(a, {mm_format::coordinate, mm_symmetry::symmetric});
  mm_header h;
  EXPECT_EQ(to_csr(parse_matrix_market<T>(text, "s", &h)), a);
  EXPECT_EQ(h.symmetry, mm_symmetry::symmetric);
  EXPECT_LT(h.entries, a.nnz());  // only the lower triangle was stored
  const std::string arr = format_matrix_market(a, {mm_format::array, mm_symmetry::symmetric});
  EXPECT_EQ(to_dense(parse_matrix_market<T>(arr)), s);
}

TYPED_TEST(Write, SymmetricRefusesNonSymmetric) {
  using T = TypeParam;
  csr_matrix<T> a(2, 2, {0, 1, 2}, {1, 0}, {T(1), T(2)});
  expect_throw_with<invalid_argument>([&] { format_matrix_market(a, {mm_format::coordinate, mm_symmetry::symmetric}); },
                                      {"not exactly symmetric", "general"});
}

TYPED_TEST(Write, ArrayRoundTrips) {
  using T = TypeParam;
  std::mt19937 g(5);
  const auto a = test::random_csr<T>({13, 7, 0.5, true, true}, g);
  const std::string text = format_matrix_market(a, {mm_format::array, mm_symmetry::general});
  EXPECT_EQ(text.rfind("%%MatrixMarket matrix array real general\n", 0), 0u);
  EXPECT_EQ(to_dense(parse_matrix_market<T>(text)), to_dense(a));
}

// ---- the file path: chunked reads, lines across chunk boundaries -------------------------

TEST(MatrixMarketFile, LargeFileMatchesInMemoryParse) {
  std::mt19937 g(6);
  const auto a = test::random_csr<double>({3000, 3000, 0.03, true, true, true}, g);  // ~8 MB of text
  std::string text = format_matrix_market(a);
  text.insert(text.find('\n') + 1, "%" + std::string(5u << 20, 'x') + "\n");  // a 5 MiB comment line
  const std::string path = ::testing::TempDir() + "la_large.mtx";
  { std::ofstream(path, std::ios::binary) << text; }
  EXPECT_EQ(to_csr(read_matrix_market<double>(path)), a);
  const auto h = read_matrix_market_header(path);
  EXPECT_EQ(h.rows, 3000);
  EXPECT_EQ(h.entries, a.nnz());
  std::remove(path.c_str());
}

TEST(MatrixMarketFile, VectorRoundTrip) {
  const std::string path = ::testing::TempDir() + "la_vec.mtx";
  std::vector<double> v{1.0 / 3, -2, 1e-300, 0};
  write_matrix_market_vector(path, v);
  EXPECT_EQ(read_matrix_market_vector<double>(path), v);
  std::remove(path.c_str());
}


// ---- the parallel parse: same matrix, or same error and line, as one thread ---------------

std::string entries_text(const csr_matrix<double>& m) {
  std::string r = "csr " + std::to_string(m.rows()) + "x" + std::to_string(m.cols()) + ":";
  for (index_t i = 0; i < m.rows(); ++i)
    for (index_t k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
      r += " " + std::to_string(i) + "," + std::to_string(m.col_idx()[k]) + "=" + std::to_string(m.values()[k]);
  return r;
}

/// Parses `text` on one thread and on several (chunks as small as one byte allow) and expects
/// the same outcome: equal matrices, or the same exception type, message and line.
void expect_same_as_one_thread(const std::string& text, const std::string& what) {
  auto outcome = [&](int threads) -> std::string {
    mm_read_options opt;
    opt.threads = threads;
    opt.min_bytes_per_thread = 1;
    try {
      const auto m = parse_matrix_market<double>(text, "in.mtx", nullptr, opt);
      std::string r = "ok " + std::to_string(m.rows()) + "x" + std::to_string(m.cols()) + ":";
      for (count_t k = 0; k < m.nnz(); ++k)
        r += " " + std::to_string(m.row_idx()[k]) + "," + std::to_string(m.col_idx()[k]) + "=" +
             std::to_string(m.values()[k]);
      return r;
    } catch (const parse_error& e) {
      return "parse_error line " + std::to_string(e.line()) + ": " + e.what();
    } catch (const not_supported& e) {
      return std::string("not_supported: ") + e.what();
    }
  };
  // Straight to CSR: the same as to_csr of the COO result, or the same error.
  auto csr_outcome = [&](int threads, bool wide) -> std::string {
    mm_read_options opt;
    opt.threads = threads;
    opt.min_bytes_per_thread = 1;
    try {
      if (wide) return entries_text(to_csr(parse_matrix_market_csr<double, std::int64_t>(text, "in.mtx", nullptr, opt)));
      const auto direct = parse_matrix_market_csr<double>(text, "in.mtx", nullptr, opt);
      const auto via_coo = to_csr(parse_matrix_market<double>(text, "in.mtx", nullptr, opt));
      if (entries_text(direct) != entries_text(via_coo)) return "direct CSR differs from to_csr(COO)";  // NaN-safe
      return entries_text(direct);
    } catch (const parse_error& e) {
      return "parse_error line " + std::to_string(e.line()) + ": " + e.what();
    } catch (const not_supported& e) {
      return std::string("not_supported: ") + e.what();
    }
  };
  const std::string one = outcome(1), csr_one = csr_outcome(1, false);
  for (int t : {2, 3, 8}) {
    EXPECT_EQ(outcome(t), one) << what << " with " << t << " threads";
    EXPECT_EQ(csr_outcome(t, false), csr_one) << what << " to CSR with " << t << " threads";
    EXPECT_EQ(csr_outcome(t, true), csr_one) << what << " to CSR, 64-bit offsets, with " << t << " threads";
  }
}

TEST(ParallelParse, MalformedCasesGiveTheSameErrors) {
  const std::string h = hdr;
  const std::vector<std::string> texts = {
      h + "3 3 3\n1 1 1\n\n2 2 2\n",                       // too few
      h + "3 3 1\n1 1 1\n% fine\n2 2 2\n",                  // too many, in a later chunk
      h + "3 3 4\n1 1 1\n2 2 2\n3 3 3\n1 2 x\n",           // bad value in the last chunk
      h + "3 3 4\n1 1 1\n2 2 2\n4 3 3\n1 2 1\n",           // out of range in the middle
      h + "3 3 2\n1 1 1\n2 2 2\n\n\n% trailing comment\n",  // fine, blank tail
      h + "3 3 2\n1 1 1\n2 2 2\n3 3 3\n4 4 4\n",           // two too many
      h + "3 3 2\r\n1 1 1\r\n% c\r\n2 2 2",                 // CRLF, no final newline
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 2\n1 3 4\n",  // upper triangle
      "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 1\n3 2\n",
      "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 -5\n3 1 7\n",
      "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
  };
  for (const auto& t : texts) expect_same_as_one_thread(t, t);
}

TEST(ParallelParse, EdgeFilesAndDataGiveTheSameResult) {
  std::vector<std::string> paths;
  for (const char* f : {"nist_ex1.mtx", "nist_ex1_crlf.mtx", "skew_symmetric.mtx", "pattern_symmetric.mtx",
                        "duplicates_int8.mtx", "invalid_index_out_of_range.mtx", "west0067_nan.mtx",
                        "west0067_jumbled.mtx", "LFAT5_hypersparse.mtx", "mangled_bad_value.mtx", "empty_3x4.mtx"})
    paths.push_back(test::edge_dir() + "/" + f);
  for (const char* f : {"bcsstk01.mtx", "gr_30_30.mtx", "1138_bus.mtx"}) paths.push_back(test::data_dir() + "/" + f);
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    expect_same_as_one_thread(text, p);
  }
}

TEST(ParallelParse, RandomMatricesThroughTheFilePath) {
  // Through read_matrix_market (the memory-mapped file), several threads against one.
  std::mt19937 g(21);
  const auto a = test::random_csr<double>({500, 400, 0.05, true, true, true}, g);
  const std::string path = ::testing::TempDir() + "la_par.mtx";
  write_matrix_market(path, a);
  mm_read_options one, many;
  one.threads = 1;
  many.threads = 4;
  many.min_bytes_per_thread = 1;
  const auto m1 = read_matrix_market<double>(path, nullptr, one);
  EXPECT_EQ(read_matrix_market<double>(path, nullptr, many), m1);
  EXPECT_EQ(to_csr(m1), a);
  EXPECT_EQ(read_matrix_market_csr<double>(path, nullptr, many), a);
  EXPECT_EQ(read_matrix_market_csr<double>(path, nullptr, one), a);
  EXPECT_EQ((read_matrix_market_csr<double, std::int64_t>(path, nullptr, many)), to_csr<std::int64_t>(a));
  std::remove(path.c_str());
}

TEST(ParallelParse, ThreadCountFromTheEnvironment) {
  // LA_THREADS sets the default; the result does not depend on it.
  std::mt19937 g(22);
  const auto a = test::random_csr<double>({200, 200, 0.1, true, true}, g);
  const std::string text = format_matrix_market(a);
  mm_read_options opt;
  opt.min_bytes_per_thread = 1;
  ::setenv("LA_THREADS", "3", 1);
  EXPECT_EQ(thread_count(), 3);  // the variable is read
  EXPECT_EQ(thread_count(2), 2);  // an explicit count wins
  const auto m3 = parse_matrix_market<double>(text, "t", nullptr, opt);
  ::setenv("LA_THREADS", "1", 1);
  const auto m1 = parse_matrix_market<double>(text, "t", nullptr, opt);
  for (const char* bad : {"x", "0", "-2", "999", "3x"}) {  // checked like an option, never ignored
    ::setenv("LA_THREADS", bad, 1);
    expect_throw_with<invalid_argument>([] { (void)thread_count(); }, {"LA_THREADS", bad});
  }
  ::unsetenv("LA_THREADS");
  EXPECT_EQ(m3, m1);
  EXPECT_EQ(to_csr(m1), a);
}

TEST(MatrixMarketFile, PipesAreStreamed) {
  // Not a regular file: read in 4 MiB chunks on one thread, lines across chunk boundaries.
  std::mt19937 g(23);
  const auto a = test::random_csr<double>({3000, 3000, 0.03, true, true, true}, g);  // ~8 MB of text
  const std::string text = format_matrix_market(a);
  const std::string fifo = ::testing::TempDir() + "la_fifo.mtx";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << text; });
  const auto m = read_matrix_market<double>(fifo);
  writer.join();
  std::thread writer2([&] { std::ofstream(fifo, std::ios::binary) << text; });
  const auto direct = read_matrix_market_csr<double>(fifo);
  writer2.join();
  EXPECT_EQ(direct, a);
  std::remove(fifo.c_str());
  EXPECT_EQ(to_csr(m), a);
}

TEST(MatrixMarket, EntryCountsPastTwoToTheThirtyOneAreAccepted) {
  // The header of a file declaring 2^31 + 1 entries reads (offsets are then 64-bit); the
  // body is checked without allocating for it: the file ends after the first entry.
  const std::string text = std::string(hdr) + "10 10 2147483649\n1 1 1\n";
  const std::string path = ::testing::TempDir() + "la_big_header.mtx";
  { std::ofstream(path, std::ios::binary) << text; }
  const auto h = read_matrix_market_header(path);
  EXPECT_EQ(h.entries, 2147483649LL);
  EXPECT_TRUE(needs_64bit_offsets(h.entries));
  test::expect_throw_with<parse_error>([&] { read_matrix_market<double>(path); },
                                       {"file ends after 1 of the 2147483649 entries"});
  std::remove(path.c_str());
}


TEST(MatrixMarket, IndicesOfEveryLengthAndSeparator) {
  // Indices of 1 to 10 digits (leading zeros too), followed by a space, a tab, CR or the end
  // of the line, with and without 8 readable bytes after them: the 8-bytes-at-once path and
  // the digit-by-digit path must agree.
  std::mt19937 g(31);
  for (int digits = 1; digits <= 10; ++digits)
    for (const char* sep : {" ", "\t", "  ", " \t "})
      for (bool pattern : {false, true})
        for (int rep = 0; rep < 5; ++rep) {
          std::int64_t hi = 1;
          for (int d = 0; d < digits; ++d) hi *= 10;
          const std::int64_t i = std::uniform_int_distribution<std::int64_t>(1, std::min<std::int64_t>(hi - 1, max_index))(g);
          const std::int64_t j = std::uniform_int_distribution<std::int64_t>(1, std::min<std::int64_t>(hi - 1, max_index))(g);
          std::string si = std::to_string(i), sj = std::to_string(j);
          if (rep == 1) si = std::string(static_cast<std::size_t>(std::max<int>(0, digits - int(si.size()))), '0') + si;
          const std::string text = std::string("%%MatrixMarket matrix coordinate ") + (pattern ? "pattern" : "real") +
                                   " general\n2147483647 2147483647 1\n" + si + sep + sj + (pattern ? "" : std::string(sep) + "2.5") +
                                   (rep == 2 ? "\r\n" : rep == 3 ? "" : "\n");
          const auto m = parse_matrix_market<double>(text);
          ASSERT_EQ(m.nnz(), 1) << text;
          EXPECT_EQ(m.row_idx()[0], i - 1) << text;
          EXPECT_EQ(m.col_idx()[0], j - 1) << text;
          EXPECT_EQ(m.values()[0], pattern ? 1.0 : 2.5) << text;
        }
  test::expect_throw_with<parse_error>(
      [] { parse_matrix_market<double>("%%MatrixMarket matrix coordinate real general\n3 3 1\n1x2 1 1\n"); },
      {"expected a row index, found '1x2'"});
  test::expect_throw_with<parse_error>(
      [] { parse_matrix_market<double>("%%MatrixMarket matrix coordinate real general\n3 3 1\n12345678 1 1.0\n"); },
      {"row index 12345678 is beyond"});
}


// ---- hardening: values read right or rejected, messages short and escaped ---------------

TEST(Hardening, IntegerValuesKeepEveryDigit) {
  const std::string h = "%%MatrixMarket matrix coordinate integer general\n1 6 6\n";
  const auto m = parse_matrix_market<double>(h + "1 1 9223372036854775807\n1 2 1000000000000000000000\n1 3 -5\n"
                                                 "1 4 +5\n1 5 123456789012345678901234567890\n1 6 0\n");
  EXPECT_EQ(m.values()[0], 9223372036854775807.0);  // the nearest double, not 922337203685477632
  EXPECT_EQ(m.values()[1], 1e21);
  EXPECT_EQ(m.values()[2], -5.0);
  EXPECT_EQ(m.values()[3], 5.0);
  EXPECT_EQ(m.values()[4], 123456789012345678901234567890.0);
  const auto f = parse_matrix_market<float>(h + "1 1 9223372036854775807\n1 2 1000000000000000000000\n1 3 -5\n"
                                                "1 4 +5\n1 5 16777217\n1 6 0\n");
  EXPECT_EQ(f.values()[0], 9223372036854775807.0f);
  EXPECT_EQ(f.values()[1], 1e21f);
  EXPECT_EQ(f.values()[4], 16777216.0f);  // nearest float (ties to even)
  test::expect_throw_with<parse_error>(
      [&] { parse_matrix_market<float>(h.substr(0, h.size() - 6) + "1 1 1\n1 1 1" + std::string(40, '0') + "\n", "in.mtx"); },
      {"in.mtx:3:", "overflows float"});
  for (const char* bad : {"+-5", "--5", "-+5", "5.0", "5e3", "0x10", "5-"})
    test::expect_throw_with<parse_error>(
        [&] { parse_matrix_market<double>(h.substr(0, h.size() - 6) + "1 1 1\n1 1 " + bad + "\n", "in.mtx"); },
        {"in.mtx:3:", "is not an integer"});
}

TEST(Hardening, OneSignAtMostForEverySpelling) {
  const std::string h = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 ";
  for (const char* bad : {"+-1e999", "+-1", "+-nan", "+-inf", "++1", "--1", "-+1", "+ 1"})
    test::expect_throw_with<parse_error>([&] { parse_matrix_market<double>(h + bad + "\n", "in.mtx"); }, {"in.mtx:3:"});
  test::expect_throw_with<parse_error>([&] { parse_matrix_market<double>(h + "+-1e999\n", "in.mtx"); },
                                       {"has more than one sign"});
  for (const char* over : {"-1e999", "+1e999", "1e999"})
    test::expect_throw_with<parse_error>([&] { parse_matrix_market<double>(h + over + "\n", "in.mtx"); },
                                         {"in.mtx:3:", "overflows double"});
  EXPECT_EQ(parse_matrix_market<double>(h + "+1.5\n").values()[0], 1.5);
  EXPECT_EQ(parse_matrix_market<double>(h + "-1.5\n").values()[0], -1.5);
  EXPECT_EQ(parse_matrix_market<double>(h + "+inf\n").values()[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_matrix_market<double>(h + "-inf\n").values()[0], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::signbit(parse_matrix_market<double>(h + "-1e-400\n").values()[0]));  // underflow: signed zero
}

TEST(Hardening, MessagesQuoteTokensShortAndEscaped) {
  // A NUL byte in a token no longer cuts the message short.
  std::string text = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1";
  text += '\0';
  text += "x\n";
  try {
    parse_matrix_market<double>(text, "in.mtx");
    FAIL() << "accepted";
  } catch (const parse_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'1\\x00x' is not a number"), std::string::npos) << msg;
  }
  // A 9-million-digit token is quoted by its first 60 characters and its length.
  const std::string big = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1" + std::string(9'000'000, '0') + "\n";
  try {
    parse_matrix_market<double>(big, "in.mtx");
    FAIL() << "accepted";
  } catch (const parse_error& e) {
    const std::string msg = e.what();
    EXPECT_LT(msg.size(), 300u) << msg.substr(0, 300);
    EXPECT_NE(msg.find("overflows double"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(9000001 characters)"), std::string::npos) << msg;
  }
}

TEST(Hardening, FailedWritesLeaveTheTargetAsItWas) {
  // A file-size limit makes the write fail part way (as a full disk does): the target keeps
  // its old content and no temporary is left behind.
  const std::string dir = ::testing::TempDir() + "la_atomic_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string target = dir + "/A.mtx";
  { std::ofstream(target) << "old content\n"; }
  std::mt19937 g(3);
  const auto a = test::random_csr<double>({300, 300, 0.2, false, false}, g);  // ~400 kB of text
  ::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    write_matrix_market(target, a);
  } catch (const io_error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("was not changed"), std::string::npos) << e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  EXPECT_TRUE(threw);
  std::ifstream in(target);
  const std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "old content\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1)
      << "a temporary was left behind";
  // And without the limit the write replaces the file completely.
  write_matrix_market(target, a);
  EXPECT_EQ(to_csr(read_matrix_market<double>(target)), a);
  std::filesystem::remove_all(dir);
}

TEST(Hardening, AHeaderDeclaringTrillionsOfEntriesAllocatesNothingForThem) {
  // Found by the fuzz target: 2954294967296 entries declared in a 3.7 kB file made the
  // parallel parse reserve 12 TB. Every path now reserves at most what the text can hold.
  const std::string path = test::edge_dir() + "/fuzz_huge_entry_count.mtx";
  for (int threads : {1, 2, 4}) {
    mm_read_options opt;
    opt.threads = threads;
    opt.min_bytes_per_thread = 1;
    test::expect_throw_with<parse_error>([&] { read_matrix_market<double>(path, nullptr, opt); },
                                         {"fuzz_huge_entry_count.mtx:13: value", "is not a number"});
    test::expect_throw_with<parse_error>([&] { read_matrix_market_csr<double>(path, nullptr, opt); },
                                         {"fuzz_huge_entry_count.mtx:13: value", "is not a number"});
  }
}

TEST(Hardening, APipeDeclaringTrillionsOfEntriesAllocatesNothingForThem) {
  // Through a pipe the size is unknown, so the header's count alone must not size the
  // reservation (it used to: "out of host memory").
  const std::string fifo = ::testing::TempDir() + "la_fifo_lying.mtx";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream(fifo, std::ios::binary) << "%%MatrixMarket matrix coordinate real general\n10 10 2954294967296\n1 1 1\n";
  });
  test::expect_throw_with<parse_error>([&] { read_matrix_market<double>(fifo); },
                                       {"file ends after 1 of the 2954294967296 entries declared on line 2"});
  writer.join();
  std::remove(fifo.c_str());
}

TEST(Hardening, HugeDeclaredSizesFailAtOnceWithAnEstimate) {
  // 2,000,000,000 x 2,000,000,000 with one entry: reading costs nothing; converting to CSR
  // needs three row-sized arrays, refused before allocating, with the estimate.
  const auto coo = parse_matrix_market<double>(
      "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n7 9 1.5\n");
  EXPECT_EQ(coo.nnz(), 1);
  ::setenv("LA_HOST_MEMORY_LIMIT", "1000000000", 1);  // 1 GB, whatever this machine has
  test::expect_throw_with<insufficient_memory>([&] { to_csr(coo); },
                                               {"to CSR needs 24.0 GB of host memory", "1.0 GB are available"});
  const std::string path = ::testing::TempDir() + "la_huge.mtx";
  { std::ofstream(path) << "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n7 9 1.5\n"; }
  test::expect_throw_with<insufficient_memory>([&] { read_matrix_market_csr<double>(path); }, {"needs 24.0 GB"});
  std::remove(path.c_str());
  ::unsetenv("LA_HOST_MEMORY_LIMIT");
}

// ---- edges: duplicates, the right-hand side, boundary sizes ------------------------------

TEST(Edges, DuplicatesInAFileAreSummedInFileOrderOnEveryPath) {
  // (1 + 1e16) - 1e16 = 0 in file order; any other order gives 1. The first entry sits in
  // the first thread's chunk, the two large ones in the last.
  std::string text = "%%MatrixMarket matrix coordinate real general\n3 3 20003\n1 1 1\n";
  for (int k = 0; k < 20000; ++k) text += (k % 2 ? "2 " : "3 ") + std::to_string(1 + k % 3) + " 0.5\n";
  text += "1 1 1e16\n1 1 -1e16\n";
  for (int threads : {1, 2, 4}) {
    mm_read_options opt;
    opt.threads = threads;
    opt.min_bytes_per_thread = 1;
    const auto csr = parse_matrix_market_csr<double>(text, "d.mtx", nullptr, opt);
    EXPECT_EQ(csr.values()[0], 0.0) << threads << " threads";
    EXPECT_EQ(to_csr(parse_matrix_market<double>(text, "d.mtx", nullptr, opt)).values()[0], 0.0) << threads;
  }
}

TEST(Edges, RightHandSideDuplicatesAreSummedNotOverwritten) {
  const std::string path = ::testing::TempDir() + "la_rhs_dup.mtx";
  { std::ofstream(path) << "%%MatrixMarket matrix coordinate real general\n3 1 4\n2 1 1.5\n1 1 1\n2 1 2\n2 1 -0.25\n"; }
  EXPECT_EQ(read_matrix_market_vector<double>(path), (std::vector<double>{1, 3.25, 0}));
  std::remove(path.c_str());
}

TEST(Edges, BoundarySizesAreRefusedCleanly) {
  // 2^31 - 1 rows: rows + 1 row pointers overflowed in 32 bits and the estimate went negative.
  ::setenv("LA_HOST_MEMORY_LIMIT", "2000000000", 1);
  for (const std::string sym : {"general", "symmetric", "skew-symmetric"}) {
    const std::string text = "%%MatrixMarket matrix coordinate real " + sym + "\n2147483647 2147483647 1\n2 1 1\n";
    expect_throw_with<insufficient_memory>([&] { (void)parse_matrix_market_csr<double>(text, "b.mtx"); },
                                           {"2147483647 x 2147483647", "of host memory"});
  }
  expect_throw_with<insufficient_memory>(
      [] { (void)parse_matrix_market_csr<double>("%%MatrixMarket matrix coordinate real general\n2147483647 1 0\n", "r.mtx"); },
      {"2147483647 x 1"});
  // 1 x (2^31 - 1) is small in CSR.
  const auto wide = parse_matrix_market_csr<double>("%%MatrixMarket matrix coordinate real general\n1 2147483647 1\n1 2147483647 5\n", "w.mtx");
  EXPECT_EQ(wide.cols(), 2147483647);
  EXPECT_EQ(wide.col_idx(), (std::vector<index_t>{2147483646}));
  // 2^31 - 1 entries declared, one given.
  expect_throw_with<parse_error>(
      [] { (void)parse_matrix_market<double>("%%MatrixMarket matrix coordinate real general\n1 1 2147483647\n1 1 1\n", "e.mtx"); },
      {"e.mtx"});
  // The memory estimate of the row arrays: with a limit just below what 2^27 empty rows need
  // (4-byte counters and starts, 4-byte pointers: 12 bytes a row, plus 10% kept free) the
  // read is refused; a limit well above it passes.
  const std::string tall = "%%MatrixMarket matrix coordinate real general\n134217728 1 1\n1 1 1\n";
  ::setenv("LA_HOST_MEMORY_LIMIT", std::to_string(static_cast<long long>(134217729.0 * 12 / 0.9 * 0.95)).c_str(), 1);
  EXPECT_THROW((void)parse_matrix_market_csr<double>(tall, "t.mtx"), insufficient_memory);
  ::setenv("LA_HOST_MEMORY_LIMIT", std::to_string(static_cast<long long>(134217729.0 * 12 / 0.9 * 1.2)).c_str(), 1);
  EXPECT_EQ(parse_matrix_market_csr<double>(tall, "t.mtx").rows(), 134217728);
  ::unsetenv("LA_HOST_MEMORY_LIMIT");
}

}  // namespace
}  // namespace la
