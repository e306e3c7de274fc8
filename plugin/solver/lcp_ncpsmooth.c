// LCP backend "ncpsmooth": smoothing Newton on the box-LCP equation z = mid(lo, hi, z - w).
//
// The plus function (t)_+ = max(t, 0) is replaced by the Chen-Harker-Kanzow-Smale smoothing
//     p_mu(t) = (t + sqrt(t^2 + 4 mu^2)) / 2,        0 < p_mu'(t) < 1,
// (a member of the Chen-Mangasarian class the Cosserat-rod seed cites for its smoothed NCP), so
//     mid_mu(x) = lo + p_mu(x - lo) - p_mu(x - hi)      (terms with an infinite bound dropped)
// and H_mu(z) = z - mid_mu(z - w), w = M z + q, is smooth for mu > 0. For the standard bounds,
// H_mu(z) = 0 is z w = mu^2 with z, w > 0: the central path. mu is an unknown of the system
//     E(mu, z) = (mu, H_mu(z)) = 0,   merit psi = mu^2 + ||H_mu(z)||^2,
// solved by the smoothing Newton method of Qi, Sun and Zhou (Math. Program. 87, 2000): the step
//     dmu = -mu + beta mubar,   beta = gamma min(1, psi)     (mu falls as psi, then as psi^2)
//     J dz = -H_mu(z) - dH/dmu dmu,   J = diag(1 - g) + diag(g) M,   g = d mid_mu / dx in (0, 1),
// by LU (Levenberg-Marquardt on J^T J when J is singular or the step fails: contact LCPs have zero
// diagonals on their cone-slack rows), then Armijo backtracking on psi along (dmu, dz) with its
// exact slope 2 mu dmu + 2 H^T (J dz + dH/dmu dmu). When no step descends (mu has fallen far
// below the residual), the smoothing restarts from mu = the current natural residual.
// Below a natural residual of 1e-3 each iteration also tries one mu = 0 Newton step with the
// current active set (an LCP's exact active set gives the answer in one step; degenerate problems
// otherwise crawl along the smoothed path), kept when it halves the residual. A warm start whose
// residual does not halve in 10 iterations (a degenerate previous answer can sit where Newton
// makes no progress) is abandoned for a cold start, and the best iterate of both is returned.
// The natural residual ||z - mid(lo, hi, z - w)||_inf <= tol ends the solve; w is affine in z, so
// a line-search trial costs O(n).
#include <math.h>
#include <string.h>

#include "solver/lapack_shim.h"
#include "solver/lcp_internal.h"

enum { kNcpVectors = 11 };  // n-vectors in the workspace (below)

size_t cusp_lcp_ncpsmooth_worksize(int n) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * nn * nn) * 2 + CUSP_ALIGN(sizeof(mjtNum) * nn) * kNcpVectors +
         CUSP_ALIGN(sizeof(int) * nn) * 2;
}

// CHKS plus function p, its derivatives dp/dt and dp/dmu.
static inline void chks(mjtNum* p, mjtNum* dp, mjtNum* dpmu, mjtNum t, mjtNum mu) {
  mjtNum r = sqrt(t * t + 4 * mu * mu);
  if (r == 0) {  // t = 0, mu = 0: the kink of max(t, 0); any slope in [0, 1] is a subgradient
    *p = 0;
    *dp = 0.5;
    *dpmu = 1;
    return;
  }
  // t >= 0: (t + r)/2; t < 0: 2 mu^2 / (r - t) avoids cancellation
  *p = t >= 0 ? 0.5 * (t + r) : 2 * mu * mu / (r - t);
  *dp = 0.5 * (1 + t / r);
  *dpmu = 2 * mu / r;
}

