// Piecewise-constant-curvature (PCC) kinematics of a three-chamber soft section.
//
// A section is a circular arc of arc length s (m) leaving its base frame along +z. Its three
// chambers run parallel to the backbone at radial offset d (m), at angles psi_j = j * 120 deg
// (j = 0, 1, 2) from the base frame's x axis. The section bends in the plane at angle phi from
// the x axis with curvature kappa (1/m); the total bending angle is theta = kappa * s (rad).
//
// Singularity-free coordinates. Instead of (kappa, phi, s), which is singular at the straight
// configuration (phi undefined), the functions below use the configuration
//     q = (s, theta_x, theta_y) = (s, theta cos(phi), theta sin(phi))      (m, rad, rad)
// in which chamber lengths are *linear*:
//     l_j = s - d (theta_x cos(psi_j) + theta_y sin(psi_j))                   (m)
// and every pose/Jacobian formula is an even power series of the bending angle, evaluated with
// series near zero, so the straight configuration is an ordinary point (finite, continuous
// Jacobians). The pose at arc fraction sigma in [0, 1] is
//     p = s sigma (sigma theta_x F2, sigma theta_y F2, F1),  F1 = sin(a)/a, F2 = (1 - cos a)/a^2,
//     R = exp([w]x),  w = sigma (-theta_y, theta_x, 0),  a = sigma theta,
// i.e. a rotation by sigma*theta about the in-plane axis (-sin phi, cos phi, 0) (no twist).
//
// Conventions (house style): outputs first, then inputs, then sizes. Matrices are column-major
// with a leading dimension equal to their row count (3). Quaternions are MuJoCo's (w, x, y, z).
// Jacobians are "world" (spatial) Jacobians expressed in the base frame of the section / chain:
// jacp * ldot = velocity of the point, jacr * ldot = angular velocity of the frame.
#ifndef CUSP_MODELS_PCC_H_
#define CUSP_MODELS_PCC_H_

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

// Number of chambers per section.
#define CUSP_PCC_NCHAMBER 3
// Largest chain cusp_pcc_chain_pose accepts.
#define CUSP_PCC_MAXSECTION 64

// ---- Coordinate changes ------------------------------------------------------------------------

// Chamber lengths l (3 x 1, m) from configuration q = (s, theta_x, theta_y) (m, rad, rad).
void cusp_pcc_lengths_from_config(mjtNum l[3], const mjtNum q[3], mjtNum d);

// Configuration q = (s, theta_x, theta_y) from chamber lengths l (3 x 1, m); d > 0 (m).
void cusp_pcc_config_from_lengths(mjtNum q[3], const mjtNum l[3], mjtNum d);

// dq/dl (3 x 3, column-major): constant because q is linear in l.
void cusp_pcc_config_jacobian(mjtNum dqdl[9], mjtNum d);

// Arc parameters (kappa (1/m), phi (rad, in (-pi, pi]), s (m)) from chamber lengths (m).
// At the straight configuration kappa = 0 and phi = 0 (phi is then arbitrary).
void cusp_pcc_arc_from_lengths(mjtNum* kappa, mjtNum* phi, mjtNum* s, const mjtNum l[3],
                               mjtNum d);

// Chamber lengths (m) from arc parameters (kappa (1/m), phi (rad), s (m)).
void cusp_pcc_lengths_from_arc(mjtNum l[3], mjtNum kappa, mjtNum phi, mjtNum s, mjtNum d);

// ---- One section ------------------------------------------------------------------------------

// Pose of the backbone frame at arc fraction sigma, in the section base frame, from the
// configuration q = (s, theta_x, theta_y). Optional (may be NULL): pos (3, m), quat (4),
// jacp_q, jacr_q (3 x 3 column-major): derivatives with respect to q.
void cusp_pcc_pose_config(mjtNum pos[3], mjtNum quat[4], mjtNum jacp_q[9], mjtNum jacr_q[9],
                          const mjtNum q[3], mjtNum sigma);

// Same, from chamber lengths l (3 x 1, m); jacp, jacr (3 x 3, column-major) are with respect to
// the chamber lengths (m/m and rad/m). Any output may be NULL.
void cusp_pcc_pose(mjtNum pos[3], mjtNum quat[4], mjtNum jacp[9], mjtNum jacr[9],
                   const mjtNum l[3], mjtNum sigma, mjtNum d);

// ---- Chain of sections ------------------------------------------------------------------------

// Pose at arc fraction sigma of section `section` (0-based) of a chain of nsection sections,
// each starting at the tip frame of the previous one, in the base frame of the first section.
// l: chamber lengths (3*nsection, m, section-major); d: chamber offsets (nsection, m).
// jacp, jacr (3 x 3*nsection, column-major, ld 3; may be NULL): derivatives with respect to all
// chamber lengths (columns of later sections are zero). Returns 0, or -1 on a bad index or
// nsection > CUSP_PCC_MAXSECTION.
int cusp_pcc_chain_pose(mjtNum pos[3], mjtNum quat[4], mjtNum* jacp, mjtNum* jacr,
                        const mjtNum* l, const mjtNum* d, int section, mjtNum sigma,
                        int nsection);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_MODELS_PCC_H_
