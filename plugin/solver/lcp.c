// Shared LCP machinery: options, residuals, status strings, the backend table.
#include <math.h>
#include <string.h>
#include <time.h>

#include "solver/lcp.h"
#include "solver/lcp_internal.h"

//---------------------------------- options and strings -----------------------------------------

cuspLcpOptions cusp_lcp_default_options(void) {
  cuspLcpOptions o;
  memset(&o, 0, sizeof(o));
  o.tol = 1e-10;
  o.max_iter = 0;
  o.warm_start = 0;
  o.pgs_omega = 1.0;
  o.lemke_pivot_tol = 1e-12;
  o.newton_lm_min = 1e-14;
  o.chain[0] = CUSP_LCP_FBNEWTON;
  o.chain[1] = CUSP_LCP_LEMKE;
  o.chain[2] = CUSP_LCP_PGS;
  o.chain[3] = -1;
  return o;
}

//---------------------------------- work budget ------------------------------------------------

mjtNum cusp_solve_iteration_cost(cuspIterationKind kind, int n, int block) {
  mjtNum x = n > 0 ? n : 0, b = block > 1 ? block : 0;
  switch (kind) {
    case CUSP_ITER_NEWTON: return x * x * x / 3 + 8 * x * x + 4096;
    case CUSP_ITER_PGS_SWEEP: return x * x + 2 * x * b * b + 64;
    case CUSP_ITER_LEMKE_PIVOT: return 2 * x * x + 64;
  }
  return 1;
}

int cusp_solve_iteration_cap(int* budget_binds, int max_iter, mjtNum work_budget,
                             cuspIterationKind kind, int n, int block) {
  if (budget_binds) *budget_binds = 0;
  if (work_budget < 0) return max_iter;
  mjtNum budget = work_budget > 0 ? work_budget : CUSP_SOLVE_WORK_BUDGET;
  // no floor: a run whose iterations cost more than the budget does none (it only checks its
  // start), however small that leaves max_iter
  mjtNum cap = floor(budget / cusp_solve_iteration_cost(kind, n, block));
  if (cap >= max_iter) return max_iter;
  if (budget_binds) *budget_binds = 1;
  return (int)cap;
}

const char* cusp_lcp_status_string(cuspLcpStatus status) {
  switch (status) {
    case CUSP_LCP_SOLVED: return "solved";
    case CUSP_LCP_MAX_ITER: return "max_iter";
    case CUSP_LCP_NO_SOLUTION: return "no_solution";
    case CUSP_LCP_NUMERICAL: return "numerical";
    case CUSP_LCP_BAD_INPUT: return "bad_input";
    default: return "unknown";
  }
}

