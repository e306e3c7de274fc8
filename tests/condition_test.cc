// Contact LCP assembly and the three-stage conditioning pipeline (CUSP III-D) on synthetic
// contact problems with deliberately dependent normal rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

extern "C" {
#include "solver/condition.h"
#include "solver/lapack_shim.h"
#include "solver/lcp.h"
#include "solver/lcp_synth.h"
}

namespace {

struct Contact {
  int nv, m, r;
  std::vector<mjtNum> Meff, Jn, Jt, mu, bn, bt;
  cuspContactLcp c;
  Contact(int nv_, int m_, int r_, std::vector<int> dep, uint64_t seed)
      : nv(nv_), m(m_), r(r_), Meff(nv_ * nv_), Jn(m_ * nv_), Jt(m_ * r_ * nv_ + 1), mu(m_),
        bn(m_), bt(m_ * r_ + 1) {
    cusp_synth_contact(&c, Meff.data(), Jn.data(), Jt.data(), mu.data(), bn.data(), bt.data(),
                       nv, m, r, dep.data(), (int)dep.size(), seed);
  }
};

struct Out {
  std::vector<mjtNum> fn, beta, gamma;
  std::vector<int> keep;
  cuspConditionInfo info;
};

Out RunContact(const Contact& k, const cuspConditionOptions& opt) {
  Out o;
  o.fn.assign(k.m, 0);
  o.beta.assign(k.m * k.r + 1, 0);
  o.gamma.assign(k.m, 0);
  o.keep.assign(k.m, -1);
  std::vector<double> work(cusp_contact_worksize(k.nv, k.m, k.r, &opt) / sizeof(double) + 1);
  cusp_contact_solve(o.fn.data(), o.beta.data(), o.gamma.data(), o.keep.data(), &o.info, &k.c,
                     &opt, work.data(), work.size() * sizeof(double));
  return o;
}

// Dense Gaussian elimination with partial pivoting: x = A^-1 b (test-only reference).
std::vector<double> GaussSolve(std::vector<double> A, std::vector<double> b, int n) {
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int i = c + 1; i < n; i++) {
      if (std::fabs(A[i + c * n]) > std::fabs(A[p + c * n])) p = i;
    }
    for (int j = 0; j < n; j++) std::swap(A[c + j * n], A[p + j * n]);
    std::swap(b[c], b[p]);
    for (int i = c + 1; i < n; i++) {
      double f = A[i + c * n] / A[c + c * n];
      for (int j = c; j < n; j++) A[i + j * n] -= f * A[c + j * n];
      b[i] -= f * b[c];
    }
  }
  for (int i = n - 1; i >= 0; i--) {
    for (int j = i + 1; j < n; j++) b[i] -= A[i + j * n] * b[j];
    b[i] /= A[i + i * n];
  }
  return b;
}

