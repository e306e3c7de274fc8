// Semismooth Newton on the Fischer-Burmeister reformulation of a box MCP (see mcp.h), with
//  - the Newton direction H d = -Phi, H = diag(Da) + diag(Db) J an element of the generalized
//    Jacobian (at the kink a = b = 0 the element (1/sqrt2 - 1, 1/sqrt2 - 1) is used);
//  - a Levenberg-Marquardt direction (H^T H + mu I) d = -H^T Phi when H is singular or the Newton
//    direction is not a descent direction for psi = 0.5 ||Phi||^2 or its line search fails;
//    mu adapts like a trust region (x10 on failure, /10 on success);
//  - an Armijo backtracking line search on psi, monotone or non-monotone (Grippo, Lampariello,
//    Lucidi 1986: sufficient decrease against the largest psi of the last few iterates, so that
//    a full step across a kink of the map, where the generalized Jacobian of one side predicts the
//    other badly, is not halved down to nothing).
#include <math.h>
#include <string.h>

#include "solver/fb_core.h"
#include "solver/lapack_shim.h"
#include "solver/lcp_internal.h"

//---------------------------------- Fischer-Burmeister pieces -----------------------------------

// phi(a, b) = sqrt(a^2 + b^2) - a - b and its partial derivatives
static inline mjtNum fb(mjtNum a, mjtNum b, mjtNum* da, mjtNum* db) {
  // sqrt of the sum of squares is much cheaper than hypot(); fall back only near overflow
  mjtNum r = (fabs(a) < 1e150 && fabs(b) < 1e150) ? sqrt(a * a + b * b) : hypot(a, b);
  if (r == 0) {
    *da = *db = 0.70710678118654752 - 1.0;
    return 0;
  }
  *da = a / r - 1;
  *db = b / r - 1;
  // sqrt(a^2+b^2) - a - b loses all digits when a, b > 0 differ in scale: use the product form
  if (a > 0 && b > 0) return -2 * a * b / (r + a + b);
  return r - a - b;
}

// Phi (n), Da (n), Db (n) from z and F; returns psi = 0.5||Phi||^2, *nat = natural residual.
static mjtNum fb_eval(mjtNum* phi, mjtNum* da, mjtNum* db, mjtNum* nat, const mjtNum* z,
                      const mjtNum* F, const mjtNum* lo, const mjtNum* hi, int n) {
  mjtNum psi = 0, res = 0;
  for (int i = 0; i < n; i++) {
    mjtNum l = lo ? lo[i] : 0, u = hi ? hi[i] : INFINITY;
    mjtNum f = F[i], x = z[i], p, a1, b1;
    if (l > -INFINITY && u == INFINITY) {
      p = fb(x - l, f, &a1, &b1);
    } else if (l == -INFINITY && u < INFINITY) {
      p = -fb(u - x, -f, &a1, &b1);  // dPhi/dz = a1 e_i + b1 J_i (signs cancel)
    } else if (l == -INFINITY) {
      p = f;
      a1 = 0;
      b1 = 1;
    } else {
      mjtNum ia, ib, oa, ob;
      mjtNum c = fb(u - x, -f, &ia, &ib);
      p = fb(x - l, c, &oa, &ob);
      a1 = oa - ob * ia;
      b1 = -ob * ib;
    }
    phi[i] = p;
    if (da) {
      da[i] = a1;
      db[i] = b1;
    }
    psi += p * p;
    mjtNum r = fabs(x - cusp_mid(l, u, x - f));
    res = (r > res || isnan(r)) ? (isnan(r) ? INFINITY : r) : res;
  }
  *nat = res;
  return isfinite(psi) ? 0.5 * psi : INFINITY;
}

//---------------------------------- the reduced Newton system -----------------------------------

// row i of H = diag(da) + diag(db) J is da_i e_i (z_i at a bound, F_i strictly away from 0)
static inline int diagonal_row(const mjtNum* da, const mjtNum* db, int i) {
  return db[i] == 0 && da[i] != 0;
}

