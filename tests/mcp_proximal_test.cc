// Proximal-point MCP solver: LCPs with a singular PSD matrix (redundant and hyperstatic contacts)
// written as MCPs, F = M z + q, whose prox callback adds rho * scale * (z - anchor). Every answer
// is checked on the ORIGINAL problem independently of the solver's own residual (w = M z + q,
// z >= 0, w >= 0, z_i w_i ~ 0), and compared with plain FB Newton on the same problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

extern "C" {
#include "solver/lcp_synth.h"
#include "solver/mcp.h"
#include "solver/mcp_proximal.h"
}

namespace {

struct ProxLcp {
  std::string name;
  int n = 0;
  std::vector<double> M, q;  // (n x n) column-major, (n)
  double scale = 1;          // mean diagonal of M: rho is relative to it
  double rho = 0;
  std::vector<double> anchor;
  int prox_calls = 0;
};

int LcpF(mjtNum* F, const mjtNum* z, int n, void* u) {
  ProxLcp* p = static_cast<ProxLcp*>(u);
  for (int i = 0; i < n; i++) {
    double v = p->q[i] + (p->rho > 0 ? p->rho * p->scale * (z[i] - p->anchor[i]) : 0);
    for (int j = 0; j < n; j++) v += p->M[i + (size_t)j * n] * z[j];
    F[i] = v;
  }
  return 0;
}

int LcpJ(mjtNum* J, int ldj, const mjtNum*, int n, void* u) {
  ProxLcp* p = static_cast<ProxLcp*>(u);
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) {
      J[i + (size_t)j * ldj] = p->M[i + (size_t)j * n] + (i == j ? p->rho * p->scale : 0);
    }
  }
  return 0;
}

void LcpProx(void* u, mjtNum rho, const mjtNum* anchor) {
  ProxLcp* p = static_cast<ProxLcp*>(u);
  p->prox_calls++;
  p->rho = anchor ? rho : 0;
  if (anchor) p->anchor.assign(anchor, anchor + p->n);
}

void Finish(ProxLcp& p) {
  double s = 0;
  for (int i = 0; i < p.n; i++) s += p.M[i + (size_t)i * p.n];
  p.scale = p.n ? s / p.n : 1;
}

// W = J Minv J^T for rows J (nc x 6, row-major) of a rigid body with mass m and inertia diag(I)
std::vector<double> Delassus(const std::vector<double>& J, int nc, double mass, const double I[3]) {
  std::vector<double> W((size_t)nc * nc);
  double minv[6] = {1 / mass, 1 / mass, 1 / mass, 1 / I[0], 1 / I[1], 1 / I[2]};
  for (int a = 0; a < nc; a++) {
    for (int b = 0; b < nc; b++) {
      double s = 0;
      for (int k = 0; k < 6; k++) s += J[a * 6 + k] * minv[k] * J[b * 6 + k];
      W[a + (size_t)b * nc] = s;
    }
  }
  return W;
}

// normal row of a contact at point p (body frame, from the centre) with normal nrm into the body
void ContactRow(double* row, const double p[3], const double nrm[3]) {
  row[0] = nrm[0];
  row[1] = nrm[1];
  row[2] = nrm[2];
  row[3] = p[1] * nrm[2] - p[2] * nrm[1];  // (p x n)
  row[4] = p[2] * nrm[0] - p[0] * nrm[2];
  row[5] = p[0] * nrm[1] - p[1] * nrm[0];
}

