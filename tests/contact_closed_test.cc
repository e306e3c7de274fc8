// The one-contact closed form (solver/contact_closed.c) against the conditioning pipeline and its
// backends on random one-contact problems built as the plugin builds them (tangent rows and
// directions, bt the free tangential velocity along each direction), and on the assembled LCP.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

extern "C" {
#include "solver/condition.h"
#include "solver/contact_closed.h"
#include "solver/lcp.h"
}

namespace {

struct Rng {
  uint64_t s;
  double uniform() {  // [0, 1)
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(s >> 11) / 9007199254740992.0;
  }
  double sym() { return 2 * uniform() - 1; }
};

// one contact on nv dofs: Meff = B B^T + 0.1 I (given as its Cholesky factor, as the plugin
// passes it), random normal and tangent rows, free velocity (vn, vt, vo) of random size
struct One {
  int nv, r;
  std::vector<mjtNum> L, Jn, Jto, dirs, mu, bn, bt;
  cuspContactLcp c;
  One(int nv_, int r_, Rng& g) : nv(nv_), r(r_), L(nv_ * nv_), Jn(nv_), Jto(2 * nv_), dirs(2 * r_),
                                 mu(1), bn(1), bt(r_ + 1) {
    std::vector<mjtNum> M(nv * nv, 0), B(nv * nv);
    for (mjtNum& v : B) v = g.sym();
    for (int i = 0; i < nv; i++) {
      for (int j = 0; j < nv; j++) {
        for (int k = 0; k < nv; k++) M[i + j * nv] += B[i + k * nv] * B[j + k * nv];
      }
      M[i + i * nv] += 0.1;
    }
    // lower Cholesky factor, column-major
    for (int j = 0; j < nv; j++) {
      double d = M[j + j * nv];
      for (int k = 0; k < j; k++) d -= L[j + k * nv] * L[j + k * nv];
      L[j + j * nv] = std::sqrt(d);
      for (int i = j + 1; i < nv; i++) {
        double v = M[i + j * nv];
        for (int k = 0; k < j; k++) v -= L[i + k * nv] * L[j + k * nv];
        L[i + j * nv] = v / L[j + j * nv];
      }
    }
    for (mjtNum& v : Jn) v = g.sym();
    for (mjtNum& v : Jto) v = g.sym();
    for (int t = 0; t < r; t++) {
      dirs[2 * t] = std::cos(2 * M_PI * t / r);
      dirs[2 * t + 1] = std::sin(2 * M_PI * t / r);
    }
    double scale = std::pow(10.0, -3 + 3 * g.uniform());  // m/s
    mu[0] = 0.05 + 1.2 * g.uniform();
    bn[0] = scale * g.sym();
    double vt = scale * g.sym() * (g.uniform() < 0.3 ? 1e-3 : 1), vo = scale * g.sym();
    for (int t = 0; t < r; t++) bt[t] = dirs[2 * t] * vt + dirs[2 * t + 1] * vo;
    c = cuspContactLcp{};
    c.nv = nv;
    c.m = 1;
    c.r = r;
    c.Meff = L.data();
    c.meff_is_factor = 1;
    c.Jn = Jn.data();
    c.Jto = r ? Jto.data() : nullptr;
    c.dirs = r ? dirs.data() : nullptr;
    c.mu = mu.data();
    c.bn = bn.data();
    c.bt = bt.data();
  }
};

struct Out {
  std::vector<mjtNum> fn, beta, gamma;
  int keep = -1;
  cuspConditionInfo info;
  cuspLcpStatus status;
};

Out Solve(const One& k, cuspConditionOptions opt) {
  Out o;
  o.fn.assign(1, 0);
  o.beta.assign(k.r + 1, 0);
  o.gamma.assign(1, 0);
  std::vector<double> work(cusp_contact_worksize(k.nv, 1, k.r, &opt) / sizeof(double) + 1);
  o.status = cusp_contact_solve(o.fn.data(), o.beta.data(), o.gamma.data(), &o.keep, &o.info,
                                &k.c, &opt, work.data(), work.size() * sizeof(double));
  return o;
}

// natural residual of (fn, beta, gamma) on the LCP assembled by the pipeline's own assembly
// (cusp_contact_assemble), Tikhonov left out: what the physics sees
double AssembledResidual(const One& k, const Out& o) {
  int s = k.r ? k.r + 2 : 1;
  std::vector<mjtNum> A(s * s), b(s), z(s), w(s);
  std::vector<double> work(cusp_contact_assemble_worksize(k.nv, 1, k.r) / sizeof(double) + 1);
  cusp_contact_assemble(A.data(), s, b.data(), &k.c, k.L.data(), nullptr, 1, work.data());
  z[0] = o.fn[0];
  for (int t = 0; t < k.r; t++) z[1 + t] = o.beta[t];
  if (k.r) z[k.r + 1] = o.gamma[0];
  cuspLcpProblem p = {s, A.data(), s, b.data(), nullptr, nullptr};
  cuspLcpInfo info;
  cusp_lcp_residual(w.data(), &info, z.data(), &p);
  return info.residual;
}

void Resultant(double tau[2], const One& k, const Out& o) {
  tau[0] = tau[1] = 0;
  for (int t = 0; t < k.r; t++) {
    tau[0] += o.beta[t] * k.dirs[2 * t];
    tau[1] += o.beta[t] * k.dirs[2 * t + 1];
  }
}

// Random one-contact problems (nv 3..12, r 4, 6, 8, 16, frictionless too, mu 0.05..1.25, free
// velocities 1e-3..1 m/s, a third with nearly no tangential drive): the closed form answers every
// one (it is not the pipeline's fallback), its answer solves the assembled LCP to 1e-10 (the
// pipeline's tolerance), and its normal impulse and friction resultant equal the pipeline's
// (Lemke / FB Newton / PGS through the chain, cold) to 1e-7 relative (above 1e-2 N s; 1e-9 N s
// below), but where the LCP has two answers; every mode is reached.
TEST(ContactClosed, MatchesThePipelineOnRandomContacts) {
  Rng g{12345};
  const int rs[5] = {0, 4, 6, 8, 16};
  int apart = 0, stick = 0, slide = 0, second = 0;
  for (int trial = 0; trial < 2000; trial++) {
    int nv = 3 + (int)(10 * g.uniform()), r = rs[trial % 5];
    One k(nv, r, g);
    cuspConditionOptions closed = cusp_condition_default_options();
    cuspConditionOptions pipeline = closed;
    pipeline.closed_form = 0;
    Out a = Solve(k, closed), b = Solve(k, pipeline);
    SCOPED_TRACE(trial);
    ASSERT_EQ(a.status, CUSP_LCP_SOLVED);
    ASSERT_EQ(a.info.closed_form, 1);
    EXPECT_STREQ(a.info.lcp.backend, "closed form");
    EXPECT_EQ(a.keep, 1);
    EXPECT_LE(a.info.lcp.residual, 1e-10);
    // without the Tikhonov term eps_w fn (1e-10 fn), what the physics sees
    EXPECT_LE(AssembledResidual(k, a), 1e-10 * (1 + a.fn[0]) + 1e-14);
    ASSERT_EQ(b.status, CUSP_LCP_SOLVED);
    EXPECT_EQ(b.info.closed_form, 0);
    if (a.fn[0] == 0 && k.bn[0] >= 0 && b.fn[0] > 1e-9) {
      // moving apart, the closed form's answer is no impulse; with a strong normal-tangent
      // coupling (W_nt) and large mu the LCP has a second answer that pushes, which a backend
      // may find: both solve it
      EXPECT_LE(AssembledResidual(k, b), 1e-10 * (1 + b.fn[0]) + 1e-14);
      second++;
      continue;
    }
    double scale = std::fabs(b.fn[0]) + 1e-2;  // an absolute floor: the backends meet 1e-10
    EXPECT_NEAR(a.fn[0], b.fn[0], 1e-7 * scale);
    double ta[2], tb[2];
    Resultant(ta, k, a);
    Resultant(tb, k, b);
    EXPECT_NEAR(ta[0], tb[0], 1e-7 * scale);
    EXPECT_NEAR(ta[1], tb[1], 1e-7 * scale);
    if (a.fn[0] == 0) {
      apart++;
    } else if (r > 0 && a.gamma[0] > 1e-12) {
      slide++;
    } else {
      stick++;
    }
  }
  EXPECT_GT(apart, 100);
  EXPECT_GT(stick, 100);
  EXPECT_GT(slide, 100);
  EXPECT_LT(second, 20);
}

// The closed form alone on hand-made blocks: a unit Delassus block (a point mass), free motion
// into the surface at 1 m/s and along t at v: sticking for v <= mu (fn = 1, tangential impulse
// -v), sliding for v > mu (fn = 1, friction mu against the motion along the nearest direction of
// the pyramid), apart when moving away.
TEST(ContactClosed, PointMassSticksSlidesAndSeparates) {
  const int r = 8;
  mjtNum dirs[2 * r];
  for (int t = 0; t < r; t++) {
    dirs[2 * t] = std::cos(2 * M_PI * t / r);
    dirs[2 * t + 1] = std::sin(2 * M_PI * t / r);
  }
  const mjtNum wc[6] = {1, 0, 0, 1, 0, 1}, mu = 0.5;
  for (double v : {0.0, 0.3, 0.49, 0.8, 3.0}) {
    mjtNum bt[r], z[r + 2], w[r + 2], orig;
    for (int t = 0; t < r; t++) bt[t] = dirs[2 * t] * v;
    cuspLcpInfo info;
    ASSERT_TRUE(cusp_contact1_solve(z, w, &info, &orig, wc, -1.0, bt, mu, dirs, r, 0, 1e-12));
    EXPECT_NEAR(z[0], 1.0, 1e-14);
    double tau = 0;
    for (int t = 0; t < r; t++) tau += z[1 + t] * dirs[2 * t];
    EXPECT_NEAR(tau, v <= mu ? -v : -mu, 1e-14) << v;
    EXPECT_NEAR(z[r + 1], v <= mu ? 0 : v - mu, 1e-14) << v;  // the slip speed
  }
  mjtNum bt[r] = {0}, z[r + 2], w[r + 2], orig;
  cuspLcpInfo info;
  ASSERT_TRUE(cusp_contact1_solve(z, w, &info, &orig, wc, 0.2, bt, mu, dirs, r, 0, 1e-12));
  for (int i = 0; i < r + 2; i++) EXPECT_EQ(z[i], 0) << i;
}

}  // namespace
