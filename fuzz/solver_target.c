// Fuzz target: the solver core (plugin/solver/lcp.h, condition.h, mcp.h) on small dense problems
// decoded from the bytes, including NaN, +-inf, huge and tiny entries and singular matrices.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/condition.h"
#include "solver/lcp.h"
#include "solver/mcp.h"
#include "targets.h"

typedef struct {
  const uint8_t* p;
  size_t left;
} reader;

static uint8_t next_byte(reader* r) {
  if (!r->left) return 0;
  r->left--;
  return *r->p++;
}

// one number from two bytes: a special value or a moderate number of either sign
static mjtNum next_number(reader* r) {
  uint8_t a = next_byte(r), b = next_byte(r);
  switch (a) {
    case 0: return 0;
    case 1: return NAN;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    case 4: return 1e300;
    case 5: return -1e300;
    case 6: return 1e-300;
    case 7: return 4.9e-324;  // smallest subnormal
    case 8: return 1;
    default: break;
  }
  mjtNum mant = (mjtNum)b / 64.0 - 2.0;          // [-2, 2)
  int exponent = (int)(a % 16) - 8;                // 2^-8 .. 2^7
  return ldexp(mant, exponent);
}

// a solve that claims success must return a finite answer within tolerance
static void check_solved(cuspLcpStatus s, const mjtNum* z, int n, mjtNum residual, mjtNum tol) {
  if (s != CUSP_LCP_SOLVED) return;
  for (int i = 0; i < n; i++) {
    if (!isfinite(z[i])) abort();
  }
  if (!(residual <= tol)) abort();
}

typedef struct {
  const mjtNum* M;
  const mjtNum* q;
  int n;
} affine_map;

static int affine_residual(mjtNum* F, const mjtNum* z, int n, void* user) {
  const affine_map* a = (const affine_map*)user;
  for (int i = 0; i < n; i++) {
    F[i] = a->q[i];
    for (int j = 0; j < n; j++) F[i] += a->M[i + j * n] * z[j];
  }
  return 0;
}

static int affine_jacobian(mjtNum* J, int ldj, const mjtNum* z, int n, void* user) {
  (void)z;
  const affine_map* a = (const affine_map*)user;
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) J[i + j * ldj] = a->M[i + j * n];
  }
  return 0;
}

#define MAXN 8