// A box resting on a plane on a k x k grid of contact points (k^2 normal rows of rank 3), with a
// free velocity falling and slightly tilting: the impulse distribution is not unique.
ProxLcp BoxOnGrid(int k, double tilt) {
  ProxLcp p;
  p.name = "box on a " + std::to_string(k) + "x" + std::to_string(k) + " grid";
  int nc = k * k;
  std::vector<double> J((size_t)nc * 6);
  double up[3] = {0, 0, 1};
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < k; j++) {
      double pt[3] = {-0.1 + 0.2 * i / (k - 1), -0.05 + 0.1 * j / (k - 1), -0.03};
      ContactRow(&J[(i * k + j) * 6], pt, up);
    }
  }
  double I[3] = {0.002, 0.004, 0.005};
  p.n = nc;
  p.M = Delassus(J, nc, 1.5, I);
  double v[6] = {0.01, 0, -0.0981, tilt, -0.5 * tilt, 0.2};
  p.q.resize(nc);
  for (int a = 0; a < nc; a++) {
    double s = 0;
    for (int c = 0; c < 6; c++) s += J[a * 6 + c] * v[c];
    p.q[a] = s;
  }
  Finish(p);
  return p;
}

// A box held by fingertips: antipodal pairs of contacts on its faces (each pair's impulses can
// grow together: an internal force) plus ground contacts, falling and spinning a little.
ProxLcp Grasp(int pairs_per_axis) {
  ProxLcp p;
  p.name = "grasp, " + std::to_string(pairs_per_axis) + " antipodal pairs per axis + ground";
  std::vector<double> J;
  std::vector<double> gap_rate;
  for (int axis = 0; axis < 2; axis++) {
    for (int k = 0; k < pairs_per_axis; k++) {
      for (int side = -1; side <= 1; side += 2) {
        double pt[3] = {0, 0, -0.01 + 0.02 * k / std::max(1, pairs_per_axis - 1)};
        double nrm[3] = {0, 0, 0};
        pt[axis] = side * 0.04;
        nrm[axis] = -side;  // pushes inwards
        pt[1 - axis] = 0.01 * (k % 2 ? 1 : -1);
        double row[6];
        ContactRow(row, pt, nrm);
        J.insert(J.end(), row, row + 6);
        // touching (0) or about to (a little positive): the pair's impulses can share any
        // internal force (a rigid body between rigid fingers cannot resolve a penetration of both)
        gap_rate.push_back(side < 0 && k % 2 ? 0.001 : 0);
      }
    }
  }
  double up[3] = {0, 0, 1};
  for (int c = 0; c < 4; c++) {
    double pt[3] = {c % 2 ? 0.04 : -0.04, c / 2 ? 0.04 : -0.04, -0.04};
    double row[6];
    ContactRow(row, pt, up);
    J.insert(J.end(), row, row + 6);
    gap_rate.push_back(0);
  }
  int nc = (int)gap_rate.size();
  double I[3] = {0.0005, 0.0005, 0.0005};
  p.n = nc;
  p.M = Delassus(J, nc, 0.3, I);
  double v[6] = {0.003, -0.002, -0.0981, 0.05, 0, 0.1};
  p.q.resize(nc);
  for (int a = 0; a < nc; a++) {
    double s = gap_rate[a];
    for (int c = 0; c < 6; c++) s += J[a * 6 + c] * v[c];
    p.q[a] = s;
  }
  Finish(p);
  return p;
}

// Contacts listed twice (the same row, the same gap): W has equal rows and columns.
ProxLcp Duplicated(int nbase, int ndup, uint64_t seed) {
  ProxLcp p;
  p.name = "random W of rank 6, " + std::to_string(nbase) + " rows, " + std::to_string(ndup) +
           " of them duplicated";
  uint64_t s = seed;
  std::vector<double> J;
  for (int a = 0; a < nbase; a++) {
    double pt[3], nrm[3];
    for (int c = 0; c < 3; c++) pt[c] = 0.1 * (2 * cusp_synth_uniform(&s) - 1);
    for (int c = 0; c < 3; c++) nrm[c] = 2 * cusp_synth_uniform(&s) - 1;
    nrm[2] = std::fabs(nrm[2]) + 0.5;
    double len = std::sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    for (double& x : nrm) x /= len;
    double row[6];
    ContactRow(row, pt, nrm);
    J.insert(J.end(), row, row + 6);
  }
  for (int a = 0; a < ndup; a++) {
    std::vector<double> row(J.begin() + 6 * (a % nbase), J.begin() + 6 * (a % nbase) + 6);
    J.insert(J.end(), row.begin(), row.end());
  }
  int nc = nbase + ndup;
  double I[3] = {0.01, 0.02, 0.015};
  p.n = nc;
  p.M = Delassus(J, nc, 2, I);
  double v[6];
  for (double& x : v) x = 0.2 * (2 * cusp_synth_uniform(&s) - 1);
  v[2] = -0.3;
  p.q.resize(nc);
  for (int a = 0; a < nc; a++) {
    double sum = 0;
    for (int c = 0; c < 6; c++) sum += J[a * 6 + c] * v[c];
    p.q[a] = sum;
  }
  Finish(p);
  return p;
}