TEST(Condition, AssemblyMatchesCuspBlocks) {
  Contact k(8, 3, 4, {}, 11);
  int s = k.r + 2, N = k.m * s;
  std::vector<double> L = k.Meff;
  // Cholesky via the pipeline's own helper is what we test against; build L naively here
  for (int j = 0; j < k.nv; j++) {
    for (int i = 0; i < j; i++) L[i + j * k.nv] = 0;
  }
  for (int j = 0; j < k.nv; j++) {
    double d = L[j + j * k.nv];
    for (int p = 0; p < j; p++) d -= L[j + p * k.nv] * L[j + p * k.nv];
    d = std::sqrt(d);
    L[j + j * k.nv] = d;
    for (int i = j + 1; i < k.nv; i++) {
      double v = L[i + j * k.nv];
      for (int p = 0; p < j; p++) v -= L[i + p * k.nv] * L[j + p * k.nv];
      L[i + j * k.nv] = v / d;
    }
  }
  std::vector<double> A(N * N), b(N);
  std::vector<double> work(cusp_contact_assemble_worksize(k.nv, k.m, k.r) / 8 + 1);
  cusp_contact_assemble(A.data(), N, b.data(), &k.c, L.data(), nullptr, k.m, work.data());
  // reference W entries: Jn_i Meff^-1 Jn_j^T and Jn_i Meff^-1 Jt_(j,t)^T
  for (int j = 0; j < k.m; j++) {
    std::vector<double> rhs(k.Jn.begin() + j * k.nv, k.Jn.begin() + (j + 1) * k.nv);
    std::vector<double> x = GaussSolve(k.Meff, rhs, k.nv);
    for (int i = 0; i < k.m; i++) {
      double ref = 0;
      for (int v = 0; v < k.nv; v++) ref += k.Jn[i * k.nv + v] * x[v];
      EXPECT_NEAR(A[i * s + (j * s) * N], ref, 1e-12 * (1 + std::fabs(ref)));
      for (int t = 0; t < k.r; t++) {
        double reft = 0;
        for (int v = 0; v < k.nv; v++) reft += k.Jt[(i * k.r + t) * k.nv + v] * x[v];
        EXPECT_NEAR(A[i * s + 1 + t + (j * s) * N], reft, 1e-12 * (1 + std::fabs(reft)));
      }
    }
  }
  for (int i = 0; i < k.m; i++) {
    int o = i * s;
    EXPECT_EQ(A[o + 1 + k.r + o * N], k.mu[i]);          // mu fn in the cone row
    EXPECT_EQ(A[o + 1 + k.r + (o + 1) * N], -1.0);       // -e^T beta
    EXPECT_EQ(A[o + 1 + (o + 1 + k.r) * N], 1.0);        // + gamma e in friction rows
    EXPECT_EQ(A[o + 1 + k.r + (o + 1 + k.r) * N], 0.0);  // zero gamma diagonal
    EXPECT_EQ(b[o], k.bn[i]);
    EXPECT_EQ(b[o + 1 + k.r], 0.0);
    if (i + 1 < k.m) {
      EXPECT_EQ(A[o + 1 + k.r + (o + s) * N], 0.0);  // no cross cone coupling
    }
  }
}

TEST(Condition, RankSelectionDropsExactlyTheDependentContacts) {
  const std::vector<int> dep = {3, 6, 7};
  Contact k(40, 9, 4, dep, 5);
  cuspConditionOptions opt = cusp_condition_default_options();
  Out o = RunContact(k, opt);
  ASSERT_EQ(o.info.lcp.status, CUSP_LCP_SOLVED) << o.info.lcp.message;
  EXPECT_EQ(o.info.detected, 9);
  EXPECT_EQ(o.info.kept, 6);
  EXPECT_EQ(o.info.dropped, 3);
  EXPECT_EQ(o.info.n_lcp, 6 * 6);
  for (int i = 0; i < k.m; i++) {
    bool is_dep = i == 3 || i == 6 || i == 7;
    EXPECT_EQ(o.keep[i], is_dep ? 0 : 1) << "contact " << i;
    if (is_dep) {
      EXPECT_EQ(o.fn[i], 0.0);
      for (int t = 0; t < k.r; t++) EXPECT_EQ(o.beta[i * k.r + t], 0.0);
    }
  }
  EXPECT_LE(o.info.residual_original, 1e-8);
  // no dependent rows -> nothing dropped
  Contact clean(40, 9, 4, {}, 5);
  Out oc = RunContact(clean, opt);
  EXPECT_EQ(oc.info.kept, 9);
  EXPECT_EQ(oc.info.dropped, 0);
}

