// MCP solver: nonlinear box-constrained problems with a known solution, warm start, callback
// failure, and an unsolvable problem.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

extern "C" {
#include "solver/lcp_synth.h"
#include "solver/mcp.h"
}

namespace {

// F(z) = M z + z^3 - (M z* + z*^3) + w*: strictly monotone, unique solution z*.
struct Cubic {
  int n;
  std::vector<double> M, zstar, wstar, lo, hi, c;
  int fail_after = -1, calls = 0;
  int step_mode = 0, step_calls = 0;  // CubicStep's behaviour and calls
};

int CubicF(mjtNum* F, const mjtNum* z, int n, void* u) {
  Cubic* p = static_cast<Cubic*>(u);
  if (p->fail_after >= 0 && p->calls++ >= p->fail_after) return 1;
  for (int i = 0; i < n; i++) {
    double v = z[i] * z[i] * z[i] - p->c[i];
    for (int j = 0; j < n; j++) v += p->M[i + j * n] * z[j];
    F[i] = v;
  }
  return 0;
}

int CubicJ(mjtNum* J, int ldj, const mjtNum* z, int n, void* u) {
  Cubic* p = static_cast<Cubic*>(u);
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) J[i + j * ldj] = p->M[i + j * n] + (i == j ? 3 * z[i] * z[i] : 0);
  }
  return 0;
}

Cubic MakeCubic(int n, uint64_t seed) {
  Cubic p;
  p.n = n;
  p.M.resize(n * n);
  std::vector<double> q(n), zs(n), ws(n), work(n * n);
  cusp_synth_lcp(p.M.data(), q.data(), zs.data(), ws.data(), n, n, 0.5, seed, work.data());
  p.zstar.resize(n);
  p.wstar.resize(n);
  p.lo.resize(n);
  p.hi.resize(n);
  uint64_t s = seed * 77;
  for (int i = 0; i < n; i++) {
    int kind = i % 4;  // 0: at lo, 1: at hi, 2: interior of a box, 3: free
    p.lo[i] = kind == 3 ? -INFINITY : -1 - cusp_synth_uniform(&s);
    p.hi[i] = kind == 3 ? INFINITY : (kind == 0 ? INFINITY : 1 + cusp_synth_uniform(&s));
    if (kind == 0) {
      p.zstar[i] = p.lo[i];
      p.wstar[i] = 0.1 + cusp_synth_uniform(&s);
    } else if (kind == 1) {
      p.zstar[i] = p.hi[i];
      p.wstar[i] = -0.1 - cusp_synth_uniform(&s);
    } else {
      p.zstar[i] = kind == 2 ? 0.5 * (2 * cusp_synth_uniform(&s) - 1) : 3 * cusp_synth_uniform(&s);
      p.wstar[i] = 0;
    }
  }
  p.c.resize(n);
  for (int i = 0; i < n; i++) {
    double v = p.zstar[i] * p.zstar[i] * p.zstar[i];
    for (int j = 0; j < n; j++) v += p.M[i + j * n] * p.zstar[j];
    p.c[i] = v - p.wstar[i];
  }
  return p;
}

cuspMcpProblem ProblemOf(Cubic& c) {
  return {c.n, c.lo.data(), c.hi.data(), CubicF, CubicJ, &c, nullptr, 0, 0, nullptr};
}