// cusp_synth_lcp with rank < n and no shift: a singular PSD M, a known solution z*.
ProxLcp Synth(int n, int rank, uint64_t seed) {
  ProxLcp p;
  p.name = "synthetic PSD, n " + std::to_string(n) + " rank " + std::to_string(rank);
  p.n = n;
  p.M.resize((size_t)n * n);
  p.q.resize(n);
  std::vector<double> zs(n), ws(n), work((size_t)n * rank);
  cusp_synth_lcp(p.M.data(), p.q.data(), zs.data(), ws.data(), n, rank, 0, seed, work.data());
  Finish(p);
  return p;
}

std::vector<ProxLcp> Cases() {
  return {BoxOnGrid(3, 0.3), BoxOnGrid(5, 0.0), BoxOnGrid(8, 1.0), Grasp(1), Grasp(3),
          Duplicated(10, 4, 1), Duplicated(24, 24, 2), Synth(30, 8, 3), Synth(80, 20, 4),
          Synth(60, 5, 6), Synth(60, 59, 7), Synth(120, 30, 8), Synth(150, 100, 10)};
}

// Independent check on the original problem, recomputed from M and q: max over i of
// (-z_i, -w_i, |min(z_i, w_i)|) with w = M z + q (the LCP's own units, like the natural residual)
double OriginalError(const ProxLcp& p, const std::vector<double>& z) {
  double e = 0;
  for (int i = 0; i < p.n; i++) {
    double w = p.q[i];
    for (int j = 0; j < p.n; j++) w += p.M[i + (size_t)j * p.n] * z[j];
    e = std::max({e, -z[i], -w, std::fabs(std::min(z[i], w))});
  }
  return e;
}

struct Outcome {
  cuspLcpStatus status;
  int iterations;
  double residual, error, seconds;
  std::vector<double> z;
};

Outcome RunPlain(ProxLcp& p, const cuspMcpOptions& opt) {
  cuspMcpProblem prob = {p.n, nullptr, nullptr, LcpF, LcpJ, &p, nullptr, 0, 0, nullptr};
  p.rho = 0;
  Outcome r;
  r.z.assign(p.n, 0);
  std::vector<double> work(cusp_mcp_worksize(p.n) / 8 + 1);
  cuspMcpInfo info;
  cusp_mcp_fbnewton(r.z.data(), nullptr, &info, &prob, &opt, work.data(), work.size() * 8);
  r.status = info.status;
  r.iterations = info.iterations;
  r.residual = info.residual;
  r.seconds = info.seconds;
  r.error = OriginalError(p, r.z);
  return r;
}

Outcome RunProx(ProxLcp& p, const cuspMcpOptions& opt, cuspMcpProxInfo* pinfo = nullptr,
                const cuspMcpProxOptions* popt = nullptr) {
  cuspMcpProblem prob = {p.n, nullptr, nullptr, LcpF, LcpJ, &p, nullptr, 0, 0, nullptr};
  Outcome r;
  r.z.assign(p.n, 0);
  std::vector<double> work(cusp_mcp_proximal_worksize(p.n) / 8 + 1);
  cuspMcpProxInfo info;
  cusp_mcp_proximal(r.z.data(), nullptr, &info, &prob, LcpProx, &opt, popt, work.data(),
                    work.size() * 8);
  EXPECT_EQ(p.rho, 0) << "the problem must be left unregularised";
  r.status = info.mcp.status;
  r.iterations = info.inner_iterations;
  r.residual = info.mcp.residual;
  r.seconds = info.mcp.seconds;
  r.error = OriginalError(p, r.z);
  if (pinfo) *pinfo = info;
  return r;
}

