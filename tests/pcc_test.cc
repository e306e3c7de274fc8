// Tests of models/pcc: closed-form PCC kinematics against round trips, an independent numerical
// integration of the constant-curvature backbone ODE, and finite differences.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <random>
#include <vector>

extern "C" {
#include "pcc.h"
}

namespace {

constexpr double kD = 0.02;     // chamber offset (m), the seeds' arm value
constexpr double kL0 = 0.15;    // rest length (m)
constexpr double kPi = 3.14159265358979323846;

// Random chamber lengths whose bending angle is at most max_theta (rad), arc length near L0.
std::vector<double> RandomLengths(std::mt19937* rng, double max_theta) {
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  double s = kL0 * (0.8 + 0.4 * uni(*rng));
  double theta = max_theta * uni(*rng);
  double phi = 2 * kPi * uni(*rng);
  std::vector<double> l(3);
  cusp_pcc_lengths_from_arc(l.data(), theta / s, phi, s, kD);
  return l;
}

// Backbone ODE in the body frame: p' = R e_z, R' = R [k]x with body curvature
// k = kappa (-sin phi, cos phi, 0); integrated with RK4 over arc length (independent of the
// closed form). Returns position and rotation matrix (row-major) at arc length s_end.
void IntegrateArc(double pos[3], double mat[9], double kappa, double phi, double s_end) {
  const int n = 2000;
  const double h = s_end / n;
  double k[3] = {-kappa * std::sin(phi), kappa * std::cos(phi), 0};
  // state: p (3), R row-major (9)
  double y[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  auto f = [&](double dy[12], const double yy[12]) {
    const double* r = yy + 3;
    for (int i = 0; i < 3; i++) dy[i] = r[3 * i + 2];  // R e_z
    // R [k]x: row i of R times [k]x
    for (int i = 0; i < 3; i++) {
      double a = r[3 * i], b = r[3 * i + 1], c = r[3 * i + 2];
      // [k]x = [[0,-k2,k1],[k2,0,-k0],[-k1,k0,0]]
      dy[3 + 3 * i + 0] = b * k[2] - c * k[1];
      dy[3 + 3 * i + 1] = -a * k[2] + c * k[0];
      dy[3 + 3 * i + 2] = a * k[1] - b * k[0];
    }
  };
  double k1[12], k2[12], k3[12], k4[12], t[12];
  for (int step = 0; step < n; step++) {
    f(k1, y);
    for (int i = 0; i < 12; i++) t[i] = y[i] + 0.5 * h * k1[i];
    f(k2, t);
    for (int i = 0; i < 12; i++) t[i] = y[i] + 0.5 * h * k2[i];
    f(k3, t);
    for (int i = 0; i < 12; i++) t[i] = y[i] + h * k3[i];
    f(k4, t);
    for (int i = 0; i < 12; i++) y[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }
  for (int i = 0; i < 3; i++) pos[i] = y[i];
  for (int i = 0; i < 9; i++) mat[i] = y[3 + i];
}

TEST(PccTest, RoundTripLengthsArcLengths) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 200; trial++) {
    auto l = RandomLengths(&rng, kPi);
    double kappa, phi, s, l2[3];
    cusp_pcc_arc_from_lengths(&kappa, &phi, &s, l.data(), kD);
    cusp_pcc_lengths_from_arc(l2, kappa, phi, s, kD);
    for (int j = 0; j < 3; j++) EXPECT_NEAR(l2[j], l[j], 1e-14);  // m
    EXPECT_GE(kappa, 0);
  }
  // straight: equal lengths give kappa = 0 exactly, s = the common length
  double l[3] = {0.17, 0.17, 0.17}, kappa, phi, s;
  cusp_pcc_arc_from_lengths(&kappa, &phi, &s, l, kD);
  EXPECT_NEAR(kappa, 0, 1e-12);
  EXPECT_DOUBLE_EQ(s, 0.17);
}

TEST(PccTest, ChamberOnInsideOfBendIsShortest) {
  // bending towards chamber 0 (phi = 0) shortens it by theta * d, lengthens the others by half
  double l[3], theta = 1.0, s = 0.15;
  cusp_pcc_lengths_from_arc(l, theta / s, 0.0, s, kD);
  EXPECT_NEAR(l[0], s - theta * kD, 1e-15);
  EXPECT_NEAR(l[1], s + 0.5 * theta * kD, 1e-15);
  EXPECT_NEAR(l[2], s + 0.5 * theta * kD, 1e-15);
  double pos[3];
  cusp_pcc_pose(pos, nullptr, nullptr, nullptr, l, 1.0, kD);
  EXPECT_GT(pos[0], 0);  // tip moved towards +x (chamber 0's side)
  EXPECT_NEAR(pos[0], s / theta * (1 - std::cos(theta)), 1e-14);
  EXPECT_NEAR(pos[2], s / theta * std::sin(theta), 1e-14);
}

TEST(PccTest, PoseMatchesIntegratedArc) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 50; trial++) {
    auto l = RandomLengths(&rng, kPi);
    double kappa, phi, s;
    cusp_pcc_arc_from_lengths(&kappa, &phi, &s, l.data(), kD);
    for (double sigma : {0.0, 0.3, 0.77, 1.0}) {
      double pos[3], quat[4], mat[9], pref[3], mref[9];
      cusp_pcc_pose(pos, quat, nullptr, nullptr, l.data(), sigma, kD);
      IntegrateArc(pref, mref, kappa, phi, sigma * s);
      mju_quat2Mat(mat, quat);
      for (int i = 0; i < 3; i++) EXPECT_NEAR(pos[i], pref[i], 1e-10);  // m
      for (int i = 0; i < 9; i++) EXPECT_NEAR(mat[i], mref[i], 1e-10);
    }
  }
}