// d_D := -phi_D / da_D on the diagonal rows (those not in rows[0..nred)), d_R := 0, and
// rhs (nred) := -phi_R - H[R,D] d_D. H (n x n) column-major.
static void reduced_rhs(mjtNum* d, mjtNum* rhs, const mjtNum* H, const mjtNum* phi,
                        const mjtNum* da, const mjtNum* db, const int* rows, int nred, int n) {
  for (int i = 0; i < n; i++) d[i] = diagonal_row(da, db, i) ? -phi[i] / da[i] : 0;
  for (int a = 0; a < nred; a++) rhs[a] = -phi[rows[a]];
  for (int j = 0; j < n; j++) {
    if (d[j] == 0) continue;  // R entries are 0: only D columns contribute
    const mjtNum* Hj = H + (size_t)j * n;
    for (int a = 0; a < nred; a++) rhs[a] -= Hj[rows[a]] * d[j];
  }
}

// K (nred x nred, column-major) := H[R,R]
static void gather_block(mjtNum* K, const mjtNum* H, const int* rows, int nred, int n) {
  for (int b = 0; b < nred; b++) {
    const mjtNum* Hb = H + (size_t)rows[b] * n;
    mjtNum* Kb = K + (size_t)b * nred;
    for (int a = 0; a < nred; a++) Kb[a] = Hb[rows[a]];
  }
}

// Levenberg-Marquardt step on R with d_D fixed: rhs (nred) in: rhs_R, out: d_R solving
// (H_RR^T H_RR + mu I) d_R = H_RR^T rhs_R, mu = lm_fac max diag(H_RR^T H_RR), lm_fac raised x10
// until the Cholesky factor exists. X, K: nred x nred scratch (X := H_RR gathered once, so the
// product is one syrk on contiguous columns); v: nred scratch. Returns 1 on success.
static int reduced_lm(mjtNum* rhs, mjtNum* X, mjtNum* K, const mjtNum* H, const int* rows,
                      int nred, int n, mjtNum* lm_fac, mjtNum lm_min, mjtNum* v) {
  gather_block(X, H, rows, nred, n);
  cusp_dgemv(v, 'T', X, rhs, 1.0, 0.0, nred, nred, nred);
  while (*lm_fac < 1e12) {
    cusp_dsyrk_lower_t(K, X, 1.0, 0.0, nred, nred, nred, nred);
    mjtNum dmax = 0;
    for (int b = 0; b < nred; b++) dmax = fmax(dmax, K[b + (size_t)b * nred]);
    if (dmax == 0) dmax = 1;
    mjtNum mu = dmax * fmax(*lm_fac, lm_min);
    for (int a = 0; a < nred; a++) K[a + (size_t)a * nred] += mu;
    if (cusp_dpotrf(K, nred, nred) == 0) {
      memcpy(rhs, v, sizeof(mjtNum) * nred);
      cusp_dpotrs(rhs, K, nred, 1, nred, nred);
      return 1;
    }
    *lm_fac *= 10;
  }
  return 0;
}

//---------------------------------- the band Newton system --------------------------------------

// Band mode: J and H (n x n) in band storage at offset ku (lb = kl + ku + 1 rows); the reduced
// system H[R,R] keeps the band (kl, ku) since R's order is that of the unknowns. pos[i]: the
// index of row i in R, -1 for a diagonal row.

// H := diag(da) + diag(db) J, g := H^T phi
static void band_newton_matrix(mjtNum* H, mjtNum* g, const mjtNum* J, const mjtNum* phi,
                               const mjtNum* da, const mjtNum* db, int n, int kl, int ku) {
  const int lb = kl + ku + 1;
  for (int j = 0; j < n; j++) {
    const mjtNum* Jc = J + (size_t)j * lb + ku - j;  // Jc[i] = J(i, j)
    mjtNum* Hc = H + (size_t)j * lb + ku - j;
    int i0 = j - ku > 0 ? j - ku : 0, i1 = j + kl < n - 1 ? j + kl : n - 1;
    mjtNum s = 0;
    for (int i = i0; i <= i1; i++) {
      Hc[i] = db[i] * Jc[i];
      if (i == j) Hc[i] += da[j];
      s += Hc[i] * phi[i];
    }
    g[j] = s;
  }
}