TEST(McpProximal, SingularLcpsSolveTheOriginalProblem) {
  cuspMcpOptions opt = cusp_mcp_default_options();
  opt.tol = 1e-10;
  int plain_failed = 0, plain_iters = 0, prox_iters = 0;
  std::printf("%-58s | %-22s | %-22s\n", "case", "plain FB Newton", "proximal FB Newton");
  for (ProxLcp& p : Cases()) {
    SCOPED_TRACE(p.name);
    Outcome a = RunPlain(p, opt);
    cuspMcpProxInfo pi;
    Outcome b = RunProx(p, opt, &pi);
    std::printf("%-58s | %-6s %4d it %8.1e | %-6s %4d it (%2d outer) %8.1e\n", p.name.c_str(),
                a.status == CUSP_LCP_SOLVED ? "solved" : "FAILED", a.iterations, a.residual,
                b.status == CUSP_LCP_SOLVED ? "solved" : "FAILED", b.iterations, pi.outer,
                b.residual);
    EXPECT_EQ(b.status, CUSP_LCP_SOLVED) << pi.mcp.message;
    EXPECT_LE(b.residual, opt.tol);
    EXPECT_LE(b.error, 2 * opt.tol)
        << "independent residual of the original LCP";
    plain_failed += a.status != CUSP_LCP_SOLVED;
    plain_iters += a.iterations;
    prox_iters += b.iterations;
  }
  std::printf("plain: %d failed, %d iterations in all; proximal: 0 failed, %d iterations\n",
              plain_failed, plain_iters, prox_iters);
  // the point of the method: on these singular problems plain Newton fails or needs more steps
  EXPECT_TRUE(plain_failed > 0 || plain_iters > prox_iters);
}

TEST(McpProximal, WarmStartThatSolvesReturnsAtOnce) {
  ProxLcp p = BoxOnGrid(4, 0.2);
  cuspMcpOptions opt = cusp_mcp_default_options();
  Outcome first = RunProx(p, opt);
  ASSERT_EQ(first.status, CUSP_LCP_SOLVED);
  cuspMcpProblem prob = {p.n, nullptr, nullptr, LcpF, LcpJ, &p, nullptr, 0, 0, nullptr};
  std::vector<double> z = first.z, F(p.n), work(cusp_mcp_proximal_worksize(p.n) / 8 + 1);
  opt.warm_start = 1;
  cuspMcpProxInfo info;
  p.prox_calls = 0;
  cusp_mcp_proximal(z.data(), F.data(), &info, &prob, LcpProx, &opt, nullptr, work.data(),
                    work.size() * 8);
  EXPECT_EQ(info.mcp.status, CUSP_LCP_SOLVED);
  EXPECT_EQ(info.outer, 0);
  EXPECT_EQ(info.inner_iterations, 0);
  EXPECT_EQ(info.mcp.evaluations, 1);
  EXPECT_EQ(p.prox_calls, 1);  // only the switch to the original problem
  EXPECT_EQ(z, first.z);
}