// Physical quantities that are unique even when the beta split is not: fn and D beta.
void ExpectSameForces(const Contact& k, const Out& a, const Out& b, double tol) {
  for (int i = 0; i < k.m; i++) {
    EXPECT_NEAR(a.fn[i], b.fn[i], tol * (1 + std::fabs(a.fn[i]))) << "fn " << i;
    double ax = 0, ay = 0, bx = 0, by = 0;
    for (int t = 0; t < k.r; t++) {
      double ang = 2 * M_PI * t / k.r;
      ax += std::cos(ang) * a.beta[i * k.r + t];
      ay += std::sin(ang) * a.beta[i * k.r + t];
      bx += std::cos(ang) * b.beta[i * k.r + t];
      by += std::sin(ang) * b.beta[i * k.r + t];
    }
    EXPECT_NEAR(ax, bx, tol * (1 + std::fabs(ax))) << "ft_x " << i;
    EXPECT_NEAR(ay, by, tol * (1 + std::fabs(ay))) << "ft_y " << i;
  }
}

TEST(Condition, RuizAndTikhonovLeaveTheSolutionUnchanged) {
  Contact k(60, 8, 4, {2, 5}, 21);
  cuspConditionOptions base = cusp_condition_default_options();
  base.ruiz = 0;
  base.tikhonov = 0;
  Out o0 = RunContact(k, base);
  ASSERT_EQ(o0.info.lcp.status, CUSP_LCP_SOLVED) << o0.info.lcp.message;
  cuspConditionOptions ruiz = base;
  ruiz.ruiz = 1;
  Out o1 = RunContact(k, ruiz);
  ASSERT_EQ(o1.info.lcp.status, CUSP_LCP_SOLVED);
  ExpectSameForces(k, o0, o1, 1e-7);
  cuspConditionOptions all = cusp_condition_default_options();
  Out o2 = RunContact(k, all);
  ASSERT_EQ(o2.info.lcp.status, CUSP_LCP_SOLVED);
  ExpectSameForces(k, o0, o2, 1e-7);
  EXPECT_LE(o2.info.residual_original, 1e-8);
  // at least one contact carries load, so the comparison is not vacuous
  double total = 0;
  for (double f : o0.fn) total += f;
  EXPECT_GT(total, 1e-3);
}

TEST(Condition, UnconditionedProblemIsWorseConditioned) {
  Contact k(40, 9, 4, {3, 6, 7}, 5);
  Out o = RunContact(k, cusp_condition_default_options());
  ASSERT_GT(o.info.rcond_after, 0.0);
  EXPECT_LT(o.info.rcond_before, 1e-3 * o.info.rcond_after)
      << "before " << o.info.rcond_before << " after " << o.info.rcond_after;
  // rank selection alone already removes the singularity
  cuspConditionOptions rs = cusp_condition_default_options();
  rs.ruiz = 0;
  rs.tikhonov = 0;
  Out o1 = RunContact(k, rs);
  EXPECT_GT(o1.info.rcond_after, 1e3 * o.info.rcond_before);
}

TEST(Condition, RuizRepairsScaleDisparity) {
  // contacts with normal Jacobians over eight decades (stiff vs soft directions)
  Contact k(40, 8, 4, {}, 8);
  for (int i = 0; i < k.m; i++) {
    double f = std::pow(10.0, i - 4);
    for (int v = 0; v < k.nv; v++) k.Jn[i * k.nv + v] *= f;
    k.bn[i] *= f;
  }
  cuspConditionOptions off = cusp_condition_default_options();
  off.ruiz = 0;
  off.tikhonov = 0;
  Out a = RunContact(k, off);
  cuspConditionOptions on = off;
  on.ruiz = 1;
  Out b = RunContact(k, on);
  EXPECT_GT(b.info.rcond_after, 1e4 * a.info.rcond_after)
      << a.info.rcond_after << " -> " << b.info.rcond_after;
  ASSERT_EQ(b.info.lcp.status, CUSP_LCP_SOLVED) << b.info.lcp.message;
  EXPECT_LE(b.info.residual_original, 1e-6);
}

