// Piecewise-constant-curvature kinematics of a three-chamber section; see pcc.h for the maths.
#include "pcc.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

// ---- Even power series of the bending angle ----------------------------------------------------
// All functions of the bending angle a appear as functions of u = a^2 (rad^2). Below u < 1 they
// are summed as power series (no cancellation, exact limit at a = 0); above, in closed form.

#define CUSP_PCC_SERIES_U 1.0  // switch-over point (rad^2)
#define CUSP_PCC_NTERM 12      // series terms: u^12 / 25! is below double precision for u < 1

// Sum_k (-1)^k u^k / (2k + off)! and its derivative with respect to u.
static void cusp_pcc_series(mjtNum* f, mjtNum* df, mjtNum u, int off) {
  // first coefficient 1 / off!
  mjtNum c = 1;
  for (int i = 2; i <= off; i++) c /= i;
  mjtNum sum = 0, dsum = 0, upow = 1, upow1 = 0;  // upow = u^k, upow1 = u^(k-1)
  for (int k = 0; k < CUSP_PCC_NTERM; k++) {
    sum += c * upow;
    if (k > 0) dsum += c * k * upow1;
    upow1 = upow;
    upow *= u;
    c *= -1.0 / ((2 * k + off + 1) * (mjtNum)(2 * k + off + 2));
  }
  *f = sum;
  if (df) *df = dsum;
}

// F1(u) = sin(a)/a, F2(u) = (1 - cos a)/a^2, F3(u) = (a - sin a)/a^3, with u-derivatives of F1, F2.
static void cusp_pcc_funcs(mjtNum* f1, mjtNum* df1, mjtNum* f2, mjtNum* df2, mjtNum* f3,
                           mjtNum u) {
  if (u < CUSP_PCC_SERIES_U) {
    cusp_pcc_series(f1, df1, u, 1);
    cusp_pcc_series(f2, df2, u, 2);
    cusp_pcc_series(f3, NULL, u, 3);
    return;
  }
  mjtNum a = sqrt(u), sa = sin(a), ca = cos(a);
  *f1 = sa / a;
  *df1 = (a * ca - sa) / (2 * a * u);
  *f2 = (1 - ca) / u;
  *df2 = (a * sa - 2 * (1 - ca)) / (2 * u * u);
  *f3 = (a - sa) / (a * u);
}

// cos(a/2) and sin(a/2)/a from u = a^2 (for the quaternion of a rotation by angle a).
static void cusp_pcc_halfangle(mjtNum* c, mjtNum* s_over_a, mjtNum u) {
  if (u < 4 * CUSP_PCC_SERIES_U) {
    cusp_pcc_series(c, NULL, u / 4, 0);
    cusp_pcc_series(s_over_a, NULL, u / 4, 1);
    *s_over_a *= 0.5;
    return;
  }
  mjtNum a = sqrt(u);
  *c = cos(a / 2);
  *s_over_a = sin(a / 2) / a;
}

// ---- Coordinate changes ------------------------------------------------------------------------

static const mjtNum kCos[3] = {1.0, -0.5, -0.5};                               // cos(psi_j)
static const mjtNum kSin[3] = {0.0, 0.86602540378443864676, -0.86602540378443864676};  // sin

void cusp_pcc_lengths_from_config(mjtNum l[3], const mjtNum q[3], mjtNum d) {
  for (int j = 0; j < 3; j++) l[j] = q[0] - d * (q[1] * kCos[j] + q[2] * kSin[j]);
}

void cusp_pcc_config_jacobian(mjtNum dqdl[9], mjtNum d) {
  // s = mean(l); theta_x = -2/(3d) sum l_j cos psi_j; theta_y = -2/(3d) sum l_j sin psi_j
  for (int j = 0; j < 3; j++) {
    dqdl[0 + 3 * j] = 1.0 / 3.0;
    dqdl[1 + 3 * j] = -2.0 * kCos[j] / (3.0 * d);
    dqdl[2 + 3 * j] = -2.0 * kSin[j] / (3.0 * d);
  }
}

