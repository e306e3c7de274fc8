// PGS/SOR backend: shared files (zero diagonal reported), SPD problems, relaxation, box bounds.
#include "lcp_test_util.h"

namespace {
using namespace cusp_test;

TEST(LcpPgs, SharedFiles) { RunFileMatrix("pgs", &FileCase::pgs); }
TEST(LcpPgs, RandomSpd) { RunSynthetic("pgs", 100, false); }

TEST(LcpPgs, OverRelaxationConvergesFasterOnSpd) {
  Synthetic s = MakeSynthetic(60, 60, 0.05, 3);
  cuspLcpProblem p = s.Problem();
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.max_iter = 200000;
  Result gs = Solve("pgs", p, opt);
  opt.pgs_omega = 1.5;
  Result sor = Solve("pgs", p, opt);
  ASSERT_EQ(gs.info.status, CUSP_LCP_SOLVED);
  ASSERT_EQ(sor.info.status, CUSP_LCP_SOLVED);
  EXPECT_LT(sor.info.iterations, gs.info.iterations);
}

TEST(LcpPgs, BoxBoundsClampAtUpperBound) {
  // M = I, q = -2: unconstrained z = 2, box [0, 1] -> z = 1 with w = -1 <= 0 at the upper bound.
  mjtNum M[4] = {1, 0, 0, 1}, q[2] = {-2, 0.5}, lo[2] = {0, 0}, hi[2] = {1, 1};
  cuspLcpProblem p = {2, M, 2, q, lo, hi};
  Result r = Solve("pgs", p, cusp_lcp_default_options());
  EXPECT_EQ(r.info.status, CUSP_LCP_SOLVED);
  EXPECT_DOUBLE_EQ(r.z[0], 1.0);
  EXPECT_DOUBLE_EQ(r.z[1], 0.0);
}

TEST(LcpPgs, SweepLimitIsReported) {
  Synthetic s = MakeSynthetic(50, 50, 0.01, 4);
  cuspLcpProblem p = s.Problem();
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.max_iter = 3;
  Result r = Solve("pgs", p, opt);
  EXPECT_EQ(r.info.status, CUSP_LCP_MAX_ITER);
  EXPECT_EQ(r.info.iterations, 3);
}

TEST(LcpPgs, UnconvergedRunFails) { ExpectUnconvergedRunFails("pgs"); }

// Gauss-Seidel diverges on M = [1 -3; -3 1] (an LCP without solution: q = -1 and every direction
// is a ray): the iterates grow by about 9 a sweep. The run must end as a failure (non-finite
// iterates or the budget), never as solved, within its work budget.
TEST(LcpPgs, DivergingSweepsAreAFailure) {
  mjtNum M[4] = {1, -3, -3, 1}, q[2] = {-1, -1};
  cuspLcpProblem p = {2, M, 2, q, nullptr, nullptr};
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.max_iter = 1000000;
  Result r = Solve("pgs", p, opt);
  EXPECT_NE(r.info.status, CUSP_LCP_SOLVED);
  EXPECT_TRUE(r.info.status == CUSP_LCP_NUMERICAL || r.info.status == CUSP_LCP_MAX_ITER)
      << r.info.status;
  EXPECT_FALSE(r.info.residual <= opt.tol);
  EXPECT_LE(r.info.iterations,
            cusp_solve_iteration_cap(nullptr, opt.max_iter, 0, CUSP_ITER_PGS_SWEEP, 2, 0));
  // and the chain, which starts with it, does not call this a success either
  opt.chain[0] = CUSP_LCP_PGS;
  opt.chain[1] = -1;
  Result c = Solve("chain", p, opt);
  EXPECT_NE(c.info.status, CUSP_LCP_SOLVED);
}
}  // namespace