// A stack of n equal boxes resting on the ground, each contact written `dup` times (the vertices
// of a face resting on a face): contact i (0: the ground's) reads v_{i+1} - v_i of the boxes'
// vertical velocities (v_0 = 0), so W is dup x dup blocks of tridiag(-1, 2, -1) / mass (1 / mass
// at the ground contact): singular, its smallest nonzero eigenvalue about (pi / 2n)^2 / mass.
ProxLcp Stack(int n, int dup) {
  ProxLcp p;
  p.name = "stack of " + std::to_string(n) + ", contacts x" + std::to_string(dup);
  p.n = n * dup;
  const double mass = 0.1, vfree = -9.81 * 0.002;  // kg, m/s (one step of gravity)
  p.M.assign((size_t)p.n * p.n, 0);
  p.q.assign(p.n, 0);
  for (int a = 0; a < p.n; a++) {
    int i = a / dup;
    p.q[a] = i == 0 ? vfree : 0;  // every box falls alike: only the ground contact closes
    for (int b = 0; b < p.n; b++) {
      int j = b / dup;
      double w = i == j ? 2 : (std::abs(i - j) == 1 ? -1 : 0);
      if (i == 0 && j == 0) w = 1;  // the ground contact moves one box only
      p.M[a + (size_t)b * p.n] = w / mass;
    }
  }
  Finish(p);
  return p;
}

TEST(McpProximal, WarmStartNearTheAnswerOfATallStackTakesOneOuterStep) {
  // A resting stack's warm start misses the tolerance by a little (the last bits of the previous
  // step): with rho_per_residual the first rho follows that residual and one Newton step on the
  // regularised problem finishes; from rho0 alone the soft modes contract at about
  // rho0 / (lambda_min + rho0) per outer step.
  const int dup = 4;
  ProxLcp p = Stack(64, dup);
  cuspMcpOptions opt = cusp_mcp_default_options();
  opt.tol = 1e-10;
  opt.work_budget = -1;  // dense Newton steps of 256 unknowns: the default budget allows one
  cuspMcpProxInfo cinfo;
  Outcome cold = RunProx(p, opt, &cinfo);
  ASSERT_EQ(cold.status, CUSP_LCP_SOLVED) << cinfo.mcp.message;
  std::vector<double> work(cusp_mcp_proximal_worksize(p.n) / 8 + 1);
  cuspMcpProxOptions po = cusp_mcp_proximal_default_options();
  po.rho0 = 1e-2;
  int outer[2], iterations[2];
  for (int k = 0; k < 2; k++) {
    po.rho_per_residual = k ? 1e2 : 0;
    std::vector<double> z = cold.z;
    ProxLcp next = p;  // the next step: the free velocity a few bits off
    for (int a = 0; a < dup; a++) next.q[a] *= 1 + 1e-6;
    cuspMcpProblem prob = {next.n, nullptr, nullptr, LcpF, LcpJ, &next, nullptr, 0, 0, nullptr};
    opt.warm_start = 1;
    cuspMcpProxInfo info;
    cusp_mcp_proximal(z.data(), nullptr, &info, &prob, LcpProx, &opt, &po, work.data(),
                      work.size() * 8);
    SCOPED_TRACE(k ? "rho_per_residual 1e2" : "rho0 only");
    EXPECT_EQ(info.mcp.status, CUSP_LCP_SOLVED) << info.mcp.message;
    EXPECT_LE(OriginalError(next, z), 2 * opt.tol) << "independent residual of the original LCP";
    outer[k] = info.outer;
    iterations[k] = info.inner_iterations;
  }
  std::printf("warm start after a 1e-6 change of a 64-box stack's load: rho0 only %d outer / %d "
              "Newton steps, rho_per_residual %d / %d\n",
              outer[0], iterations[0], outer[1], iterations[1]);
  EXPECT_EQ(outer[1], 1);
  EXPECT_LT(iterations[1], iterations[0]);
}

