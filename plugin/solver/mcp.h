// Mixed complementarity problems (box-constrained nonlinear complementarity) solved by the
// semismooth Newton method on the Fischer-Burmeister reformulation with a Levenberg-Marquardt
// safeguard and an Armijo line search on the merit psi = 0.5 ||Phi||^2.
//
// Problem: find z (n), lo <= z <= hi (bounds may be -INFINITY / +INFINITY; lo = -inf, hi = +inf
// gives a free variable with F_i(z) = 0), such that for every i
//   z_i = lo_i => F_i(z) >= 0,   z_i = hi_i => F_i(z) <= 0,   lo_i < z_i < hi_i => F_i(z) = 0.
// Reformulation (Billups): Phi_i = phi(z_i - lo_i, phi(hi_i - z_i, -F_i)),
//   phi(a, b) = sqrt(a^2 + b^2) - a - b, with the one-sided and free cases as its limits.
#ifndef CUSP_SOLVER_MCP_H_
#define CUSP_SOLVER_MCP_H_

#include <stddef.h>

#include <mujoco/mjtype.h>

#include "solver/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

// F (n) := F(z); return 0 on success, nonzero aborts the solve (status NUMERICAL).
typedef int (*cuspMcpResidualFn)(mjtNum* F, const mjtNum* z, int n, void* user);
// J (ldj x n, column-major) := dF/dz at z, J(i,j) = dF_i/dz_j; return 0 on success.
typedef int (*cuspMcpJacobianFn)(mjtNum* J, int ldj, const mjtNum* z, int n, void* user);

// Band Jacobian: J (ldj x n, band storage of solver/lapack_shim.h at offset ku, ldj = kl + ku + 1)
// := dF/dz at z, J(i,j) = dF_i/dz_j at J[ku + i - j + j ldj]; every entry outside the band is 0.
typedef int (*cuspMcpJacobianBandFn)(mjtNum* J, int ldj, const mjtNum* z, int n, void* user);

// Structured Newton step: d (n) := -(Da + Db J(z))^-1 phi and hd (n) := (Da + Db J(z)) d, for the
// diagonal matrices Da = diag(da), Db = diag(db) of the Fischer-Burmeister derivatives at z and
// J = dF/dz there, without forming J (a problem whose Jacobian has a structure the dense LU does
// not see: a contact island's W = Jr Mr^-1 Jr^T through its bodies). Return 0 on success; nonzero
// (the structure does not apply at z, or the system is singular there) makes the solver take
// this iteration's dense Newton step instead.
typedef int (*cuspMcpNewtonSolveFn)(mjtNum* d, mjtNum* hd, const mjtNum* phi, const mjtNum* da,
                                    const mjtNum* db, const mjtNum* z, int n, void* user);

typedef struct cuspMcpProblem_ {
  int n;                        // number of unknowns
  const mjtNum* lo;             // (n) lower bounds, -INFINITY allowed; NULL = all 0
  const mjtNum* hi;             // (n) upper bounds, +INFINITY allowed; NULL = all +INFINITY
  cuspMcpResidualFn residual;   // F
  cuspMcpJacobianFn jacobian;   // dF/dz (any element of the generalized Jacobian if nonsmooth)
  void* user;                   // passed to both callbacks
  // optional: a Jacobian with kl sub- and ku superdiagonals (a chain of bodies ordered along
  // the chain); when set, the Newton steps work on band matrices (O(n (kl + ku)^2) a step instead
  // of O(n^3)) and `jacobian` is not called
  cuspMcpJacobianBandFn jacobian_band;
  int kl, ku;
  // optional (dense mode only): the Newton step through the problem's own structure, tried
  // before the dense LU of each iteration; the Jacobian is formed only when it declines or its
  // step is not accepted by the line search (then the Levenberg-Marquardt fallbacks follow)
  cuspMcpNewtonSolveFn newton_solve;
} cuspMcpProblem;

typedef struct cuspMcpOptions_ {
  mjtNum tol;         // success: natural residual max_i |z_i - mid(lo_i, hi_i, z_i - F_i)| <= tol
  int max_iter;       // Newton iterations (default 100)
  int warm_start;     // nonzero: z passed in is the initial guess (projected onto the box)
  mjtNum lm_min;      // smallest Levenberg-Marquardt damping, relative to max diag(H^T H)
  mjtNum armijo;      // sufficient-decrease constant sigma (default 1e-4)
  int max_backtrack;  // line-search halvings per iteration (default 30)
  int nonmonotone;    // the Armijo test's reference merit: the largest of the last this many
                      // iterates' (1: monotone, the default; at most CUSP_MCP_MAX_NONMONOTONE)
  mjtNum work_budget; // work units of the run (lcp.h, "Work budget"); 0 = CUSP_SOLVE_WORK_BUDGET,
                      // < 0 = none
} cuspMcpOptions;

typedef struct cuspMcpInfo_ {
  cuspLcpStatus status;  // same status codes as the LCP solvers
  const char* message;   // static detail string
  int iterations;        // Newton iterations
  int lm_steps;          // iterations that used the Levenberg-Marquardt step
  int structured_steps;  // iterations that took the problem's newton_solve step
  int evaluations;       // residual evaluations
  mjtNum residual;       // natural-map residual at the returned z
  mjtNum merit;          // 0.5 ||Phi||^2 at the returned z
  mjtNum seconds;
} cuspMcpInfo;

enum { CUSP_MCP_MAX_NONMONOTONE = 16 };

// Defaults: tol 1e-10, max_iter 100, cold start, lm_min 1e-14, armijo 1e-4, 30 backtracks,
// monotone line search, the default work budget.
cuspMcpOptions cusp_mcp_default_options(void);

size_t cusp_mcp_worksize(int n);
// Workspace of a problem (its band, if it has one; cusp_mcp_worksize(n) for a dense one).
size_t cusp_mcp_problem_worksize(const cuspMcpProblem* prob);

// z (n): in = initial guess if warm_start; out = solution (best iterate on failure).
// F (n): out = F(z) at the returned z (may be NULL).
cuspLcpStatus cusp_mcp_fbnewton(mjtNum* z, mjtNum* F, cuspMcpInfo* info,
                                const cuspMcpProblem* prob, const cuspMcpOptions* opt,
                                void* work, size_t work_bytes);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_MCP_H_
