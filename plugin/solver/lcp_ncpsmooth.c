// LCP backend "ncpsmooth": smoothing Newton on the box-LCP equation z = mid(lo, hi, z - w).
//
// The plus function (t)_+ = max(t, 0) is replaced by the Chen-Harker-Kanzow-Smale smoothing
//     p_mu(t) = (t + sqrt(t^2 + 4 mu^2)) / 2,        0 < p_mu'(t) < 1,
// (a member of the Chen-Mangasarian class the Cosserat-rod seed cites for its smoothed NCP), so
//     mid_mu(x) = lo + p_mu(x - lo) - p_mu(x - hi)      (terms with an infinite bound dropped)
// and H_mu(z) = z - mid_mu(z - w), w = M z + q, is smooth for mu > 0. For the standard bounds,
// H_mu(z) = 0 is z w = mu^2 with z, w > 0: the central path. Each iteration takes mu from the
// current natural residual r = ||H_0(z)||_inf (mu = min(mu_prev, kappa r) with r capped at 1 so mu
// falls quadratically once r < 1), solves the Newton system
//     J d = -H_mu(z),   J = diag(1 - g) + diag(g) M,   g = d mid_mu / dx in [0, 1],
// by LU (Levenberg-Marquardt on J^T J when J is singular or the step is not a descent direction:
// contact LCPs have zero diagonals on their cone-slack rows), and backtracks along d on
// 1/2 ||H_mu||^2 with mu fixed (Armijo). w is affine in z, so a trial costs O(n).
#include <math.h>
#include <string.h>

#include "lapack_shim.h"
#include "lcp_internal.h"

enum { kNcpVectors = 10 };  // n-vectors in the workspace (below)

size_t cusp_lcp_ncpsmooth_worksize(int n) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * nn * nn) * 2 + CUSP_ALIGN(sizeof(mjtNum) * nn) * kNcpVectors +
         CUSP_ALIGN(sizeof(int) * nn);
}

// CHKS plus function and its derivative.
static inline void chks(mjtNum* p, mjtNum* dp, mjtNum t, mjtNum mu) {
  mjtNum r = sqrt(t * t + 4 * mu * mu);
  if (r == 0) {  // t = 0, mu = 0: the kink of max(t, 0); any slope in [0, 1] is a subgradient
    *p = 0;
    *dp = 0.5;
    return;
  }
  // t >= 0: (t + r)/2; t < 0: 2 mu^2 / (r - t) avoids cancellation
  *p = t >= 0 ? 0.5 * (t + r) : 2 * mu * mu / (r - t);
  *dp = 0.5 * (1 + t / r);
}

// H = z - mid_mu(z - w) and g = d mid_mu / dx (g may be NULL); returns 1/2 ||H||^2.
static mjtNum smoothed_residual(mjtNum* H, mjtNum* g, const mjtNum* z, const mjtNum* w,
                                const cuspLcpProblem* p, mjtNum mu) {
  mjtNum psi = 0;
  for (int i = 0; i < p->n; i++) {
    mjtNum lo = cusp_lo(p, i), hi = cusp_hi(p, i), x = z[i] - w[i];
    mjtNum mid = x, gi = 1;
    if (lo == hi) {
      mid = lo;
      gi = 0;
    } else {
      mjtNum a, da, b, db;
      if (isfinite(lo) && isfinite(hi)) {
        chks(&a, &da, x - lo, mu);
        chks(&b, &db, x - hi, mu);
        mid = lo + a - b;
        gi = da - db;
      } else if (isfinite(lo)) {
        chks(&a, &da, x - lo, mu);
        mid = lo + a;
        gi = da;
      } else if (isfinite(hi)) {
        chks(&b, &db, x - hi, mu);
        mid = x - b;
        gi = 1 - db;
      }
    }
    H[i] = z[i] - mid;
    if (g) g[i] = gi;
    psi += H[i] * H[i];
  }
  return 0.5 * psi;
}

