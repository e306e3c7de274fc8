// Projected Gauss-Seidel / SOR for box LCPs:
//   z_i <- mid(lo_i, hi_i, z_i - omega * w_i / M_ii),  w = M z + q kept up to date by columns.
// Needs M_ii > 0 on every row; a zero or negative diagonal is reported, not iterated on.
// Block Gauss-Seidel (options block > 1, standard bounds): each sweep solves, block by block, the
// small LCP of the block's rows with the other unknowns fixed, exactly by Lemke (non-smooth
// contact dynamics' per-contact sweep, Jean & Moreau); a zero diagonal inside a block is fine.
#include <math.h>
#include <string.h>

#include "solver/lcp.h"
#include "solver/lcp_internal.h"

static int block_max(int n) { return n < CUSP_LCP_MAX_BLOCK ? (n > 0 ? n : 1) : CUSP_LCP_MAX_BLOCK; }

size_t cusp_lcp_pgs_worksize(int n) {
  int b = block_max(n);
  return CUSP_ALIGN(sizeof(mjtNum) * (size_t)(n > 0 ? n : 1))  // w
         + CUSP_ALIGN(sizeof(mjtNum) * 3 * (size_t)b)          // block q, z, w
         + cusp_lcp_lemke_worksize(b);
}

// One block Gauss-Seidel sweep over blocks of size s; w = M z + q kept up to date.
static void block_sweep(mjtNum* z, mjtNum* w, const cuspLcpProblem* p, const cuspLcpOptions* opt,
                        int s, mjtNum* qb, mjtNum* zb, mjtNum* wb, void* lemke_work,
                        size_t lemke_bytes) {
  cuspLcpOptions lo = *opt;
  lo.warm_start = 0;
  lo.max_iter = 0;
  for (int b0 = 0; b0 < p->n; b0 += s) {
    // q of the block with the others fixed: w_b - M_bb z_b
    for (int i = 0; i < s; i++) {
      mjtNum v = w[b0 + i];
      for (int j = 0; j < s; j++) v -= p->M[(b0 + i) + (size_t)(b0 + j) * p->ldm] * z[b0 + j];
      qb[i] = v;
    }
    cuspLcpProblem sub = {s, p->M + b0 + (size_t)b0 * p->ldm, p->ldm, qb, NULL, NULL};
    cuspLcpInfo sub_info;
    if (cusp_lcp_lemke(zb, wb, &sub_info, &sub, &lo, lemke_work, lemke_bytes) != CUSP_LCP_SOLVED) {
      continue;  // keep this block as it is; the residual test decides the outcome
    }
    for (int j = 0; j < s; j++) {
      mjtNum dz = zb[j] - z[b0 + j];
      if (dz == 0) continue;
      z[b0 + j] = zb[j];
      const mjtNum* col = p->M + (size_t)(b0 + j) * p->ldm;
      for (int k = 0; k < p->n; k++) w[k] += col[k] * dz;
    }
  }
}

cuspLcpStatus cusp_lcp_pgs(mjtNum* z, mjtNum* w_out, cuspLcpInfo* info, const cuspLcpProblem* p,
                           const cuspLcpOptions* opt, void* work, size_t work_bytes) {
  double t0 = cusp_now();
  if (!cusp_lcp_check(info, p, cusp_lcp_pgs_worksize(p ? p->n : 0), work_bytes, "pgs")) {
    return info->status;
  }
  int n = p->n;
  mjtNum* w = (mjtNum*)work;  // (n) M z + q, updated column by column
  mjtNum omega = opt->pgs_omega > 0 && opt->pgs_omega < 2 ? opt->pgs_omega : 1.0;
  int s = opt->block;
  int blocked = s > 1 && s <= CUSP_LCP_MAX_BLOCK && n % s == 0 && cusp_lcp_standard_bounds(p);
  int budget_binds;
  int max_iter = cusp_solve_iteration_cap(&budget_binds, opt->max_iter > 0 ? opt->max_iter : 10000,
                                          opt->work_budget, CUSP_ITER_PGS_SWEEP, n,
                                          blocked ? s : 1);
  int bmax = block_max(n);
  mjtNum* qb = (mjtNum*)((char*)work + CUSP_ALIGN(sizeof(mjtNum) * (size_t)(n > 0 ? n : 1)));
  mjtNum* zb = qb + bmax;
  mjtNum* wb = zb + bmax;
  void* lemke_work = (char*)qb + CUSP_ALIGN(sizeof(mjtNum) * 3 * (size_t)bmax);
  size_t lemke_bytes = cusp_lcp_lemke_worksize(bmax);

  for (int i = 0; i < n && !blocked; i++) {
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
    if (blocked) block_sweep(z, w, p, opt, s, qb, zb, wb, lemke_work, lemke_bytes);
    for (int i = 0; i < n && !blocked; i++) {
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
  if (status == CUSP_LCP_MAX_ITER) {
    info->message = budget_binds ? "work budget reached" : "sweep limit reached";
  }
  info->iterations = it;
  info->work = it * cusp_solve_iteration_cost(CUSP_ITER_PGS_SWEEP, n, blocked ? s : 1);
  mjtNum* wfin = w_out ? w_out : w;
  return cusp_lcp_info_end(info, status, wfin, z, p, opt, t0);
}
