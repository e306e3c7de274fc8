// The finish of an LCP that a backend stopped short on (PGS's linear rate, a pivot or budget
// cut, Lemke's ties): active-set rounds from the backend's answer, then Lemke with ties decided
// by the basic values. The contact LCP's active systems are singular as a rule: a sticking
// contact's r friction rows span 2 dimensions, and friction impulses that cancel through the body
// (two rim points pushing against each other) lie in W's null space, where PGS drifts and never
// comes back; a spurious small slack (gamma > 0 of a sticking contact) adds a cone row as an
// equality. A round therefore takes the basic solution of its active system (QR with column
// pivoting: columns dependent to 1e-10 |R_11| keep z = 0), not a factorisation that fails on it.
// Measured on the scene fuzzer's disk islands that PGS (200 sweeps) or Lemke left short (414
// problems of seeds 0-39 x 500 steps): 399 solved by the rounds, all by rounds then Lemke.
#include <math.h>
#include <string.h>

#include "solver/lapack_shim.h"
#include "solver/lcp.h"
#include "solver/lcp_internal.h"

enum { kFinishRounds = 5 };  // the first round solved 226 of the 414, five 399, more none

static size_t rounds_worksize(int n) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * (nn * nn + 5 * nn + (nn + 1) * 64)) +
         CUSP_ALIGN(sizeof(int) * 2 * nn);
}

size_t cusp_lcp_finish_worksize(int n) {
  size_t a = rounds_worksize(n), b = cusp_lcp_lemke_worksize(n);
  return CUSP_ALIGN(sizeof(mjtNum) * (size_t)(n > 0 ? n : 1)) + (a > b ? a : b);
}

// At most kFinishRounds active-set rounds from z (n, on p; w = M z + q): the first takes the rows
// with z > 0 as the active set S, the later the semismooth Newton's choice z > w from the last
// round's answer clipped at 0; each sets z_S to the basic solution of M_SS z_S = -q_S and the
// rest to 0. Returns the round that met tol (z, w and info's residuals: its answer) or 0 (z, w,
// info unchanged). work: rounds_worksize(n).
static int rounds(mjtNum* z, mjtNum* w, cuspLcpInfo* info, const cuspLcpProblem* p, mjtNum tol,
                  void* work) {
  int n = p->n;
  size_t nn = (size_t)n;
  mjtNum* M = (mjtNum*)work;  // (n x n) M_SS
  mjtNum* zc = M + nn * nn;   // (n) the round's start
  mjtNum* zt = zc + nn;       // (n) the round's answer
  mjtNum* wt = zt + nn;       // (n) M z + q of zc, then of zt
  mjtNum* x = wt + nn;        // (n)
  mjtNum* tau = x + nn;       // (n)
  mjtNum* qw = tau + nn;      // (2n + (n + 1) 64)
  int* S = (int*)((char*)work + CUSP_ALIGN(sizeof(mjtNum) * (nn * nn + 5 * nn + (nn + 1) * 64)));
  int* jpvt = S + n;
  memcpy(zc, z, sizeof(mjtNum) * nn);
  memcpy(wt, w, sizeof(mjtNum) * nn);
  for (int round = 1; round <= kFinishRounds; round++) {
    int ns = 0;
    for (int i = 0; i < n; i++) {
      if (round == 1 ? zc[i] > 0 : zc[i] > wt[i]) S[ns++] = i;
    }
    for (int i = 0; i < n; i++) zt[i] = 0;
    if (ns > 0) {
      for (int b = 0; b < ns; b++) {
        const mjtNum* col = p->M + (size_t)S[b] * p->ldm;
        for (int a = 0; a < ns; a++) M[a + (size_t)b * ns] = col[S[a]];
        x[b] = -p->q[S[b]];
      }
      if (!cusp_basic_solve(x, M, ns, 1e-10, tau, qw, jpvt)) return 0;
      for (int a = 0; a < ns; a++) zt[S[a]] = x[a];
    }
    cuspLcpInfo trial = *info;
    cusp_lcp_residual(wt, &trial, zt, p);
    if (trial.residual <= tol) {
      memcpy(z, zt, sizeof(mjtNum) * nn);
      memcpy(w, wt, sizeof(mjtNum) * nn);
      info->residual = trial.residual;
      info->siconos_error = trial.siconos_error;
      info->complementarity = trial.complementarity;
      return round;
    }
    if (!isfinite(trial.residual)) return 0;
    for (int i = 0; i < n; i++) zc[i] = zt[i] > 0 ? zt[i] : 0;
    if (round < kFinishRounds) cusp_lcp_residual(wt, &trial, zc, p);
  }
  return 0;
}

int cusp_lcp_finish(mjtNum* z, mjtNum* w, cuspLcpInfo* info, const cuspLcpProblem* p,
                    const cuspLcpOptions* opt, void* work, size_t work_bytes) {
  int n = p->n;
  if (n <= 0 || work_bytes < cusp_lcp_finish_worksize(n) || !cusp_lcp_standard_bounds(p)) return 0;
  mjtNum* zl = (mjtNum*)work;  // (n) Lemke's answer
  void* inner = (char*)work + CUSP_ALIGN(sizeof(mjtNum) * (size_t)n);
  size_t inner_bytes = work_bytes - CUSP_ALIGN(sizeof(mjtNum) * (size_t)n);
  cuspLcpInfo trial = *info;
  cusp_lcp_residual(w, &trial, z, p);
  if (!isfinite(trial.residual)) return 0;
  int how = 0, round = rounds(z, w, &trial, p, opt->tol, inner);
  if (round) {
    trial.iterations += round;
    how = 1;
  } else {
    // Lemke through the backend table (its pivots drawn from the caller's work pool), ties by
    // the basic values: the rule that solves the degenerate problems the ratio rule leaves short
    cuspLcpOptions lo = *opt;
    lo.lemke_value_ties = 1;
    cuspLcpInfo lk;
    cusp_lcp_backend(CUSP_LCP_LEMKE)->solve(zl, w, &lk, p, &lo, inner, inner_bytes);
    trial.iterations += lk.iterations;
    trial.work += lk.work;
    if (lk.status == CUSP_LCP_SOLVED) {
      memcpy(z, zl, sizeof(mjtNum) * (size_t)n);
      trial.residual = lk.residual;
      trial.siconos_error = lk.siconos_error;
      trial.complementarity = lk.complementarity;
      trial.backend = lk.backend;
      how = 2;
    } else {
      cusp_lcp_residual(w, &trial, z, p);  // w back to z's
    }
  }
  if (how) {
    trial.status = CUSP_LCP_SOLVED;
    trial.message = "";
    trial.index = -1;
  }
  // a failed finish reports the backend's own answer, with what the finish spent
  if (!how) {
    int it = trial.iterations;
    mjtNum wk = trial.work;
    trial = *info;
    trial.iterations = it;
    trial.work = wk;
  }
  *info = trial;
  return how;
}