// Natural residual max_i |z_i - mid(lo, hi, z_i - w_i)|.
static mjtNum natural_residual(const mjtNum* z, const mjtNum* w, const cuspLcpProblem* p) {
  mjtNum r = 0;
  for (int i = 0; i < p->n; i++) {
    mjtNum e = fabs(z[i] - cusp_mid(cusp_lo(p, i), cusp_hi(p, i), z[i] - w[i]));
    r = isnan(e) ? INFINITY : fmax(r, e);
  }
  return r;
}

// Levenberg-Marquardt direction: (J^T J + lambda I) d = -J^T H; J (n x n), jtj (n x n) scratch.
static int lm_direction(mjtNum* d, const mjtNum* J, mjtNum* jtj, const mjtNum* H, mjtNum lm_min,
                        int n) {
  cusp_dsyrk_lower_t(jtj, J, 1.0, 0.0, n, n, n, n);
  mjtNum diag = 0;
  for (int i = 0; i < n; i++) diag = fmax(diag, jtj[i + (size_t)i * n]);
  mjtNum lambda = fmax(lm_min * diag, 1e-300);
  cusp_dgemv(d, 'T', J, H, -1.0, 0.0, n, n, n);
  for (int attempt = 0; attempt < 8; attempt++) {
    if (attempt > 0) cusp_dsyrk_lower_t(jtj, J, 1.0, 0.0, n, n, n, n);
    for (int i = 0; i < n; i++) jtj[i + (size_t)i * n] += lambda;
    if (cusp_dpotrf(jtj, n, n) == 0) return cusp_dpotrs(d, jtj, n, 1, n, n);
    lambda *= 100;
  }
  return 1;
}