// Central finite-difference check of the pose Jacobians with respect to chamber lengths.
void CheckJacobianFd(const double l[3], double sigma, double tol) {
  double jp[9], jr[9], q0[4];
  cusp_pcc_pose(nullptr, q0, jp, jr, l, sigma, kD);
  const double eps = 1e-7;  // m
  for (int c = 0; c < 3; c++) {
    double lp[3] = {l[0], l[1], l[2]}, lm[3] = {l[0], l[1], l[2]};
    lp[c] += eps;
    lm[c] -= eps;
    double pp[3], pm[3], qp[4], qm[4];
    cusp_pcc_pose(pp, qp, nullptr, nullptr, lp, sigma, kD);
    cusp_pcc_pose(pm, qm, nullptr, nullptr, lm, sigma, kD);
    // spatial angular velocity: log(Rp Rm^T) / (2 eps)
    double qmi[4], dq[4], w[3];
    mju_negQuat(qmi, qm);
    mju_mulQuat(dq, qp, qmi);
    mju_quat2Vel(w, dq, 2 * eps);
    for (int i = 0; i < 3; i++) {
      EXPECT_NEAR(jp[i + 3 * c], (pp[i] - pm[i]) / (2 * eps), tol) << "jacp " << i << "," << c;
      EXPECT_NEAR(jr[i + 3 * c], w[i], tol / kD) << "jacr " << i << "," << c;
    }
  }
}

TEST(PccTest, JacobianMatchesFiniteDifferences) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; trial++) {
    auto l = RandomLengths(&rng, kPi);
    for (double sigma : {0.25, 1.0}) CheckJacobianFd(l.data(), sigma, 1e-6);
  }
}

TEST(PccTest, JacobianFiniteAndContinuousAtStraight) {
  // exactly straight, and approaching straight from several directions: the Jacobian converges
  double ls[3] = {kL0, kL0, kL0}, j0[9], r0[9];
  cusp_pcc_pose(nullptr, nullptr, j0, r0, ls, 1.0, kD);
  for (int i = 0; i < 9; i++) {
    EXPECT_TRUE(std::isfinite(j0[i]));
    EXPECT_TRUE(std::isfinite(r0[i]));
  }
  // straight: d(tip x)/d l_0 = -s/(2) * dtheta_x/dl_0 = -s/2 * (-2/(3d)) ... closed form:
  // p_x = s theta_x / 2 at small angle, theta_x = -2/(3d) (l0 - (l1 + l2)/2)
  EXPECT_NEAR(j0[0], kL0 / 2 * (-2.0 / (3 * kD)), 1e-12);
  CheckJacobianFd(ls, 1.0, 1e-6);
  for (double phi : {0.0, 1.0, 2.5, -2.0}) {
    for (double theta : {1e-3, 1e-6, 1e-9}) {
      double l[3], j[9], r[9];
      cusp_pcc_lengths_from_arc(l, theta / kL0, phi, kL0, kD);
      cusp_pcc_pose(nullptr, nullptr, j, r, l, 1.0, kD);
      for (int i = 0; i < 9; i++) {
        EXPECT_NEAR(j[i], j0[i], 2 * theta) << "phi " << phi << " theta " << theta;
        EXPECT_NEAR(r[i], r0[i], 2 * theta / kD) << "phi " << phi << " theta " << theta;
      }
    }
  }
}

