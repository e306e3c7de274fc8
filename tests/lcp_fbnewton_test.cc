// FB Newton backend: shared files, SPD/PSD problems, warm start, box bounds.
#include "lcp_test_util.h"

namespace {
using namespace cusp_test;

TEST(LcpFbNewton, SharedFiles) { RunFileMatrix("fbnewton", &FileCase::fbnewton); }
TEST(LcpFbNewton, RandomSpd) { RunSynthetic("fbnewton", 300, false); }
TEST(LcpFbNewton, RandomPsd) { RunSynthetic("fbnewton", 300, true); }

TEST(LcpFbNewton, WarmStartAtSolutionTakesNoIteration) {
  Synthetic s = MakeSynthetic(50, 50, 0.1, 9);
  cuspLcpProblem p = s.Problem();
  cuspLcpOptions opt = cusp_lcp_default_options();
  Result cold = Solve("fbnewton", p, opt);
  ASSERT_EQ(cold.info.status, CUSP_LCP_SOLVED);
  EXPECT_GT(cold.info.iterations, 0);
  opt.warm_start = 1;
  Result warm = Solve("fbnewton", p, opt, &cold.z);
  EXPECT_EQ(warm.info.status, CUSP_LCP_SOLVED);
  EXPECT_EQ(warm.info.iterations, 0);
  // a perturbed warm start converges in fewer steps than the cold start
  std::vector<mjtNum> z0 = cold.z;
  for (double& v : z0) v *= 1.01;
  Result near = Solve("fbnewton", p, opt, &z0);
  EXPECT_EQ(near.info.status, CUSP_LCP_SOLVED);
  EXPECT_LE(near.info.iterations, cold.info.iterations);
}

TEST(LcpFbNewton, BoxBoundsAndFreeVariables) {
  // 3 variables: box [0,1], free, [-1, +inf). M SPD, known answer checked by the natural map.
  mjtNum M[9] = {2, 0.5, 0, 0.5, 3, 0.2, 0, 0.2, 1};
  mjtNum q[3] = {-5, 1, 3};
  mjtNum lo[3] = {0, -INFINITY, -1}, hi[3] = {1, INFINITY, INFINITY};
  cuspLcpProblem p = {3, M, 3, q, lo, hi};
  Result r = Solve("fbnewton", p, cusp_lcp_default_options());
  ASSERT_EQ(r.info.status, CUSP_LCP_SOLVED) << r.info.message;
  EXPECT_NEAR(r.z[0], 1.0, 1e-12);           // pushed to the upper bound, w0 < 0
  EXPECT_LT(r.w[0], 0.0);
  EXPECT_NEAR(r.w[1], 0.0, 1e-10);           // free: w = 0
  EXPECT_NEAR(r.z[2], -1.0, 1e-12);          // at lower bound with w2 >= 0
  EXPECT_GE(r.w[2], 0.0);
  // PGS agrees on the same box problem
  Result g = Solve("pgs", p, cusp_lcp_default_options());
  ASSERT_EQ(g.info.status, CUSP_LCP_SOLVED);
  for (int i = 0; i < 3; i++) EXPECT_NEAR(g.z[i], r.z[i], 1e-9);
}

TEST(LcpFbNewton, TooSmallWorkspaceIsBadInput) {
  Synthetic s = MakeSynthetic(5, 5, 0.1, 1);
  cuspLcpProblem p = s.Problem();
  cuspLcpOptions opt = cusp_lcp_default_options();
  std::vector<mjtNum> z(5), w(5);
  double work[4];
  cuspLcpInfo info;
  EXPECT_EQ(cusp_lcp_fbnewton(z.data(), w.data(), &info, &p, &opt, work, sizeof(work)),
            CUSP_LCP_BAD_INPUT);
}
TEST(LcpFbNewton, UnconvergedRunFails) { ExpectUnconvergedRunFails("fbnewton"); }

}  // namespace
