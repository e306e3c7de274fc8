// Closed form of the one-contact LCP (CUSP 10-13): a single disk point on a plane or on any body,
// solved exactly by its few possible active sets instead of the conditioning pipeline and a
// backend (no assembly of A, no Ruiz, no rank selection, no LAPACK call).
//
// The contact's Delassus block in its (normal, t, o) frame,
//   Wc = [a  p^T; p  T]   (a = W_nn + eps_n: Tikhonov on the normal row as the pipeline adds it,
//                          p = (W_nt, W_no), T = [W_tt W_to; W_to W_oo]),
// friction direction k: d_k = (dirs[2k], dirs[2k+1]) in the (t, o) plane, the friction
// resultant tau = sum_k beta_k d_k, and the rows of the LCP in z = (fn, beta_1..r, gamma):
//   w_n = a fn + p.tau + bn,   w_k = d_k.(p fn + T tau) + bt_k + gamma,   w_c = mu fn - sum beta.
// At a solution the friction impulses sit where d_k.(p fn + T tau) + bt_k is least: on one
// direction or on two neighbouring ones (the directions ordered by angle, as the plugin makes
// them). So the answer is one of: apart (fn = 0); sticking with the impulse on the sector of two
// neighbouring directions (gamma = 0; 3 x 3 solve); sliding on one direction or on the edge of two
// (gamma > 0, sum beta = mu fn; 1 x 1 or 2 x 2 solve). Each candidate is checked on the whole
// problem (natural residual <= tol); the first that passes is the answer, the sector suggested by
// the unconstrained sticking impulse tried first, then sliding on that sector's edge and on its
// two directions.
#ifndef CUSP_SOLVER_CONTACT_CLOSED_H_
#define CUSP_SOLVER_CONTACT_CLOSED_H_

#include <mujoco/mjtype.h>

#include "solver/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

// One contact, r friction directions (0: frictionless, z = fn alone).
//   z    (r + 2, or 1 if r = 0)  out: (fn, beta, gamma), the answer when 1 is returned
//   w    (same)                  out: A z + b of that answer (eps_n included)
//   info                         out: residual (natural map, eps_n included), siconos_error,
//                                     complementarity (as cusp_lcp_residual on the assembled A)
//   res_original                 out: the natural residual without eps_n (what the physics sees)
//   wc   (6)                     W_nn, W_nt, W_no, W_tt, W_to, W_oo (eps_n not included)
//   bt   (r)                     free tangential velocity along each direction
// Returns 1 when a candidate meets tol, 0 when none does (degenerate data: the caller solves the
// problem another way; z, w, info then hold nothing of use).
int cusp_contact1_solve(mjtNum* z, mjtNum* w, cuspLcpInfo* info, mjtNum* res_original,
                        const mjtNum wc[6], mjtNum bn, const mjtNum* bt, mjtNum mu,
                        const mjtNum* dirs, int r, mjtNum eps_n, mjtNum tol);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_CONTACT_CLOSED_H_