TEST(PccTest, SeriesAndClosedFormAgreeAtSwitchOver) {
  // the functions switch from series to closed form at a bending angle of 1 rad: poses and
  // Jacobians just below and above must agree to first order in the step
  double pb[3], pa[3], jb[9], ja[9];
  double lb[3], la[3];
  const double dtheta = 1e-9;
  cusp_pcc_lengths_from_arc(lb, (1.0 - dtheta) / kL0, 0.4, kL0, kD);
  cusp_pcc_lengths_from_arc(la, (1.0 + dtheta) / kL0, 0.4, kL0, kD);
  cusp_pcc_pose(pb, nullptr, jb, nullptr, lb, 1.0, kD);
  cusp_pcc_pose(pa, nullptr, ja, nullptr, la, 1.0, kD);
  for (int i = 0; i < 3; i++) EXPECT_NEAR(pa[i], pb[i], 1e-9);
  for (int i = 0; i < 9; i++) EXPECT_NEAR(ja[i], jb[i], 1e-7);
}

TEST(PccTest, ChainComposesSectionsAndJacobianMatchesFd) {
  std::mt19937 rng(4);
  const int n = 3;
  double d[n] = {0.02, 0.018, 0.015};
  for (int trial = 0; trial < 20; trial++) {
    std::vector<double> l;
    for (int i = 0; i < n; i++) {
      auto li = RandomLengths(&rng, kPi / 2);
      l.insert(l.end(), li.begin(), li.end());
    }
    // section 2 at sigma = 0 is the tip of section 1: compose by hand
    double p1[3], q1[4], p2[3], q2[4], pt[3], qt[4];
    ASSERT_EQ(cusp_pcc_chain_pose(p1, q1, nullptr, nullptr, l.data(), d, 1, 1.0, n), 0);
    ASSERT_EQ(cusp_pcc_chain_pose(p2, q2, nullptr, nullptr, l.data(), d, 2, 0.0, n), 0);
    for (int i = 0; i < 3; i++) EXPECT_NEAR(p1[i], p2[i], 1e-14);
    double a[3], qa[4], b[3], qb[4];
    cusp_pcc_pose(a, qa, nullptr, nullptr, l.data(), 1.0, d[0]);
    cusp_pcc_pose(b, qb, nullptr, nullptr, l.data() + 3, 1.0, d[1]);
    mju_rotVecQuat(pt, b, qa);
    mju_addTo3(pt, a);
    mju_mulQuat(qt, qa, qb);
    for (int i = 0; i < 3; i++) EXPECT_NEAR(p1[i], pt[i], 1e-14);
    for (int i = 0; i < 4; i++) EXPECT_NEAR(q1[i], qt[i], 1e-14);

    // Jacobian of a point in the last section against finite differences in all 9 lengths
    double jp[27], jr[27], pp[3], pm[3], qp[4], qm[4];
    const double sigma = 0.6, eps = 1e-7;
    cusp_pcc_chain_pose(nullptr, nullptr, jp, jr, l.data(), d, 2, sigma, n);
    for (int c = 0; c < 3 * n; c++) {
      std::vector<double> lp = l, lm = l;
      lp[c] += eps;
      lm[c] -= eps;
      cusp_pcc_chain_pose(pp, qp, nullptr, nullptr, lp.data(), d, 2, sigma, n);
      cusp_pcc_chain_pose(pm, qm, nullptr, nullptr, lm.data(), d, 2, sigma, n);
      double qmi[4], dq[4], w[3];
      mju_negQuat(qmi, qm);
      mju_mulQuat(dq, qp, qmi);
      mju_quat2Vel(w, dq, 2 * eps);
      for (int i = 0; i < 3; i++) {
        EXPECT_NEAR(jp[i + 3 * c], (pp[i] - pm[i]) / (2 * eps), 1e-6);
        EXPECT_NEAR(jr[i + 3 * c], w[i], 1e-4);
      }
    }
    // position-only request (rotation Jacobian computed internally) gives the same numbers
    double jp2[27];
    cusp_pcc_chain_pose(nullptr, nullptr, jp2, nullptr, l.data(), d, 2, sigma, n);
    for (int i = 0; i < 27; i++) EXPECT_DOUBLE_EQ(jp2[i], jp[i]);
  }
  double pos[3];
  EXPECT_EQ(cusp_pcc_chain_pose(pos, nullptr, nullptr, nullptr, nullptr, d, 3, 0.5, n), -1);
}

}  // namespace