TEST(McpFbNewton, NonlinearBoxProblemsWithKnownSolution) {
  for (int n : {1, 4, 13, 40, 100}) {
    for (uint64_t seed = 1; seed <= 3; seed++) {
      SCOPED_TRACE("n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      Cubic c = MakeCubic(n, seed);
      cuspMcpProblem p = ProblemOf(c);
      cuspMcpOptions opt = cusp_mcp_default_options();
      // the answer from a cold start, not the work budget: n = 100 needs more Newton steps than
      // the default budget pays for (lcp.h; solve_budget_test.cc)
      opt.work_budget = -1;
      std::vector<double> z(n, 0), F(n), work(cusp_mcp_worksize(n) / 8 + 1);
      cuspMcpInfo info;
      cusp_mcp_fbnewton(z.data(), F.data(), &info, &p, &opt, work.data(), work.size() * 8);
      ASSERT_EQ(info.status, CUSP_LCP_SOLVED) << info.message;
      EXPECT_LE(info.residual, 1e-10);
      for (int i = 0; i < n; i++) {
        EXPECT_NEAR(z[i], c.zstar[i], 1e-8) << i;
        EXPECT_NEAR(F[i], c.wstar[i], 1e-7) << i;
      }
    }
  }
}

// No false success: one Newton step on a problem that needs more ends as a failure whose reported
// residual is that of the returned z.
TEST(McpFbNewton, UnconvergedRunFails) {
  Cubic c = MakeCubic(40, 2);
  cuspMcpProblem p = ProblemOf(c);
  cuspMcpOptions opt = cusp_mcp_default_options();
  opt.max_iter = 1;
  std::vector<double> z(c.n, 0), F(c.n), work(cusp_mcp_worksize(c.n) / 8 + 1);
  cuspMcpInfo info;
  cusp_mcp_fbnewton(z.data(), F.data(), &info, &p, &opt, work.data(), work.size() * 8);
  EXPECT_NE(info.status, CUSP_LCP_SOLVED);
  EXPECT_GT(info.residual, opt.tol);
  EXPECT_LE(info.iterations, 1);
}

TEST(McpFbNewton, WarmStartAndCallbackFailure) {
  Cubic c = MakeCubic(20, 4);
  cuspMcpProblem p = ProblemOf(c);
  cuspMcpOptions opt = cusp_mcp_default_options();
  std::vector<double> z(20, 0), work(cusp_mcp_worksize(20) / 8 + 1);
  cuspMcpInfo cold, warm;
  cusp_mcp_fbnewton(z.data(), nullptr, &cold, &p, &opt, work.data(), work.size() * 8);
  ASSERT_EQ(cold.status, CUSP_LCP_SOLVED);
  opt.warm_start = 1;
  cusp_mcp_fbnewton(z.data(), nullptr, &warm, &p, &opt, work.data(), work.size() * 8);
  EXPECT_EQ(warm.status, CUSP_LCP_SOLVED);
  EXPECT_EQ(warm.iterations, 0);
  c.fail_after = 0;
  opt.warm_start = 0;
  cuspMcpInfo bad;
  cusp_mcp_fbnewton(z.data(), nullptr, &bad, &p, &opt, work.data(), work.size() * 8);
  EXPECT_EQ(bad.status, CUSP_LCP_NUMERICAL);
}

int NegativeF(mjtNum* F, const mjtNum*, int n, void*) {
  for (int i = 0; i < n; i++) F[i] = -1;
  return 0;
}
int ZeroJ(mjtNum* J, int ldj, const mjtNum*, int n, void*) {
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) J[i + j * ldj] = 0;
  }
  return 0;
}

TEST(McpFbNewton, UnsolvableIsNotReportedSolved) {
  // F = -1 with z >= 0: no solution (z would have to be +inf). With an upper bound, z = hi.
  cuspMcpProblem p = {2, nullptr, nullptr, NegativeF, ZeroJ, nullptr, nullptr, 0, 0, nullptr};
  cuspMcpOptions opt = cusp_mcp_default_options();
  std::vector<double> z(2), work(cusp_mcp_worksize(2) / 8 + 1);
  cuspMcpInfo info;
  cusp_mcp_fbnewton(z.data(), nullptr, &info, &p, &opt, work.data(), work.size() * 8);
  EXPECT_NE(info.status, CUSP_LCP_SOLVED);
  double hi[2] = {2, 3};
  p.hi = hi;
  cusp_mcp_fbnewton(z.data(), nullptr, &info, &p, &opt, work.data(), work.size() * 8);
  EXPECT_EQ(info.status, CUSP_LCP_SOLVED) << info.message;
  EXPECT_NEAR(z[0], 2, 1e-10);
  EXPECT_NEAR(z[1], 3, 1e-10);
}
}  // namespace

