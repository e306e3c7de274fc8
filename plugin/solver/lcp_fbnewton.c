// LCP backend "fbnewton": the semismooth Fischer-Burmeister Newton core (mcp_fbnewton.c) with
// F(z) = M z + q, the constant Jacobian M read in place, and an affine line search (each trial
// costs O(n), each iteration one LU of H = diag(Da) + diag(Db) M).
#include <string.h>

#include "solver/fb_core.h"
#include "solver/lapack_shim.h"
#include "solver/lcp_internal.h"

typedef struct {
  const cuspLcpProblem* p;
} lcpUser;

static int lcp_residual(mjtNum* F, const mjtNum* z, int n, void* user) {
  const cuspLcpProblem* p = ((lcpUser*)user)->p;
  memcpy(F, p->q, sizeof(mjtNum) * n);
  cusp_dgemv(F, 'N', p->M, z, 1.0, 1.0, n, n, p->ldm);
  return 0;
}

size_t cusp_lcp_fbnewton_worksize(int n) { return cusp_fb_core_worksize(n, 1); }

cuspLcpStatus cusp_lcp_fbnewton(mjtNum* z, mjtNum* w, cuspLcpInfo* info,
                                const cuspLcpProblem* p, const cuspLcpOptions* opt, void* work,
                                size_t work_bytes) {
  double t0 = cusp_now();
  if (!cusp_lcp_check(info, p, cusp_lcp_fbnewton_worksize(p ? p->n : 0), work_bytes,
                      "fbnewton")) {
    return info->status;
  }
  lcpUser user = {p};
  cuspFbCore core = {p->n, p->lo, p->hi, lcp_residual, NULL, &user, p->M, p->ldm, 1, NULL, 0, 0, NULL};
  cuspMcpOptions mo = cusp_mcp_default_options();
  mo.tol = opt->tol;
  mo.max_iter = opt->max_iter > 0 ? opt->max_iter : 100;
  mo.warm_start = opt->warm_start;
  mo.work_budget = opt->work_budget;
  if (opt->newton_lm_min > 0) mo.lm_min = opt->newton_lm_min;
  cuspMcpInfo mi;
  cusp_fb_core(z, NULL, &mi, &core, &mo, work);
  info->iterations = mi.iterations;
  info->work = mi.iterations * cusp_solve_iteration_cost(CUSP_ITER_NEWTON, p->n, 0);
  info->message = mi.message;
  // w lives in the core's workspace only; recompute into a caller array or scratch
  mjtNum* wr = w ? w : (mjtNum*)work;
  return cusp_lcp_info_end(info, mi.status, wr, z, p, opt, t0);
}
