// Lemke backend: shared Siconos files (expected outcome per file) and synthetic problems.
#include "lcp_test_util.h"

namespace {
using namespace cusp_test;

TEST(LcpLemke, SharedFiles) { RunFileMatrix("lemke", &FileCase::lemke); }
TEST(LcpLemke, RandomSpd) { RunSynthetic("lemke", 300, false); }
TEST(LcpLemke, RandomPsd) { RunSynthetic("lemke", 300, true); }

TEST(LcpLemke, MurtyNeedsExponentiallyManyPivotsButFinishes) {
  // Murty's lower-triangular example, q = -1: solved; pivot count is reported.
  cuspLcpFileData d;
  char err[256];
  ASSERT_EQ(cusp_lcp_file_read(&d, err, sizeof(err), DataPath("lcp_exp_murty.dat").c_str()), 0);
  cuspLcpProblem p = {d.n, d.M, d.n, d.q, nullptr, nullptr};
  Result r = Solve("lemke", p, cusp_lcp_default_options());
  EXPECT_EQ(r.info.status, CUSP_LCP_SOLVED);
  EXPECT_GE(r.info.iterations, 1);
  cusp_lcp_file_free(&d);
}

TEST(LcpLemke, PivotLimitIsReported) {
  Synthetic s = MakeSynthetic(40, 40, 0.1, 7);
  cuspLcpProblem p = s.Problem();
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.max_iter = 2;
  Result r = Solve("lemke", p, opt);
  EXPECT_EQ(r.info.status, CUSP_LCP_MAX_ITER);
  EXPECT_EQ(r.info.iterations, 2);
}

TEST(LcpLemke, RejectsBoxBounds) {
  Synthetic s = MakeSynthetic(3, 3, 0.1, 1);
  std::vector<mjtNum> hi(3, 1.0);
  cuspLcpProblem p = s.Problem();
  p.hi = hi.data();
  Result r = Solve("lemke", p, cusp_lcp_default_options());
  EXPECT_EQ(r.info.status, CUSP_LCP_BAD_INPUT);
}
TEST(LcpLemke, UnconvergedRunFails) { ExpectUnconvergedRunFails("lemke"); }

}  // namespace
