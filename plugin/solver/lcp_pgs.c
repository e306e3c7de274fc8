// Projected Gauss-Seidel / SOR for box LCPs:
//   z_i <- mid(lo_i, hi_i, z_i - omega * w_i / M_ii),  w = M z + q kept up to date by columns.
// Needs M_ii > 0 on every row; a zero or negative diagonal is reported, not iterated on.
#include <math.h>
#include <string.h>

#include "lcp.h"
#include "lcp_internal.h"

size_t cusp_lcp_pgs_worksize(int n) { return CUSP_ALIGN(sizeof(mjtNum) * (size_t)(n > 0 ? n : 1)); }

cuspLcpStatus cusp_lcp_pgs(mjtNum* z, mjtNum* w_out, cuspLcpInfo* info, const cuspLcpProblem* p,
                           const cuspLcpOptions* opt, void* work, size_t work_bytes) {
  double t0 = cusp_now();
  if (!cusp_lcp_check(info, p, cusp_lcp_pgs_worksize(p ? p->n : 0), work_bytes, "pgs")) {
    return info->status;
  }
  int n = p->n;
  mjtNum* w = (mjtNum*)work;  // (n) M z + q, updated column by column
  mjtNum omega = opt->pgs_omega > 0 && opt->pgs_omega < 2 ? opt->pgs_omega : 1.0;
  int max_iter = opt->max_iter > 0 ? opt->max_iter : 10000;

  for (int i = 0; i < n; i++) {
    if (!(p->M[i + (size_t)i * p->ldm] > 0)) {
      info->status = CUSP_LCP_NUMERICAL;
      info->message = "zero or negative diagonal: PGS cannot start";
      info->index = i;
      if (!opt->warm_start) memset(z, 0, sizeof(mjtNum) * (size_t)n);
      if (w_out) cusp_lcp_residual(w_out, info, z, p);
      info->seconds = cusp_now() - t0;
      return info->status;
    }
  }
  if (!opt->warm_start) {
    for (int i = 0; i < n; i++) z[i] = cusp_mid(cusp_lo(p, i), cusp_hi(p, i), 0);
  } else {
    for (int i = 0; i < n; i++) z[i] = cusp_mid(cusp_lo(p, i), cusp_hi(p, i), z[i]);
  }
  cusp_lcp_residual(w, info, z, p);

  cuspLcpStatus status = CUSP_LCP_MAX_ITER;
  int it = 0;
  while (info->residual > opt->tol && it < max_iter) {
    it++;
    for (int i = 0; i < n; i++) {
      const mjtNum* col = p->M + (size_t)i * p->ldm;
      mjtNum zi = cusp_mid(cusp_lo(p, i), cusp_hi(p, i), z[i] - omega * w[i] / col[i]);
      mjtNum dz = zi - z[i];
      if (dz != 0) {
        z[i] = zi;
        for (int k = 0; k < n; k++) w[k] += col[k] * dz;
      }
    }
    // natural residual from the running w; refresh w exactly when it claims convergence and
    // every 64 sweeps so that round-off in the updates cannot fake it
    mjtNum nat = 0;
    for (int i = 0; i < n; i++) {
      mjtNum r = fabs(z[i] - cusp_mid(cusp_lo(p, i), cusp_hi(p, i), z[i] - w[i]));
      nat = r > nat || isnan(r) ? (isnan(r) ? INFINITY : r) : nat;
    }
    if (nat <= opt->tol || (it & 63) == 0) {
      cusp_lcp_residual(w, info, z, p);
    } else {
      info->residual = nat;
    }
    if (!isfinite(info->residual)) {
      status = CUSP_LCP_NUMERICAL;
      info->message = "iterates diverged (non-finite)";
      break;
    }
  }
  if (info->residual <= opt->tol) status = CUSP_LCP_SOLVED;
  if (status == CUSP_LCP_MAX_ITER) info->message = "sweep limit reached";
  info->iterations = it;
  mjtNum* wfin = w_out ? w_out : w;
  return cusp_lcp_info_end(info, status, wfin, z, p, opt, t0);
}
