// Primal active-set method for a convex QP with non-negative and free unknowns (qp_active.h).
#include "solver/qp_active.h"

#include <math.h>
#include <string.h>

#include "solver/lapack_shim.h"
#include "solver/lcp_internal.h"

// rank of the free rows, relative to their largest R_ii (a singular value 1e-9 of the largest
// is still solved for: the long step it gives is cut by the ratio test)
static const mjtNum kRankTol = 1e-12;
// a ray's curvature |Ws rr| / |rr| at most this (Ws has a unit diagonal)
static const mjtNum kRayCurvature = 1e-6;
enum { kRefinements = 2 };  // solves repeated on an active set whose minimiser misses tol

size_t cusp_qp_active_worksize(int n) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * (2 * nn * nn + 5 * nn + CUSP_BASIC_SOLVE_QW(nn))) +
         CUSP_ALIGN(sizeof(int) * 3 * nn);
}

// The scaled problem: unknowns xs = x / s, s_i = W_ii^-1/2, so that Ws = S W S has a unit
// diagonal and gs = Ws xs + S q = S g.
typedef struct Scaled_ {
  int n;
  mjtNum* Ws;  // (n x n) column-major
  mjtNum* s;   // (n)
  mjtNum* qs;  // (n)
} Scaled;

// gs := Ws xs + qs; returns the residual of qp_active.h in the units of q
static mjtNum residual(mjtNum* gs, const mjtNum* xs, const Scaled* P, const int* bounded) {
  const int n = P->n;
  mjtNum res = 0;
  for (int i = 0; i < n; i++) {
    mjtNum v = P->qs[i];
    for (int j = 0; j < n; j++) v += P->Ws[i + (size_t)j * n] * xs[j];
    gs[i] = v;
  }
  for (int i = 0; i < n; i++) {
    // g_i = gs_i / s_i; W_ii x_i = xs_i / s_i (the velocity the impulse alone would give)
    mjtNum g = gs[i] / P->s[i];
    mjtNum r = bounded[i] ? fabs(fmin(xs[i] / P->s[i], g)) : fabs(g);
    if (!(r <= res)) res = isnan(r) ? INFINITY : r;
  }
  return res;
}

