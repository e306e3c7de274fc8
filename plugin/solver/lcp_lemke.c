// Lemke's complementary pivoting with the lexicographic ratio test (no cycling on degenerate
// problems), covering vector d = 1. Tableau kept as an explicit basis inverse (n x n, O(n^2) per
// pivot). When z0 leaves the basis the basic solution solves the LCP; when the entering column
// has no positive entry the method stops on a secondary ray, which for copositive-plus M proves
// that no solution exists and for other M means Lemke cannot decide: either way it is reported
// as CUSP_LCP_NO_SOLUTION with message "secondary ray". The final basis is polished by one LU
// solve of M_SS z_S = -q_S on the basic z variables.
#include <math.h>
#include <string.h>

#include "solver/lapack_shim.h"
#include "solver/lcp.h"
#include "solver/lcp_internal.h"

// variable numbering: 0..n-1 = w_j, n..2n-1 = z_j, 2n = z0
size_t cusp_lcp_lemke_worksize(int n) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * (2 * nn * nn + 4 * nn)) + CUSP_ALIGN(sizeof(int) * 3 * nn);
}

// entering column c = B^-1 a_v (n)
static void lemke_column(mjtNum* c, int v, const mjtNum* binv, const cuspLcpProblem* p) {
  int n = p->n;
  if (v < n) {
    memcpy(c, binv + (size_t)v * n, sizeof(mjtNum) * n);
  } else if (v < 2 * n) {
    cusp_dgemv(c, 'N', binv, p->M + (size_t)(v - n) * p->ldm, -1.0, 0.0, n, n, n);
  } else {
    for (int i = 0; i < n; i++) c[i] = 0;
    for (int k = 0; k < n; k++) {
      const mjtNum* col = binv + (size_t)k * n;
      for (int i = 0; i < n; i++) c[i] -= col[i];
    }
  }
}

// lexicographic minimum ratio among rows cand[0..ncand-1]; prefers the z0 row on a tie in the
// first component (so the method terminates as early as possible). value_ties: the tie test of
// cuspLcpOptions.lemke_value_ties.
static int lemke_ratio(int* cand, int ncand, const mjtNum* c, const mjtNum* qbar,
                       const mjtNum* binv, const int* basis, int n, int value_ties) {
  mjtNum best = INFINITY;
  for (int k = 0; k < ncand; k++) best = fmin(best, qbar[cand[k]] / c[cand[k]]);
  mjtNum tie = 1e-12 * (1 + fabs(best)), qmax = 0;
  if (value_ties) {
    for (int i = 0; i < n; i++) qmax = fmax(qmax, fabs(qbar[i]));
  }
  int m = 0;
  for (int k = 0; k < ncand; k++) {
    int r = cand[k];
    if (value_ties ? qbar[r] - best * c[r] <= 1e-13 * qmax : qbar[r] / c[r] <= best + tie) {
      cand[m++] = r;
    }
  }
  for (int k = 0; k < m; k++) {
    if (basis[cand[k]] == 2 * n) return cand[k];
  }
  for (int col = 0; col < n && m > 1; col++) {
    const mjtNum* b = binv + (size_t)col * n;
    best = INFINITY;
    for (int k = 0; k < m; k++) best = fmin(best, b[cand[k]] / c[cand[k]]);
    tie = 1e-13 * (1 + fabs(best));
    int m2 = 0;
    for (int k = 0; k < m; k++) {
      if (b[cand[k]] / c[cand[k]] <= best + tie) cand[m2++] = cand[k];
    }
    m = m2;
  }
  return cand[0];
}

static void lemke_pivot(mjtNum* binv, mjtNum* qbar, const mjtNum* c, int r, int n) {
  mjtNum inv = 1.0 / c[r];
  for (int k = 0; k < n; k++) {
    mjtNum* col = binv + (size_t)k * n;
    mjtNum piv = col[r] * inv;
    if (piv != 0) {
      for (int i = 0; i < n; i++) col[i] -= c[i] * piv;
    }
    col[r] = piv;
  }
  mjtNum piv = qbar[r] * inv;
  for (int i = 0; i < n; i++) qbar[i] -= c[i] * piv;
  qbar[r] = piv;
}

// Re-solve the basic z variables exactly: M_SS z_S = -q_S. Keeps it if the residual improves.
static void lemke_polish(mjtNum* z, mjtNum* w, cuspLcpInfo* info, const cuspLcpProblem* p,
                         mjtNum* lu, mjtNum* zs, int* idx, int* ipiv) {
  int n = p->n, s = 0;
  for (int j = 0; j < n; j++) {
    if (z[j] > 0) idx[s++] = j;
  }
  if (s == 0) return;
  for (int b = 0; b < s; b++) {
    for (int a = 0; a < s; a++) lu[a + (size_t)b * s] = p->M[idx[a] + (size_t)idx[b] * p->ldm];
    zs[b] = -p->q[idx[b]];
  }
  if (cusp_dgetrf(lu, ipiv, s, s, s) != 0) return;
  if (cusp_dgetrs(zs, 'N', lu, ipiv, s, 1, s, s) != 0) return;
  for (int b = 0; b < s; b++) {
    if (!(zs[b] >= 0)) return;
  }
  cuspLcpInfo trial = *info;
  mjtNum* zt = lu;  // reuse: the factor is no longer needed
  for (int j = 0; j < n; j++) zt[j] = 0;
  for (int b = 0; b < s; b++) zt[idx[b]] = zs[b];
  cusp_lcp_residual(w, &trial, zt, p);
  if (trial.residual <= info->residual) {
    memcpy(z, zt, sizeof(mjtNum) * n);
    *info = trial;
  } else {
    cusp_lcp_residual(w, info, z, p);
  }
}

