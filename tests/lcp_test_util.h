// Shared helpers for the LCP backend tests: the shared Siconos files with the expected outcome
// of every backend, a solve wrapper, and synthetic problems with known solutions.
#ifndef CUSP_TESTS_LCP_TEST_UTIL_H_
#define CUSP_TESTS_LCP_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

extern "C" {
#include "solver/lcp.h"
#include "solver/lcp_file.h"
#include "solver/lcp_synth.h"
}

namespace cusp_test {

enum Expect { kSolved, kNoSolution, kZeroDiag, kNotSolved };

struct FileCase {
  const char* file;
  Expect lemke, pgs, fbnewton, chain;
};

// Expected outcome per file and backend (facts in tests/data/lcp/SOURCE.md):
//  - Pang_isolated_sol_perturbed has no solution: Lemke ends on a ray, FB Newton cannot converge;
//  - CPS_3: Lemke ends on a secondary ray although a solution exists (FB Newton finds it);
//  - PGS cannot start on a zero diagonal (documented limitation, reported as such).
inline const std::vector<FileCase>& FileCases() {
  static const std::vector<FileCase> cases = {
      {"lcp_CPS_1.dat", kSolved, kSolved, kSolved, kSolved},
      {"lcp_CPS_2.dat", kSolved, kZeroDiag, kSolved, kSolved},
      {"lcp_CPS_3.dat", kNoSolution, kZeroDiag, kSolved, kSolved},
      {"lcp_CPS_4.dat", kSolved, kZeroDiag, kSolved, kSolved},
      {"lcp_CPS_4bis.dat", kSolved, kZeroDiag, kSolved, kSolved},
      {"lcp_CPS_5.dat", kSolved, kSolved, kSolved, kSolved},
      {"lcp_Pang_isolated_sol.dat", kSolved, kZeroDiag, kSolved, kSolved},
      {"lcp_Pang_isolated_sol_perturbed.dat", kNoSolution, kZeroDiag, kNotSolved, kNoSolution},
      {"lcp_deudeu.dat", kSolved, kSolved, kSolved, kSolved},
      {"lcp_deudeu_block.dat", kSolved, kSolved, kSolved, kSolved},
      {"lcp_enum_fails.dat", kSolved, kZeroDiag, kSolved, kSolved},
      {"lcp_exp_murty.dat", kSolved, kSolved, kSolved, kSolved},
      {"lcp_inf_sol_perturbed.dat", kSolved, kZeroDiag, kSolved, kSolved},
      {"lcp_ortiz.dat", kSolved, kSolved, kSolved, kSolved},
      {"lcp_ortiz_block.dat", kSolved, kSolved, kSolved, kSolved},
      {"lcp_trivial.dat", kSolved, kSolved, kSolved, kSolved},
      {"lcp_trivial_block.dat", kSolved, kSolved, kSolved, kSolved},
  };
  return cases;
}

inline std::string DataPath(const char* file) {
  return std::string(CUSP_SHARED_DATA_DIR) + "/lcp/" + file;
}

struct Result {
  cuspLcpInfo info;
  std::vector<mjtNum> z, w;
};

inline Result Solve(const char* backend, const cuspLcpProblem& p, const cuspLcpOptions& opt,
                    const std::vector<mjtNum>* z0 = nullptr) {
  const cuspLcpBackend* b = cusp_lcp_backend_find(backend);
  EXPECT_NE(b, nullptr) << backend;
  Result r;
  r.z.assign(p.n, 0.0);
  r.w.assign(p.n, 0.0);
  if (z0) r.z = *z0;
  std::vector<double> work(b->worksize(p.n) / sizeof(double) + 1);
  b->solve(r.z.data(), r.w.data(), &r.info, &p, &opt, work.data(), work.size() * sizeof(double));
  return r;
}

// Independent check of a claimed solution: z >= 0, w = Mz + q >= 0, z_i w_i = 0, to tol.
inline void ExpectLcpSolution(const cuspLcpProblem& p, const std::vector<mjtNum>& z, double tol) {
  for (int i = 0; i < p.n; i++) {
    double w = p.q[i];
    for (int j = 0; j < p.n; j++) w += p.M[i + j * p.ldm] * z[j];
    EXPECT_GE(z[i], -tol) << "row " << i;
    EXPECT_GE(w, -tol) << "row " << i;
    EXPECT_LE(std::fabs(std::fmin(z[i], w)), tol) << "row " << i;
  }
}

// Runs every shared file through one backend and checks the table entry.
inline void RunFileMatrix(const char* backend, Expect FileCase::*which) {
  for (const FileCase& fc : FileCases()) {
    SCOPED_TRACE(std::string(backend) + " on " + fc.file);
    cuspLcpFileData d;
    char err[512];
    std::string path = DataPath(fc.file);
    ASSERT_EQ(cusp_lcp_file_read(&d, err, sizeof(err), path.c_str()), 0) << err;
    cuspLcpProblem p = {d.n, d.M, d.n, d.q, nullptr, nullptr};
    cuspLcpOptions opt = cusp_lcp_default_options();
    Result r = Solve(backend, p, opt);
    switch (fc.*which) {
      case kSolved:
        EXPECT_EQ(r.info.status, CUSP_LCP_SOLVED) << r.info.message;
        EXPECT_LE(r.info.residual, 1e-10);
        ExpectLcpSolution(p, r.z, 1e-9);
        break;
      case kNoSolution:
        EXPECT_EQ(r.info.status, CUSP_LCP_NO_SOLUTION);
        EXPECT_STREQ(r.info.message, "secondary ray");
        break;
      case kZeroDiag:
        EXPECT_EQ(r.info.status, CUSP_LCP_NUMERICAL);
        EXPECT_NE(std::string(r.info.message).find("zero or negative diagonal"),
                  std::string::npos);
        EXPECT_GE(r.info.index, 0);
        EXPECT_LE(d.M[r.info.index * (d.n + 1)], 0.0);
        break;
      case kNotSolved:
        EXPECT_NE(r.info.status, CUSP_LCP_SOLVED);
        EXPECT_GT(r.info.residual, 1e-10);
        break;
    }
    cusp_lcp_file_free(&d);
  }
}

struct Synthetic {
  int n;
  std::vector<mjtNum> M, q, zstar, wstar;
  cuspLcpProblem Problem() const { return {n, M.data(), n, q.data(), nullptr, nullptr}; }
};

inline Synthetic MakeSynthetic(int n, int rank, double shift, uint64_t seed) {
  Synthetic s;
  s.n = n;
  s.M.resize((size_t)n * n);
  s.q.resize(n);
  s.zstar.resize(n);
  s.wstar.resize(n);
  std::vector<mjtNum> work((size_t)n * rank + 1);
  cusp_synth_lcp(s.M.data(), s.q.data(), s.zstar.data(), s.wstar.data(), n, rank, shift, seed,
                 work.data());
  return s;
}

// SPD (unique solution z*) and PSD (rank n/2: w* unique) problems of sizes 2..300 through one
// backend; checks z against z* (SPD) or w against w* (PSD).
inline void RunSynthetic(const char* backend, int max_n, bool psd) {
  const int sizes[] = {2, 3, 5, 10, 30, 60, 100, 200, 300};
  for (int n : sizes) {
    if (n > max_n) break;
    for (uint64_t seed = 1; seed <= 3; seed++) {
      SCOPED_TRACE(std::string(backend) + (psd ? " PSD" : " SPD") + " n=" + std::to_string(n) +
                   " seed=" + std::to_string(seed));
      Synthetic s = MakeSynthetic(n, psd ? (n + 1) / 2 : n, psd ? 0.0 : 0.1, seed);
      cuspLcpProblem p = s.Problem();
      cuspLcpOptions opt = cusp_lcp_default_options();
      // what is tested is the answer at every size; the plugin's work budget (lcp.h) binds from
      // n of about 200 on (one Newton step of n = 300 costs about the whole default budget) and
      // has its own tests (solve_budget_test.cc)
      opt.work_budget = -1;
      Result r = Solve(backend, p, opt);
      ASSERT_EQ(r.info.status, CUSP_LCP_SOLVED) << r.info.message;
      EXPECT_LE(r.info.residual, 1e-10);
      ExpectLcpSolution(p, r.z, 1e-9);
      double scale = 1 + static_cast<double>(n);
      for (int i = 0; i < n; i++) {
        if (psd) {
          EXPECT_NEAR(r.w[i], s.wstar[i], 1e-7 * scale) << i;
        } else {
          EXPECT_NEAR(r.z[i], s.zstar[i], 1e-7 * scale) << i;
        }
      }
    }
  }
}

// No false success: a run stopped before convergence (one iteration on a problem that needs more)
// reports a failure with its status, and the residual it reports is its answer's, recomputed
// here, above the tolerance.
inline void ExpectUnconvergedRunFails(const char* backend) {
  Synthetic s = MakeSynthetic(50, 50, 0.01, 4);
  cuspLcpProblem p = s.Problem();
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.max_iter = 1;
  Result r = Solve(backend, p, opt);
  EXPECT_NE(r.info.status, CUSP_LCP_SOLVED) << backend;
  // the chain sums its backends' runs, one iteration each
  EXPECT_LE(r.info.iterations, std::string(backend) == "chain" ? 3 : 1) << backend;
  std::vector<mjtNum> w(p.n);
  cuspLcpInfo chk;
  cusp_lcp_residual(w.data(), &chk, r.z.data(), &p);
  EXPECT_GT(chk.residual, opt.tol) << backend;
  EXPECT_EQ(chk.residual, r.info.residual) << backend;
}

}  // namespace cusp_test

#endif  // CUSP_TESTS_LCP_TEST_UTIL_H_