TEST(Condition, FrictionlessAndEveryBackend) {
  Contact k(30, 10, 0, {4}, 3);
  for (cuspLcpBackendId id : {CUSP_LCP_LEMKE, CUSP_LCP_PGS, CUSP_LCP_FBNEWTON, CUSP_LCP_CHAIN}) {
    cuspConditionOptions opt = cusp_condition_default_options();
    opt.backend = id;
    opt.lcp.max_iter = id == CUSP_LCP_PGS ? 100000 : 0;
    Out o = RunContact(k, opt);
    EXPECT_EQ(o.info.lcp.status, CUSP_LCP_SOLVED) << cusp_lcp_backend(id)->name;
    EXPECT_EQ(o.info.dropped, 1);
    // the dropped contact is one of the dependent set {0, 1, 4} (row 4 = a row 0 + b row 1), and
    // a contact the free motion violates (bn < 0) is dropped only if the whole set is violated
    // (then pivoting drops the redundant row 4 itself)
    bool set_violated = k.bn[0] < 0 && k.bn[1] < 0 && k.bn[4] < 0;
    int dropped = -1;
    for (int i = 0; i < k.m; i++) {
      if (!o.keep[i]) dropped = i;
    }
    ASSERT_TRUE(dropped == 0 || dropped == 1 || dropped == 4) << dropped;
    if (set_violated) EXPECT_EQ(dropped, 4);
    else EXPECT_GE(k.bn[dropped], 0.0) << dropped;
    EXPECT_LE(o.info.residual_original, 1e-8) << cusp_lcp_backend(id)->name;
  }
}

TEST(Condition, FrictionBlocksWithEveryBackend) {
  // r = 8: every contact block has a zero diagonal entry (the cone-slack row). Scalar PGS cannot
  // start on that; the contact solve runs PGS block by block, which must reach the same
  // tolerance as the pivoting and Newton backends (answers of a friction LCP need not be unique,
  // so each is checked on the unconditioned problem, not against the others).
  Contact k(30, 6, 8, {}, 11);
  for (cuspLcpBackendId id : {CUSP_LCP_LEMKE, CUSP_LCP_PGS, CUSP_LCP_FBNEWTON, CUSP_LCP_CHAIN}) {
    cuspConditionOptions opt = cusp_condition_default_options();
    opt.backend = id;
    opt.lcp.max_iter = id == CUSP_LCP_PGS ? 100000 : 0;
    Out o = RunContact(k, opt);
    EXPECT_EQ(o.info.lcp.status, CUSP_LCP_SOLVED) << cusp_lcp_backend(id)->name;
    EXPECT_LE(o.info.residual_original, 1e-8) << cusp_lcp_backend(id)->name;
    for (int i = 0; i < k.m; i++) EXPECT_GE(o.fn[i], 0);
  }
}

TEST(Condition, FallbackChainTakesOverAFailedBackend) {
  // Lemke limited to 3 pivots cannot finish a 6-contact friction problem (N = 60). Without the
  // fallback its iterate is returned as is; with it the chain (FB Newton, PGS; Lemke left out)
  // runs from the same start under the same limit (3 iterations each) and its answer is taken
  // when its residual is smaller (measured: 0.21 -> 0.074, by PGS). The chain's iterations are
  // added to the report.
  Contact k(30, 6, 8, {}, 11);
  cuspConditionOptions opt = cusp_condition_default_options();
  opt.backend = CUSP_LCP_LEMKE;
  opt.lcp.max_iter = 3;
  Out raw = RunContact(k, opt);
  EXPECT_EQ(raw.info.lcp.status, CUSP_LCP_MAX_ITER);
  EXPECT_EQ(raw.info.fell_back, 0);
  EXPECT_GT(raw.info.residual_original, 1e-3);
  opt.fallback = 1;
  opt.lcp.max_iter = 3;
  Out fb = RunContact(k, opt);
  EXPECT_EQ(fb.info.fell_back, 1);
  EXPECT_NE(std::string(fb.info.lcp.backend), "lemke");
  EXPECT_LE(fb.info.lcp.residual, raw.info.lcp.residual);
  EXPECT_GT(fb.info.lcp.iterations, raw.info.lcp.iterations);
  std::printf("lemke 3 pivots: residual %.3g; fallback (%s): status %d residual %.3g\n",
              raw.info.lcp.residual, fb.info.lcp.backend, fb.info.lcp.status, fb.info.lcp.residual);
  // a solvable backend is never replaced: the same options with enough pivots solve by Lemke
  opt.lcp.max_iter = 0;
  Out ok = RunContact(k, opt);
  EXPECT_EQ(ok.info.lcp.status, CUSP_LCP_SOLVED);
  EXPECT_EQ(ok.info.fell_back, 0);
  EXPECT_EQ(std::string(ok.info.lcp.backend), "lemke");
}