// as reduced_rhs, on the band H
static void band_reduced_rhs(mjtNum* d, mjtNum* rhs, const mjtNum* H, const mjtNum* phi,
                             const mjtNum* da, const mjtNum* db, const int* rows, const int* pos,
                             int nred, int n, int kl, int ku) {
  const int lb = kl + ku + 1;
  for (int i = 0; i < n; i++) d[i] = diagonal_row(da, db, i) ? -phi[i] / da[i] : 0;
  for (int a = 0; a < nred; a++) rhs[a] = -phi[rows[a]];
  for (int j = 0; j < n; j++) {
    if (d[j] == 0) continue;
    const mjtNum* Hc = H + (size_t)j * lb + ku - j;
    int i0 = j - ku > 0 ? j - ku : 0, i1 = j + kl < n - 1 ? j + kl : n - 1;
    for (int i = i0; i <= i1; i++) {
      if (pos[i] >= 0) rhs[pos[i]] -= Hc[i] * d[j];
    }
  }
}

// K (ldk x nred) := H[R,R] in band storage at offset off (off = kl + ku for the LU, ku plain)
static void band_gather(mjtNum* K, int ldk, int off, const mjtNum* H, const int* rows,
                        const int* pos, int nred, int n, int kl, int ku) {
  const int lb = kl + ku + 1;
  memset(K, 0, sizeof(mjtNum) * (size_t)ldk * (nred > 0 ? nred : 1));
  for (int b = 0; b < nred; b++) {
    int j = rows[b];
    const mjtNum* Hc = H + (size_t)j * lb + ku - j;
    mjtNum* Kc = K + (size_t)b * ldk + off - b;
    int i0 = j - ku > 0 ? j - ku : 0, i1 = j + kl < n - 1 ? j + kl : n - 1;
    for (int i = i0; i <= i1; i++) {
      if (pos[i] >= 0) Kc[pos[i]] = Hc[i];
    }
  }
}

// K (lower band, kd = kl + ku, ldk) := A^T A for A (m x m, band (kl, ku) at offset ku)
static void band_normal(mjtNum* K, int ldk, const mjtNum* A, int m, int kl, int ku) {
  const int lb = kl + ku + 1, kd = kl + ku;
  for (int b = 0; b < m; b++) {
    const mjtNum* Ab = A + (size_t)b * lb + ku - b;  // Ab[i] = A(i, b)
    int a1 = b + kd < m - 1 ? b + kd : m - 1;
    for (int a = b; a <= a1; a++) {
      const mjtNum* Aa = A + (size_t)a * lb + ku - a;
      int i0 = a - ku > 0 ? a - ku : 0, i1 = b + kl < m - 1 ? b + kl : m - 1;
      mjtNum s = 0;
      for (int i = i0; i <= i1; i++) s += Aa[i] * Ab[i];
      K[(size_t)b * ldk + a - b] = s;
    }
  }
}

