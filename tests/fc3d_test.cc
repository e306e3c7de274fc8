// FC3D solver: every problem of tests/data/fc3d solved to 1e-8, checked by the solver's own
// measures and by an independent residual recomputed here in de Saxce's form; single contacts with
// known answers (stick, slide, take-off); warm start; bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

extern "C" {
#include "solver/fc3d.h"
#include "solver/fc3d_file.h"
}

namespace {

const char* kFiles[] = {"BoxesStack1-i100000-32.hdf5.dat", "Capsules-i101-404.dat",
                        "Confeti-ex03-Fc3D-SBM.dat",       "NESpheres_10_1.dat",
                        "OneObject-i100000-499.hdf5.dat",  "Rover4609.dat"};

std::string DataPath(const std::string& file, const char* dir = "fc3d") {
  return std::string(CUSP_SOURCE_DIR) + "/tests/data/" + dir + "/" + file;
}

// Independent check in de Saxce's form, from W, q, mu and r only: with u = W r + q and
// u^_i = u_i + mu_i |u_t,i| e_n, per contact
//   r_i in K_i:        |r_t| - mu r_n          <= eps * R
//   u^_i in K_i*:      mu |u^_t| - u^_n = -u_n <= eps * U
// with the problem's scales U = max(max_i |q_i|, max_i |u_i|) (velocity) and
// R = max(max_i |r_i|, U / mean normal diagonal of W) (impulse: the larger of the answer and the
// impulse that stops the fastest contact alone)
//   r_i . u^_i ~ 0:    |r_i . u^_i|            <= eps * R * U
// Returns the largest of the three left-hand sides over the contacts, each divided by its scale.
double DeSaxceViolation(const std::vector<double>& W, const std::vector<double>& q,
                        const std::vector<double>& mu, const std::vector<double>& r) {
  int n = (int)q.size(), nc = n / 3;
  std::vector<double> u(q);
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) u[i] += W[i + (size_t)j * n] * r[j];
  }
  double R = 0, U = 0, diag = 0;
  for (int i = 0; i < n; i++) {
    R = std::max(R, std::fabs(r[i]));
    U = std::max({U, std::fabs(q[i]), std::fabs(u[i])});
  }
  for (int c = 0; c < nc; c++) diag += W[3 * c + (size_t)(3 * c) * n] / nc;
  R = std::max(R, U / diag);  // the impulse that stops the fastest contact alone
  R = std::max(R, 1e-300);
  U = std::max(U, 1e-300);
  double worst = 0;
  for (int c = 0; c < nc; c++) {
    const double* rc = &r[3 * c];
    const double* uc = &u[3 * c];
    double ut = std::hypot(uc[1], uc[2]);
    double uhat[3] = {uc[0] + mu[c] * ut, uc[1], uc[2]};
    double cone = (std::hypot(rc[1], rc[2]) - mu[c] * rc[0]) / R;
    double dual = (mu[c] * std::hypot(uhat[1], uhat[2]) - uhat[0]) / U;
    double comp = std::fabs(rc[0] * uhat[0] + rc[1] * uhat[1] + rc[2] * uhat[2]) / (R * U);
    worst = std::max({worst, cone, dual, comp});
  }
  return worst;
}

struct Solved {
  cuspFc3dInfo info;
  std::vector<double> r, u;
};

Solved Solve(const cuspFc3dFileData& d, const cuspFc3dOptions& opt,
             const std::vector<double>* r0 = nullptr) {
  int n = 3 * d.nc;
  cuspFc3dProblem p = {d.nc, d.W, n, d.q, d.mu};
  Solved s;
  s.r = r0 ? *r0 : std::vector<double>(n, 0);
  s.u.assign(n, 0);
  std::vector<double> work(cusp_fc3d_worksize(d.nc) / 8 + 1);
  cusp_fc3d_solve(s.r.data(), s.u.data(), &s.info, &p, &opt, work.data(), work.size() * 8);
  return s;
}

// Solve the file at tol from zero and check it: status, residual, Siconos' error, the independent
// de Saxce violation, u = W r + q, and that a warm start from the answer returns at once.
void SolveAndCheck(const char* dir, const char* file, double tol) {
  cuspFc3dOptions opt = cusp_fc3d_default_options();
  opt.tol = tol;
  {
    SCOPED_TRACE(file);
    cuspFc3dFileData d;
    char err[512];
    ASSERT_EQ(cusp_fc3d_file_read(&d, err, sizeof(err), DataPath(file, dir).c_str()), 0) << err;
    int n = 3 * d.nc;
    Solved s = Solve(d, opt);
    std::printf("%-34s nc %3d: %s, %3d Newton iterations (%3d outer, %2d islands), residual "
                "%.1e, Siconos error %.1e, %.2f ms\n",
                file, d.nc, s.info.status == CUSP_LCP_SOLVED ? "solved" : "FAILED",
                s.info.iterations, s.info.outer, s.info.islands, s.info.residual, s.info.error,
                1e3 * s.info.seconds);
    EXPECT_EQ(s.info.status, CUSP_LCP_SOLVED) << s.info.message;
    EXPECT_LE(s.info.residual, tol);
    EXPECT_LE(s.info.error, tol);
    std::vector<double> W(d.W, d.W + (size_t)n * n), q(d.q, d.q + n), mu(d.mu, d.mu + d.nc);
    double viol = DeSaxceViolation(W, q, mu, s.r);
    std::printf("  independent de Saxce violation %.1e\n", viol);
    EXPECT_LE(viol, 3 * opt.tol) << "de Saxce cone complementarity (scales above)";
    // u returned is W r + q
    for (int i = 0; i < n; i++) {
      double ui = q[i];
      for (int j = 0; j < n; j++) ui += W[i + (size_t)j * n] * s.r[j];
      EXPECT_NEAR(s.u[i], ui, 1e-12 * (1 + std::fabs(ui)));
    }
    // a warm start from the answer returns at once
    cuspFc3dOptions warm = opt;
    warm.warm_start = 1;
    Solved again = Solve(d, warm, &s.r);
    EXPECT_EQ(again.info.status, CUSP_LCP_SOLVED);
    EXPECT_EQ(again.info.iterations, 0);
    EXPECT_EQ(again.r, s.r);
    cusp_fc3d_file_free(&d);
  }
}