TEST(Condition, ScalarPgsReportsTheZeroDiagonalOfAFrictionBlock) {
  Contact k(30, 6, 8, {}, 11);
  // the same problem assembled and handed to PGS without the block size
  int s = k.r + 2, N = k.m * s;
  std::vector<double> L(k.Meff), A(N * N), b(N);
  ASSERT_EQ(cusp_dpotrf(L.data(), k.nv, k.nv), 0);
  for (int j = 1; j < k.nv; j++) std::fill(L.begin() + j * k.nv, L.begin() + j * k.nv + j, 0.0);
  std::vector<double> work(cusp_contact_assemble_worksize(k.nv, k.m, k.r) / sizeof(double) + 1);
  cusp_contact_assemble(A.data(), N, b.data(), &k.c, L.data(), NULL, k.m, work.data());
  cuspLcpProblem p = {N, A.data(), N, b.data(), NULL, NULL};
  std::vector<double> z(N, 0), w(N), pw(cusp_lcp_pgs_worksize(N) / sizeof(double) + 1);
  cuspLcpInfo info;
  cuspLcpOptions lo = cusp_lcp_default_options();
  EXPECT_EQ(cusp_lcp_pgs(z.data(), w.data(), &info, &p, &lo, pw.data(), pw.size() * sizeof(double)),
            CUSP_LCP_NUMERICAL);
  lo.block = s;
  lo.max_iter = 100000;
  EXPECT_EQ(cusp_lcp_pgs(z.data(), w.data(), &info, &p, &lo, pw.data(), pw.size() * sizeof(double)),
            CUSP_LCP_SOLVED);
}
// Friction rows given as each contact's (t, o) rows and the directions (Jto, dirs: 3 rows a
// contact whitened, the warm path without the r friction columns) give the answers of the same
// rows spelled out one by one (Jt), from cold and from warm starts, on every path: solved by a
// backend, accepted as a warm start, and after one active-set step from a perturbed warm start.
TEST(Condition, TangentRowsAndDirectionsEqualExplicitFrictionRows) {
  const int nv = 12, m = 4, r = 8;
  Contact k(nv, m, r, {}, 21);
  std::vector<mjtNum> Jto(2 * m * nv), dirs(2 * r), Jt(m * r * nv);
  uint64_t seed = 5;
  for (mjtNum& v : Jto) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    v = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
  }
  for (int t = 0; t < r; t++) {
    dirs[2 * t] = std::cos(2 * M_PI * t / r);
    dirs[2 * t + 1] = std::sin(2 * M_PI * t / r);
  }
  for (int i = 0; i < m; i++) {
    for (int t = 0; t < r; t++) {
      for (int l = 0; l < nv; l++) {
        Jt[(i * r + t) * nv + l] = dirs[2 * t] * Jto[2 * i * nv + l] +
                                   dirs[2 * t + 1] * Jto[(2 * i + 1) * nv + l];
      }
    }
  }
  cuspContactLcp explicit_rows = k.c;
  explicit_rows.Jt = Jt.data();
  cuspContactLcp tangent_rows = k.c;
  tangent_rows.Jt = nullptr;
  tangent_rows.Jto = Jto.data();
  tangent_rows.dirs = dirs.data();
  Contact ke = k, kt = k;
  ke.c = explicit_rows;
  kt.c = tangent_rows;
  cuspConditionOptions opt = cusp_condition_default_options();
  Out a = RunContact(ke, opt), b = RunContact(kt, opt);
  ASSERT_EQ(a.info.lcp.status, CUSP_LCP_SOLVED);
  ASSERT_EQ(b.info.lcp.status, CUSP_LCP_SOLVED);
  auto expect_same = [&](const Out& x, const Out& y) {
    for (int i = 0; i < m; i++) {
      EXPECT_NEAR(x.fn[i], y.fn[i], 1e-8 * (1 + std::fabs(x.fn[i]))) << i;
      mjtNum tx[2] = {0, 0}, ty[2] = {0, 0};  // the tangential resultants (betas need not be unique)
      for (int t = 0; t < r; t++) {
        for (int c = 0; c < 2; c++) {
          tx[c] += x.beta[i * r + t] * dirs[2 * t + c];
          ty[c] += y.beta[i * r + t] * dirs[2 * t + c];
        }
      }
      EXPECT_NEAR(tx[0], ty[0], 1e-8) << i;
      EXPECT_NEAR(tx[1], ty[1], 1e-8) << i;
    }
  };
  expect_same(a, b);
  // warm: the answer itself (accepted at once) and a perturbed one (one active-set step or a
  // backend run), through the caller's arrays as the plugin passes them
  opt.lcp.warm_start = 1;
  for (double perturb : {0.0, 1e-7}) {
    Out wa, wb;
    for (Out* o : {&wa, &wb}) {
      o->fn = a.fn;
      o->beta = a.beta;
      o->gamma = a.gamma;
      for (mjtNum& v : o->fn) v *= 1 + perturb;
      o->keep.assign(m, -1);
      const Contact& kk = o == &wa ? ke : kt;
      std::vector<double> work(cusp_contact_worksize(nv, m, r, &opt) / sizeof(double) + 1);
      cusp_contact_solve(o->fn.data(), o->beta.data(), o->gamma.data(), o->keep.data(), &o->info,
                         &kk.c, &opt, work.data(), work.size() * sizeof(double));
    }
    SCOPED_TRACE(perturb);
    ASSERT_EQ(wa.info.lcp.status, CUSP_LCP_SOLVED);
    ASSERT_EQ(wb.info.lcp.status, CUSP_LCP_SOLVED);
    if (perturb == 0) {
      EXPECT_STREQ(wb.info.lcp.backend, "warm start");
      EXPECT_EQ(wb.info.lcp.iterations, 0);
    }
    expect_same(wa, wb);
  }
}