TEST(McpProximal, DeterministicAndChecksItsInput) {
  ProxLcp p = Synth(40, 10, 9);
  cuspMcpOptions opt = cusp_mcp_default_options();
  Outcome a = RunProx(p, opt), b = RunProx(p, opt);
  ASSERT_EQ(a.status, CUSP_LCP_SOLVED);
  EXPECT_EQ(a.z, b.z);  // bitwise
  EXPECT_EQ(a.iterations, b.iterations);

  cuspMcpProblem prob = {p.n, nullptr, nullptr, LcpF, LcpJ, &p, nullptr, 0, 0, nullptr};
  std::vector<double> z(p.n), work(cusp_mcp_proximal_worksize(p.n) / 8 + 1);
  cuspMcpProxInfo info;
  EXPECT_EQ(cusp_mcp_proximal(z.data(), nullptr, &info, &prob, LcpProx, &opt, nullptr,
                              work.data(), cusp_mcp_proximal_worksize(p.n) - 1),
            CUSP_LCP_BAD_INPUT);
  EXPECT_EQ(cusp_mcp_proximal(z.data(), nullptr, &info, &prob, nullptr, &opt, nullptr,
                              work.data(), work.size() * 8),
            CUSP_LCP_BAD_INPUT);
  std::vector<double> lo(p.n, 1), hi(p.n, 0);
  prob.lo = lo.data();
  prob.hi = hi.data();
  EXPECT_EQ(cusp_mcp_proximal(z.data(), nullptr, &info, &prob, LcpProx, &opt, nullptr,
                              work.data(), work.size() * 8),
            CUSP_LCP_BAD_INPUT);
}

TEST(McpProximal, NonsingularProblemStillSolvesAndUnsolvableFails) {
  // positive definite: the proximal loop must not cost much more than plain Newton
  ProxLcp p;
  p.n = 30;
  p.M.resize(900);
  p.q.resize(30);
  std::vector<double> zs(30), ws(30), work0(30 * 30);
  cusp_synth_lcp(p.M.data(), p.q.data(), zs.data(), ws.data(), 30, 30, 0.5, 5, work0.data());
  Finish(p);
  cuspMcpOptions opt = cusp_mcp_default_options();
  Outcome a = RunPlain(p, opt), b = RunProx(p, opt);
  ASSERT_EQ(a.status, CUSP_LCP_SOLVED);
  ASSERT_EQ(b.status, CUSP_LCP_SOLVED);
  for (int i = 0; i < 30; i++) EXPECT_NEAR(b.z[i], zs[i], 1e-8);
  EXPECT_LE(b.iterations, 3 * a.iterations + 6);

  // q = -1, M = 0: no solution; the loop must stop and say so
  ProxLcp bad;
  bad.n = 3;
  bad.M.assign(9, 0);
  bad.q.assign(3, -1);
  bad.scale = 1;
  Outcome c = RunProx(bad, opt);
  EXPECT_NE(c.status, CUSP_LCP_SOLVED);
}

TEST(McpProximal, AStalledLoopEndsAfterItsWindowAndASolvableOneIsUntouched) {
  // q = -1, M = 0 has no solution: the residual cannot fall, so with a stall window of 4 outer
  // steps the loop ends after 4 of them, saying so, instead of running to max_outer
  ProxLcp bad;
  bad.n = 3;
  bad.M.assign(9, 0);
  bad.q.assign(3, -1);
  bad.scale = 1;
  cuspMcpOptions opt = cusp_mcp_default_options();
  cuspMcpProxOptions po = cusp_mcp_proximal_default_options();
  cuspMcpProxInfo full, cut;
  Outcome a = RunProx(bad, opt, &full, &po);
  po.stall_outer = 4;
  po.stall_factor = 0.9;
  Outcome b = RunProx(bad, opt, &cut, &po);
  EXPECT_NE(a.status, CUSP_LCP_SOLVED);
  EXPECT_NE(b.status, CUSP_LCP_SOLVED);
  EXPECT_GT(full.outer, 4);
  EXPECT_EQ(cut.outer, 4);
  EXPECT_STREQ(cut.mcp.message, "stalled");
  // a singular problem the loop solves, its residual falling by more than 10 % every 4 outer
  // steps: the window changes nothing (bitwise)
  ProxLcp p = Synth(40, 10, 9);
  po.stall_outer = 0;
  Outcome c = RunProx(p, opt, nullptr, &po);
  po.stall_outer = 4;
  Outcome d = RunProx(p, opt, nullptr, &po);
  ASSERT_EQ(c.status, CUSP_LCP_SOLVED);
  EXPECT_EQ(c.z, d.z);
  EXPECT_EQ(c.iterations, d.iterations);
}

}  // namespace
