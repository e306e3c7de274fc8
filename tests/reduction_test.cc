// Reduced LCP in the cone of a non-negative basis with the full problem as fallback
// (plugin/solver/reduction.c), on contact-like problems W = J J^T + eps I with a planted solution.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

extern "C" {
#include "solver/lapack_shim.h"
#include "solver/lcp.h"
#include "solver/reduction.h"
}

namespace {

struct Problem {
  int n;
  std::vector<double> W, b;
};

// W = J J^T + 1e-3 I (n x n, SPD like a Delassus matrix), J (n x 2n) uniform in [-1, 1]
Problem MakeW(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  int m = 2 * n;
  std::vector<double> J(n * m);
  for (double& x : J) x = u(rng);
  Problem p{n, std::vector<double>(n * n), std::vector<double>(n)};
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      double s = i == j ? 1e-3 : 0;
      for (int c = 0; c < m; c++) s += J[i + c * n] * J[j + c * n];
      p.W[i + j * n] = s;
    }
  }
  return p;
}

// b such that z (>= 0) solves the LCP with w = slack where z = 0, 0 where z > 0
void Plant(Problem* p, const std::vector<double>& z, const std::vector<double>& slack) {
  for (int i = 0; i < p->n; i++) {
    double wz = 0;
    for (int j = 0; j < p->n; j++) wz += p->W[i + j * p->n] * z[j];
    p->b[i] = (z[i] > 0 ? 0 : slack[i]) - wz;
  }
}

struct Result {
  std::vector<double> z, a, w;
  cuspReductionInfo info;
  cuspLcpStatus status;
};

Result Solve(const Problem& p, const std::vector<double>& B, int k, int fallback = 1) {
  cuspReducedLcp prob = {p.n, k, p.W.data(), p.n, p.b.data(), B.data(), p.n};
  cuspReductionOptions opt = cusp_reduction_default_options();
  opt.fallback = fallback;
  std::vector<double> work(cusp_reduction_worksize(p.n, k, opt.backend) / sizeof(double) + 1);
  Result r{std::vector<double>(p.n),
           std::vector<double>(k),
           std::vector<double>(p.n),
           {},
           CUSP_LCP_SOLVED};
  r.status = cusp_reduction_solve(r.z.data(), r.a.data(), r.w.data(), &r.info, &prob, &opt,
                                  work.data(), work.size() * sizeof(double));
  return r;
}

// two non-negative load patterns over n = 12 contacts: the left half, and the right half, loaded
std::vector<double> Pattern(int n, int which) {
  std::vector<double> v(n, 0);
  for (int i = 0; i < n / 2; i++) v[which ? n / 2 + i : i] = 1.0 + 0.1 * i;
  return v;
}

TEST(Reduction, BasisSpanningTheSolutionReproducesTheFullSolve) {
  const int n = 12;
  Problem p = MakeW(n, 7);
  std::vector<double> p0 = Pattern(n, 0), p1 = Pattern(n, 1), z(n), slack(n, 0.5);
  for (int i = 0; i < n; i++) z[i] = 0.3 * p0[i] + 1.7 * p1[i];  // every contact loaded
  Plant(&p, z, slack);
  std::vector<double> B(p0);
  B.insert(B.end(), p1.begin(), p1.end());  // B = [p0 p1] (n x 2)
  Result r = Solve(p, B, 2);
  ASSERT_EQ(r.status, CUSP_LCP_SOLVED);
  EXPECT_EQ(r.info.used_full, 0);
  // 1e-9: Lemke on a 2 x 2 problem is exact to rounding; z = B a
  EXPECT_NEAR(r.a[0], 0.3, 1e-9);
  EXPECT_NEAR(r.a[1], 1.7, 1e-9);
  for (int i = 0; i < n; i++) EXPECT_NEAR(r.z[i], z[i], 1e-9) << i;
  EXPECT_LE(r.info.violation, 1e-9);
}

TEST(Reduction, UnloadedPatternGetsAZeroCoefficient) {
  // only the left half is loaded; the right half separates (w = 0.5): the coefficient of the
  // right pattern must be 0, not negative, and no row may be left penetrating
  const int n = 12;
  Problem p = MakeW(n, 11);
  std::vector<double> p0 = Pattern(n, 0), p1 = Pattern(n, 1), slack(n, 0.5);
  std::vector<double> z(p0);
  for (double& x : z) x *= 0.8;
  Plant(&p, z, slack);
  std::vector<double> B(p0);
  B.insert(B.end(), p1.begin(), p1.end());
  Result r = Solve(p, B, 2);
  ASSERT_EQ(r.status, CUSP_LCP_SOLVED);
  EXPECT_EQ(r.info.used_full, 0);
  EXPECT_NEAR(r.a[0], 0.8, 1e-9);
  EXPECT_EQ(r.a[1], 0.0);
  for (int i = 0; i < n; i++) EXPECT_GE(r.w[i], -1e-9) << i;
}