// A warm start whose active set is no longer the answer's (a loaded contact now separates: its
// free-motion gap speed raised): the one active-set step drives that contact's impulse below 0,
// and the warm path's further rounds (the negative rows set to 0, the rows with w < -tol added)
// solve the problem without a backend run. Checked against a cold backend solve and against the
// LCP conditions on W = Jn Meff^-1 Jn^T formed here by Gaussian elimination.
TEST(Condition, WarmPathRoundsFollowAContactThatUnloads) {
  const int nv = 12, m = 6;
  Contact k(nv, m, 0, {}, 31);
  cuspConditionOptions opt = cusp_condition_default_options();
  Out a = RunContact(k, opt);
  ASSERT_EQ(a.info.lcp.status, CUSP_LCP_SOLVED);
  int loaded = 0;
  for (int i = 0; i < m; i++) loaded += a.fn[i] > 0;
  ASSERT_GE(loaded, 2) << "the premise: several loaded contacts";
  int i0 = 0;
  while (!(a.fn[i0] > 0)) i0++;
  k.bn[i0] = std::fabs(k.bn[i0]) + 1.0;  // separating fast (m/s): its answer is 0
  Out cold = RunContact(k, opt);
  ASSERT_EQ(cold.info.lcp.status, CUSP_LCP_SOLVED);
  ASSERT_EQ(cold.fn[i0], 0);
  opt.lcp.warm_start = 1;
  Out warm;
  warm.fn = a.fn;
  warm.beta = a.beta;
  warm.gamma = a.gamma;
  warm.keep.assign(m, -1);
  std::vector<double> work(cusp_contact_worksize(nv, m, 0, &opt) / sizeof(double) + 1);
  cusp_contact_solve(warm.fn.data(), warm.beta.data(), warm.gamma.data(), warm.keep.data(),
                     &warm.info, &k.c, &opt, work.data(), work.size() * sizeof(double));
  ASSERT_EQ(warm.info.lcp.status, CUSP_LCP_SOLVED);
  EXPECT_STREQ(warm.info.lcp.backend, "warm start");
  EXPECT_GE(warm.info.lcp.iterations, 2);  // more than the one step
  for (int i = 0; i < m; i++) EXPECT_NEAR(warm.fn[i], cold.fn[i], 1e-8 * (1 + cold.fn[i])) << i;
  // W = Jn Meff^-1 Jn^T, then z = fn >= 0, w = W fn + bn >= 0, min(z, w) = 0
  std::vector<double> X(nv * m);  // Meff^-1 Jn^T, column i
  for (int i = 0; i < m; i++) {
    std::vector<double> col(k.Jn.begin() + i * nv, k.Jn.begin() + (i + 1) * nv);
    std::vector<double> x = GaussSolve(k.Meff, col, nv);
    std::copy(x.begin(), x.end(), X.begin() + i * nv);
  }
  for (int i = 0; i < m; i++) {
    double w = k.bn[i];
    for (int j = 0; j < m; j++) {
      double wij = 0;
      for (int l = 0; l < nv; l++) wij += k.Jn[i * nv + l] * X[j * nv + l];
      w += wij * warm.fn[j];
    }
    EXPECT_GE(warm.fn[i], 0) << i;
    EXPECT_GE(w, -1e-9) << i;
    EXPECT_LE(std::fmin(warm.fn[i], w), 1e-9) << i;
  }
}


