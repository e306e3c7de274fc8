// Convex quadratic programs with non-negative unknowns beside free ones,
//   min 0.5 x^T W x + q^T x   subject to   x_i >= 0 for every i with bounded[i] != 0,
// W (n x n) symmetric positive SEMI-definite, so the minimiser need not be unique. Their KKT
// conditions are the mixed LCP
//   0 <= x_i _|_ g_i >= 0 (bounded i),   g_i = 0 (free i),   g = W x + q,
// which is the rigid-contact problem of an island whose contacts all stick: x the row impulses
// (N s; vertex normal rows bounded, friction rows free), W the Delassus matrix, q the rows' free
// velocities with their gap terms (m/s), g the rows' velocities after the impulse.
//
// Method: primal active set from a feasible start, on the problem scaled to a unit diagonal.
// Each step solves the free unknowns' rows W_FF d = -g_F by the minimum-norm least-squares
// solution (LAPACK's complete orthogonal factorisation); W_FF is singular on a hyperstatic
// island (several contacts on one body), and where g_F is not in its range the residual of that
// solve is a direction of zero curvature along which the objective falls without bound, a ray
// (the impulses redistribute over a face whose vertices' gap terms are not those of a rigid
// motion: the body rests on fewer of them). A step goes along d, or along the ray, until the
// first bounded unknown reaches 0 (ratio test), which joins the active set; after a full step an
// active unknown with g_i < 0 leaves it. The answer is exact to rounding on its active set:
// no regularisation is left in it. Nothing here calls MuJoCo; memory is caller-provided.
#ifndef CUSP_SOLVER_QP_ACTIVE_H_
#define CUSP_SOLVER_QP_ACTIVE_H_

#include <stddef.h>

#include <mujoco/mjtype.h>

#include "solver/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspQpInfo_ {
  cuspLcpStatus status;  // SOLVED: residual <= tol; MAX_ITER; NUMERICAL (a ray nothing bounds:
                         // no minimiser, the mixed LCP has no solution; or LAPACK failed)
  int iterations;        // active-set steps
  mjtNum residual;       // natural residual of the mixed LCP at x, in the units of q:
                         // max(max_bounded |min(x_i, g_i)|, max_free |g_i|)
} cuspQpInfo;

size_t cusp_qp_active_worksize(int n);

// x (n): in = start (negative bounded entries are raised to 0), out = the answer (the last
// iterate if not solved). W (ldw x n, column-major, symmetric: both triangles read), q (n),
// bounded (n). tol: the residual of success (units of q); max_iter: active-set steps (<= 0:
// 4 n + 10). Returns info->status.
cuspLcpStatus cusp_qp_active(mjtNum* x, cuspQpInfo* info, const mjtNum* W, int ldw,
                             const mjtNum* q, const int* bounded, int n, mjtNum tol, int max_iter,
                             void* work, size_t work_bytes);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_QP_ACTIVE_H_
