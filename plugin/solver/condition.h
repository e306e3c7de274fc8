// Contact LCPs of the CUSP paper (eqs 10-13) and their three-stage conditioning (CUSP III-D):
//   stage 1  inertial rank selection: S^T = L^-1 Jn^T (Meff = L L^T), QR with column pivoting
//            (dgeqp3); contacts whose |R_ii| <= eps_rank |R_11| are dropped with their friction
//            rows;
//   stage 2  Ruiz equilibration of (A, b): a few passes of l2 row/column scaling,
//            A' = Dr A Dc, b' = Dr b, solved for z' and unscaled z = Dc z' (positive diagonal
//            scalings keep complementarity);
//   stage 3  Tikhonov: eps_W added to the diagonal of the (scaled) normal rows only.
//
// Unknowns per kept contact i (block size s = r + 2, or 1 when r = 0 / frictionless):
//   z_i = (fn_i, beta_i1..beta_ir, gamma_i),  w_i = (v_n, v_t + gamma e, mu fn - e^T beta)
//   A_ij = [W_nn W_nt 0; W_tn W_tt e*delta_ij; mu_i*delta_ij -e^T*delta_ij 0],
//   W = J Meff^-1 J^T with J the stacked normal and friction-direction rows.
//   b_i = (bn_i, bt_i, 0).
#ifndef CUSP_SOLVER_CONDITION_H_
#define CUSP_SOLVER_CONDITION_H_

#include <stddef.h>

#include <mujoco/mjtype.h>

#include "solver/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspContactLcp_ {
  int nv;               // generalized velocities (columns of the Jacobians)
  int m;                // contacts
  int r;                // friction directions per contact (0 = frictionless: z_i = fn_i only)
  const mjtNum* Meff;   // (nv x nv) column-major: SPD effective inertia, or its lower Cholesky
  int meff_is_factor;   //   factor L (Meff = L L^T) when meff_is_factor != 0 (upper part ignored)
  const mjtNum* Jn;     // (m x nv) row-major: row i = normal Jacobian of contact i
  const mjtNum* Jt;     // (m*r x nv) row-major: row i*r+k = d_k^T J_t,i (NULL if r = 0, or if
                        //   Jto and dirs give the rows instead)
  const mjtNum* mu;     // (m) friction coefficients (NULL if r = 0)
  const mjtNum* bn;     // (m) free normal velocity, gap stabilisation included
  const mjtNum* bt;     // (m*r) free tangential velocity along each direction (NULL if r = 0)
  const mjtNum* Jto;    // (2m x nv) row-major, optional: rows 2i, 2i+1 = contact i's tangent rows
                        //   t_i, o_i, where friction row (i,k) = dirs[2k] t_i + dirs[2k+1] o_i;
                        //   with dirs, 3 rows a contact are whitened instead of 1 + r, and the
                        //   warm path never forms the r friction columns (Jt may then be NULL)
  const mjtNum* dirs;   // (2r) cos, sin of friction direction k in the (t, o) plane (with Jto)
  const int* pair;      // (m) optional: contacts of one geom pair share a value (the points of a
                        //   disk on one obstacle: a kept one may inherit a dropped one's warm
                        //   start); NULL: no inheritance
} cuspContactLcp;

typedef struct cuspConditionOptions_ {
  int rank_select;          // stage 1 on/off (default 1)
  mjtNum eps_rank;          // stage 1 relative threshold on |R_ii| / |R_11| (default 1e-6)
  int ruiz;                 // stage 2 on/off (default 1)
  int ruiz_passes;          // stage 2 passes (default 5)
  mjtNum ruiz_skip_spread;  // stage 2 is skipped when the diagonal of the normal and friction
                            //   rows and the cone rows' unit entries lie within this factor of
                            //   each other (already equilibrated: Ruiz's factors would stay near
                            //   1); <= 1 never skips (default 32; disk_drop: 19, a
                            //   resting carrier puck: 4.8)
  int tikhonov;             // stage 3 on/off (default 1)
  mjtNum eps_w;             // stage 3 diagonal shift on scaled normal rows (default 1e-10)
  int estimate_condition;   // compute rcond before/after (two extra LU, default 1)
  cuspLcpBackendId backend; // LCP backend (default CUSP_LCP_CHAIN)
  cuspLcpOptions lcp;       // backend options (warm_start: fn/beta/gamma passed in are used)
  int fallback;             // when a backend other than the chain fails, run the chain (without
                            //   that backend) from the same start and keep whichever answer has
                            //   the smaller residual (default 0 here; the plugin's default is 1)
  int finish;               // when the backends (and fallback) stop short of tol, one active-set
                            //   solve from their answer, then up to 5 active-set rounds with
                            //   basic solutions, then Lemke (ties by basic values); an answer is kept
                            //   only if it meets tol (default 1)
  int closed_form;          // a problem of one contact (frictionless, or with its friction rows
                            //   as (t, o) rows and directions) is solved by its closed form
                            //   (contact_closed.h) when its normal row is not zero, with no
                            //   stage run and no backend; the pipeline if the closed form finds
                            //   no candidate within tol (default 1)
} cuspConditionOptions;

