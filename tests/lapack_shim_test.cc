// The envelope (profile) Cholesky routines of the solver core against the dense ones: the same
// factor and the same solutions, bitwise, on block-diagonal (many bodies in one island), banded
// and dense SPD matrices; and the envelope they read.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

extern "C" {
#include "solver/lapack_shim.h"
}

namespace {

// SPD matrix (column-major n x n) with the given half-bandwidth structure: blocks of size `block`
// on the diagonal (block = n: dense) plus a band of `band` off-diagonals between blocks
std::vector<mjtNum> Spd(int n, int block, int band, uint64_t seed) {
  std::vector<mjtNum> a(n * n, 0.0);
  auto rnd = [&seed]() {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return ((seed >> 11) * (1.0 / 9007199254740992.0)) - 0.5;
  };
  for (int j = 0; j < n; j++) {
    for (int i = j; i < n; i++) {
      bool inside = i / block == j / block || i - j <= band;
      if (!inside) continue;
      mjtNum v = i == j ? n + 1.0 + rnd() : rnd();
      a[i + j * n] = a[j + i * n] = v;
    }
  }
  return a;
}

TEST(LapackShim, EnvelopeOfABlockDiagonalMatrix) {
  int n = 12;
  std::vector<mjtNum> a = Spd(n, 6, 0, 1);
  std::vector<int> env(2 * n);
  cusp_envelope(env.data(), a.data(), n, n, nullptr);
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(env[i], i / 6 * 6) << "first column of row " << i;
    EXPECT_EQ(env[n + i], i / 6 * 6 + 5) << "last row of column " << i;
  }
}

TEST(LapackShim, EnvelopeCholeskyEqualsDenseBitwise) {
  struct Case { int n, block, band; };
  for (Case c : {Case{36, 6, 0}, Case{40, 6, 3}, Case{30, 30, 0}, Case{25, 1, 2}, Case{1, 1, 0}}) {
    std::vector<mjtNum> a = Spd(c.n, c.block, c.band, 7 + c.n);
    std::vector<mjtNum> dense = a, env_factor = a;
    std::vector<int> env(2 * c.n);
    cusp_envelope(env.data(), a.data(), c.n, c.n, nullptr);
    ASSERT_EQ(cusp_dpotrf(dense.data(), c.n, c.n), 0);
    ASSERT_EQ(cusp_dpotrf_env(env_factor.data(), c.n, c.n, env.data()), 0);
    for (int j = 0; j < c.n; j++) {
      for (int i = j; i < c.n; i++) {
        EXPECT_EQ(dense[i + j * c.n], env_factor[i + j * c.n]) << "L(" << i << "," << j << ")";
      }
    }
    // three right-hand sides: dense, sparse (one nonzero, late), zero
    int nrhs = 3;
    std::vector<mjtNum> b(c.n * nrhs, 0.0);
    for (int i = 0; i < c.n; i++) b[i] = 1.0 + 0.1 * i;
    b[c.n + c.n - 1] = 2.0;
    std::vector<mjtNum> x1 = b, x2 = b;
    cusp_dpotrs(x1.data(), dense.data(), c.n, nrhs, c.n, c.n);
    cusp_dpotrs_env(x2.data(), env_factor.data(), c.n, nrhs, c.n, c.n, env.data());
    for (int i = 0; i < c.n * nrhs; i++) EXPECT_EQ(x1[i], x2[i]) << "x[" << i << "]";
    // and they solve A x = b (relative 1e-12)
    for (int r = 0; r < nrhs; r++) {
      for (int i = 0; i < c.n; i++) {
        mjtNum s = 0;
        for (int k = 0; k < c.n; k++) s += a[i + k * c.n] * x2[k + r * c.n];
        EXPECT_NEAR(s, b[i + r * c.n], 1e-12 * (1 + std::abs(b[i + r * c.n])));
      }
    }
  }
}

TEST(LapackShim, EnvelopeCholeskyReportsANonPositiveMatrixAsLapack) {
  int n = 12;
  std::vector<mjtNum> a = Spd(n, 6, 0, 3), b = a;
  a[8 + 8 * n] = -1.0;  // minor of order 9 not positive definite
  b[8 + 8 * n] = -1.0;
  std::vector<int> env(2 * n);
  cusp_envelope(env.data(), a.data(), n, n, nullptr);
  int info_env = cusp_dpotrf_env(a.data(), n, n, env.data());
  EXPECT_EQ(info_env, cusp_dpotrf(b.data(), n, n));
  EXPECT_EQ(info_env, 9);
}

}  // namespace

