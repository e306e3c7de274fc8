// LCP backend "chain": run the backends of options->chain in order (default FB Newton, Lemke,
// PGS) and stop at the first whose answer passes the residual check (residual <= tol). If none
// passes, the answer with the smallest residual is returned with the last failing status.
#include <math.h>
#include <string.h>

#include "solver/lcp_internal.h"

static int chain_len(const cuspLcpOptions* opt) {
  int k = 0;
  while (k < 4 && opt->chain[k] >= 0 && opt->chain[k] < CUSP_LCP_CHAIN) k++;
  return k;
}

cuspLcpOptions cusp_lcp_chain_without(const cuspLcpOptions* opt, cuspLcpBackendId id) {
  cuspLcpOptions out = *opt;
  int k = 0, len = chain_len(opt);
  for (int i = 0; i < len; i++) {
    if (opt->chain[i] != (int)id) out.chain[k++] = opt->chain[i];
  }
  for (; k < 4; k++) out.chain[k] = -1;
  return out;
}

size_t cusp_lcp_chain_worksize(int n) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  size_t need = 0;
  for (int id = 0; id < CUSP_LCP_CHAIN; id++) {
    size_t s = cusp_lcp_backend((cuspLcpBackendId)id)->worksize(n);
    if (s > need) need = s;
  }
  return CUSP_ALIGN(need) + CUSP_ALIGN(sizeof(mjtNum) * 3 * nn);
}

cuspLcpStatus cusp_lcp_chain(mjtNum* z, mjtNum* w, cuspLcpInfo* info, const cuspLcpProblem* p,
                             const cuspLcpOptions* opt, void* work, size_t work_bytes) {
  double t0 = cusp_now();
  if (!cusp_lcp_check(info, p, cusp_lcp_chain_worksize(p ? p->n : 0), work_bytes, "chain")) {
    return info->status;
  }
  int n = p->n;
  size_t nn = (size_t)(n > 0 ? n : 1);
  size_t inner = work_bytes - CUSP_ALIGN(sizeof(mjtNum) * 3 * nn);
  inner &= ~(size_t)15u;
  mjtNum* z0 = (mjtNum*)((char*)work + inner);  // (n) caller's warm start
  mjtNum* zb = z0 + nn;                         // (n) best answer so far
  mjtNum* wt = zb + nn;                         // (n)
  memcpy(z0, z, sizeof(mjtNum) * n);
  cuspLcpInfo best;
  cusp_lcp_info_begin(&best, "chain");
  best.status = CUSP_LCP_NUMERICAL;
  best.message = "empty chain";
  int total = 0, len = chain_len(opt), saw_ray = 0;
  mjtNum spent = 0;
  for (int k = 0; k < len; k++) {
    const cuspLcpBackend* b = cusp_lcp_backend((cuspLcpBackendId)opt->chain[k]);
    cuspLcpInfo sub;
    memcpy(z, z0, sizeof(mjtNum) * n);
    b->solve(z, wt, &sub, p, opt, work, inner);
    total += sub.iterations;
    spent += sub.work;
    if (sub.status == CUSP_LCP_SOLVED) {
      *info = sub;
      info->iterations = total;
      info->work = spent;
      if (w) memcpy(w, wt, sizeof(mjtNum) * n);
      info->seconds = cusp_now() - t0;
      return info->status;
    }
    if (k == 0 || sub.residual < best.residual || best.status == CUSP_LCP_BAD_INPUT) {
      best = sub;
      memcpy(zb, z, sizeof(mjtNum) * n);
    }
    // a definite "no solution" from Lemke is kept as the verdict if nothing else succeeds
    if (sub.status == CUSP_LCP_NO_SOLUTION) saw_ray = k + 1;
  }
  memcpy(z, zb, sizeof(mjtNum) * n);
  *info = best;
  if (saw_ray) {
    info->status = CUSP_LCP_NO_SOLUTION;
    info->message = "secondary ray";
    info->backend = cusp_lcp_backend((cuspLcpBackendId)opt->chain[saw_ray - 1])->name;
  }
  info->iterations = total;
  info->work = spent;
  if (w) cusp_lcp_residual(w, info, z, p);
  info->seconds = cusp_now() - t0;
  return info->status;
}