// Levenberg-Marquardt on a band A (m x m): rhs (m) in: r, out: d solving
// (A^T A + mu I) d = A^T r, mu = lm_fac max diag(A^T A), lm_fac raised x10 until the Cholesky
// factor exists; v: m scratch. Returns 1 on success.
static int band_lm(mjtNum* rhs, mjtNum* K, int ldk, const mjtNum* A, int m, int kl, int ku,
                   mjtNum* lm_fac, mjtNum lm_min, mjtNum* v) {
  const int lb = kl + ku + 1, kd = kl + ku;
  for (int b = 0; b < m; b++) {
    const mjtNum* Ab = A + (size_t)b * lb + ku - b;
    int i0 = b - ku > 0 ? b - ku : 0, i1 = b + kl < m - 1 ? b + kl : m - 1;
    mjtNum s = 0;
    for (int i = i0; i <= i1; i++) s += Ab[i] * rhs[i];
    v[b] = s;
  }
  while (*lm_fac < 1e12) {
    band_normal(K, ldk, A, m, kl, ku);
    mjtNum dmax = 0;
    for (int b = 0; b < m; b++) dmax = fmax(dmax, K[(size_t)b * ldk]);
    if (dmax == 0) dmax = 1;
    mjtNum mu = dmax * fmax(*lm_fac, lm_min);
    for (int b = 0; b < m; b++) K[(size_t)b * ldk] += mu;
    if (cusp_dpbtrf(K, m, kd, ldk) == 0) {
      memcpy(rhs, v, sizeof(mjtNum) * m);
      cusp_dpbtrs(rhs, K, m, kd, ldk);
      return 1;
    }
    *lm_fac *= 10;
  }
  return 0;
}

//---------------------------------- core --------------------------------------------------------

size_t cusp_fb_core_worksize(int n, int const_jac) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  size_t nmat = const_jac ? 3 : 4;
  return CUSP_ALIGN(sizeof(mjtNum) * (nmat * nn * nn + 11 * nn)) + CUSP_ALIGN(sizeof(int) * 3 * nn);
}

// band mode: J, H, X (kl + ku + 1 rows each), K (2 kl + ku + 1 rows: the LU with its fill, or the
// Cholesky of a normal matrix with kl + ku subdiagonals)
static size_t band_matrix_doubles(int n, int kl, int ku) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  return nn * (3 * (size_t)(kl + ku + 1) + (size_t)(2 * kl + ku + 1));
}

size_t cusp_fb_core_band_worksize(int n, int kl, int ku) {
  size_t nn = (size_t)(n > 0 ? n : 1);
  return CUSP_ALIGN(sizeof(mjtNum) * (band_matrix_doubles(n, kl, ku) + 11 * nn)) +
         CUSP_ALIGN(sizeof(int) * 3 * nn);
}

// Armijo search along d from z (reference merit psi, slope gd = g . d < 0): the trial point zt,
// its F in Ft and its phi in phit; returns 1 when a step is accepted (sufficient decrease, or the
// tolerance met). In affine mode F(z + t d) = F + t jd.
static int armijo(mjtNum* zt, mjtNum* Ft, mjtNum* phit, cuspMcpInfo* info, const cuspFbCore* c,
                  const mjtNum* z, const mjtNum* F, const mjtNum* d, const mjtNum* jd, mjtNum gd,
                  mjtNum psi, mjtNum sigma, int max_bt, mjtNum tol) {
  const int n = c->n;
  mjtNum t = 1;
  for (int bt = 0; bt <= max_bt; bt++, t *= 0.5) {
    for (int i = 0; i < n; i++) zt[i] = z[i] + t * d[i];
    if (c->affine) {
      for (int i = 0; i < n; i++) Ft[i] = F[i] + t * jd[i];
    } else {
      info->evaluations++;
      if (c->residual(Ft, zt, n, c->user)) continue;
    }
    mjtNum natt;
    mjtNum psit = fb_eval(phit, NULL, NULL, &natt, zt, Ft, c->lo, c->hi, n);
    if (psit <= psi + sigma * t * gd || natt <= tol) return 1;
  }
  return 0;
}