// A warm start in which separating contacts (no impulse) carry a cone slack gamma > 0, as a
// backend leaves them (any gamma >= -v_t is complementary there): their cone rows (mu fn - e^T
// beta) have no active unknown, so the active-set step leaves their gamma out and sets it
// afterwards, when the step's answer needs it, to the smallest that keeps their friction rows
// nonnegative. The problem, perturbed from the one the start solves (free velocities 1e-6
// relative), is then solved on the warm path (no backend run), to the cold backend solve's normal
// impulses and the LCP conditions (1e-9: the answer is exact to rounding, the start's values of
// the rows it leaves inactive are a backend's, -1e-17 at worst).
TEST(Condition, WarmPathSettlesTheConeSlackOfSeparatingContacts) {
  const int nv = 12, m = 6, r = 4, s = r + 2;
  Contact k(nv, m, r, {}, 7);
  cuspConditionOptions opt = cusp_condition_default_options();
  Out a = RunContact(k, opt);
  ASSERT_EQ(a.info.lcp.status, CUSP_LCP_SOLVED);
  int loaded = 0, free = 0;
  for (int i = 0; i < m; i++) {
    loaded += a.fn[i] > 0;
    free += a.fn[i] == 0;
  }
  ASSERT_GE(loaded, 1) << "the premise: a loaded contact";
  ASSERT_GE(free, 1) << "the premise: a separating contact";
  for (int i = 0; i < m; i++) k.bn[i] *= 1 + 1e-6;
  for (int i = 0; i < m * r; i++) k.bt[i] *= 1 + 1e-6;
  Out cold = RunContact(k, opt);
  ASSERT_EQ(cold.info.lcp.status, CUSP_LCP_SOLVED);
  opt.lcp.warm_start = 1;
  Out warm;
  warm.fn = a.fn;
  warm.beta = a.beta;
  warm.gamma = a.gamma;
  for (int i = 0; i < m; i++) {
    if (a.fn[i] == 0) warm.gamma[i] = 10.0;  // m/s: far above any friction row's need
  }
  warm.keep.assign(m, -1);
  std::vector<double> work(cusp_contact_worksize(nv, m, r, &opt) / sizeof(double) + 1);
  cusp_contact_solve(warm.fn.data(), warm.beta.data(), warm.gamma.data(), warm.keep.data(),
                     &warm.info, &k.c, &opt, work.data(), work.size() * sizeof(double));
  ASSERT_EQ(warm.info.lcp.status, CUSP_LCP_SOLVED);
  EXPECT_STREQ(warm.info.lcp.backend, "warm start");
  EXPECT_GE(warm.info.lcp.iterations, 1);
  EXPECT_LE(warm.info.residual_original, opt.lcp.tol);
  for (int i = 0; i < m; i++) {
    EXPECT_NEAR(warm.fn[i], cold.fn[i], 1e-8 * (1 + cold.fn[i])) << i;
  }
  // the LCP conditions with W = J Meff^-1 J^T over the normal and friction rows
  std::vector<double> z(m * s), w(m * s);
  for (int i = 0; i < m; i++) {
    z[i * s] = warm.fn[i];
    for (int t = 0; t < r; t++) z[i * s + 1 + t] = warm.beta[i * r + t];
    z[i * s + 1 + r] = warm.gamma[i];
  }
  auto row = [&](int i, int p) {
    return p == 0 ? &k.Jn[i * nv] : &k.Jt[(i * r + p - 1) * nv];
  };
  for (int i = 0; i < m; i++) {
    for (int p = 0; p <= r; p++) {
      std::vector<double> g(nv, 0.0);
      for (int j = 0; j < m; j++) {
        for (int q = 0; q <= r; q++) {
          for (int l = 0; l < nv; l++) g[l] += row(j, q)[l] * z[j * s + q];
        }
      }
      std::vector<double> x = GaussSolve(k.Meff, g, nv);
      double v = p == 0 ? k.bn[i] : k.bt[i * r + p - 1] + z[i * s + 1 + r];
      for (int l = 0; l < nv; l++) v += row(i, p)[l] * x[l];
      w[i * s + p] = v;
    }
    double cone = k.mu[i] * z[i * s];
    for (int t = 0; t < r; t++) cone -= z[i * s + 1 + t];
    w[i * s + 1 + r] = cone;
  }
  for (int i = 0; i < m * s; i++) {
    EXPECT_GE(z[i], -1e-9) << i;
    EXPECT_GE(w[i], -1e-9) << i;
    EXPECT_LE(std::fmin(z[i], w[i]), 1e-9) << i;
  }
}

}  // namespace