void cusp_pcc_config_from_lengths(mjtNum q[3], const mjtNum l[3], mjtNum d) {
  mjtNum a[9];
  cusp_pcc_config_jacobian(a, d);
  for (int i = 0; i < 3; i++) q[i] = a[i] * l[0] + a[i + 3] * l[1] + a[i + 6] * l[2];
}

void cusp_pcc_arc_from_lengths(mjtNum* kappa, mjtNum* phi, mjtNum* s, const mjtNum l[3],
                               mjtNum d) {
  mjtNum q[3];
  cusp_pcc_config_from_lengths(q, l, d);
  mjtNum theta = sqrt(q[1] * q[1] + q[2] * q[2]);
  *s = q[0];
  *kappa = q[0] != 0 ? theta / q[0] : 0;
  *phi = theta > 0 ? atan2(q[2], q[1]) : 0;
}

void cusp_pcc_lengths_from_arc(mjtNum l[3], mjtNum kappa, mjtNum phi, mjtNum s, mjtNum d) {
  mjtNum theta = kappa * s;
  mjtNum q[3] = {s, theta * cos(phi), theta * sin(phi)};
  cusp_pcc_lengths_from_config(l, q, d);
}

// ---- One section ------------------------------------------------------------------------------

void cusp_pcc_pose_config(mjtNum pos[3], mjtNum quat[4], mjtNum jacp_q[9], mjtNum jacr_q[9],
                          const mjtNum q[3], mjtNum sigma) {
  mjtNum s = q[0], tx = q[1], ty = q[2];
  mjtNum u = sigma * sigma * (tx * tx + ty * ty);  // (sigma theta)^2, rad^2
  mjtNum f1, df1, f2, df2, f3;
  cusp_pcc_funcs(&f1, &df1, &f2, &df2, &f3, u);

  if (pos) {
    pos[0] = s * sigma * sigma * tx * f2;
    pos[1] = s * sigma * sigma * ty * f2;
    pos[2] = s * sigma * f1;
  }
  if (quat) {
    mjtNum c, soa;
    cusp_pcc_halfangle(&c, &soa, u);
    quat[0] = c;
    quat[1] = -sigma * ty * soa;
    quat[2] = sigma * tx * soa;
    quat[3] = 0;
  }
  if (jacp_q) {
    mjtNum s2 = sigma * sigma;
    // d/ds
    jacp_q[0] = s2 * tx * f2;
    jacp_q[1] = s2 * ty * f2;
    jacp_q[2] = sigma * f1;
    // d/dtheta_x and d/dtheta_y, using du/dtheta_x = 2 sigma^2 theta_x
    mjtNum t[2] = {tx, ty};
    for (int k = 0; k < 2; k++) {
      mjtNum du = 2 * s2 * t[k];
      mjtNum* col = jacp_q + 3 * (k + 1);
      col[0] = s * s2 * (tx * df2 * du + (k == 0 ? f2 : 0));
      col[1] = s * s2 * (ty * df2 * du + (k == 1 ? f2 : 0));
      col[2] = s * sigma * df1 * du;
    }
  }
  if (jacr_q) {
    // spatial angular velocity = Jl(w) dw/dt, w = sigma (-theta_y, theta_x, 0),
    // Jl(w) = I + F2 [w]x + F3 [w]x^2 (left Jacobian of SO(3))
    mjtNum w[3] = {-sigma * ty, sigma * tx, 0};
    mjtNum dw[2][3] = {{0, sigma, 0}, {-sigma, 0, 0}};  // dw/dtheta_x, dw/dtheta_y
    jacr_q[0] = jacr_q[1] = jacr_q[2] = 0;  // no dependence on s
    for (int k = 0; k < 2; k++) {
      mjtNum v[3], wv[3], wwv[3];
      mju_copy3(v, dw[k]);
      mju_cross(wv, w, v);
      mju_cross(wwv, w, wv);
      for (int i = 0; i < 3; i++) jacr_q[3 * (k + 1) + i] = v[i] + f2 * wv[i] + f3 * wwv[i];
    }
  }
}

