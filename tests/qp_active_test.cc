// Active-set QP with non-negative and free unknowns (solver/qp_active.h) on singular PSD
// problems: a box face on a plane whose vertices' free velocities are not those of a rigid motion
// (the contact problem the proximal loop stalls on), random rank-deficient problems checked
// against an enumeration of every active set solved by LAPACK's SVD least squares (an algorithm
// independent of the solver's complete orthogonal factorisation), and problems with no minimiser.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

extern "C" {
#include "solver/qp_active.h"
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b,
             const int* ldb, double* s, const double* rcond, int* rank, double* work,
             const int* lwork, int* iwork, int* info);
}

namespace {

struct Qp {
  int n = 0;
  std::vector<double> W, q;  // (n x n) column-major, (n)
  std::vector<int> bounded;
};

double Objective(const Qp& p, const std::vector<double>& x) {
  double f = 0;
  for (int i = 0; i < p.n; i++) {
    double wx = 0;
    for (int j = 0; j < p.n; j++) wx += p.W[i + (size_t)j * p.n] * x[j];
    f += 0.5 * x[i] * wx + p.q[i] * x[i];
  }
  return f;
}

// KKT residual of the mixed LCP, computed here: bounded x >= 0, g >= 0, x g = 0; free g = 0
double Kkt(const Qp& p, const std::vector<double>& x) {
  double r = 0;
  for (int i = 0; i < p.n; i++) {
    double g = p.q[i];
    for (int j = 0; j < p.n; j++) g += p.W[i + (size_t)j * p.n] * x[j];
    if (p.bounded[i]) {
      r = std::fmax(r, std::fmax(-x[i], -g));
      r = std::fmax(r, std::fabs(std::fmin(x[i], g)));
    } else {
      r = std::fmax(r, std::fabs(g));
    }
  }
  return r;
}

cuspLcpStatus Solve(const Qp& p, std::vector<double>& x, cuspQpInfo* info, double tol) {
  std::vector<unsigned char> work(cusp_qp_active_worksize(p.n));
  return cusp_qp_active(x.data(), info, p.W.data(), p.n, p.q.data(), p.bounded.data(), p.n, tol,
                        0, work.data(), work.size());
}

// The least objective over the KKT points of every active set (bounded unknowns at 0 or free),
// each solved by SVD least squares; NAN if there is none (no minimiser).
double EnumeratedOptimum(const Qp& p) {
  std::vector<int> bidx;
  for (int i = 0; i < p.n; i++) {
    if (p.bounded[i]) bidx.push_back(i);
  }
  double best = NAN;
  for (unsigned mask = 0; mask < (1u << bidx.size()); mask++) {
    std::vector<int> at_zero(p.n, 0), F;
    for (size_t b = 0; b < bidx.size(); b++) at_zero[bidx[b]] = (mask >> b) & 1u;
    for (int i = 0; i < p.n; i++) {
      if (!at_zero[i]) F.push_back(i);
    }
    std::vector<double> x(p.n, 0);
    int m = (int)F.size();
    if (m > 0) {
      std::vector<double> A((size_t)m * m), b(m), s(m);
      for (int a = 0; a < m; a++) {
        b[a] = -p.q[F[a]];
        for (int c = 0; c < m; c++) A[a + (size_t)c * m] = p.W[F[a] + (size_t)F[c] * p.n];
      }
      int one = 1, rank = 0, info = 0, lwork = 4096, iwork[512];
      double rcond = 1e-12, wk[4096];
      dgelsd_(&m, &m, &one, A.data(), &m, b.data(), &m, s.data(), &rcond, &rank, wk, &lwork,
              iwork, &info);
      if (info != 0) continue;
      for (int a = 0; a < m; a++) x[F[a]] = b[a];
    }
    if (Kkt(p, x) <= 1e-9) {
      double f = Objective(p, x);
      if (std::isnan(best) || f < best) best = f;
    }
  }
  return best;
}

// Rows of a unit-mass box (half sides a x b, inertia diag(I)) resting on a plane at its 4 bottom
// corners: 4 normal rows, 2 tangential rows and the spin row at the face centre; W = J M^-1 J^T
// is 7 x 7 of rank 6 (the 4 normal rows span 3 motions).
Qp BoxOnPlane(const double dq[4]) {
  const double a = 0.05, b = 0.03, h = 0.02, m = 1;
  const double I[3] = {m * (b * b + h * h) / 3, m * (a * a + h * h) / 3, m * (a * a + b * b) / 3};
  const double cx[4] = {a, -a, -a, a}, cy[4] = {b, b, -b, -b};
  std::vector<std::vector<double>> J;  // rows over (vx, vy, vz, wx, wy, wz) of the box centre
  for (int k = 0; k < 4; k++) {
    // normal velocity of corner (cx, cy, -h): vz + wx cy - wy cx
    J.push_back({0, 0, 1, cy[k], -cx[k], 0});
  }
  J.push_back({1, 0, 0, 0, -h, 0});  // tangential at the face centre (0, 0, -h): vx + wy (-h)
  J.push_back({0, 1, 0, h, 0, 0});   // vy - wx (-h)
  J.push_back({0, 0, 0, 0, 0, 1});   // spin about the normal
  const double minv[6] = {1 / m, 1 / m, 1 / m, 1 / I[0], 1 / I[1], 1 / I[2]};
  Qp p;
  p.n = 7;
  p.W.assign(49, 0);
  for (int i = 0; i < 7; i++) {
    for (int j = 0; j < 7; j++) {
      double v = 0;
      for (int d = 0; d < 6; d++) v += J[i][d] * minv[d] * J[j][d];
      p.W[i + 7 * j] = v;
    }
  }
  // free velocity: falling at 0.0196 m/s (one step of gravity at 2 ms) plus per-corner gap terms
  p.q = {-0.0196 + dq[0], -0.0196 + dq[1], -0.0196 + dq[2], -0.0196 + dq[3], 0.001, -0.002, 0.01};
  p.bounded = {1, 1, 1, 1, 0, 0, 0};
  return p;
}

TEST(QpActive, BoxFaceWithRigidGapTermsSolvesOnItsNullSpace) {
  // corner terms of a rigid tilt (dq = alpha cy - beta cx): consistent, all 4 corners may carry
  const double dq[4] = {1e-4 * 0.03 - 2e-4 * 0.05, 1e-4 * 0.03 + 2e-4 * 0.05,
                        -1e-4 * 0.03 + 2e-4 * 0.05, -1e-4 * 0.03 - 2e-4 * 0.05};
  Qp p = BoxOnPlane(dq);
  std::vector<double> x(7, 0.005);
  cuspQpInfo info;
  ASSERT_EQ(Solve(p, x, &info, 1e-13), CUSP_LCP_SOLVED);
  EXPECT_LE(Kkt(p, x), 1e-12);
  EXPECT_NEAR(Objective(p, x), EnumeratedOptimum(p), 1e-12);
}

TEST(QpActive, BoxFaceWithNonRigidGapTermsRestsOnThreeCorners) {
  // corner terms no rigid motion has (1e-8 m/s at one corner: a gap read 2e-11 m off at 2 ms):
  // no impulse on the 4 corners removes them; the body rests on 3, the 4th opening
  for (int corner = 0; corner < 4; corner++) {
    double dq[4] = {0, 0, 0, 0};
    dq[corner] = 1e-8;
    Qp p = BoxOnPlane(dq);
    std::vector<double> x(7, 0);
    for (int k = 0; k < 4; k++) x[k] = 0.0196 / 4 / 1.0 * 0.25;  // a spread start, not the answer
    cuspQpInfo info;
    ASSERT_EQ(Solve(p, x, &info, 1e-13), CUSP_LCP_SOLVED) << "corner " << corner;
    EXPECT_LE(Kkt(p, x), 1e-12) << "corner " << corner;
    int zeros = 0;
    for (int k = 0; k < 4; k++) zeros += x[k] == 0;
    EXPECT_GE(zeros, 1) << "corner " << corner;
    EXPECT_NEAR(Objective(p, x), EnumeratedOptimum(p), 1e-12) << "corner " << corner;
  }
}

TEST(QpActive, RandomRankDeficientProblemsMatchTheEnumeratedOptimum) {
  std::mt19937 rng(7);
  std::normal_distribution<double> N(0, 1);
  int solved = 0, unbounded = 0;
  for (int trial = 0; trial < 300; trial++) {
    Qp p;
    p.n = 2 + trial % 7;
    int r = 1 + (int)(rng() % (unsigned)p.n);  // rank 1 .. n
    std::vector<double> B((size_t)p.n * r);
    for (double& v : B) v = N(rng);
    p.W.assign((size_t)p.n * p.n, 0);
    for (int i = 0; i < p.n; i++) {
      for (int j = 0; j < p.n; j++) {
        double v = 0;
        for (int c = 0; c < r; c++) v += B[i + (size_t)c * p.n] * B[j + (size_t)c * p.n];
        p.W[i + (size_t)j * p.n] = v;
      }
    }
    p.q.resize(p.n);
    p.bounded.resize(p.n);
    for (int i = 0; i < p.n; i++) {
      p.q[i] = N(rng);
      p.bounded[i] = (rng() % 4) != 0;
    }
    double fstar = EnumeratedOptimum(p);
    std::vector<double> x(p.n);
    for (double& v : x) v = std::fabs(N(rng));
    cuspQpInfo info;
    cuspLcpStatus st = Solve(p, x, &info, 1e-11);
    if (std::isnan(fstar)) {
      EXPECT_NE(st, CUSP_LCP_SOLVED) << "trial " << trial << ": a minimiser where none exists";
      unbounded++;
      continue;
    }
    ASSERT_EQ(st, CUSP_LCP_SOLVED) << "trial " << trial << " n " << p.n << " rank " << r
                                   << " iterations " << info.iterations << " residual "
                                   << info.residual;
    EXPECT_LE(Kkt(p, x), 1e-9) << "trial " << trial;
    EXPECT_NEAR(Objective(p, x), fstar, 1e-8 * (1 + std::fabs(fstar))) << "trial " << trial;
    solved++;
  }
  EXPECT_GT(solved, 100);
  EXPECT_GT(unbounded, 10);
}

TEST(QpActive, ARayNothingBoundsIsReportedNotSolved) {
  // W = [1 -1; -1 1] (rank 1): along x = (t, t) the objective is (q1 + q2) t
  Qp p;
  p.n = 2;
  p.W = {1, -1, -1, 1};
  p.bounded = {1, 1};
  p.q = {-1, -1};
  std::vector<double> x = {0.5, 0.2};
  cuspQpInfo info;
  EXPECT_EQ(Solve(p, x, &info, 1e-12), CUSP_LCP_NUMERICAL);
  p.q = {1, 1};  // bounded below: the answer is x = 0, g = q
  x = {0.5, 0.2};
  ASSERT_EQ(Solve(p, x, &info, 1e-12), CUSP_LCP_SOLVED);
  EXPECT_EQ(x[0], 0);
  EXPECT_EQ(x[1], 0);
}

}  // namespace
