// The envelope (profile) Cholesky routines of the solver core against the dense ones: the same
// factor and the same solutions, bitwise, on block-diagonal (many bodies in one island), banded
// and dense SPD matrices; and the envelope they read.
#include <gtest/gtest.h>

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
  cusp_envelope(env.data(), a.data(), n, n);
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
    cusp_envelope(env.data(), a.data(), c.n, c.n);
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
  cusp_envelope(env.data(), a.data(), n, n);
  int info_env = cusp_dpotrf_env(a.data(), n, n, env.data());
  EXPECT_EQ(info_env, cusp_dpotrf(b.data(), n, n));
  EXPECT_EQ(info_env, 9);
}

}  // namespace