cuspLcpStatus cusp_lcp_ncpsmooth(mjtNum* z, mjtNum* w, cuspLcpInfo* info, const cuspLcpProblem* p,
                                 const cuspLcpOptions* opt, void* work, size_t work_bytes) {
  double t0 = cusp_now();
  if (!cusp_lcp_check(info, p, cusp_lcp_ncpsmooth_worksize(p ? p->n : 0), work_bytes,
                      "ncpsmooth")) {
    return info->status;
  }
  int n = p->n;
  mjtNum* wr = w ? w : (mjtNum*)work;  // replaced below if w is NULL
  if (n == 0) return cusp_lcp_info_end(info, CUSP_LCP_SOLVED, wr, z, p, opt, t0);

  size_t nn = (size_t)n;
  char* base = (char*)work;
  mjtNum* J = (mjtNum*)base;
  base += CUSP_ALIGN(sizeof(mjtNum) * nn * nn);
  mjtNum* jtj = (mjtNum*)base;
  base += CUSP_ALIGN(sizeof(mjtNum) * nn * nn);
  mjtNum* vec[kNcpVectors];
  for (int k = 0; k < kNcpVectors; k++) {
    vec[k] = (mjtNum*)base;
    base += CUSP_ALIGN(sizeof(mjtNum) * nn);
  }
  int* ipiv = (int*)base;
  mjtNum *wz = vec[0], *H = vec[1], *g = vec[2], *d = vec[3], *Md = vec[4], *zt = vec[5],
         *wt = vec[6], *Ht = vec[7], *zbest = vec[8], *Hd = vec[9];

  // start: the caller's z (warm) or z = mid(lo, hi, 0)
  for (int i = 0; i < n; i++) {
    if (!opt->warm_start || !isfinite(z[i])) z[i] = cusp_mid(cusp_lo(p, i), cusp_hi(p, i), 0);
  }
  int max_iter = opt->max_iter > 0 ? opt->max_iter : 100;
  mjtNum lm_min = opt->newton_lm_min > 0 ? opt->newton_lm_min : 1e-14;
  const mjtNum kappa = 0.1, sigma = 1e-4, t_min = 1e-12;

  memcpy(wz, p->q, sizeof(mjtNum) * nn);
  cusp_dgemv(wz, 'N', p->M, z, 1.0, 1.0, n, n, p->ldm);
  mjtNum r = natural_residual(z, wz, p), rbest = r;
  memcpy(zbest, z, sizeof(mjtNum) * nn);
  mjtNum mu = kappa * fmin(1.0, r) * fmax(r, 0);
  cuspLcpStatus status = CUSP_LCP_MAX_ITER;
  const char* message = "iteration limit";
  int it = 0, restarts = 0, hold_mu = 0;
  for (; it < max_iter && r > opt->tol; it++) {
    // smoothing parameter: never rises, falls with r (quadratically once r < 1)
    if (!hold_mu) mu = fmin(mu, kappa * fmin(1.0, r) * r);
    hold_mu = 0;
    mjtNum psi = smoothed_residual(H, g, z, wz, p, mu);

    // J = diag(1 - g) + diag(g) M
    for (int j = 0; j < n; j++) {
      const mjtNum* mcol = p->M + (size_t)j * p->ldm;
      mjtNum* jcol = J + (size_t)j * nn;
      for (int i = 0; i < n; i++) jcol[i] = g[i] * mcol[i];
      jcol[j] += 1 - g[j];
    }
    // Newton direction by LU; keep J intact for the LM fallback (LU works on jtj)
    memcpy(jtj, J, sizeof(mjtNum) * nn * nn);
    for (int i = 0; i < n; i++) d[i] = -H[i];
    int ok = cusp_dgetrf(jtj, ipiv, n, n, n) == 0 && cusp_dgetrs(d, 'N', jtj, ipiv, n, 1, n, n) == 0;
    for (int i = 0; ok && i < n; i++) ok = isfinite(d[i]);
    int lm = !ok;
    for (int pass = 0; pass < 2; pass++) {
      if (lm && lm_direction(d, J, jtj, H, lm_min, n) != 0) break;
      // descent check on psi: grad psi = J^T H, slope = H^T J d
      cusp_dgemv(Hd, 'N', J, d, 1.0, 0.0, n, n, n);
      mjtNum slope = 0;
      for (int i = 0; i < n; i++) slope += H[i] * Hd[i];
      if (!(slope < 0)) {
        lm = 1;
        continue;
      }
      // Armijo backtracking with mu fixed; w(z + t d) = w + t M d
      cusp_dgemv(Md, 'N', p->M, d, 1.0, 0.0, n, n, p->ldm);
      mjtNum t = 1;
      int accepted = 0;
      while (t >= t_min) {
        for (int i = 0; i < n; i++) {
          zt[i] = z[i] + t * d[i];
          wt[i] = wz[i] + t * Md[i];
        }
        mjtNum psit = smoothed_residual(Ht, NULL, zt, wt, p, mu);
        if (isfinite(psit) && psit <= psi + sigma * t * slope) {
          accepted = 1;
          break;
        }
        t *= 0.5;
      }
      if (!accepted) {
        lm = 1;
        continue;
      }
      memcpy(z, zt, sizeof(mjtNum) * nn);
      memcpy(wz, wt, sizeof(mjtNum) * nn);
      lm = -1;  // step taken
      break;
    }
    if (lm != -1) {
      // no descent even with LM: restart once or twice with strong smoothing (mu = r), or stop
      if (restarts < 3 && mu < r && it + 1 < max_iter) {
        restarts++;
        mu = r;
        hold_mu = 1;
        continue;
      }
      status = CUSP_LCP_NUMERICAL;
      message = "line search failed (no descent on the smoothed residual)";
      it++;
      break;
    }
    // refresh w exactly every few steps (affine updates accumulate rounding)
    if ((it + 1) % 10 == 0) {
      memcpy(wz, p->q, sizeof(mjtNum) * nn);
      cusp_dgemv(wz, 'N', p->M, z, 1.0, 1.0, n, n, p->ldm);
    }
    r = natural_residual(z, wz, p);
    if (r < rbest) {
      rbest = r;
      memcpy(zbest, z, sizeof(mjtNum) * nn);
    }
  }
  if (r <= opt->tol) status = CUSP_LCP_SOLVED;
  if (rbest < r) memcpy(z, zbest, sizeof(mjtNum) * nn);
  info->iterations = it;
  info->message = status == CUSP_LCP_SOLVED ? "" : message;
  if (!w) wr = wz;  // residual vector into the workspace
  return cusp_lcp_info_end(info, status, wr, z, p, opt, t0);
}
