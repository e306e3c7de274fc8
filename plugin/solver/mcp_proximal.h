// Proximal-point outer loop around the semismooth FB Newton MCP solver (mcp.h), for problems whose
// Jacobian is singular at the solution: hyperstatic rigid-contact islands (several contacts on one
// object: the Delassus W is singular and the impulses are not unique), where plain FB Newton
// crawls along the flat set of solutions until its iteration cap.
//
// Outer step k (anchor a = z_k, the last inner solution): solve the regularised MCP
//   F_rho(z) = F(z) + rho * scale * (z - a)   on the same box
// (for a contact problem: W replaced by W + rho scale I, free velocity shifted by -rho scale a),
// whose Jacobian is that of F plus rho scale I, then re-anchor at its solution. The problem does
// this itself through a callback (only it knows which unknowns are impulses and what `scale` is):
//   prox(user, rho, anchor)   the residual/Jacobian callbacks evaluate F_rho from now on;
//   prox(user, 0, NULL)       they evaluate the original F again.
// rho is dimensionless: relative to the problem's own scale (e.g. the mean diagonal of W).
//
// The returned status and residual are always those of the ORIGINAL problem at the returned z
// (natural map max_i |z_i - mid(lo_i, hi_i, z_i - F_i(z))| <= opt->tol for CUSP_LCP_SOLVED): the
// regularisation vanishes at convergence because the anchor follows the iterates. rho adapts:
// divided by rho_decrease after an outer step that solved its inner problem, multiplied by
// rho_increase (and the step retried from the same anchor) when an inner solve fails. A warm start
// that already solves the original problem returns at once with 0 iterations. No allocation inside
// (caller workspace), deterministic.
#ifndef CUSP_SOLVER_MCP_PROXIMAL_H_
#define CUSP_SOLVER_MCP_PROXIMAL_H_

#include <stddef.h>

#include <mujoco/mjtype.h>

#include "solver/mcp.h"

#ifdef __cplusplus
extern "C" {
#endif

// Switch the problem's callbacks to the regularised problem with (rho, anchor (n)), or back to the
// original problem with (0, NULL). The anchor pointer stays valid until the next call.
typedef void (*cuspMcpProxFn)(void* user, mjtNum rho, const mjtNum* anchor);

typedef struct cuspMcpProxOptions_ {
  mjtNum rho0;              // first regularisation (dimensionless, default 1e-3)
  mjtNum rho_min;           // rho never goes below this (default 1e-10)
  mjtNum rho_per_residual;  // > 0: the first rho is at most this times the starting residual (a
                            // warm start close to the answer, whose active set is already the
                            // answer's, needs no trust region: a tall resting stack's soft modes
                            // converge at a rate of about rho per outer step) (default 0: rho0)
  mjtNum rho_max;           // an inner failure at rho_max ends the solve (default 1e3)
  mjtNum rho_decrease;      // rho /= this after an outer step whose inner solve succeeded (10)
  mjtNum rho_increase;      // rho *= this after an inner failure (10)
  mjtNum rho_decrease_after_failure;  // rho_decrease once an inner solve of this call has failed
                            // (2): the anchor must first come closer to the answer before a rho
                            // as small as the failed one can work again
  int max_outer;            // outer (proximal) steps, failed ones included (default 60)
  int stall_outer;          // > 0: the loop ends ("stalled") when that many outer steps have not
                            // lowered the best residual below stall_factor times what it was
                            // before them (default 0: never)
  mjtNum stall_factor;      // see above (default 0.5)
  mjtNum inner_tol_factor;  // inner tolerance = max(inner_tol_factor * tol,
                            //   inner_tol_rel * original residual at the anchor) (default 0.1)
  mjtNum inner_tol_rel;     // see above (default 1e-2)
  int inner_max_iter;       // Newton iterations per inner solve (default 30; opt->max_iter is
                            // ignored, opt->work_budget applies to each inner solve)
  int max_iterations;       // Newton iterations over all inner solves (default 400)
  int plain_first_iter;     // plain Newton steps on the original problem before the loop (0: none;
                            // where the problem is not degenerate they converge quadratically)
  int polish_iter;          // plain Newton steps on the original problem from the best iterate
                            // when the loop has not solved it (0: none), kept if they improve it;
                            // reserved out of max_iterations
  int plain_last_iter;      // plain Newton steps on the original problem from the starting point
                            // when the loop and the polish have not solved it (0: none), kept if
                            // they improve the best iterate; a budget of their own (the loop can
                            // stall where the plain Newton's damped path goes through)
} cuspMcpProxOptions;

typedef struct cuspMcpProxInfo_ {
  cuspMcpInfo mcp;       // of the ORIGINAL problem at the returned z: status, message, residual,
                         // merit; iterations / lm_steps / evaluations summed over all inner
                         // solves; seconds of the whole call
  int outer;             // outer steps taken (0: the warm start already solved)
  int inner_iterations;  // Newton iterations over all inner solves (= mcp.iterations)
  int inner_failures;    // inner solves that missed their tolerance
  mjtNum rho;            // regularisation of the last inner solve (0 if none ran)
  mjtNum rho_peak;       // largest rho used
} cuspMcpProxInfo;

// Defaults listed in cuspMcpProxOptions.
cuspMcpProxOptions cusp_mcp_proximal_default_options(void);

size_t cusp_mcp_proximal_worksize(int n);
// Workspace of a problem (its band, if it has one).
size_t cusp_mcp_proximal_problem_worksize(const cuspMcpProblem* prob);

// z (n): in = initial guess if opt->warm_start (else 0), projected onto the box; out = solution
// (best iterate of the original problem on failure). F (n): out = original F(z) (may be NULL).
// prob: the problem whose callbacks prox switches; opt: tolerance (of the original problem),
// warm_start, and the Newton settings of every inner solve; popt NULL = defaults.
// On return the problem has been switched back to the original (prox(user, 0, NULL)).
cuspLcpStatus cusp_mcp_proximal(mjtNum* z, mjtNum* F, cuspMcpProxInfo* info,
                                const cuspMcpProblem* prob, cuspMcpProxFn prox,
                                const cuspMcpOptions* opt, const cuspMcpProxOptions* popt,
                                void* work, size_t work_bytes);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_MCP_PROXIMAL_H_
