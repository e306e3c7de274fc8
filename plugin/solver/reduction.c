// Reduced LCP in the cone of a non-negative basis, with the full problem as fallback
// (see reduction.h).
#include "solver/reduction.h"

#include <string.h>

#include "solver/lapack_shim.h"

cuspReductionOptions cusp_reduction_default_options(void) {
  cuspReductionOptions opt;
  memset(&opt, 0, sizeof(opt));
  opt.backend = CUSP_LCP_LEMKE;  // small dense problems: exact pivoting
  opt.lcp = cusp_lcp_default_options();
  opt.violation_tol = 1e-6;
  opt.fallback = 1;
  return opt;
}

static size_t align8(size_t bytes) { return (bytes + 7) & ~(size_t)7; }

static size_t backend_worksize(cuspLcpBackendId backend, int n) {
  const cuspLcpBackend* be = cusp_lcp_backend(backend);
  return be ? be->worksize(n) : 0;
}

size_t cusp_reduction_worksize(int n, int k, cuspLcpBackendId backend) {
  size_t wk = backend_worksize(backend, k), wn = backend_worksize(backend, n);
  size_t solver = wk > wn ? wk : wn;
  // Wr (k x k), br (k), wr (k), WB (n x k)
  return align8(sizeof(mjtNum) * ((size_t)k * k + 2 * (size_t)k + (size_t)n * k)) + solver;
}

// w = W z + b (n)
static void full_rows(mjtNum* w, const cuspReducedLcp* p, const mjtNum* z) {
  for (int i = 0; i < p->n; i++) w[i] = p->b[i];
  for (int j = 0; j < p->n; j++) {
    if (z[j] == 0) continue;
    const mjtNum* col = p->W + (size_t)j * p->ldw;
    for (int i = 0; i < p->n; i++) w[i] += col[i] * z[j];
  }
}

cuspLcpStatus cusp_reduction_solve(mjtNum* z, mjtNum* a, mjtNum* w, cuspReductionInfo* info,
                                   const cuspReducedLcp* p, const cuspReductionOptions* opt,
                                   void* work, size_t work_bytes) {
  memset(info, 0, sizeof(*info));
  int n = p->n, k = p->k;
  const cuspLcpBackend* be = cusp_lcp_backend(opt->backend);
  if (n < 0 || k < 1 || p->ldw < (n > 1 ? n : 1) || p->ldb < (n > 1 ? n : 1) || !be ||
      work_bytes < cusp_reduction_worksize(n, k, opt->backend)) {
    info->status = CUSP_LCP_BAD_INPUT;
    return info->status;
  }
  mjtNum* Wr = (mjtNum*)work;       // (k x k) B^T W B
  mjtNum* br = Wr + (size_t)k * k;  // (k) B^T b
  mjtNum* wr = br + k;              // (k)
  mjtNum* WB = wr + k;              // (n x k) W B
  void* solver_work =
      (char*)work + align8(sizeof(mjtNum) * ((size_t)k * k + 2 * (size_t)k + (size_t)n * k));
  size_t solver_bytes = work_bytes - (size_t)((char*)solver_work - (char*)work);

  // WB = W B, then Wr = B^T (W B), br = B^T b (fixed summation order: deterministic)
  for (int c = 0; c < k; c++) {
    mjtNum* out = WB + (size_t)c * n;
    const mjtNum* bc = p->B + (size_t)c * p->ldb;
    for (int i = 0; i < n; i++) out[i] = 0;
    for (int j = 0; j < n; j++) {
      if (bc[j] == 0) continue;
      const mjtNum* col = p->W + (size_t)j * p->ldw;
      for (int i = 0; i < n; i++) out[i] += col[i] * bc[j];
    }
  }
  for (int r = 0; r < k; r++) {
    const mjtNum* br_col = p->B + (size_t)r * p->ldb;
    mjtNum s = 0;
    for (int i = 0; i < n; i++) s += br_col[i] * p->b[i];
    br[r] = s;
    for (int c = 0; c < k; c++) {
      const mjtNum* wb = WB + (size_t)c * n;
      mjtNum t = 0;
      for (int i = 0; i < n; i++) t += br_col[i] * wb[i];
      Wr[r + (size_t)c * k] = t;
    }
  }
  cuspLcpProblem reduced = {.n = k, .M = Wr, .ldm = k, .q = br, .lo = NULL, .hi = NULL};
  cuspLcpStatus st =
      be->solve(a, wr, &info->reduced, &reduced, &opt->lcp, solver_work, solver_bytes);
  // z = B a, w on the full rows
  for (int i = 0; i < n; i++) z[i] = 0;
  for (int c = 0; c < k; c++) {
    if (a[c] == 0) continue;
    const mjtNum* bc = p->B + (size_t)c * p->ldb;
    for (int i = 0; i < n; i++) z[i] += bc[i] * a[c];
  }
  full_rows(w, p, z);
  mjtNum worst = 0;
  for (int i = 0; i < n; i++) {
    if (-w[i] > worst) worst = -w[i];
  }
  info->violation = worst;
  info->status = st;
  if (!opt->fallback || (st == CUSP_LCP_SOLVED && worst <= opt->violation_tol)) return st;

  // fallback: the full problem from zero
  info->used_full = 1;
  for (int c = 0; c < k; c++) a[c] = 0;
  cuspLcpOptions lcp = opt->lcp;
  lcp.warm_start = 0;
  cuspLcpProblem full = {.n = n, .M = p->W, .ldm = p->ldw, .q = p->b, .lo = NULL, .hi = NULL};
  info->status = be->solve(z, w, &info->full, &full, &lcp, solver_work, solver_bytes);
  return info->status;
}