cuspLcpStatus cusp_qp_active(mjtNum* x, cuspQpInfo* info, const mjtNum* W, int ldw,
                             const mjtNum* q, const int* bounded, int n, mjtNum tol, int max_iter,
                             void* work, size_t work_bytes) {
  memset(info, 0, sizeof(*info));
  info->status = CUSP_LCP_BAD_INPUT;
  info->residual = INFINITY;
  if (n <= 0 || ldw < n || work_bytes < cusp_qp_active_worksize(n)) return info->status;
  const size_t nn = (size_t)n;
  Scaled P = {n, (mjtNum*)work, NULL, NULL};
  mjtNum* A = P.Ws + nn * nn;  // (m x m) the free unknowns' rows of Ws
  P.s = A + nn * nn;
  P.qs = P.s + nn;
  mjtNum* xs = P.qs + nn;      // (n) scaled unknowns
  mjtNum* gs = xs + nn;        // (n) scaled row velocities
  mjtNum* d = gs + nn;         // (n) step of the free unknowns
  mjtNum* qw = d + nn;         // QR scratch
  int* active = (int*)((char*)work + CUSP_ALIGN(sizeof(mjtNum) * (2 * nn * nn + 5 * nn +
                                                                  CUSP_BASIC_SOLVE_QW(nn))));
  int* idx = active + n;
  int* jpvt = idx + n;
  for (int i = 0; i < n; i++) {
    mjtNum wii = W[i + (size_t)i * ldw];
    P.s[i] = wii > 0 && isfinite(wii) ? 1 / sqrt(wii) : 1;
  }
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) P.Ws[i + j * nn] = P.s[i] * W[i + (size_t)j * ldw] * P.s[j];
    P.qs[j] = P.s[j] * q[j];
    xs[j] = bounded[j] && !(x[j] > 0) ? 0 : x[j] / P.s[j];
  }
  // the start's active set: the bounded unknowns the natural map puts at 0
  mjtNum res = residual(gs, xs, &P, bounded);
  for (int i = 0; i < n; i++) {
    active[i] = bounded[i] && (xs[i] <= 0 || xs[i] < gs[i]);
    if (active[i]) xs[i] = 0;
  }
  if (max_iter <= 0) max_iter = 4 * n + 10;
  cuspLcpStatus status = CUSP_LCP_MAX_ITER;
  int refinements = 0;
  for (;;) {
    res = residual(gs, xs, &P, bounded);
    if (res <= tol) {
      status = CUSP_LCP_SOLVED;
      break;
    }
    if (!isfinite(res) || info->iterations >= max_iter) break;
    info->iterations++;
    int m = 0;
    for (int i = 0; i < n; i++) {
      if (!active[i]) idx[m++] = i;
    }
    // the free rows: Ws_FF d = -gs_F, minimum norm; rr = gs_F + Ws_FF d is left where gs_F is
    // not in the range (inconsistent rows)
    for (int a = 0; a < m; a++) {
      d[a] = -gs[idx[a]];
      for (int b = 0; b < m; b++) A[a + (size_t)b * m] = P.Ws[idx[a] + (size_t)idx[b] * nn];
    }
    if (m > 0 && !cusp_min_norm_solve(d, A, m, kRankTol, qw, jpvt)) {
      status = CUSP_LCP_NUMERICAL;
      break;
    }
    mjtNum ray_size = 0;
    for (int a = 0; a < m; a++) {
      mjtNum v = gs[idx[a]];
      for (int b = 0; b < m; b++) v += P.Ws[idx[a] + (size_t)idx[b] * nn] * d[b];
      A[a] = v;  // rr (A is free again)
      ray_size = fmax(ray_size, fabs(v / P.s[idx[a]]));
    }
    // a ray: rr above the tolerance and of zero curvature (W_FF rr ~ 0 on the unit diagonal;
    // rounding left in rr by a near-singular solve has curvature and is no direction)
    int ray = 0;
    if (ray_size > 0.5 * tol) {
      mjtNum rr_max = 0, wrr_max = 0;
      for (int a = 0; a < m; a++) rr_max = fmax(rr_max, fabs(A[a]));
      for (int a = 0; a < m; a++) {
        mjtNum v = 0;
        for (int b = 0; b < m; b++) v += P.Ws[idx[a] + (size_t)idx[b] * nn] * A[b];
        wrr_max = fmax(wrr_max, fabs(v));
      }
      ray = wrr_max <= kRayCurvature * rr_max;
    }
    if (ray) {
      for (int a = 0; a < m; a++) d[a] = -A[a];  // zero curvature, descent: gs_F . rr = |rr|^2
    }
    // ratio test: the first bounded free unknown to reach 0 stops the step
    mjtNum alpha = ray ? INFINITY : 1;
    int block = -1;
    for (int a = 0; a < m; a++) {
      int i = idx[a];
      if (bounded[i] && d[a] < 0 && xs[i] / -d[a] < alpha) {
        alpha = xs[i] / -d[a];
        block = i;
      }
    }
    if (!isfinite(alpha)) {  // a ray nothing bounds: no minimiser
      status = CUSP_LCP_NUMERICAL;
      break;
    }
    for (int a = 0; a < m; a++) xs[idx[a]] += alpha * d[a];
    if (block >= 0) {
      xs[block] = 0;
      active[block] = 1;
      continue;
    }
    // a full step: the active unknown whose row pulls (g_i < 0) the most leaves the active set
    residual(gs, xs, &P, bounded);
    int leave = -1;
    mjtNum worst = -0.5 * tol;
    for (int i = 0; i < n; i++) {
      mjtNum g = gs[i] / P.s[i];
      if (active[i] && g < worst) {
        worst = g;
        leave = i;
      }
    }
    if (leave < 0) {
      // the minimiser of this active set: a second solve from it refines the rounding of a
      // near-singular one; nothing else is left to change
      mjtNum before = res;
      res = residual(gs, xs, &P, bounded);
      if (res <= tol) status = CUSP_LCP_SOLVED;
      if (res <= tol || !(res < 0.5 * before) || refinements >= kRefinements) break;
      refinements++;
      continue;
    }
    active[leave] = 0;
  }
  for (int i = 0; i < n; i++) x[i] = xs[i] * P.s[i];
  info->status = status;
  info->residual = res;
  return status;
}