int cusp_fuzz_solver(const uint8_t* data, size_t size) {
  reader rd = {data, size};
  int solved = 0;
  uint8_t flags = next_byte(&rd);

  // ---- a dense LCP (box bounds when flags bit 0), every backend ----
  int n = 1 + next_byte(&rd) % MAXN;
  mjtNum M[MAXN * MAXN], q[MAXN], lo[MAXN], hi[MAXN], z[MAXN], w[MAXN];
  for (int k = 0; k < n * n; k++) M[k] = next_number(&rd);
  if (flags & 2) {  // singular: copy column 0 into the last column
    for (int i = 0; i < n; i++) M[i + (n - 1) * n] = M[i];
  }
  for (int i = 0; i < n; i++) q[i] = next_number(&rd);
  for (int i = 0; i < n; i++) {
    lo[i] = (flags & 1) ? -fabs(next_number(&rd)) : 0;
    hi[i] = (flags & 1) ? fabs(next_number(&rd)) : INFINITY;
  }
  cuspLcpProblem prob = {n, M, n, q, (flags & 1) ? lo : NULL, (flags & 1) ? hi : NULL};
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.max_iter = 1 + next_byte(&rd) % 64;
  opt.warm_start = (flags & 4) != 0;
  size_t bytes = 0;
  for (int b = 0; b < CUSP_LCP_NBACKEND; b++) {
    size_t s = cusp_lcp_backend((cuspLcpBackendId)b)->worksize(n);
    if (s > bytes) bytes = s;
  }
  void* work = malloc(bytes);
  if (!work) return 0;
  for (int b = 0; b < CUSP_LCP_NBACKEND; b++) {
    const cuspLcpBackend* be = cusp_lcp_backend((cuspLcpBackendId)b);
    for (int i = 0; i < n; i++) z[i] = opt.warm_start ? next_number(&rd) : 0;
    cuspLcpInfo info;
    cuspLcpStatus s = be->solve(z, w, &info, &prob, &opt, work, bytes);
    if (s < 0 || s >= CUSP_LCP_NSTATUS || s != info.status) abort();
    check_solved(s, z, n, info.residual, opt.tol);
    solved += s == CUSP_LCP_SOLVED;
  }
  free(work);

  // ---- the same numbers as an MCP (affine F) through FB Newton ----
  affine_map am = {M, q, n};
  cuspMcpProblem mcp = {n, prob.lo, prob.hi, affine_residual, affine_jacobian, &am, NULL, 0, 0, NULL};
  cuspMcpOptions mopt = cusp_mcp_default_options();
  mopt.max_iter = opt.max_iter;
  void* mwork = malloc(cusp_mcp_worksize(n));
  if (!mwork) return solved;
  cuspMcpInfo minfo;
  for (int i = 0; i < n; i++) z[i] = 0;
  cuspLcpStatus ms = cusp_mcp_fbnewton(z, w, &minfo, &mcp, &mopt, mwork, cusp_mcp_worksize(n));
  check_solved(ms, z, n, minfo.residual, mopt.tol);
  solved += ms == CUSP_LCP_SOLVED;
  free(mwork);

  // ---- a contact LCP through conditioning: Meff = B B^T (+ diag), Jn, Jt, mu, b ----
  int nv = 1 + next_byte(&rd) % 6, m = 1 + next_byte(&rd) % 4;
  int r = (int[]){0, 2, 4, 8}[next_byte(&rd) % 4];
  mjtNum B[36], Meff[36], Jn[4 * 6], Jt[4 * 8 * 6], mu[4], bn[4], bt[4 * 8];
  for (int k = 0; k < nv * nv; k++) B[k] = next_number(&rd);
  int factor = (flags & 8) != 0;  // pass B's lower triangle as the Cholesky factor
  for (int i = 0; i < nv; i++) {
    for (int j = 0; j < nv; j++) {
      mjtNum s = 0;
      for (int k = 0; k < nv; k++) s += B[i + k * nv] * B[j + k * nv];
      Meff[i + j * nv] = factor ? (i >= j ? B[i + j * nv] : 0) : s;
    }
  }
  for (int k = 0; k < m * nv; k++) Jn[k] = next_number(&rd);
  for (int k = 0; k < m * r * nv; k++) Jt[k] = next_number(&rd);
  for (int i = 0; i < m; i++) mu[i] = fabs(next_number(&rd));
  for (int i = 0; i < m; i++) bn[i] = next_number(&rd);
  for (int k = 0; k < m * r; k++) bt[k] = next_number(&rd);
  cuspContactLcp c = {.nv = nv, .m = m, .r = r, .Meff = Meff, .meff_is_factor = factor,
                      .Jn = Jn, .Jt = r ? Jt : NULL, .mu = r ? mu : NULL, .bn = bn,
                      .bt = r ? bt : NULL};
  cuspConditionOptions copt = cusp_condition_default_options();
  uint8_t cflags = next_byte(&rd);
  copt.rank_select = cflags & 1;
  copt.ruiz = (cflags >> 1) & 1;
  copt.tikhonov = (cflags >> 2) & 1;
  copt.estimate_condition = (cflags >> 3) & 1;
  copt.backend = (cuspLcpBackendId)((cflags >> 4) % CUSP_LCP_NBACKEND);
  copt.lcp.max_iter = opt.max_iter;
  copt.lcp.warm_start = (cflags >> 6) & 1;
  size_t cbytes = cusp_contact_worksize(nv, m, r, &copt);
  void* cwork = malloc(cbytes);
  if (!cwork) return solved;
  mjtNum fn[4], beta[4 * 8], gamma[4];
  int keep[4];
  for (int i = 0; i < m; i++) fn[i] = gamma[i] = 0;
  for (int k = 0; k < m * r; k++) beta[k] = 0;
  cuspConditionInfo cinfo;
  cuspLcpStatus cs = cusp_contact_solve(fn, r ? beta : NULL, gamma, keep, &cinfo, &c, &copt,
                                        cwork, cbytes);
  if (cs < 0 || cs >= CUSP_LCP_NSTATUS) abort();
  if (cs == CUSP_LCP_SOLVED) {
    for (int i = 0; i < m; i++) {
      if (!isfinite(fn[i]) || !isfinite(gamma[i]) || (keep[i] != 0 && keep[i] != 1)) abort();
    }
    for (int k = 0; k < m * r; k++) {
      if (!isfinite(beta[k])) abort();
    }
    if (cinfo.kept < 0 || cinfo.kept > m) abort();
  }
  solved += cs == CUSP_LCP_SOLVED;
  free(cwork);
  return solved;
}