//---------------------------------- factored W ----------------------------------------------------

size_t cusp_reduction_factored_worksize(int n, int k, int nv, int fallback,
                                        cuspLcpBackendId backend) {
  size_t solver = backend_worksize(backend, k);
  if (fallback) {
    size_t wn = backend_worksize(backend, n);
    if (wn > solver) solver = wn;
  }
  // G (nv x k), Wr (k x k), br, wr (k), u (nv); on fallback W (n x n) and its G (nv x n)
  size_t nums = (size_t)nv * k + (size_t)k * k + 2 * (size_t)k + nv;
  if (fallback) nums += (size_t)n * n + (size_t)nv * n;
  return align8(sizeof(mjtNum) * nums) + solver;
}

// w = J Meff^-1 J^T z + b through L: u = J^T z, u = L^-T L^-1 u, w = J u + b
static void factored_rows(mjtNum* w, mjtNum* u, const cuspReducedLcpFactored* p, const mjtNum* z) {
  int n = p->n, nv = p->nv;
  for (int c = 0; c < nv; c++) u[c] = 0;
  for (int i = 0; i < n; i++) {
    if (z[i] == 0) continue;
    const mjtNum* row = p->J + (size_t)i * nv;
    for (int c = 0; c < nv; c++) u[c] += row[c] * z[i];
  }
  cusp_dtrsm_lower_left(u, 'N', p->L, 1.0, nv, 1, nv, nv);
  cusp_dtrsm_lower_left(u, 'T', p->L, 1.0, nv, 1, nv, nv);
  for (int i = 0; i < n; i++) {
    const mjtNum* row = p->J + (size_t)i * nv;
    mjtNum s = p->b[i];
    for (int c = 0; c < nv; c++) s += row[c] * u[c];
    w[i] = s;
  }
}

