// Contact-space model order reduction (Goury, Carrez, Duriez): the impulses of an LCP
//   0 <= z  _|_  w = W z + b >= 0                                   (n unknowns)
// are sought in the cone of a non-negative basis B (n x k, learned offline from snapshots by
// NNMF, python/cusp/reduction.py): z = B a, a >= 0, which gives the k-dimensional LCP
//   0 <= a  _|_  B^T W B a + B^T b >= 0.
// Its solution only satisfies the projected conditions B^T w >= 0, so the full problem's rows are
// checked afterwards: when some row's w_i is below -violation_tol (a contact left approaching,
// i.e. penetrating, by more than the tolerance) the full problem is solved instead (the
// fallback). Nothing here calls MuJoCo; memory is caller-provided (*_worksize).
#ifndef CUSP_SOLVER_REDUCTION_H_
#define CUSP_SOLVER_REDUCTION_H_

#include <mujoco/mjtype.h>
#include <stddef.h>

#include "solver/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspReducedLcp_ {
  int n, k;         // full and reduced sizes (k >= 1)
  const mjtNum* W;  // (ldw x n) column-major, the full Delassus matrix
  int ldw;          // >= max(1, n)
  const mjtNum* b;  // (n) free velocity of the rows
  const mjtNum* B;  // (ldb x k) column-major, non-negative basis
  int ldb;          // >= max(1, n)
} cuspReducedLcp;

typedef struct cuspReductionOptions_ {
  cuspLcpBackendId backend;  // solves the reduced and, on fallback, the full problem
  cuspLcpOptions lcp;
  mjtNum violation_tol;  // fallback when min_i w_i < -violation_tol (units of w)
  int fallback;          // 0: return the reduced answer even when it violates
} cuspReductionOptions;

typedef struct cuspReductionInfo_ {
  cuspLcpStatus status;       // of the answer returned
  int used_full;              // 1: the full problem was solved (fallback)
  mjtNum violation;           // max(0, -min_i w_i) of the reduced answer on the full rows
  cuspLcpInfo reduced, full;  // backend infos (full: only when used_full)
} cuspReductionInfo;

cuspReductionOptions cusp_reduction_default_options(void);

size_t cusp_reduction_worksize(int n, int k, cuspLcpBackendId backend);

// z (n): out, the impulses (B a, or the full solution on fallback); a (k): out, the
// coefficients (0 on fallback); w (n): out, W z + b. Returns info->status.
cuspLcpStatus cusp_reduction_solve(mjtNum* z, mjtNum* a, mjtNum* w, cuspReductionInfo* info,
                                   const cuspReducedLcp* prob, const cuspReductionOptions* opt,
                                   void* work, size_t work_bytes);

// The same problem with W = J Meff^-1 J^T given by its factors, never formed: J (n x nv,
// row-major) and L (nv x nv, column-major, lower Cholesky factor of Meff = L L^T). The reduced
// matrix is G^T G with G = L^-1 (J^T B) (k triangular solves instead of n), and W z + b takes one
// more solve. With opt->fallback the full problem is formed (W, n x n) only when needed.
typedef struct cuspReducedLcpFactored_ {
  int n, k, nv;
  const mjtNum* J;  // (n x nv) row-major
  const mjtNum* L;  // (nv x nv) column-major lower Cholesky factor of Meff
  const mjtNum* b;  // (n)
  const mjtNum* B;  // (ldb x k) column-major, non-negative
  int ldb;          // >= max(1, n)
} cuspReducedLcpFactored;

size_t cusp_reduction_factored_worksize(int n, int k, int nv, int fallback,
                                        cuspLcpBackendId backend);
cuspLcpStatus cusp_reduction_solve_factored(mjtNum* z, mjtNum* a, mjtNum* w,
                                            cuspReductionInfo* info,
                                            const cuspReducedLcpFactored* prob,
                                            const cuspReductionOptions* opt, void* work,
                                            size_t work_bytes);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_SOLVER_REDUCTION_H_