namespace {

// The cubic problem with M restricted to a band (kl, ku), diagonally dominant (strictly
// monotone): its Jacobian in band storage for the band mode
struct BandCubic {
  Cubic c;
  int kl, ku;
};

int BandCubicJ(mjtNum* J, int ldj, const mjtNum* z, int n, void* u) {
  BandCubic* b = static_cast<BandCubic*>(u);
  for (int j = 0; j < n; j++) {
    for (int i = j - b->ku > 0 ? j - b->ku : 0; i <= j + b->kl && i < n; i++) {
      J[b->ku + i - j + j * ldj] = b->c.M[i + j * n] + (i == j ? 3 * z[i] * z[i] : 0);
    }
  }
  return 0;
}

int BandCubicF(mjtNum* F, const mjtNum* z, int n, void* u) {
  return CubicF(F, z, n, &static_cast<BandCubic*>(u)->c);
}

TEST(McpFbNewton, BandModeSolvesAsTheDenseMode) {
  for (int n : {5, 40, 120}) {
    int kl = 3, ku = 2;
    BandCubic b{MakeCubic(n, 9), kl, ku};
    uint64_t s = 99;
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < n; i++) {
        bool in = i - j <= kl && j - i <= ku;
        b.c.M[i + j * n] = !in ? 0 : (i == j ? 4 : cusp_synth_uniform(&s) - 0.5);
      }
    }
    for (int i = 0; i < n; i++) {  // c for the known solution with the banded M
      double v = b.c.zstar[i] * b.c.zstar[i] * b.c.zstar[i];
      for (int j = 0; j < n; j++) v += b.c.M[i + j * n] * b.c.zstar[j];
      b.c.c[i] = v - b.c.wstar[i];
    }
    SCOPED_TRACE("n=" + std::to_string(n));
    cuspMcpProblem dense = ProblemOf(b.c);
    cuspMcpProblem band = {n, b.c.lo.data(), b.c.hi.data(), BandCubicF, nullptr, &b, BandCubicJ,
                           kl, ku, nullptr};
    if (n >= 40) {
      EXPECT_LT(cusp_mcp_problem_worksize(&band), cusp_mcp_problem_worksize(&dense) / 4);
    }
    cuspMcpOptions opt = cusp_mcp_default_options();
    std::vector<double> zd(n, 0), zb(n, 0), F(n);
    std::vector<double> wd(cusp_mcp_problem_worksize(&dense) / 8 + 1);
    std::vector<double> wb(cusp_mcp_problem_worksize(&band) / 8 + 1);
    cuspMcpInfo id, ib;
    cusp_mcp_fbnewton(zd.data(), nullptr, &id, &dense, &opt, wd.data(), wd.size() * 8);
    cusp_mcp_fbnewton(zb.data(), F.data(), &ib, &band, &opt, wb.data(), wb.size() * 8);
    ASSERT_EQ(id.status, CUSP_LCP_SOLVED) << id.message;
    ASSERT_EQ(ib.status, CUSP_LCP_SOLVED) << ib.message;
    EXPECT_LE(ib.residual, 1e-10);
    EXPECT_EQ(ib.iterations, id.iterations);  // the same Newton directions up to rounding
    for (int i = 0; i < n; i++) {
      EXPECT_NEAR(zb[i], b.c.zstar[i], 1e-8) << i;
      EXPECT_NEAR(F[i], b.c.wstar[i], 1e-7) << i;
    }
  }
}