// c (3 x 3) = a (3 x 3) * b (3 x 3), all column-major.
static void cusp_pcc_mul33(mjtNum c[9], const mjtNum a[9], const mjtNum b[9]) {
  for (int j = 0; j < 3; j++) {
    for (int i = 0; i < 3; i++) {
      c[i + 3 * j] = a[i] * b[3 * j] + a[i + 3] * b[3 * j + 1] + a[i + 6] * b[3 * j + 2];
    }
  }
}

void cusp_pcc_pose(mjtNum pos[3], mjtNum quat[4], mjtNum jacp[9], mjtNum jacr[9],
                   const mjtNum l[3], mjtNum sigma, mjtNum d) {
  mjtNum q[3], dqdl[9], jp[9], jr[9];
  cusp_pcc_config_from_lengths(q, l, d);
  cusp_pcc_pose_config(pos, quat, jacp ? jp : NULL, jacr ? jr : NULL, q, sigma);
  if (jacp || jacr) cusp_pcc_config_jacobian(dqdl, d);
  if (jacp) cusp_pcc_mul33(jacp, jp, dqdl);
  if (jacr) cusp_pcc_mul33(jacr, jr, dqdl);
}

// ---- Chain of sections ------------------------------------------------------------------------

int cusp_pcc_chain_pose(mjtNum pos[3], mjtNum quat[4], mjtNum* jacp, mjtNum* jacr,
                        const mjtNum* l, const mjtNum* d, int section, mjtNum sigma,
                        int nsection) {
  if (section < 0 || section >= nsection || nsection > CUSP_PCC_MAXSECTION) return -1;
  int ncol = 3 * nsection;
  // the position Jacobian needs the rotation Jacobian of the base frames
  mjtNum jacr_local[3 * 3 * CUSP_PCC_MAXSECTION];
  if (jacp && !jacr) jacr = jacr_local;
  // base frame of the current section in the chain base frame, and its Jacobians
  mjtNum pb[3] = {0, 0, 0}, qb[4] = {1, 0, 0, 0};
  if (jacp) memset(jacp, 0, sizeof(mjtNum) * 3 * ncol);
  if (jacr) memset(jacr, 0, sizeof(mjtNum) * 3 * ncol);

  for (int i = 0; i <= section; i++) {
    mjtNum sg = i < section ? 1.0 : sigma;
    mjtNum ploc[3], qloc[4], jploc[9], jrloc[9];
    cusp_pcc_pose(ploc, qloc, jploc, jrloc, l + 3 * i, sg, d[i]);

    mjtNum v[3];  // R_b ploc (m): local offset in the chain base frame
    mju_rotVecQuat(v, ploc, qb);

    // Jacobian update, earlier columns: dp += w_b x v  ->  jacp -= [v]x jacr
    if (jacp) {
      for (int c = 0; c < 3 * i; c++) {
        mjtNum* jp = jacp + 3 * c;
        mjtNum wxv[3];
        mju_cross(wxv, jacr + 3 * c, v);
        mju_addTo3(jp, wxv);
      }
    }
    // columns of this section: rotate the local Jacobians into the chain base frame
    for (int c = 0; c < 3; c++) {
      if (jacp) mju_rotVecQuat(jacp + 3 * (3 * i + c), jploc + 3 * c, qb);
      if (jacr) mju_rotVecQuat(jacr + 3 * (3 * i + c), jrloc + 3 * c, qb);
    }

    // compose the frame
    mju_addTo3(pb, v);
    mjtNum qn[4];
    mju_mulQuat(qn, qb, qloc);
    mju_copy4(qb, qn);
  }
  if (pos) mju_copy3(pos, pb);
  if (quat) mju_copy4(quat, qb);
  return 0;
}