TEST(Condition, RankSelectionKeepsViolatedContactsOfADependentSet) {
  // Meff = I (L = I), two parallel normal rows: contact 0 (norm 2, speculative, bn > 0) and
  // contact 1 (norm 1, violated by the free motion, bn < 0); contact 2 independent. Plain pivoting
  // keeps the larger column 0 and drops 1; with bn the violated contact leads and 0 is dropped.
  const int nv = 2, m = 3;
  std::vector<mjtNum> L = {1, 0, 0, 1};
  std::vector<mjtNum> Jn = {2, 0, 1, 0, 0, 1};
  std::vector<mjtNum> bn = {24.0, -0.03, 0.5};
  std::vector<double> work(cusp_rank_select_worksize(nv, m) / sizeof(double) + 1);
  std::vector<int> sel(m, -1);
  ASSERT_EQ(cusp_rank_select(sel.data(), L.data(), Jn.data(), nullptr, nv, m, 1e-6, work.data()), 2);
  EXPECT_EQ(sel[0], 0);
  EXPECT_EQ(sel[1], 2);
  ASSERT_EQ(cusp_rank_select(sel.data(), L.data(), Jn.data(), bn.data(), nv, m, 1e-6, work.data()),
            2);
  EXPECT_EQ(sel[0], 1);
  EXPECT_EQ(sel[1], 2);
}