// A structured Newton step for the cubic problem, solved apart from the solver's LU (Gaussian
// elimination with partial pivoting here): mode 0 the Newton step, 1 declines, 2 the ascent
// direction (+H^-1 phi), 3 a direction off by 1e-3 whose H d does not match -phi.
int CubicStep(mjtNum* d, mjtNum* hd, const mjtNum* phi, const mjtNum* da, const mjtNum* db,
              const mjtNum* z, int n, void* u) {
  Cubic* s = static_cast<Cubic*>(u);
  s->step_calls++;
  if (s->step_mode == 1) return 1;
  std::vector<double> J(n * n), H(n * n), x(n);
  CubicJ(J.data(), n, z, n, s);
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) H[i + j * n] = db[i] * J[i + j * n] + (i == j ? da[i] : 0);
  }
  std::vector<double> A = H;
  for (int i = 0; i < n; i++) x[i] = -phi[i];
  for (int k = 0; k < n; k++) {
    int p = k;
    for (int i = k + 1; i < n; i++) {
      if (std::fabs(A[i + k * n]) > std::fabs(A[p + k * n])) p = i;
    }
    if (A[p + k * n] == 0) return 1;
    for (int j = 0; j < n; j++) std::swap(A[k + j * n], A[p + j * n]);
    std::swap(x[k], x[p]);
    for (int i = k + 1; i < n; i++) {
      double f = A[i + k * n] / A[k + k * n];
      for (int j = k; j < n; j++) A[i + j * n] -= f * A[k + j * n];
      x[i] -= f * x[k];
    }
  }
  for (int k = n - 1; k >= 0; k--) {
    for (int j = k + 1; j < n; j++) x[k] -= A[k + j * n] * x[j];
    x[k] /= A[k + k * n];
  }
  for (int i = 0; i < n; i++) {
    d[i] = s->step_mode == 2 ? -x[i]
                             : (s->step_mode == 3 ? x[i] * (1 + 1e-3 * (i % 2 ? 1 : -1)) : x[i]);
  }
  for (int i = 0; i < n; i++) {
    double v = 0;
    for (int j = 0; j < n; j++) v += H[i + j * n] * d[j];
    hd[i] = v;
  }
  return 0;
}

TEST(McpFbNewton, StructuredStepIsTakenAndADeclinedOrWrongOneIsNot) {
  for (int n : {4, 13, 40}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    cuspMcpOptions opt = cusp_mcp_default_options();
    Cubic plain = MakeCubic(n, 5);
    cuspMcpProblem pp = ProblemOf(plain);
    std::vector<double> w(cusp_mcp_problem_worksize(&pp) / 8 + 1), z0(n, 0);
    cuspMcpInfo i0;
    cusp_mcp_fbnewton(z0.data(), nullptr, &i0, &pp, &opt, w.data(), w.size() * 8);
    ASSERT_EQ(i0.status, CUSP_LCP_SOLVED) << i0.message;
    EXPECT_EQ(i0.structured_steps, 0);
    for (int mode = 0; mode < 4; mode++) {
      SCOPED_TRACE("mode=" + std::to_string(mode));
      Cubic s = MakeCubic(n, 5);
      s.step_mode = mode;
      cuspMcpProblem p = ProblemOf(s);
      p.newton_solve = CubicStep;
      std::vector<double> z(n, 0);
      cuspMcpInfo info;
      cusp_mcp_fbnewton(z.data(), nullptr, &info, &p, &opt, w.data(), w.size() * 8);
      ASSERT_EQ(info.status, CUSP_LCP_SOLVED) << info.message;
      EXPECT_GT(s.step_calls, 0);
      for (int i = 0; i < n; i++) EXPECT_NEAR(z[i], s.zstar[i], 1e-8) << i;
      if (mode == 0) {
        // the Newton steps of the dense path, solved elsewhere: the same iterations
        EXPECT_EQ(info.structured_steps, info.iterations - info.lm_steps);
        EXPECT_GT(info.structured_steps, 0);
        EXPECT_EQ(info.iterations, i0.iterations);
      } else {
        // declined, ascending or inexact: every step is the dense one, to the bit
        EXPECT_EQ(info.structured_steps, 0);
        EXPECT_EQ(info.iterations, i0.iterations);
        for (int i = 0; i < n; i++) EXPECT_EQ(z[i], z0[i]) << i;
      }
    }
  }
}

}  // namespace
