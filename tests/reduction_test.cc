// Reduced LCP in the cone of a non-negative basis with the full problem as fallback
// (plugin/solver/reduction.c), on contact-like problems W = J J^T + eps I with a planted solution.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

extern "C" {
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
  Result r{std::vector<double>(p.n), std::vector<double>(k), std::vector<double>(p.n), {},
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
  EXPECT_NEAR(r.info.violation, reduced.info.violation, 1e-12);  // reported for the reduced try
  for (int i = 0; i < n; i++) EXPECT_NEAR(r.z[i], z[i], 1e-8) << i;  // the planted solution
  for (int i = 0; i < n; i++) EXPECT_GE(r.w[i], -1e-9) << i;
}

TEST(Reduction, BadInputIsRefused) {
  Problem p = MakeW(4, 1);
  std::vector<double> B(4, 1.0);
  Result r = Solve(p, B, 0);
  EXPECT_EQ(r.status, CUSP_LCP_BAD_INPUT);
}

}  // namespace
