// The finish of an LCP a backend stopped short on (plugin/solver/lcp_finish.c) on the scene
// fuzzer's disk-island LCPs (tests/data/lcp_fuzz/README.md): each starts from the backend's
// answer, ends solved to the plugin's tolerance 1e-10, and the answer is checked independently
// (z >= 0, w = M z + q >= 0, min(z, w) = 0, accumulated in long double).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

extern "C" {
#include "solver/lcp.h"
#include "solver/lcp_file.h"
}

namespace {

struct Problem {
  cuspLcpFileData d{};
  std::vector<mjtNum> z0;
  cuspLcpProblem p{};
};

void Load(Problem* pr, const std::string& name) {
  std::string base = std::string(CUSP_SOURCE_DIR) + "/tests/data/lcp_fuzz/" + name;
  char err[512];
  ASSERT_EQ(cusp_lcp_file_read(&pr->d, err, sizeof(err), (base + ".dat").c_str()), 0) << err;
  pr->p = {pr->d.n, pr->d.M, pr->d.n, pr->d.q, nullptr, nullptr};
  pr->z0.assign(pr->d.n, 0);
  FILE* f = std::fopen((base + ".z0").c_str(), "r");
  ASSERT_NE(f, nullptr) << base;
  for (mjtNum& v : pr->z0) ASSERT_EQ(std::fscanf(f, "%lf", &v), 1);
  std::fclose(f);
}

// the largest violation of the LCP conditions by z: max over rows of -z, -w and |min(z, w)|
double Violation(const cuspLcpProblem& p, const std::vector<mjtNum>& z) {
  double worst = 0;
  for (int i = 0; i < p.n; i++) {
    long double w = p.q[i];
    for (int j = 0; j < p.n; j++) w += (long double)p.M[i + (size_t)j * p.ldm] * z[j];
    worst = std::fmax(worst, -z[i]);
    worst = std::fmax(worst, -(double)w);
    worst = std::fmax(worst, std::fabs(std::fmin((double)z[i], (double)w)));
  }
  return worst;
}

struct Finished {
  int how;
  cuspLcpInfo info;
  std::vector<mjtNum> z, w;
};

Finished Finish(const Problem& pr) {
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.max_iter = 200;  // the plugin's default max_iterations
  Finished f;
  f.z = pr.z0;
  f.w.assign(pr.p.n, 0);
  f.info = cuspLcpInfo{};
  f.info.status = CUSP_LCP_MAX_ITER;
  f.info.backend = "given";
  std::vector<double> work(cusp_lcp_finish_worksize(pr.p.n) / sizeof(double) + 1);
  f.how = cusp_lcp_finish(f.z.data(), f.w.data(), &f.info, &pr.p, &opt, work.data(),
                          work.size() * sizeof(double));
  return f;
}

TEST(LcpFinish, PgsAnswerWithASingularActiveSetIsFinishedByActiveSetRounds) {
  Problem pr;
  Load(&pr, "lcp_fuzz33_pgs");
  ASSERT_GT(Violation(pr.p, pr.z0), 1e-7) << "the premise: PGS's answer is far from solved";
  Finished f = Finish(pr);
  EXPECT_EQ(f.how, 1);  // the rounds
  EXPECT_EQ(f.info.status, CUSP_LCP_SOLVED);
  EXPECT_LE(f.info.residual, 1e-10);
  EXPECT_LE(Violation(pr.p, f.z), 1e-10);
  cusp_lcp_file_free(&pr.d);
}

TEST(LcpFinish, DegenerateProblemsAreFinishedByLemkeWithTiesByBasicValues) {
  for (const char* name : {"lcp_fuzz33_pgs_ties", "lcp_fuzz6_lemke"}) {
    SCOPED_TRACE(name);
    Problem pr;
    Load(&pr, name);
    ASSERT_GT(Violation(pr.p, pr.z0), 1e-10) << "the premise: the backend's answer is short";
    // the premise: Lemke with its default ties ends short of 1e-10
    cuspLcpOptions opt = cusp_lcp_default_options();
    std::vector<mjtNum> z(pr.p.n, 0), w(pr.p.n, 0);
    std::vector<double> work(cusp_lcp_lemke_worksize(pr.p.n) / sizeof(double) + 1);
    cuspLcpInfo li;
    cusp_lcp_lemke(z.data(), w.data(), &li, &pr.p, &opt, work.data(), work.size() * sizeof(double));
    EXPECT_NE(li.status, CUSP_LCP_SOLVED);
    EXPECT_GT(li.residual, 1e-10);
    Finished f = Finish(pr);
    EXPECT_EQ(f.how, 2);  // the rounds do not reach it; Lemke with value ties does
    EXPECT_EQ(f.info.status, CUSP_LCP_SOLVED);
    EXPECT_STREQ(f.info.backend, "lemke");
    EXPECT_LE(f.info.residual, 1e-10);
    EXPECT_LE(Violation(pr.p, f.z), 1e-10);
    cusp_lcp_file_free(&pr.d);
  }
}

TEST(LcpFinish, AFailedFinishLeavesTheAnswerAndReportsItsWork) {
  // a problem the rounds do not solve and a work budget no Lemke pivot fits in: the backend's
  // answer comes back unchanged, with w = M z + q of it
  Problem pr;
  Load(&pr, "lcp_fuzz6_lemke");
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.work_budget = 1e-300;
  std::vector<mjtNum> z = pr.z0, w(pr.p.n, 0);
  cuspLcpInfo info{};
  info.status = CUSP_LCP_NUMERICAL;
  info.residual = 1;
  std::vector<double> work(cusp_lcp_finish_worksize(pr.p.n) / sizeof(double) + 1);
  int how = cusp_lcp_finish(z.data(), w.data(), &info, &pr.p, &opt, work.data(),
                            work.size() * sizeof(double));
  EXPECT_EQ(how, 0);
  EXPECT_EQ(info.status, CUSP_LCP_NUMERICAL);
  for (int i = 0; i < pr.p.n; i++) {
    EXPECT_EQ(z[i], pr.z0[i]);
    double wi = pr.p.q[i];
    for (int j = 0; j < pr.p.n; j++) wi += pr.p.M[i + (size_t)j * pr.p.n] * z[j];
    EXPECT_NEAR(w[i], wi, 1e-15) << i;
  }
  cusp_lcp_file_free(&pr.d);
}

}  // namespace
