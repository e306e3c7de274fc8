// Discrete 3D frictional contact (FC3D, Siconos' FrictionContactProblem): find reactions r and
// velocities u (3 per contact, normal first) with
//   u = W r + q,   per contact i:  0 <= r_n  _|_  u_n >= 0,
//                                  r_t = Proj_{|.| <= mu_i r_n}(r_t - k_i u_t)
// (isotropic Coulomb cone, no torsion; k_i = 1 / mean(W_t1t1, W_t2t2) of contact i, the step of
// its natural map: per contact, as cusp's patches have their own, since contacts on light and
// heavy bodies share islands; one k = 1 / mean W_nn for all cost 40 instead of 11 Newton
// iterations on OneObject, 91 instead of 80 on BoxesStack). At a
// solution this is de Saxce's cone complementarity K_i  r_i _|_ u_i + mu_i |u_t,i| e_n
// in K_i*: stick (u = 0, r in K), slide (u_n = 0, r_t = -mu r_n u_t / |u_t|) or take-off (r = 0).
//
// Method: the contacts are split into islands (connected components of the nonzero 3 x 3 blocks
// of W); each island is one MCP in the scaled unknowns z = r / p (p = k max |q| over the island,
// k = 1 / its mean W_nn: O(1) numbers for the Newton solver) with F_n = u_n / (W_nn,i p) and
// F_t = z_t - Proj(z_t - k_i u_t / p),
// solved by cusp_mcp_proximal around the FB Newton solver (W is often singular: hyperstatic
// stacks, several contacts per body). The proximal step regularises W to W + (rho / k) I about the
// last reactions. After the islands, Siconos' error measure of the whole problem is checked and
// the islands re-polished with a tighter tolerance if it is above tol.
#ifndef CUSP_SOLVER_FC3D_H_
#define CUSP_SOLVER_FC3D_H_

#include <stddef.h>

#include <mujoco/mjtype.h>

#include "solver/mcp.h"
#include "solver/mcp_proximal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspFc3dProblem_ {
  int nc;            // number of contacts (>= 0)
  const mjtNum* W;   // (ldw x 3 nc) column-major Delassus matrix (need not be symmetric)
  int ldw;           // leading dimension of W (>= 3 nc)
  const mjtNum* q;   // (3 nc) free velocity
  const mjtNum* mu;  // (nc) friction coefficients (>= 0)
} cuspFc3dProblem;

typedef struct cuspFc3dOptions_ {
  mjtNum tol;               // success: every island's natural residual (scaled units) <= tol
                            // and Siconos' relative error of the whole problem <= tol (1e-8)
  int warm_start;           // nonzero: r passed in is the initial guess
  int max_polish;           // re-solves with a tighter tolerance when Siconos' error is above
                            // tol although the islands converged (default 3)
  cuspMcpOptions mcp;       // Newton settings of the inner solves (tol is set from tol)
  cuspMcpProxOptions prox;  // proximal loop
} cuspFc3dOptions;

typedef struct cuspFc3dInfo_ {
  cuspLcpStatus status;  // CUSP_LCP_SOLVED, or the first failure of an island
  const char* message;   // static detail string
  int islands;           // independent sub-problems
  int largest;           // contacts in the largest island
  int iterations;        // Newton iterations over all islands and outer steps
  int outer;             // proximal steps over all islands
  int polish;            // re-solves needed by Siconos' measure
  mjtNum residual;       // largest natural residual of the islands' MCPs (scaled, dimensionless)
  mjtNum error;          // Siconos' relative error at the returned r (cusp_fc3d_error)
  mjtNum seconds;
} cuspFc3dInfo;

// Defaults: tol 1e-8, cold start, 3 polish rounds, cusp_mcp_default_options(),
// cusp_mcp_proximal_default_options().
cuspFc3dOptions cusp_fc3d_default_options(void);

// Bytes of work that always suffice for nc contacts (sized as if all were one island; a solve
// whose largest island is smaller needs less and checks what it needs).
size_t cusp_fc3d_worksize(int nc);

// r (3 nc): in = initial guess if opt->warm_start; out = reactions. u (3 nc): out = W r + q (may
// be NULL). Returns info->status.
cuspLcpStatus cusp_fc3d_solve(mjtNum* r, mjtNum* u, cuspFc3dInfo* info,
                              const cuspFc3dProblem* prob, const cuspFc3dOptions* opt,
                              void* work, size_t work_bytes);

// Siconos' error measure (fc3d_compute_error): u := W r + q (3 nc, required), returns
//   sqrt(sum_i |r_i - Proj_{K_i}(r_i - u^_i)|^2) / max(|q|, |r|, |u|)   (2-norms; not divided if
// that maximum is ~0), u^_i = u_i + mu_i |u_t,i| e_n the de Saxce velocity.
mjtNum cusp_fc3d_error(mjtNum* u, const mjtNum* r, const cuspFc3dProblem* prob);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_FC3D_H_
