// Smoothed-NCP Newton backend: every shared file the chain solves is solved to the same
// tolerance (1e-10 natural residual, checked independently to 1e-9), the unsolvable file is
// reported unsolved; SPD/PSD problems against their known solutions; warm start; box bounds.
#include <cstdio>

#include "lcp_test_util.h"

extern "C" {
#include "solver/condition.h"
#include "solver/lapack_shim.h"
}

namespace {
using namespace cusp_test;

TEST(LcpNcpSmooth, SharedFilesTheChainSolves) {
  int solved = 0;
  for (const FileCase& fc : FileCases()) {
    SCOPED_TRACE(std::string("ncpsmooth on ") + fc.file);
    cuspLcpFileData d;
    char err[512];
    ASSERT_EQ(cusp_lcp_file_read(&d, err, sizeof(err), DataPath(fc.file).c_str()), 0) << err;
    cuspLcpProblem p = {d.n, d.M, d.n, d.q, nullptr, nullptr};
    cuspLcpOptions opt = cusp_lcp_default_options();
    Result r = Solve("ncpsmooth", p, opt);
    Result c = Solve("chain", p, opt);
    EXPECT_STREQ(r.info.backend, "ncpsmooth");
    if (fc.chain == kSolved) {
      ASSERT_EQ(c.info.status, CUSP_LCP_SOLVED);
      EXPECT_EQ(r.info.status, CUSP_LCP_SOLVED) << r.info.message;
      EXPECT_LE(r.info.residual, 1e-10);
      ExpectLcpSolution(p, r.z, 1e-9);
      solved += r.info.status == CUSP_LCP_SOLVED;
    } else {  // no solution exists: never claimed solved, the best iterate is returned finite
      EXPECT_NE(r.info.status, CUSP_LCP_SOLVED);
      EXPECT_GT(r.info.residual, 1e-10);
      for (double v : r.z) EXPECT_TRUE(std::isfinite(v));
    }
    cusp_lcp_file_free(&d);
  }
  EXPECT_EQ(solved, 16);  // every file but Pang_isolated_sol_perturbed
}

// The friction contact LCP (CUSP eqs 10-13) as the plugin hands it to a backend and as
// bench/lcp_bench times it: assembled from a synthetic scene, Ruiz-scaled, Tikhonov 1e-10 on the
// normal diagonals. r = 0: frictionless.
std::vector<mjtNum> ContactProblem(std::vector<mjtNum>* b, int nv, int m, int r, uint64_t seed) {
  int s = r > 0 ? r + 2 : 1, N = m * s;
  std::vector<mjtNum> Meff((size_t)nv * nv), Jn((size_t)m * nv), Jt((size_t)m * r * nv + 1), mu(m),
      bn(m), bt((size_t)m * r + 1), A((size_t)N * N), dr(N), dc(N), rowsq(2 * N);
  b->assign(N, 0.0);
  cuspContactLcp c;
  cusp_synth_contact(&c, Meff.data(), Jn.data(), Jt.data(), mu.data(), bn.data(), bt.data(), nv, m,
                     r, nullptr, 0, seed);
  cusp_dpotrf(Meff.data(), nv, nv);
  for (int j = 1; j < nv; j++) std::fill_n(Meff.begin() + (size_t)j * nv, j, 0.0);
  std::vector<double> work(cusp_contact_assemble_worksize(nv, m, r) / sizeof(double) + 1);
  cusp_contact_assemble(A.data(), N, b->data(), &c, Meff.data(), nullptr, m, work.data());
  cusp_ruiz(A.data(), b->data(), dr.data(), dc.data(), N, N, 5, rowsq.data());
  for (int a = 0; a < m; a++) A[a * s + (size_t)(a * s) * N] += 1e-10;
  return A;
}

TEST(LcpNcpSmooth, ContactLcpsOfTheBenchLikeTheChain) {
  // the sizes of bench/lcp_bench: friction (r = 4) 12..600 unknowns, frictionless 12..300
  struct Case {
    int m, r, seed;  // the bench's seeds: 1000 + index (friction), 2000 + index (frictionless)
  };
  const Case cases[] = {{2, 4, 1000},  {4, 4, 1001},   {8, 4, 1002},   {16, 4, 1003},
                        {32, 4, 1004}, {50, 4, 1005},  {100, 4, 1006}, {12, 0, 2000},
                        {48, 0, 2001}, {150, 0, 2002}, {300, 0, 2003}};
  for (const Case& cs : cases) {
    int N = cs.m * (cs.r > 0 ? cs.r + 2 : 1);
    int nv = cs.r > 0 ? std::min(512, 2 * cs.m * (1 + cs.r)) : std::min(512, N + 20);
    SCOPED_TRACE("contact m=" + std::to_string(cs.m) + " r=" + std::to_string(cs.r));
    std::vector<mjtNum> b;
    std::vector<mjtNum> A = ContactProblem(&b, nv, cs.m, cs.r, cs.seed);
    cuspLcpProblem p = {N, A.data(), N, b.data(), nullptr, nullptr};
    cuspLcpOptions opt = cusp_lcp_default_options();
    opt.work_budget = -1;  // the answers at the bench's sizes (up to 600), not the plugin's budget
    Result c = Solve("chain", p, opt);
    ASSERT_EQ(c.info.status, CUSP_LCP_SOLVED);
    Result r = Solve("ncpsmooth", p, opt);
    EXPECT_EQ(r.info.status, CUSP_LCP_SOLVED) << r.info.message;
    EXPECT_LE(r.info.residual, 1e-10);
    ExpectLcpSolution(p, r.z, 1e-9);
  }
}

TEST(LcpNcpSmooth, WarmStartThatStallsIsRestartedCold) {
  // a contact LCP of scenario A (lean arm, t = 1.2574 s) with the warm start that made the first
  // version fail in the plugin: the warm round stalls, the cold round solves it
  std::string base = std::string(CUSP_SOURCE_DIR) + "/tests/data/lcp_scenario_a_45_6_t1.2574";
  cuspLcpFileData d;
  char err[512];
  ASSERT_EQ(cusp_lcp_file_read(&d, err, sizeof(err), (base + ".dat").c_str()), 0) << err;
  cuspLcpProblem p = {d.n, d.M, d.n, d.q, nullptr, nullptr};
  std::vector<mjtNum> z0(d.n);
  FILE* f = std::fopen((base + ".z0").c_str(), "r");
  ASSERT_NE(f, nullptr);
  for (mjtNum& v : z0) ASSERT_EQ(std::fscanf(f, "%lf", &v), 1);
  std::fclose(f);
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.max_iter = 200;  // the plugin's default max_iterations
  opt.warm_start = 1;
  Result r = Solve("ncpsmooth", p, opt, &z0);
  EXPECT_EQ(r.info.status, CUSP_LCP_SOLVED) << r.info.message;
  EXPECT_LE(r.info.residual, 1e-10);
  ExpectLcpSolution(p, r.z, 1e-9);
  EXPECT_LE(r.info.iterations, 40);
  opt.warm_start = 0;
  Result cold = Solve("ncpsmooth", p, opt);
  EXPECT_EQ(cold.info.status, CUSP_LCP_SOLVED);
  cusp_lcp_file_free(&d);
}

TEST(LcpNcpSmooth, RandomSpd) { RunSynthetic("ncpsmooth", 300, false); }
TEST(LcpNcpSmooth, RandomPsd) { RunSynthetic("ncpsmooth", 300, true); }

TEST(LcpNcpSmooth, AgreesWithLemkeOnSpdProblems) {
  // unique solution: two unrelated algorithms must give the same z
  for (uint64_t seed = 1; seed <= 5; seed++) {
    Synthetic s = MakeSynthetic(40, 40, 0.05, 100 + seed);
    cuspLcpProblem p = s.Problem();
    Result a = Solve("ncpsmooth", p, cusp_lcp_default_options());
    Result b = Solve("lemke", p, cusp_lcp_default_options());
    ASSERT_EQ(a.info.status, CUSP_LCP_SOLVED);
    ASSERT_EQ(b.info.status, CUSP_LCP_SOLVED);
    for (int i = 0; i < p.n; i++) EXPECT_NEAR(a.z[i], b.z[i], 1e-8) << i;
  }
}

TEST(LcpNcpSmooth, WarmStartAtSolutionTakesNoIteration) {
  Synthetic s = MakeSynthetic(50, 50, 0.1, 9);
  cuspLcpProblem p = s.Problem();
  cuspLcpOptions opt = cusp_lcp_default_options();
  Result cold = Solve("ncpsmooth", p, opt);
  ASSERT_EQ(cold.info.status, CUSP_LCP_SOLVED);
  EXPECT_GT(cold.info.iterations, 0);
  opt.warm_start = 1;
  Result warm = Solve("ncpsmooth", p, opt, &cold.z);
  EXPECT_EQ(warm.info.status, CUSP_LCP_SOLVED);
  EXPECT_EQ(warm.info.iterations, 0);
  std::vector<mjtNum> z0 = cold.z;
  for (double& v : z0) v *= 1.01;
  Result near = Solve("ncpsmooth", p, opt, &z0);
  EXPECT_EQ(near.info.status, CUSP_LCP_SOLVED);
  EXPECT_LE(near.info.iterations, cold.info.iterations);
}

TEST(LcpNcpSmooth, BoxBoundsAndFreeVariables) {
  // box [0,1], free, [-1, +inf), fixed (lo = hi = 0.5); the same answer as FB Newton and PGS
  mjtNum M[16] = {2, 0.5, 0, 0, 0.5, 3, 0.2, 0, 0, 0.2, 1, 0.1, 0, 0, 0.1, 1};
  mjtNum q[4] = {-5, 1, 3, 2};
  mjtNum lo[4] = {0, -INFINITY, -1, 0.5}, hi[4] = {1, INFINITY, INFINITY, 0.5};
  cuspLcpProblem p = {4, M, 4, q, lo, hi};
  Result r = Solve("ncpsmooth", p, cusp_lcp_default_options());
  ASSERT_EQ(r.info.status, CUSP_LCP_SOLVED) << r.info.message;
  EXPECT_NEAR(r.z[0], 1.0, 1e-10);  // at the upper bound, w0 < 0
  EXPECT_LT(r.w[0], 0.0);
  EXPECT_NEAR(r.w[1], 0.0, 1e-10);   // free: w = 0
  EXPECT_NEAR(r.z[2], -1.0, 1e-10);  // at the lower bound with w2 >= 0
  EXPECT_GE(r.w[2], 0.0);
  EXPECT_EQ(r.z[3], 0.5);  // fixed variable
  Result f = Solve("fbnewton", p, cusp_lcp_default_options());
  ASSERT_EQ(f.info.status, CUSP_LCP_SOLVED);
  for (int i = 0; i < 4; i++) EXPECT_NEAR(f.z[i], r.z[i], 1e-9) << i;
}

TEST(LcpNcpSmooth, TableEntryAndBadInput) {
  const cuspLcpBackend* b = cusp_lcp_backend_find("ncpsmooth");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b, cusp_lcp_backend(CUSP_LCP_NCPSMOOTH));
  EXPECT_GE(b->worksize(10), 2 * 100 * sizeof(mjtNum));
  Synthetic s = MakeSynthetic(5, 5, 0.1, 1);
  cuspLcpProblem p = s.Problem();
  cuspLcpOptions opt = cusp_lcp_default_options();
  std::vector<mjtNum> z(5), w(5);
  double work[4];
  cuspLcpInfo info;
  EXPECT_EQ(cusp_lcp_ncpsmooth(z.data(), w.data(), &info, &p, &opt, work, sizeof(work)),
            CUSP_LCP_BAD_INPUT);
  // the chain never includes it: its default members are unchanged
  EXPECT_EQ(opt.chain[0], CUSP_LCP_FBNEWTON);
  EXPECT_EQ(opt.chain[3], -1);
}
TEST(LcpNcpSmooth, UnconvergedRunFails) { ExpectUnconvergedRunFails("ncpsmooth"); }

}  // namespace
