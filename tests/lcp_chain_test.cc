// Fallback chain: every solvable shared file is solved to 1e-10; the unsolvable one is reported
// as having no solution; the chain falls through when a backend fails; lookup by name.
#include "lcp_test_util.h"

namespace {
using namespace cusp_test;

TEST(LcpChain, SharedFiles) { RunFileMatrix("chain", &FileCase::chain); }
TEST(LcpChain, RandomSpd) { RunSynthetic("chain", 300, false); }

TEST(LcpChain, FallsThroughToLemkeWhenNewtonIsStarved) {
  cuspLcpFileData d;
  char err[256];
  ASSERT_EQ(cusp_lcp_file_read(&d, err, sizeof(err), DataPath("lcp_CPS_2.dat").c_str()), 0);
  cuspLcpProblem p = {d.n, d.M, d.n, d.q, nullptr, nullptr};
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.max_iter = 1;  // FB Newton cannot finish in one step from z = 0; Lemke needs no more...
  opt.chain[0] = CUSP_LCP_FBNEWTON;
  opt.chain[1] = CUSP_LCP_PGS;
  opt.chain[2] = -1;
  Result r = Solve("chain", p, opt);
  EXPECT_NE(r.info.status, CUSP_LCP_SOLVED);  // PGS cannot start (zero diagonal)
  opt.max_iter = 0;
  opt.chain[0] = CUSP_LCP_PGS;
  opt.chain[1] = CUSP_LCP_LEMKE;
  r = Solve("chain", p, opt);
  EXPECT_EQ(r.info.status, CUSP_LCP_SOLVED);
  EXPECT_STREQ(r.info.backend, "lemke");
  cusp_lcp_file_free(&d);
}

TEST(LcpChain, BackendTable) {
  const char* names[] = {"lemke", "pgs", "fbnewton", "chain"};
  for (const char* n : names) {
    const cuspLcpBackend* b = cusp_lcp_backend_find(n);
    ASSERT_NE(b, nullptr) << n;
    EXPECT_STREQ(b->name, n);
    EXPECT_GT(b->worksize(10), 0u);
  }
  EXPECT_EQ(cusp_lcp_backend_find("simplex"), nullptr);
  Synthetic s = MakeSynthetic(4, 4, 0.1, 2);
  cuspLcpProblem p = s.Problem();
  cuspLcpOptions opt = cusp_lcp_default_options();
  std::vector<mjtNum> z(4), w(4);
  cuspLcpInfo info;
  EXPECT_EQ(cusp_lcp_solve_named("simplex", z.data(), w.data(), &info, &p, &opt, nullptr, 0),
            CUSP_LCP_BAD_INPUT);
}
TEST(LcpChain, UnconvergedRunFails) { ExpectUnconvergedRunFails("chain"); }

}  // namespace