double cusp_now(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

//---------------------------------- residuals ---------------------------------------------------

void cusp_lcp_residual(mjtNum* w, cuspLcpInfo* info, const mjtNum* z, const cuspLcpProblem* p) {
  int n = p->n;
  mjtNum nat = 0, err2 = 0, q2 = 0, comp = 0;
  for (int i = 0; i < n; i++) w[i] = p->q[i];
  for (int j = 0; j < n; j++) {
    mjtNum zj = z[j];
    if (zj == 0) continue;
    const mjtNum* col = p->M + (size_t)j * p->ldm;
    for (int i = 0; i < n; i++) w[i] += col[i] * zj;
  }
  for (int i = 0; i < n; i++) {
    mjtNum lo = cusp_lo(p, i), hi = cusp_hi(p, i);
    mjtNum r = z[i] - cusp_mid(lo, hi, z[i] - w[i]);
    if (isnan(r)) r = INFINITY;
    nat = fmax(nat, fabs(r));
    err2 += r * r;
    q2 += p->q[i] * p->q[i];
    if (lo == 0 && hi == INFINITY) comp = fmax(comp, fabs(z[i] * w[i]));
  }
  info->residual = nat;
  info->siconos_error = sqrt(err2) / (q2 > 0 ? sqrt(q2) : 1.0);
  info->complementarity = comp;
}

int cusp_lcp_standard_bounds(const cuspLcpProblem* p) {
  for (int i = 0; i < p->n; i++) {
    if (cusp_lo(p, i) != 0 || cusp_hi(p, i) != INFINITY) return 0;
  }
  return 1;
}

void cusp_lcp_info_begin(cuspLcpInfo* info, const char* backend) {
  info->status = CUSP_LCP_NUMERICAL;
  info->message = "";
  info->index = -1;
  info->backend = backend;
  info->iterations = 0;
  info->work = 0;
  info->residual = INFINITY;
  info->siconos_error = INFINITY;
  info->complementarity = INFINITY;
  info->seconds = 0;
}

int cusp_lcp_check(cuspLcpInfo* info, const cuspLcpProblem* p, size_t need, size_t have,
                   const char* backend) {
  cusp_lcp_info_begin(info, backend);
  info->status = CUSP_LCP_BAD_INPUT;
  if (!p || p->n < 0 || (p->n > 0 && (!p->M || !p->q)) || p->ldm < (p->n > 1 ? p->n : 1)) {
    info->message = "bad sizes or NULL data";
    return 0;
  }
  if (have < need) {
    info->message = "workspace too small";
    return 0;
  }
  for (int i = 0; i < p->n; i++) {
    mjtNum lo = cusp_lo(p, i), hi = cusp_hi(p, i);
    if (!(lo <= hi) || lo == INFINITY || hi == -INFINITY) {
      info->message = "lower bound above upper bound";
      info->index = i;
      return 0;
    }
  }
  info->status = CUSP_LCP_NUMERICAL;
  return 1;
}

cuspLcpStatus cusp_lcp_info_end(cuspLcpInfo* info, cuspLcpStatus status, mjtNum* w,
                                const mjtNum* z, const cuspLcpProblem* p,
                                const cuspLcpOptions* opt, double t0) {
  cusp_lcp_residual(w, info, z, p);
  if (info->residual <= opt->tol) {
    if (status != CUSP_LCP_SOLVED && status != CUSP_LCP_NO_SOLUTION) info->message = "";
    if (status != CUSP_LCP_NO_SOLUTION) status = CUSP_LCP_SOLVED;
  } else if (status == CUSP_LCP_SOLVED) {
    status = CUSP_LCP_NUMERICAL;  // the backend believed it converged; the check says no
    info->message = "final residual above tolerance";
  }
  info->status = status;
  info->seconds = cusp_now() - t0;
  return status;
}

//---------------------------------- backend table -----------------------------------------------

// A run drawing on a work pool (options.work_pool): its budget is at most what the pool holds (an
// empty pool: a budget no iteration fits in), and what it spent is taken off the pool.
static cuspLcpStatus pooled(cuspLcpSolveFn solve, mjtNum* z, mjtNum* w, cuspLcpInfo* info,
                            const cuspLcpProblem* prob, const cuspLcpOptions* opt, void* work,
                            size_t work_bytes) {
  if (!opt || !opt->work_pool) return solve(z, w, info, prob, opt, work, work_bytes);
  cuspLcpOptions o = *opt;
  o.work_pool = NULL;
  mjtNum left = *opt->work_pool;
  mjtNum own = opt->work_budget > 0 ? opt->work_budget : CUSP_SOLVE_WORK_BUDGET;
  mjtNum budget = opt->work_budget < 0 || left < own ? left : own;
  o.work_budget = budget > 0 ? budget : 1e-300;  // 0 would mean the default
  cuspLcpStatus status = solve(z, w, info, prob, &o, work, work_bytes);
  *opt->work_pool -= info->work;
  return status;
}

#define CUSP_POOLED(name)                                                                    \
  static cuspLcpStatus pooled_##name(mjtNum* z, mjtNum* w, cuspLcpInfo* info,                \
                                     const cuspLcpProblem* prob, const cuspLcpOptions* opt,  \
                                     void* work, size_t work_bytes) {                        \
    return pooled(cusp_lcp_##name, z, w, info, prob, opt, work, work_bytes);                 \
  }
CUSP_POOLED(lemke)
CUSP_POOLED(pgs)
CUSP_POOLED(fbnewton)
CUSP_POOLED(ncpsmooth)
#undef CUSP_POOLED

// the chain's members are pooled one by one (the chain itself is not: it spends nothing of its own)
static const cuspLcpBackend kBackends[CUSP_LCP_NBACKEND] = {
    {"lemke", pooled_lemke, cusp_lcp_lemke_worksize},
    {"pgs", pooled_pgs, cusp_lcp_pgs_worksize},
    {"fbnewton", pooled_fbnewton, cusp_lcp_fbnewton_worksize},
    {"chain", cusp_lcp_chain, cusp_lcp_chain_worksize},
    {"ncpsmooth", pooled_ncpsmooth, cusp_lcp_ncpsmooth_worksize},
};

const cuspLcpBackend* cusp_lcp_backend(cuspLcpBackendId id) {
  if ((int)id < 0 || id >= CUSP_LCP_NBACKEND) return NULL;
  return &kBackends[id];
}

const cuspLcpBackend* cusp_lcp_backend_find(const char* name) {
  if (!name) return NULL;
  for (int i = 0; i < CUSP_LCP_NBACKEND; i++) {
    if (strcmp(name, kBackends[i].name) == 0) return &kBackends[i];
  }
  return NULL;
}

cuspLcpStatus cusp_lcp_solve_named(const char* name, mjtNum* z, mjtNum* w, cuspLcpInfo* info,
                                   const cuspLcpProblem* prob, const cuspLcpOptions* opt,
                                   void* work, size_t work_bytes) {
  const cuspLcpBackend* b = cusp_lcp_backend_find(name);
  if (!b) {
    cusp_lcp_info_begin(info, "?");
    info->status = CUSP_LCP_BAD_INPUT;
    info->message = "unknown backend name";
    return info->status;
  }
  return b->solve(z, w, info, prob, opt, work, work_bytes);
}
