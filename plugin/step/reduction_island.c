// Contact-space reduction of a disk island (see reduction_island.h).
#include "step/reduction_island.h"

#include <string.h>

#include "solver/reduction.h"

cuspReductionOutcome cusp_reduction_island_solve(mjtNum* fn, mjtNum* beta, mjtNum* gamma,
                                                 cuspReductionIslandInfo* info,
                                                 const cuspContactLcp* lcp, const cuspContact* c,
                                                 int n, const cuspConfig* cfg, mjtNum h,
                                                 mjData* d) {
  memset(info, 0, sizeof(*info));
  const cuspReductionBasis* rb = &cfg->reduction;
  int k = rb->k, nv = lcp->nv;
  if (!lcp->meff_is_factor || nv < 1) {  // the factored path needs L (the driver always has it)
    info->outcome = CUSP_REDUCTION_FAILED;
    return info->outcome;
  }
  // MuJoCo stops the program when its arena overflows: a problem that may not fit is left to
  // the full solve (counted as a fallback) instead
  size_t need = sizeof(int) * ((size_t)n + rb->npair + k) +
                sizeof(mjtNum) * ((size_t)n * k + 2 * (size_t)n + k) +
                cusp_reduction_factored_worksize(n, k, nv, 0, CUSP_LCP_LEMKE) +
                16 * 1024;  // alignment, marks
  size_t used = d->pstack + d->parena;
  if ((size_t)d->narena < used || (size_t)d->narena - used < need) {
    info->outcome = CUSP_REDUCTION_FAILED;
    return info->outcome;
  }
  mj_markStack(d);
  int* row = mj_stackAllocInt(d, n);
  int* points = mj_stackAllocInt(d, rb->npair);  // contact points of each pair in the island
  int* mode = mj_stackAllocInt(d, k);            // active modes: basis column of each
  for (int p = 0; p < rb->npair; p++) points[p] = 0;
  for (int i = 0; i < n; i++) {
    row[i] = cusp_reduction_basis_row(rb, c[i].geom[0], c[i].geom[1]);
    if (row[i] < 0) {
      info->outcome = CUSP_REDUCTION_OUTSIDE;
      mj_freeStack(d);
      return info->outcome;
    }
    points[row[i]]++;
  }
  int ka = 0;
  for (int j = 0; j < k; j++) {
    int active = 0;
    for (int i = 0; i < n && !active; i++) active = rb->B[(size_t)row[i] * k + j] > 0;
    if (active) mode[ka++] = j;
  }
  info->modes = ka;
  if (ka == 0) {
    info->outcome = CUSP_REDUCTION_OUTSIDE;
    mj_freeStack(d);
    return info->outcome;
  }
  // P (n x ka) column-major: the island's rows of the active modes, a pair's entry shared by
  // its points
  mjtNum* P = mj_stackAllocNum(d, (size_t)n * ka);
  for (int j = 0; j < ka; j++) {
    for (int i = 0; i < n; i++) {
      P[i + (size_t)j * n] = rb->B[(size_t)row[i] * k + mode[j]] / points[row[i]];
    }
  }
  // the frictionless normal problem, W = Jn Meff^-1 Jn^T never formed: the reduced matrix from
  // L^-1 (Jn^T P), k triangular solves
  cuspReductionOptions opt = cusp_reduction_default_options();
  opt.backend = CUSP_LCP_LEMKE;
  opt.lcp.tol = cfg->tolerance;
  opt.lcp.max_iter = cfg->max_iterations;
  opt.fallback = 0;  // the full problem is the caller's (with friction and conditioning)
  opt.violation_tol = h > 0 ? cfg->reduction_tolerance / h : 0;
  cuspReducedLcpFactored prob = {n, ka, nv, lcp->Jn, lcp->Meff, lcp->bn, P, n};
  size_t bytes = cusp_reduction_factored_worksize(n, ka, nv, 0, opt.backend);
  void* work = mj_stackAllocByte(d, bytes, sizeof(mjtNum));
  mjtNum* z = mj_stackAllocNum(d, n);
  mjtNum* a = mj_stackAllocNum(d, ka);
  mjtNum* w = mj_stackAllocNum(d, n);
  cuspReductionInfo rinfo;
  cuspLcpStatus st = cusp_reduction_solve_factored(z, a, w, &rinfo, &prob, &opt, work, bytes);
  info->iterations = rinfo.reduced.iterations;
  info->penetration = h * rinfo.violation;
  if (st != CUSP_LCP_SOLVED) {
    info->outcome = CUSP_REDUCTION_FAILED;
  } else if (rinfo.violation > opt.violation_tol) {
    info->outcome = CUSP_REDUCTION_VIOLATED;
  } else {
    info->outcome = CUSP_REDUCTION_ACCEPTED;
    for (int i = 0; i < n; i++) {
      fn[i] = z[i];
      gamma[i] = 0;
    }
    if (lcp->r > 0) memset(beta, 0, sizeof(mjtNum) * (size_t)n * lcp->r);
  }
  mj_freeStack(d);
  return info->outcome;
}