cuspLcpStatus cusp_fb_core(mjtNum* z, mjtNum* F_out, cuspMcpInfo* info, const cuspFbCore* c,
                           const cuspMcpOptions* opt, void* work) {
  int n = c->n;
  size_t nn = (size_t)(n > 0 ? n : 1);
  const int band = c->jacobian_band != NULL && !c->jac_const;
  const int kl = band ? c->kl : 0, ku = band ? c->ku : 0;
  const int lb = kl + ku + 1, lk = 2 * kl + ku + 1;  // band rows of J, H, X and of K
  size_t matsize = band ? nn * (size_t)lb : nn * nn;
  mjtNum* H = (mjtNum*)work;  // (n x n) Newton matrix
  mjtNum* K = H + matsize;    // (n x n) LU of H or Cholesky of H^T H + mu I
  mjtNum* X = K + (band ? nn * (size_t)lk : nn * nn);  // (n x n) H_RR for the reduced LM step
  mjtNum* Jbuf = X + matsize; // (n x n) Jacobian from the callback (absent if constant)
  mjtNum* v = Jbuf + (c->jac_const ? 0 : matsize);
  mjtNum* F = v;              // (n) F(z)
  mjtNum* phi = F + nn;       // (n)
  mjtNum* da = phi + nn;      // (n)
  mjtNum* db = da + nn;       // (n)
  mjtNum* g = db + nn;        // (n) gradient H^T Phi
  mjtNum* d = g + nn;         // (n) direction
  mjtNum* jd = d + nn;        // (n) J d (affine line search)
  mjtNum* zt = jd + nn;       // (n) trial point
  mjtNum* Ft = zt + nn;       // (n)
  mjtNum* phit = Ft + nn;     // (n)
  mjtNum* zbest = phit + nn;  // (n)
  size_t nmat = c->jac_const ? 3 : 4;
  size_t ndoubles = band ? band_matrix_doubles(n, kl, ku) : nmat * nn * nn;
  int* ipiv = (int*)((char*)work + CUSP_ALIGN(sizeof(mjtNum) * (ndoubles + 11 * nn)));
  int* rows = ipiv + nn;      // (n) rows of the reduced Newton system
  int* pos = rows + nn;       // (n) band mode: index of each row in rows, -1 if not there
  mjtNum* rhs = jd;           // (n) its right-hand side, free until J d is formed
  const mjtNum* lo = c->lo;
  const mjtNum* hi = c->hi;
  int budget_binds;
  int max_iter = cusp_solve_iteration_cap(&budget_binds, opt->max_iter > 0 ? opt->max_iter : 100,
                                          opt->work_budget, CUSP_ITER_NEWTON, n, 0);
  mjtNum sigma = opt->armijo > 0 ? opt->armijo : 1e-4;
  int max_bt = opt->max_backtrack > 0 ? opt->max_backtrack : 30;
  mjtNum lm_min = opt->lm_min > 0 ? opt->lm_min : 1e-14;
  mjtNum lm_fac = 1e-6;  // mu = lm_fac * max diag(H^T H)

  info->iterations = info->lm_steps = info->evaluations = info->structured_steps = 0;
  info->message = "";
  for (int i = 0; i < n; i++) {
    mjtNum l = lo ? lo[i] : 0, u = hi ? hi[i] : INFINITY;
    mjtNum x = opt->warm_start && isfinite(z[i]) ? z[i] : 0;
    z[i] = cusp_mid(l, u, x);
  }
  cuspLcpStatus status = CUSP_LCP_MAX_ITER;
  info->evaluations++;
  if (c->residual(F, z, n, c->user)) {
    info->status = CUSP_LCP_NUMERICAL;
    info->message = "residual callback failed";
    info->residual = info->merit = INFINITY;
    return info->status;
  }
  mjtNum nat;
  mjtNum psi = fb_eval(phi, da, db, &nat, z, F, lo, hi, n);
  mjtNum best_nat = nat, best_psi = psi;
  memcpy(zbest, z, sizeof(mjtNum) * n);

  // merits of the last iterates (a ring), the reference of the non-monotone Armijo test
  const int nonmono = opt->nonmonotone < 1                          ? 1
                      : opt->nonmonotone > CUSP_MCP_MAX_NONMONOTONE ? CUSP_MCP_MAX_NONMONOTONE
                                                                    : opt->nonmonotone;
  mjtNum recent[CUSP_MCP_MAX_NONMONOTONE];
  int nrecent = 0;
  recent[nrecent++ % nonmono] = psi;

  int it = 0;
  while (it < max_iter) {
    if (nat <= opt->tol) {
      status = CUSP_LCP_SOLVED;
      break;
    }
    if (!isfinite(psi)) {
      status = CUSP_LCP_NUMERICAL;
      info->message = "non-finite residual";
      break;
    }
    it++;
    mjtNum psi_ref = psi;
    for (int q = 0; q < nrecent && q < nonmono; q++) psi_ref = fmax(psi_ref, recent[q]);
    const mjtNum* J = NULL;
    int ldj = n;
    int accepted = 0;
    // the problem's structured Newton step first (mcp.h): no Jacobian, no dense LU, when it
    // solves and the line search takes its step
    if (c->newton_solve && !band && !c->jac_const &&
        c->newton_solve(d, jd, phi, da, db, z, n, c->user) == 0) {
      mjtNum gd = 0, dd = 0, res = 0, pn = 0;  // gd = g . d = phi . (H d), g = H^T phi
      for (int i = 0; i < n; i++) {
        gd += phi[i] * jd[i];
        dd += d[i] * d[i];
        res = fmax(res, fabs(jd[i] + phi[i]));
        pn = fmax(pn, fabs(phi[i]));
      }
      // a step that does not solve its system to 1e-8 (rounding of a nearly singular one) is
      // left to the dense step
      if (isfinite(gd) && gd < -1e-14 * dd && res <= 1e-8 * pn) {
        accepted = armijo(zt, Ft, phit, info, c, z, F, d, jd, gd, psi_ref, sigma, max_bt, opt->tol);
      }
      info->structured_steps += accepted;
    }
    if (accepted) {
      // the step is taken below
    } else if (band) {
      memset(Jbuf, 0, sizeof(mjtNum) * matsize);
      if (c->jacobian_band(Jbuf, lb, z, n, c->user)) {
        status = CUSP_LCP_NUMERICAL;
        info->message = "jacobian callback failed";
        break;
      }
      band_newton_matrix(H, g, Jbuf, phi, da, db, n, kl, ku);
    } else if (c->jac_const) {
      J = c->jac_const;
      ldj = c->ld_const;
    } else {
      if (c->jacobian(Jbuf, n, z, n, c->user)) {
        status = CUSP_LCP_NUMERICAL;
        info->message = "jacobian callback failed";
        break;
      }
      J = Jbuf;
      ldj = n;
    }
    if (!band && !accepted) {
      for (int j = 0; j < n; j++) {
        const mjtNum* Jc = J + (size_t)j * ldj;
        mjtNum* Hc = H + (size_t)j * n;
        for (int i = 0; i < n; i++) Hc[i] = db[i] * Jc[i];
        Hc[j] += da[j];
      }
      cusp_dgemv(g, 'T', H, phi, 1.0, 0.0, n, n, n);
    }

    // Rows with db_i = 0 (z_i at a bound, F_i strictly away from 0: an inactive contact row)
    // are da_i e_i: their direction is d_i = -phi_i / da_i whatever the rest. Only the other rows
    // R (nred of them) need a linear solve, on H[R,R] d_R = rhs_R = -phi_R - H[R,D] d_D: the
    // same Newton direction as a full LU, at a fraction of its cost when most contacts are
    // speculative.
    int nred = 0;
    for (int i = 0; i < n; i++) {
      if (band) pos[i] = diagonal_row(da, db, i) ? -1 : nred;
      if (!diagonal_row(da, db, i)) rows[nred++] = i;
    }

    // Newton direction on R, then LM on R, then LM on all rows; each followed by the Armijo search
    for (int attempt = 0; attempt < 3 && !accepted; attempt++) {
      int ok = 0;
      if (attempt < 2) {
        // LM on R is the full LM below when R is everything, and nothing when R is empty
        if (attempt == 1 && (nred == n || nred == 0)) continue;
        if (band) {
          band_reduced_rhs(d, rhs, H, phi, da, db, rows, pos, nred, n, kl, ku);
          if (attempt == 0) {
            band_gather(K, lk, kl + ku, H, rows, pos, nred, n, kl, ku);
            if (nred == 0 || cusp_dgbtrf(K, ipiv, nred, kl, ku, lk) == 0) {
              if (nred) cusp_dgbtrs(rhs, K, ipiv, nred, kl, ku, lk);
              ok = 1;
            }
          } else {
            band_gather(X, lb, ku, H, rows, pos, nred, n, kl, ku);
            ok = band_lm(rhs, K, lk, X, nred, kl, ku, &lm_fac, lm_min, zt);
            info->lm_steps++;
          }
        } else {
          reduced_rhs(d, rhs, H, phi, da, db, rows, nred, n);
          if (attempt == 0) {
            gather_block(K, H, rows, nred, n);
            if (nred == 0 || cusp_dgetrf(K, ipiv, nred, nred, nred) == 0) {
              if (nred) cusp_dgetrs(rhs, 'N', K, ipiv, nred, 1, nred, nred);
              ok = 1;
            }
          } else {
            // LM on R: (H_RR^T H_RR + mu I) d_R = H_RR^T rhs_R
            ok = reduced_lm(rhs, X, K, H, rows, nred, n, &lm_fac, lm_min, zt);  // zt: free here
            info->lm_steps++;
          }
        }
        if (ok) {
          for (int a = 0; a < nred; a++) d[rows[a]] = rhs[a];
          mjtNum gd = 0, dd = 0;
          for (int i = 0; i < n; i++) {
            gd += g[i] * d[i];
            dd += d[i] * d[i];
          }
          ok = isfinite(gd) && gd < -1e-14 * dd;
        }
      } else if (band) {
        // LM on all rows: (H^T H + mu I) d = H^T (-phi) = -g
        for (int i = 0; i < n; i++) d[i] = -phi[i];
        ok = band_lm(d, K, lk, H, n, kl, ku, &lm_fac, lm_min, zt);
        info->lm_steps++;
      } else {
        // LM on all rows: (H^T H + mu I) d = -g
        cusp_dsyrk_lower_t(K, H, 1.0, 0.0, n, n, n, n);
        mjtNum dmax = 0;
        for (int i = 0; i < n; i++) dmax = fmax(dmax, K[i + (size_t)i * n]);
        if (dmax == 0) dmax = 1;
        while (!ok && lm_fac < 1e12) {
          mjtNum mu = dmax * fmax(lm_fac, lm_min);
          // rebuild: dsyrk again only when Cholesky failed (K is overwritten by dpotrf)
          for (int i = 0; i < n; i++) K[i + (size_t)i * n] += mu;
          if (cusp_dpotrf(K, n, n) == 0) {
            for (int i = 0; i < n; i++) d[i] = -g[i];
            cusp_dpotrs(d, K, n, 1, n, n);
            ok = 1;
          } else {
            lm_fac *= 10;
            cusp_dsyrk_lower_t(K, H, 1.0, 0.0, n, n, n, n);
          }
        }
        info->lm_steps++;
      }
      if (!ok) continue;
      mjtNum gd = 0;
      for (int i = 0; i < n; i++) gd += g[i] * d[i];
      if (c->affine) cusp_dgemv(jd, 'N', J, d, 1.0, 0.0, n, n, ldj);
      accepted = armijo(zt, Ft, phit, info, c, z, F, d, jd, gd, psi_ref, sigma, max_bt, opt->tol);
      if (attempt >= 1) lm_fac = accepted ? fmax(lm_fac * 0.1, lm_min) : lm_fac * 10;
    }
    if (!accepted) {
      if (lm_fac >= 1e12) {
        status = CUSP_LCP_NUMERICAL;
        info->message = "line search failed (stalled at a non-solution)";
        break;
      }
      continue;  // larger damping next time
    }
    memcpy(z, zt, sizeof(mjtNum) * n);
    if (c->affine) {
      info->evaluations++;
      c->residual(F, z, n, c->user);  // exact F, no drift from the t J d updates
    } else {
      memcpy(F, Ft, sizeof(mjtNum) * n);
    }
    psi = fb_eval(phi, da, db, &nat, z, F, lo, hi, n);
    recent[nrecent++ % nonmono] = psi;
    if (nat < best_nat || (nat == best_nat && psi < best_psi)) {
      best_nat = nat;
      best_psi = psi;
      memcpy(zbest, z, sizeof(mjtNum) * n);
    }
  }
  if (status == CUSP_LCP_MAX_ITER && nat <= opt->tol) status = CUSP_LCP_SOLVED;
  if (status == CUSP_LCP_MAX_ITER) {
    info->message = budget_binds ? "work budget reached" : "iteration limit reached";
  }
  if (nat > best_nat) {  // hand back the best iterate seen
    memcpy(z, zbest, sizeof(mjtNum) * n);
    info->evaluations++;
    c->residual(F, z, n, c->user);
    psi = fb_eval(phi, NULL, NULL, &nat, z, F, lo, hi, n);
  }
  if (F_out && F_out != F) memcpy(F_out, F, sizeof(mjtNum) * n);
  info->iterations = it;
  info->residual = nat;
  info->merit = psi;
  info->status = status;
  return status;
}