TEST(Fc3d, EveryFileSolvedTo1e8AndCheckedIndependently) {
  for (const char* file : kFiles) SolveAndCheck("fc3d", file, 1e-8);
}

// A heavy sphere landing on a light pebble on the floor (tests/data/fc3d_jam/SOURCE.md): the
// answer is about 1000 times the impulse that stops the pebble alone, along a direction W barely
// sees; solved to 1e-10 within the default budget (400 Newton steps).
TEST(Fc3d, JammedPebbleSolvedTo1e10) {
  for (const char* file : {"pebble_under_sphere_a.dat", "pebble_under_sphere_b.dat"}) {
    SolveAndCheck("fc3d_jam", file, 1e-10);
  }
}

// one contact, W = diag(1, 1, 1), mu = 0.5
std::vector<double> OneContact(double qn, double qt1, double qt2) {
  std::vector<double> W = {1, 0, 0, 0, 1, 0, 0, 0, 1}, q = {qn, qt1, qt2}, mu = {0.5};
  cuspFc3dProblem p = {1, W.data(), 3, q.data(), mu.data()};
  std::vector<double> r(3, 0), work(cusp_fc3d_worksize(1) / 8 + 1);
  cuspFc3dInfo info;
  cuspFc3dOptions opt = cusp_fc3d_default_options();
  opt.tol = 1e-12;
  EXPECT_EQ(cusp_fc3d_solve(r.data(), nullptr, &info, &p, &opt, work.data(), work.size() * 8),
            CUSP_LCP_SOLVED)
      << info.message;
  return r;
}

TEST(Fc3d, OneContactStickSlideTakeOff) {
  std::vector<double> r = OneContact(-1, 0.3, -0.1);  // stick: r_t = -q_t inside the cone
  EXPECT_NEAR(r[0], 1, 1e-12);
  EXPECT_NEAR(r[1], -0.3, 1e-12);
  EXPECT_NEAR(r[2], 0.1, 1e-12);
  r = OneContact(-1, 2, 0);  // slide along +t1: r_t = -mu r_n on the cone's edge
  EXPECT_NEAR(r[0], 1, 1e-12);
  EXPECT_NEAR(r[1], -0.5, 1e-12);
  EXPECT_NEAR(r[2], 0, 1e-12);
  r = OneContact(-2, 3, 4);  // slide along (3, 4) / 5
  EXPECT_NEAR(r[0], 2, 1e-12);
  EXPECT_NEAR(r[1], -0.6, 1e-12);
  EXPECT_NEAR(r[2], -0.8, 1e-12);
  r = OneContact(1, 2, 0);  // take-off: no reaction
  EXPECT_NEAR(r[0], 0, 1e-12);
  EXPECT_NEAR(r[1], 0, 1e-12);
  EXPECT_NEAR(r[2], 0, 1e-12);
}

TEST(Fc3d, BadInputRefused) {
  std::vector<double> W = {1, 0, 0, 0, 1, 0, 0, 0, 1}, q = {-1, 0, 0}, mu = {-0.5};
  cuspFc3dProblem p = {1, W.data(), 3, q.data(), mu.data()};
  std::vector<double> r(3), work(cusp_fc3d_worksize(1) / 8 + 1);
  cuspFc3dInfo info;
  cuspFc3dOptions opt = cusp_fc3d_default_options();
  EXPECT_EQ(cusp_fc3d_solve(r.data(), nullptr, &info, &p, &opt, work.data(), work.size() * 8),
            CUSP_LCP_BAD_INPUT);
  mu[0] = 0.5;
  EXPECT_EQ(cusp_fc3d_solve(r.data(), nullptr, &info, &p, &opt, work.data(), 16),
            CUSP_LCP_BAD_INPUT);
  p.ldw = 2;
  EXPECT_EQ(cusp_fc3d_solve(r.data(), nullptr, &info, &p, &opt, work.data(), work.size() * 8),
            CUSP_LCP_BAD_INPUT);
  // no contacts: nothing to do
  p = {0, nullptr, 0, nullptr, nullptr};
  EXPECT_EQ(cusp_fc3d_solve(r.data(), nullptr, &info, &p, &opt, work.data(), work.size() * 8),
            CUSP_LCP_SOLVED);
}

}  // namespace