namespace {

// general band matrix (column-major n x n, kl sub-, ku superdiagonals), small diagonal so that
// partial pivoting swaps rows
std::vector<mjtNum> Band(int n, int kl, int ku, uint64_t seed) {
  std::vector<mjtNum> a(n * n, 0.0);
  for (int j = 0; j < n; j++) {
    for (int i = j - ku > 0 ? j - ku : 0; i <= j + kl && i < n; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      a[i + j * n] = ((seed >> 11) * (1.0 / 9007199254740992.0)) - 0.5;
    }
  }
  return a;
}

TEST(LapackShim, BandLuSolvesAsTheDenseLuWithTheSamePivots) {
  struct Case { int n, kl, ku; };
  for (Case c : {Case{30, 2, 3}, Case{41, 6, 6}, Case{12, 0, 4}, Case{12, 4, 0}, Case{1, 0, 0},
                 Case{9, 8, 8}}) {
    SCOPED_TRACE(testing::Message() << "n " << c.n << " kl " << c.kl << " ku " << c.ku);
    std::vector<mjtNum> a = Band(c.n, c.kl, c.ku, 3 + c.n), lu = a;
    int ldab = 2 * c.kl + c.ku + 1;
    std::vector<mjtNum> ab(ldab * c.n, 99.0);  // garbage in the fill rows: must be ignored
    for (int j = 0; j < c.n; j++) {
      for (int i = j - c.ku > 0 ? j - c.ku : 0; i <= j + c.kl && i < c.n; i++) {
        ab[c.kl + c.ku + i - j + j * ldab] = a[i + j * c.n];
      }
    }
    std::vector<int> ipiv(c.n), ipiv_band(c.n);
    ASSERT_EQ(cusp_dgetrf(lu.data(), ipiv.data(), c.n, c.n, c.n), 0);
    ASSERT_EQ(cusp_dgbtrf(ab.data(), ipiv_band.data(), c.n, c.kl, c.ku, ldab), 0);
    EXPECT_EQ(ipiv, ipiv_band);
    std::vector<mjtNum> b(c.n), x(c.n), y(c.n);
    for (int i = 0; i < c.n; i++) b[i] = x[i] = y[i] = 1.0 + 0.1 * i;
    cusp_dgetrs(x.data(), 'N', lu.data(), ipiv.data(), c.n, 1, c.n, c.n);
    cusp_dgbtrs(y.data(), ab.data(), ipiv_band.data(), c.n, c.kl, c.ku, ldab);
    for (int i = 0; i < c.n; i++) {
      mjtNum r = -b[i];  // residual of the band solution, A y - b
      for (int j = 0; j < c.n; j++) r += a[i + j * c.n] * y[j];
      EXPECT_NEAR(r, 0.0, 1e-10) << "row " << i;
      EXPECT_NEAR(y[i], x[i], 1e-9 * (1 + std::fabs(x[i]))) << "x" << i;
    }
  }
}

TEST(LapackShim, BandLuReportsTheFirstZeroPivot) {
  int n = 4, kl = 1, ku = 1, ldab = 2 * kl + ku + 1;
  std::vector<mjtNum> ab(ldab * n, 0.0);  // A = diag(1, 0, 1, 1): column 1 has no pivot
  for (int j : {0, 2, 3}) ab[kl + ku + j * ldab] = 1;
  std::vector<int> ipiv(n);
  EXPECT_EQ(cusp_dgbtrf(ab.data(), ipiv.data(), n, kl, ku, ldab), 2);
}

TEST(LapackShim, BandCholeskyEqualsDenseCholesky) {
  for (int kd : {0, 1, 3, 7}) {
    int n = 25, ldab = kd + 1;
    std::vector<mjtNum> a = Spd(n, 1, kd, 11 + kd), dense = a;
    std::vector<mjtNum> ab(ldab * n, 0.0);
    for (int j = 0; j < n; j++) {
      for (int i = j; i <= j + kd && i < n; i++) ab[i - j + j * ldab] = a[i + j * n];
    }
    ASSERT_EQ(cusp_dpotrf(dense.data(), n, n), 0);
    ASSERT_EQ(cusp_dpbtrf(ab.data(), n, kd, ldab), 0);
    for (int j = 0; j < n; j++) {
      for (int i = j; i <= j + kd && i < n; i++) {
        EXPECT_NEAR(ab[i - j + j * ldab], dense[i + j * n], 1e-13) << "L(" << i << "," << j << ")";
      }
    }
    std::vector<mjtNum> x(n), y(n);
    for (int i = 0; i < n; i++) x[i] = y[i] = std::sin(1.0 + i);
    cusp_dpotrs(x.data(), dense.data(), n, 1, n, n);
    cusp_dpbtrs(y.data(), ab.data(), n, kd, ldab);
    for (int i = 0; i < n; i++) EXPECT_NEAR(y[i], x[i], 1e-13 * (1 + std::fabs(x[i]))) << i;
  }
  std::vector<mjtNum> ab = {1.0, 2.0, 2.0, 1.0};  // [[1, 2], [2, 1]]: not positive definite
  EXPECT_EQ(cusp_dpbtrf(ab.data(), 2, 1, 2), 2);
}

TEST(LapackShim, RangeSolveOnWholeBlocksEqualsTheFullSolve) {
  int n = 36;
  std::vector<mjtNum> a = Spd(n, 6, 0, 5);
  std::vector<int> env(2 * n);
  cusp_envelope(env.data(), a.data(), n, n, nullptr);
  ASSERT_EQ(cusp_dpotrf_env(a.data(), n, n, env.data()), 0);
  std::vector<mjtNum> full(n, 0.0), range(n, 0.0);
  for (int i = 13; i < 20; i++) full[i] = range[i] = 1.0 + i;  // blocks [12, 24)
  cusp_dpotrs_env(full.data(), a.data(), n, 1, n, n, env.data());
  cusp_dpotrs_env_range(range.data(), a.data(), n, env.data(), n, 12, 24);
  for (int i = 0; i < n; i++) EXPECT_EQ(range[i], full[i]) << i;
}

}  // namespace