//---------------------------------- public MCP API ----------------------------------------------

cuspMcpOptions cusp_mcp_default_options(void) {
  cuspMcpOptions o;
  o.tol = 1e-10;
  o.max_iter = 100;
  o.warm_start = 0;
  o.lm_min = 1e-14;
  o.armijo = 1e-4;
  o.max_backtrack = 30;
  o.nonmonotone = 1;
  o.work_budget = 0;
  return o;
}

size_t cusp_mcp_worksize(int n) { return cusp_fb_core_worksize(n, 0); }

size_t cusp_mcp_problem_worksize(const cuspMcpProblem* p) {
  if (p->jacobian_band) return cusp_fb_core_band_worksize(p->n, p->kl, p->ku);
  return cusp_mcp_worksize(p->n);
}

cuspLcpStatus cusp_mcp_fbnewton(mjtNum* z, mjtNum* F, cuspMcpInfo* info,
                                const cuspMcpProblem* p, const cuspMcpOptions* opt, void* work,
                                size_t work_bytes) {
  double t0 = cusp_now();
  memset(info, 0, sizeof(*info));
  info->residual = info->merit = INFINITY;
  info->status = CUSP_LCP_BAD_INPUT;
  if (!p || p->n < 0 || !p->residual || !(p->jacobian || p->jacobian_band) ||
      (p->jacobian_band && (p->kl < 0 || p->ku < 0))) {
    info->message = "bad size or missing callback";
    return info->status;
  }
  if (work_bytes < cusp_mcp_problem_worksize(p)) {
    info->message = "workspace too small";
    return info->status;
  }
  for (int i = 0; i < p->n; i++) {
    mjtNum l = p->lo ? p->lo[i] : 0, u = p->hi ? p->hi[i] : INFINITY;
    if (!(l <= u) || l == INFINITY || u == -INFINITY) {
      info->message = "lower bound above upper bound";
      return info->status;
    }
  }
  cuspFbCore core = {p->n, p->lo, p->hi, p->residual, p->jacobian, p->user, NULL, 0, 0,
                     p->jacobian_band, p->kl, p->ku, p->newton_solve};
  cusp_fb_core(z, F, info, &core, opt, work);
  // no false success: the natural residual of the returned z decides (never the iteration's
  // belief)
  if (info->status == CUSP_LCP_SOLVED && !(info->residual <= opt->tol)) {
    info->status = CUSP_LCP_NUMERICAL;
    info->message = "final residual above tolerance";
  }
  info->seconds = cusp_now() - t0;
  return info->status;
}