TEST(Reduction, PostureOutsideTheSnapshotTriggersTheFallback) {
  // loads on alternating contacts: no non-negative combination of the half patterns fits, the
  // reduced answer leaves rows penetrating (w_i < -tol); the fallback returns the full solution
  const int n = 12;
  Problem p = MakeW(n, 13);
  std::vector<double> z(n, 0), slack(n, 0.5);
  for (int i = 0; i < n; i += 2) z[i] = 1.0;
  Plant(&p, z, slack);
  std::vector<double> B = Pattern(n, 0), p1 = Pattern(n, 1);
  B.insert(B.end(), p1.begin(), p1.end());

  Result reduced = Solve(p, B, 2, /*fallback=*/0);
  EXPECT_EQ(reduced.info.used_full, 0);
  EXPECT_GT(reduced.info.violation, 1e-3) << "the reduced answer should not fit this posture";

  Result r = Solve(p, B, 2);
  ASSERT_EQ(r.status, CUSP_LCP_SOLVED);
  EXPECT_EQ(r.info.used_full, 1);
  EXPECT_NEAR(r.info.violation, reduced.info.violation, 1e-12);      // reported for the reduced try
  for (int i = 0; i < n; i++) EXPECT_NEAR(r.z[i], z[i], 1e-8) << i;  // the planted solution
  for (int i = 0; i < n; i++) EXPECT_GE(r.w[i], -1e-9) << i;
}

TEST(Reduction, BadInputIsRefused) {
  Problem p = MakeW(4, 1);
  std::vector<double> B(4, 1.0);
  Result r = Solve(p, B, 0);
  EXPECT_EQ(r.status, CUSP_LCP_BAD_INPUT);
}

// The factored variant (W = J Meff^-1 J^T never formed) gives the dense variant's answer, both
// when the basis fits and when it falls back.
TEST(Reduction, FactoredDelassusMatchesTheDenseOne) {
  const int n = 10, nv = 7, k = 3;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1), pos(0, 1);
  std::vector<double> J(n * nv), A(nv * nv), L(nv * nv, 0.0);
  for (double& x : J) x = u(rng);
  for (double& x : A) x = u(rng);
  for (int i = 0; i < nv; i++) {  // Meff = A A^T + I (SPD), L its Cholesky factor
    for (int j = 0; j < nv; j++) {
      double s = i == j ? 1.0 : 0.0;
      for (int c = 0; c < nv; c++) s += A[i + c * nv] * A[j + c * nv];
      L[i + j * nv] = s;
    }
  }
  std::vector<double> Meff(L);
  ASSERT_EQ(cusp_dpotrf(L.data(), nv, nv), 0);
  for (int j = 0; j < nv; j++)
    for (int i = 0; i < j; i++) L[i + j * nv] = 0;  // the factor's strict upper part unused
  // dense W = J Meff^-1 J^T by solving Meff X = J^T
  std::vector<double> X(nv * n);
  for (int i = 0; i < n; i++)
    for (int c = 0; c < nv; c++) X[c + i * nv] = J[i * nv + c];
  ASSERT_EQ(cusp_dpotrs(X.data(), L.data(), nv, n, nv, nv), 0);
  Problem p{n, std::vector<double>(n * n), std::vector<double>(n)};
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int c = 0; c < nv; c++) s += J[i * nv + c] * X[c + j * nv];
      p.W[i + j * n] = s;
    }
  std::vector<double> B(n * k);
  for (double& x : B) x = pos(rng) < 0.5 ? pos(rng) : 0.0;
  for (int trial = 0; trial < 2; trial++) {
    for (int i = 0; i < n; i++) p.b[i] = trial == 0 ? -pos(rng) : u(rng);
    Result dense = Solve(p, B, k);
    cuspReducedLcpFactored fp = {n, k, nv, J.data(), L.data(), p.b.data(), B.data(), n};
    cuspReductionOptions opt = cusp_reduction_default_options();
    std::vector<double> work(
        cusp_reduction_factored_worksize(n, k, nv, opt.fallback, opt.backend) / sizeof(double) + 1);
    std::vector<double> z(n), a(k), w(n);
    cuspReductionInfo info;
    cuspLcpStatus st = cusp_reduction_solve_factored(z.data(), a.data(), w.data(), &info, &fp, &opt,
                                                     work.data(), work.size() * sizeof(double));
    EXPECT_EQ(st, dense.status);
    EXPECT_EQ(info.used_full, dense.info.used_full);
    // 1e-9: the same problem through two factorisations of W (rounding only)
    EXPECT_NEAR(info.violation, dense.info.violation, 1e-9);
    for (int i = 0; i < n; i++) {
      EXPECT_NEAR(z[i], dense.z[i], 1e-9) << i;
      EXPECT_NEAR(w[i], dense.w[i], 1e-9) << i;
    }
  }
}

}  // namespace