cuspLcpStatus cusp_lcp_lemke(mjtNum* z, mjtNum* w_out, cuspLcpInfo* info,
                             const cuspLcpProblem* p, const cuspLcpOptions* opt, void* work,
                             size_t work_bytes) {
  double t0 = cusp_now();
  if (!cusp_lcp_check(info, p, cusp_lcp_lemke_worksize(p ? p->n : 0), work_bytes, "lemke")) {
    return info->status;
  }
  if (!cusp_lcp_standard_bounds(p)) {
    info->status = CUSP_LCP_BAD_INPUT;
    info->message = "lemke supports only lo = 0, hi = +inf";
    return info->status;
  }
  int n = p->n;
  size_t nn = (size_t)(n > 0 ? n : 1);
  mjtNum* binv = (mjtNum*)work;  // (n x n) basis inverse
  mjtNum* lu = binv + nn * nn;   // (n x n) polish factor
  mjtNum* qbar = lu + nn * nn;   // (n) basic values B^-1 q
  mjtNum* c = qbar + nn;         // (n) entering column
  mjtNum* w = c + nn;            // (n) residual scratch
  mjtNum* zs = w + nn;           // (n) polish rhs
  int* basis = (int*)((char*)work + CUSP_ALIGN(sizeof(mjtNum) * (2 * nn * nn + 4 * nn)));
  int* cand = basis + nn;        // (n)
  int* ipiv = cand + nn;         // (n)
  int budget_binds;
  int max_piv = cusp_solve_iteration_cap(&budget_binds, opt->max_iter > 0 ? opt->max_iter
                                                                          : 1000 + 50 * n,
                                         opt->work_budget, CUSP_ITER_LEMKE_PIVOT, n, 0);
  mjtNum ptol = opt->lemke_pivot_tol > 0 ? opt->lemke_pivot_tol : 1e-12;

  for (int j = 0; j < n; j++) z[j] = 0;
  int rmin = -1;
  for (int i = 0; i < n; i++) {
    if (p->q[i] < 0 && (rmin < 0 || p->q[i] <= p->q[rmin])) rmin = i;  // ties: largest index
  }
  cuspLcpStatus status = CUSP_LCP_MAX_ITER;
  int piv = 0;
  if (rmin < 0) {
    status = CUSP_LCP_SOLVED;  // q >= 0: z = 0
  } else if (max_piv < 1) {
    info->message = budget_binds ? "work budget reached" : "pivot limit reached";
  } else {
    memset(binv, 0, sizeof(mjtNum) * nn * nn);
    for (int i = 0; i < n; i++) {
      binv[i + (size_t)i * n] = 1;
      qbar[i] = p->q[i];
      basis[i] = i;
    }
    lemke_column(c, 2 * n, binv, p);
    lemke_pivot(binv, qbar, c, rmin, n);
    int leaving = basis[rmin];
    basis[rmin] = 2 * n;
    piv = 1;
    for (;;) {
      if (leaving == 2 * n) {
        status = CUSP_LCP_SOLVED;
        break;
      }
      if (piv >= max_piv) {
        info->message = budget_binds ? "work budget reached" : "pivot limit reached";
        break;
      }
      int entering = leaving < n ? leaving + n : leaving - n;
      lemke_column(c, entering, binv, p);
      mjtNum cmax = 0;
      for (int i = 0; i < n; i++) cmax = fmax(cmax, fabs(c[i]));
      if (!isfinite(cmax)) {
        status = CUSP_LCP_NUMERICAL;
        info->message = "non-finite tableau";
        break;
      }
      int ncand = 0;
      for (int i = 0; i < n; i++) {
        if (c[i] > ptol * fmax(1.0, cmax)) cand[ncand++] = i;
      }
      if (ncand == 0) {
        status = CUSP_LCP_NO_SOLUTION;
        info->message = "secondary ray";
        break;
      }
      int r = lemke_ratio(cand, ncand, c, qbar, binv, basis, n, opt->lemke_value_ties);
      lemke_pivot(binv, qbar, c, r, n);
      leaving = basis[r];
      basis[r] = entering;
      piv++;
    }
    if (status == CUSP_LCP_SOLVED || status == CUSP_LCP_MAX_ITER) {
      for (int i = 0; i < n; i++) {
        if (basis[i] >= n && basis[i] < 2 * n) z[basis[i] - n] = fmax(0.0, qbar[i]);
      }
    }
  }
  info->iterations = piv;
  info->work = piv * cusp_solve_iteration_cost(CUSP_ITER_LEMKE_PIVOT, n, 0);
  if (status == CUSP_LCP_SOLVED && n > 0) {
    cusp_lcp_residual(w, info, z, p);
    // the polish (an LU of the basic columns, s^3 / 3 + 2 n^2) is work of this run too: done
    // only if the budget still pays for it
    int basic = 0;
    for (int j = 0; j < n; j++) basic += z[j] > 0;
    mjtNum polish = (mjtNum)basic * basic * basic / 3 + 2.0 * n * n;
    mjtNum spent = piv * cusp_solve_iteration_cost(CUSP_ITER_LEMKE_PIVOT, n, 0);
    mjtNum budget = opt->work_budget > 0 ? opt->work_budget : CUSP_SOLVE_WORK_BUDGET;
    int affordable = opt->work_budget < 0 || spent + polish <= budget;
    if (info->residual > opt->tol && !affordable) {
      status = CUSP_LCP_MAX_ITER;
      info->message = "work budget reached";
    }
    if (info->residual > opt->tol && affordable) {
      lemke_polish(z, w, info, p, lu, zs, cand, ipiv);
      info->work += polish;
    }
  }
  return cusp_lcp_info_end(info, status, w_out ? w_out : w, z, p, opt, t0);
}