cuspLcpStatus cusp_reduction_solve_factored(mjtNum* z, mjtNum* a, mjtNum* w,
                                            cuspReductionInfo* info,
                                            const cuspReducedLcpFactored* p,
                                            const cuspReductionOptions* opt, void* work,
                                            size_t work_bytes) {
  memset(info, 0, sizeof(*info));
  int n = p->n, k = p->k, nv = p->nv;
  const cuspLcpBackend* be = cusp_lcp_backend(opt->backend);
  if (n < 0 || k < 1 || nv < 1 || p->ldb < (n > 1 ? n : 1) || !be ||
      work_bytes < cusp_reduction_factored_worksize(n, k, nv, opt->fallback, opt->backend)) {
    info->status = CUSP_LCP_BAD_INPUT;
    return info->status;
  }
  mjtNum* G = (mjtNum*)work;        // (nv x k) L^-1 J^T B
  mjtNum* Wr = G + (size_t)nv * k;  // (k x k)
  mjtNum* br = Wr + (size_t)k * k;  // (k)
  mjtNum* wr = br + k;              // (k)
  mjtNum* u = wr + k;               // (nv)
  mjtNum* Wfull = u + nv;           // (n x n) fallback only
  size_t nums = (size_t)nv * k + (size_t)k * k + 2 * (size_t)k + nv;
  if (opt->fallback) nums += (size_t)n * n + (size_t)nv * n;
  void* solver_work = (char*)work + align8(sizeof(mjtNum) * nums);
  size_t solver_bytes = work_bytes - (size_t)((char*)solver_work - (char*)work);

  // G = L^-1 (J^T B), Wr = G^T G, br = B^T b
  for (int c = 0; c < k; c++) {
    mjtNum* g = G + (size_t)c * nv;
    const mjtNum* bc = p->B + (size_t)c * p->ldb;
    for (int j = 0; j < nv; j++) g[j] = 0;
    for (int i = 0; i < n; i++) {
      if (bc[i] == 0) continue;
      const mjtNum* row = p->J + (size_t)i * nv;
      for (int j = 0; j < nv; j++) g[j] += row[j] * bc[i];
    }
  }
  cusp_dtrsm_lower_left(G, 'N', p->L, 1.0, nv, k, nv, nv);
  for (int r = 0; r < k; r++) {
    const mjtNum* bcol = p->B + (size_t)r * p->ldb;
    mjtNum s = 0;
    for (int i = 0; i < n; i++) s += bcol[i] * p->b[i];
    br[r] = s;
    for (int c = 0; c <= r; c++) {
      mjtNum t = 0;
      for (int j = 0; j < nv; j++) t += G[j + (size_t)r * nv] * G[j + (size_t)c * nv];
      Wr[r + (size_t)c * k] = Wr[c + (size_t)r * k] = t;
    }
  }
  cuspLcpProblem reduced = {.n = k, .M = Wr, .ldm = k, .q = br, .lo = NULL, .hi = NULL};
  cuspLcpStatus st =
      be->solve(a, wr, &info->reduced, &reduced, &opt->lcp, solver_work, solver_bytes);
  for (int i = 0; i < n; i++) z[i] = 0;
  for (int c = 0; c < k; c++) {
    if (a[c] == 0) continue;
    const mjtNum* bc = p->B + (size_t)c * p->ldb;
    for (int i = 0; i < n; i++) z[i] += bc[i] * a[c];
  }
  factored_rows(w, u, p, z);
  mjtNum worst = 0;
  for (int i = 0; i < n; i++) {
    if (-w[i] > worst) worst = -w[i];
  }
  info->violation = worst;
  info->status = st;
  if (!opt->fallback || (st == CUSP_LCP_SOLVED && worst <= opt->violation_tol)) return st;

  // fallback: form W = (L^-1 J^T)^T (L^-1 J^T) and solve the full problem from zero
  info->used_full = 1;
  for (int c = 0; c < k; c++) a[c] = 0;
  mjtNum* Gn = Wfull + (size_t)n * n;  // (nv x n)
  for (int i = 0; i < n; i++)
    memcpy(Gn + (size_t)i * nv, p->J + (size_t)i * nv, sizeof(mjtNum) * nv);
  cusp_dtrsm_lower_left(Gn, 'N', p->L, 1.0, nv, n, nv, nv);
  for (int r = 0; r < n; r++) {
    for (int c = 0; c <= r; c++) {
      mjtNum t = 0;
      for (int j = 0; j < nv; j++) t += Gn[j + (size_t)r * nv] * Gn[j + (size_t)c * nv];
      Wfull[r + (size_t)c * n] = Wfull[c + (size_t)r * n] = t;
    }
  }
  cuspLcpOptions lcp = opt->lcp;
  lcp.warm_start = 0;
  cuspLcpProblem full = {.n = n, .M = Wfull, .ldm = n, .q = p->b, .lo = NULL, .hi = NULL};
  info->status = be->solve(z, w, &info->full, &full, &lcp, solver_work, solver_bytes);
  return info->status;
}