// H = z - mid_mu(z - w), g = d mid_mu / dx and hmu = dH / dmu (g, hmu may be NULL); returns
// the merit psi = mu^2 + ||H||^2.
static mjtNum smoothed_residual(mjtNum* H, mjtNum* g, mjtNum* hmu, const mjtNum* z, const mjtNum* w,
                                const cuspLcpProblem* p, mjtNum mu) {
  mjtNum psi = mu * mu;
  for (int i = 0; i < p->n; i++) {
    mjtNum lo = cusp_lo(p, i), hi = cusp_hi(p, i), x = z[i] - w[i];
    mjtNum mid = x, gi = 1, mi = 0;
    mjtNum a = 0, da = 0, am = 0, b = 0, db = 0, bm = 0;
    if (lo == hi) {
      mid = lo;
      gi = 0;
    } else if (isfinite(lo) && isfinite(hi)) {
      chks(&a, &da, &am, x - lo, mu);
      chks(&b, &db, &bm, x - hi, mu);
      mid = lo + a - b;
      gi = da - db;
      mi = am - bm;
    } else if (isfinite(lo)) {
      chks(&a, &da, &am, x - lo, mu);
      mid = lo + a;
      gi = da;
      mi = am;
    } else if (isfinite(hi)) {
      chks(&b, &db, &bm, x - hi, mu);
      mid = x - b;
      gi = 1 - db;
      mi = -bm;
    }
    H[i] = z[i] - mid;
    if (g) g[i] = gi;
    if (hmu) hmu[i] = -mi;
    psi += H[i] * H[i];
  }
  return psi;
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

// Levenberg-Marquardt direction: (J^T J + lambda I) d = J^T rhs, lambda = lm_fac max diag(J^T J)
// (raised until the Cholesky succeeds); J (n x n), jtj (n x n) scratch.
static int lm_direction(mjtNum* d, const mjtNum* J, mjtNum* jtj, const mjtNum* rhs, mjtNum lm_fac,
                        int n) {
  cusp_dsyrk_lower_t(jtj, J, 1.0, 0.0, n, n, n, n);
  mjtNum diag = 0;
  for (int i = 0; i < n; i++) diag = fmax(diag, jtj[i + (size_t)i * n]);
  mjtNum lambda = fmax(lm_fac * diag, 1e-300);
  cusp_dgemv(d, 'T', J, rhs, 1.0, 0.0, n, n, n);
  for (int attempt = 0; attempt < 8; attempt++) {
    if (attempt > 0) cusp_dsyrk_lower_t(jtj, J, 1.0, 0.0, n, n, n, n);
    for (int i = 0; i < n; i++) jtj[i + (size_t)i * n] += lambda;
    if (cusp_dpotrf(jtj, n, n) == 0) return cusp_dpotrs(d, jtj, n, 1, n, n);
    lambda *= 100;
  }
  return 1;
}

// A warm-started round gives up (for a cold restart) when its natural residual has not halved
// in this many iterations.
enum { kStall = 10 };

// Natural-residual level below which a mu = 0 polishing step is tried.
static const mjtNum kPolish = 1e-3;

// zt = z + d, wt = M zt + q; returns the natural residual at zt (INFINITY if not finite).
static mjtNum step_residual(mjtNum* zt, mjtNum* wt, const mjtNum* d, const mjtNum* z,
                            const cuspLcpProblem* p) {
  int n = p->n;
  for (int i = 0; i < n; i++) {
    zt[i] = z[i] + d[i];
    if (!isfinite(zt[i])) return INFINITY;
  }
  memcpy(wt, p->q, sizeof(mjtNum) * (size_t)n);
  cusp_dgemv(wt, 'N', p->M, zt, 1.0, 1.0, n, n, p->ldm);
  return natural_residual(zt, wt, p);
}

// Polishing: H_0 = z - mid(lo, hi, z - w); on the free set F (lo < z_i - w_i < hi) the step
// solves row i of M d = -w_i, elsewhere d_i = -H_0,i (z_i moves onto its bound): the reduced
// system M_FF d_F = -H_F - M_FI d_I (LU; LM when the LU step does not bring the residual below
// 1e-3 kPolish); zt = z + d, wt = M zt + q. Returns the natural residual at zt. A, B (k x k)
// scratch; H, d, rhs (n); idx (n) ints.
static mjtNum polish(mjtNum* zt, mjtNum* wt, mjtNum* A, mjtNum* B, int* ipiv, int* idx, mjtNum* H,
                     mjtNum* d, mjtNum* rhs, const mjtNum* z, const mjtNum* w,
                     const cuspLcpProblem* p, mjtNum lm_min) {
  int n = p->n, k = 0;
  for (int i = 0; i < n; i++) {
    mjtNum lo = cusp_lo(p, i), hi = cusp_hi(p, i), x = z[i] - w[i];
    H[i] = z[i] - cusp_mid(lo, hi, x);
    d[i] = -H[i];
    if (x > lo && x < hi) idx[k++] = i;
  }
  if (k == 0) return step_residual(zt, wt, d, z, p);
  // rhs_F = -H_F - M_FI d_I; A = M_FF (ld k)
  for (int a = 0; a < k; a++) rhs[a] = -H[idx[a]];
  for (int j = 0, b = 0; j < n; j++) {
    const mjtNum* mcol = p->M + (size_t)j * p->ldm;
    if (b < k && idx[b] == j) {
      for (int a = 0; a < k; a++) A[a + (size_t)b * k] = mcol[idx[a]];
      b++;
    } else if (d[j] != 0) {
      for (int a = 0; a < k; a++) rhs[a] -= mcol[idx[a]] * d[j];
    }
  }
  mjtNum r = INFINITY;
  for (int attempt = 0; attempt < 2; attempt++) {
    int ok;
    if (attempt == 0) {  // LU
      memcpy(B, A, sizeof(mjtNum) * k * k);
      memcpy(H, rhs, sizeof(mjtNum) * k);
      ok = cusp_dgetrf(B, ipiv, k, k, k) == 0 && cusp_dgetrs(H, 'N', B, ipiv, k, 1, k, k) == 0;
    } else {  // singular or nearly (degenerate problems): the damped least-squares step
      ok = lm_direction(H, A, B, rhs, fmax(lm_min, 1e-10), k) == 0;
    }
    if (!ok) continue;
    for (int a = 0; a < k; a++) d[idx[a]] = H[a];
    r = step_residual(zt, wt, d, z, p);
    if (r < 1e-3 * kPolish) break;
  }
  return r;
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
  base += CUSP_ALIGN(sizeof(int) * nn);
  int* idx = (int*)base;
  mjtNum *wz = vec[0], *H = vec[1], *g = vec[2], *d = vec[3], *Md = vec[4], *zt = vec[5],
         *wt = vec[6], *Ht = vec[7], *zbest = vec[8], *rhs = vec[9], *hmu = vec[10];

  int budget_binds;  // the work budget (lcp.h) may cut max_iter: one Newton step an iteration
  int max_iter = cusp_solve_iteration_cap(&budget_binds, opt->max_iter > 0 ? opt->max_iter : 100,
                                          opt->work_budget, CUSP_ITER_NEWTON, n, 0);
  mjtNum lm_min = opt->newton_lm_min > 0 ? opt->newton_lm_min : 1e-14;
  const mjtNum sigma = 1e-4, t_min = 1e-12;
  cuspLcpStatus status = CUSP_LCP_MAX_ITER;
  const char* message = "iteration limit";
  mjtNum r = INFINITY, rbest = INFINITY;
  int it = 0;
  // round 0 from the caller's z (warm start) or z = mid(lo, hi, 0); a warm start that stalls
  // (a degenerate previous answer can sit where Newton makes no progress) gets round 1 from cold
  for (int round = 0; round < 2; round++) {
    if (round == 1 && (!opt->warm_start || rbest <= opt->tol || it >= max_iter)) break;
    for (int i = 0; i < n; i++) {
      if (round == 1 || !opt->warm_start || !isfinite(z[i])) {
        z[i] = cusp_mid(cusp_lo(p, i), cusp_hi(p, i), 0);
      }
    }
    memcpy(wz, p->q, sizeof(mjtNum) * nn);
    cusp_dgemv(wz, 'N', p->M, z, 1.0, 1.0, n, n, p->ldm);
    r = natural_residual(z, wz, p);
    if (round == 0) memcpy(zbest, z, sizeof(mjtNum) * nn);  // defined even if r is NaN
    if (r < rbest) {
      rbest = r;
      memcpy(zbest, z, sizeof(mjtNum) * nn);
    }
    status = CUSP_LCP_MAX_ITER;
    message = budget_binds ? "work budget reached" : "iteration limit";
    mjtNum r_mark = r;  // stall test: the residual must halve every kStall iterations
    int it_mark = it;
    // mubar = mu_0 scales with the starting residual (a warm start near the answer starts nearly
    // unsmoothed); gamma mubar < 1 as the method requires
    mjtNum mubar = fmax(0.1 * fmin(r, 1e6), 1e-300), mu = mubar;
    mjtNum gamma = fmin(0.2, 0.5 / mubar);
    int restarts = 0;
    mjtNum polish_below = kPolish;
    for (; it < max_iter && r > opt->tol; it++) {
      if (round == 0 && opt->warm_start && it - it_mark > kStall) {
        status = CUSP_LCP_MAX_ITER;
        message = "stalled (the residual did not halve in 10 iterations)";
        break;
      }
      mjtNum psi = smoothed_residual(H, g, hmu, z, wz, p, mu);
      mjtNum dmu = -mu + gamma * fmin(1.0, psi) * mubar;

      // J = diag(1 - g) + diag(g) M; right-hand side -H - dH/dmu dmu
      for (int j = 0; j < n; j++) {
        const mjtNum* mcol = p->M + (size_t)j * p->ldm;
        mjtNum* jcol = J + (size_t)j * nn;
        for (int i = 0; i < n; i++) jcol[i] = g[i] * mcol[i];
        jcol[j] += 1 - g[j];
      }
      for (int i = 0; i < n; i++) rhs[i] = -H[i] - hmu[i] * dmu;
      // Newton direction by LU (on a copy: J stays for the LM fallback)
      memcpy(jtj, J, sizeof(mjtNum) * nn * nn);
      memcpy(d, rhs, sizeof(mjtNum) * nn);
      int ok =
          cusp_dgetrf(jtj, ipiv, n, n, n) == 0 && cusp_dgetrs(d, 'N', jtj, ipiv, n, 1, n, n) == 0;
      for (int i = 0; ok && i < n; i++) ok = isfinite(d[i]);
      int lm = !ok, taken = 0;
      mjtNum lm_fac = lm_min;
      for (int pass = 0; pass < 4 && !taken; pass++) {
        if (lm) {
          if (lm_direction(d, J, jtj, rhs, lm_fac, n) != 0) break;
          lm_fac *= 1e3;
        }
        // slope of psi along (dmu, d): 2 mu dmu + 2 H^T (J d + dH/dmu dmu)
        cusp_dgemv(Ht, 'N', J, d, 1.0, 0.0, n, n, n);
        mjtNum slope = 2 * mu * dmu;
        for (int i = 0; i < n; i++) slope += 2 * H[i] * (Ht[i] + hmu[i] * dmu);
        lm = 1;  // a failed step is retried damped
        if (!(slope < 0)) continue;
        cusp_dgemv(Md, 'N', p->M, d, 1.0, 0.0, n, n, p->ldm);
        mjtNum t = 1;
        while (t >= t_min) {
          for (int i = 0; i < n; i++) {
            zt[i] = z[i] + t * d[i];
            wt[i] = wz[i] + t * Md[i];
          }
          mjtNum mut = mu + t * dmu;
          mjtNum psit = smoothed_residual(Ht, NULL, NULL, zt, wt, p, mut);
          if (isfinite(psit) && psit <= psi + sigma * t * slope) {
            memcpy(z, zt, sizeof(mjtNum) * nn);
            memcpy(wz, wt, sizeof(mjtNum) * nn);
            mu = mut;
            taken = 1;
            break;
          }
          t *= 0.5;
        }
      }
      if (!taken) {
        // stuck (mu far below the residual: the smoothed Jacobian is nearly the nonsmooth one):
        // restart the smoothing from the current residual, a few times at most
        if (restarts < 5 && it + 1 < max_iter) {
          restarts++;
          mubar = mu = fmax(r, 1e-300);
          gamma = fmin(0.2, 0.5 / mubar);
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
      if (r > opt->tol && r < polish_below) {
        // close to the answer: one Newton step on the unsmoothed equation (mu = 0) with the active
        // set of the current iterate; an LCP's exact active set gives the solution in one step.
        // Kept when it halves the natural residual (degenerate problems stall on the smoothed
        // path); after a failed try the next waits until the residual has fallen 10x
        mjtNum r_p = polish(zt, wt, J, jtj, ipiv, idx, Ht, d, rhs, z, wz, p, lm_min);
        polish_below = r_p < 0.5 * r ? kPolish : 0.1 * r;
        if (r_p < 0.5 * r) {
          memcpy(z, zt, sizeof(mjtNum) * nn);
          memcpy(wz, wt, sizeof(mjtNum) * nn);
          r = r_p;
          mu = fmin(mu, r);
        }
      }
      if (r < rbest) {
        rbest = r;
        memcpy(zbest, z, sizeof(mjtNum) * nn);
      }
      if (r < 0.5 * r_mark) {
        r_mark = r;
        it_mark = it;
      }
    }
    if (r <= opt->tol) break;
  }  // rounds
  status = rbest <= opt->tol ? CUSP_LCP_SOLVED : status;
  memcpy(z, zbest, sizeof(mjtNum) * nn);
  memcpy(wz, p->q, sizeof(mjtNum) * nn);
  cusp_dgemv(wz, 'N', p->M, z, 1.0, 1.0, n, n, p->ldm);
  info->iterations = it;
  info->work = it * cusp_solve_iteration_cost(CUSP_ITER_NEWTON, n, 0);
  info->message = status == CUSP_LCP_SOLVED ? "" : message;
  if (!w) wr = wz;  // residual vector into the workspace
  return cusp_lcp_info_end(info, status, wr, z, p, opt, t0);
}