typedef struct cuspConditionInfo_ {
  int detected;             // m
  int kept;                 // contacts kept by stage 1 (m when stage 1 is off)
  int dropped;              // m - kept
  int n_lcp;                // size of the LCP actually solved (kept * s)
  mjtNum rcond_before;      // 1-norm reciprocal condition estimate of the normal (Delassus)
  mjtNum rcond_after;       //   block W_nn: of all m contacts unconditioned, and of the final
                            //   (kept, scaled, regularised) block; -1 if off. The whole A is
                            //   singular by construction whenever r is even (d_k = -d_k+r/2),
                            //   so its own rcond says nothing about the conditioning stages.
  mjtNum residual_original; // natural residual of the unscaled z on the reduced problem without
                            //   Tikhonov (what the physics sees)
  cuspLcpInfo lcp;          // the backend's report on the conditioned problem (of the fallback
                            //   chain when its answer was taken; backend "warm start" when the
                            //   warm start already solved it and no backend ran)
  int ruiz_applied;         // 1 if stage 2 scaled the problem (0: off, or skipped as unneeded)
  int rank_qr;              // 1 if stage 1 needed the pivoted QR (near-dependent normal rows);
                            //   0: the Cholesky screening decided, or stage 1 is off
  int fell_back;            // 1 if the chosen backend failed and the fallback chain ran
  int closed_form;          // 1 if the one-contact closed form gave the answer
  int finish;               // how the finish solved a problem the backends stopped short on:
                            //   1 one active-set solve from their answer (the rows with z > 0
                            //   as equalities), 2 active-set rounds with basic solutions from
                            //   it, 3 Lemke with ties by basic values; 0 not needed or not solved
} cuspConditionInfo;

cuspConditionOptions cusp_condition_default_options(void);

// Bytes of work memory for cusp_contact_solve (depends on the backend in options).
size_t cusp_contact_worksize(int nv, int m, int r, const cuspConditionOptions* opt);

// Condition and solve one contact LCP. Stage 1 is decided by a pivoted Cholesky screening of the
// normal block, by the QR when a decision is close; a problem that fails with the screen's
// selection is solved once more, from zero, with the QR's selection if that differs (ties among
// exactly dependent contacts are broken by rounding, and the choice can decide solvability).
//   fn    (m)    out normal impulses (0 for dropped contacts); in: warm start if lcp.warm_start
//   beta  (m*r)  out friction-direction impulses (may be NULL if r = 0)
//   gamma (m)    out cone slacks (may be NULL)
//   keep  (m)    out 1 kept / 0 dropped (may be NULL)
cuspLcpStatus cusp_contact_solve(mjtNum* fn, mjtNum* beta, mjtNum* gamma, int* keep,
                                 cuspConditionInfo* info, const cuspContactLcp* c,
                                 const cuspConditionOptions* opt, void* work, size_t work_bytes);

// Stage 1 alone: indices (ascending) of the kept contacts into sel (m); returns their count.
// L (nv x nv) lower Cholesky factor of Meff; work: 2 nv*m + 3m + (m+1)*64 mjtNum and 2m int.
// bn (m, or NULL): contacts with bn < 0 (violated by the free motion) are selected first, by
// pivoted QR among themselves, then the others by pivoted QR on what is left, so a dependent set
// keeps the contacts that must push and drops those that need no impulse; the threshold stays
// eps_rank times the largest column norm (= |R_11| of plain pivoting). NULL, or all or none
// violated: plain pivoted QR.
size_t cusp_rank_select_worksize(int nv, int m);
int cusp_rank_select(int* sel, const mjtNum* L, const mjtNum* Jn, const mjtNum* bn, int nv, int m,
                     mjtNum eps_rank, void* work);

// Assemble A (N x N, lda >= N) and b (N), N = k*s, for contacts sel[0..k-1] (NULL = all m, k = m)
// from L (nv x nv, lower Cholesky factor of Meff).
size_t cusp_contact_assemble_worksize(int nv, int k, int r);
void cusp_contact_assemble(mjtNum* A, int lda, mjtNum* b, const cuspContactLcp* c,
                           const mjtNum* L, const int* sel, int k, void* work);

// Stage 2 alone: scale A (n x n, lda) and b (n, may be NULL) in place; dr, dc (n) out: the
// accumulated row and column scalings (A_scaled = diag(dr) A diag(dc)); scratch (2 n).
void cusp_ruiz(mjtNum* A, mjtNum* b, mjtNum* dr, mjtNum* dc, int n, int lda, int passes,
               mjtNum* scratch);

// 1-norm reciprocal condition estimate of A (n x n, lda); work: n*n + 5n mjtNum and n int.
// Returns 0 for an exactly singular A.
size_t cusp_rcond_worksize(int n);
mjtNum cusp_rcond(const mjtNum* A, int n, int lda, void* work);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_CONDITION_H_
