// Closed form of the one-contact LCP: its candidate active sets, each checked (contact_closed.h).
#include "solver/contact_closed.h"

#include <math.h>

// The one-contact problem: Wc with eps_n on the normal diagonal, b, mu, directions.
typedef struct Contact1_ {
  mjtNum a;         // W_nn + eps_n
  mjtNum eps_n;     // Tikhonov on the normal row (res_original leaves it out)
  mjtNum p[2];      // W_nt, W_no
  mjtNum T[3];      // W_tt, W_to, W_oo
  mjtNum bn, mu;
  const mjtNum* bt;    // (r)
  const mjtNum* dirs;  // (2r)
  int r;
} Contact1;

// T x for x in the (t, o) plane
static void t_mul(mjtNum y[2], const Contact1* c, const mjtNum x[2]) {
  y[0] = c->T[0] * x[0] + c->T[1] * x[1];
  y[1] = c->T[1] * x[0] + c->T[2] * x[1];
}

static mjtNum dot2(const mjtNum* a, const mjtNum* b) { return a[0] * b[0] + a[1] * b[1]; }

// w := A z + b of candidate z, and its residuals (natural map with and without eps_n on the
// normal row, the Siconos error, the complementarity) as cusp_lcp_residual reports them.
// Returns the natural residual (eps_n included).
static mjtNum residual(mjtNum* w, cuspLcpInfo* info, mjtNum* res_original, const mjtNum* z,
                       const Contact1* c) {
  int r = c->r, n = r > 0 ? r + 2 : 1;
  mjtNum fn = z[0], tau[2] = {0, 0}, sum = 0;
  for (int k = 0; k < r; k++) {
    tau[0] += z[1 + k] * c->dirs[2 * k];
    tau[1] += z[1 + k] * c->dirs[2 * k + 1];
    sum += z[1 + k];
  }
  mjtNum u[2];
  t_mul(u, c, tau);
  u[0] += c->p[0] * fn;
  u[1] += c->p[1] * fn;
  w[0] = c->a * fn + dot2(c->p, tau) + c->bn;
  mjtNum q2 = c->bn * c->bn;
  if (r > 0) {
    mjtNum gamma = z[r + 1];
    for (int k = 0; k < r; k++) {
      w[1 + k] = dot2(c->dirs + 2 * k, u) + c->bt[k] + gamma;
      q2 += c->bt[k] * c->bt[k];
    }
    w[r + 1] = c->mu * fn - sum;
  }
  mjtNum nat = 0, err2 = 0, comp = 0;
  for (int i = 0; i < n; i++) {
    mjtNum res = fabs(z[i] - fmax(0.0, z[i] - w[i]));
    if (isnan(res)) res = INFINITY;
    nat = res > nat ? res : nat;
    err2 += res * res;
    mjtNum zw = fabs(z[i] * w[i]);
    comp = zw > comp ? zw : comp;
  }
  mjtNum wn = w[0] - c->eps_n * fn;  // the normal row without Tikhonov
  mjtNum orig = fabs(fn - fmax(0.0, fn - wn));
  for (int i = 1; i < n; i++) {
    mjtNum res = fabs(z[i] - fmax(0.0, z[i] - w[i]));
    orig = res > orig ? res : orig;
  }
  if (isnan(orig)) orig = INFINITY;
  info->residual = nat;
  info->siconos_error = sqrt(err2) / (q2 > 0 ? sqrt(q2) : 1.0);
  info->complementarity = comp;
  *res_original = orig;
  return nat;
}

// Solve the symmetric 3 x 3 system M x = rhs (M row-major, full) by elimination with partial
// pivoting; 0 if a pivot is below 1e-13 of the largest entry (singular for this purpose).
static int solve3(mjtNum x[3], mjtNum M[9], mjtNum rhs[3]) {
  mjtNum scale = 0;
  for (int i = 0; i < 9; i++) scale = fmax(scale, fabs(M[i]));
  if (!(scale > 0)) return 0;
  int row[3] = {0, 1, 2};
  for (int col = 0; col < 3; col++) {
    int piv = col;
    for (int i = col + 1; i < 3; i++) {
      if (fabs(M[3 * row[i] + col]) > fabs(M[3 * row[piv] + col])) piv = i;
    }
    int t = row[col];
    row[col] = row[piv];
    row[piv] = t;
    mjtNum d = M[3 * row[col] + col];
    if (!(fabs(d) > 1e-13 * scale)) return 0;
    for (int i = col + 1; i < 3; i++) {
      mjtNum f = M[3 * row[i] + col] / d;
      for (int j = col; j < 3; j++) M[3 * row[i] + j] -= f * M[3 * row[col] + j];
      rhs[row[i]] -= f * rhs[row[col]];
    }
  }
  for (int col = 2; col >= 0; col--) {
    mjtNum v = rhs[row[col]];
    for (int j = col + 1; j < 3; j++) v -= M[3 * row[col] + j] * x[j];
    x[col] = v / M[3 * row[col] + col];
  }
  return 1;
}

// 2 x 2 solve by Cramer's rule; 0 if the determinant is below 1e-13 of the product of the
// largest entries (singular for this purpose)
static int solve2(mjtNum x[2], mjtNum a11, mjtNum a12, mjtNum a21, mjtNum a22, mjtNum r1,
                  mjtNum r2) {
  mjtNum det = a11 * a22 - a12 * a21;
  mjtNum scale = fmax(fabs(a11) * fabs(a22), fabs(a12) * fabs(a21));
  if (!(fabs(det) > 1e-13 * scale)) return 0;
  x[0] = (r1 * a22 - a12 * r2) / det;
  x[1] = (a11 * r2 - a21 * r1) / det;
  return 1;
}

// candidate z (r + 2): normal impulse fn, impulses bj, bl on directions j, l (l < 0: none), the
// cone slack the friction rows then need: gamma = max(0, max_k -(d_k.u + bt_k))
static void candidate(mjtNum* z, const Contact1* c, mjtNum fn, int j, mjtNum bj, int l,
                      mjtNum bl) {
  int r = c->r;
  for (int k = 0; k < r + 2; k++) z[k] = 0;
  z[0] = fn;
  mjtNum tau[2] = {0, 0};
  if (j >= 0) {
    z[1 + j] = bj;
    tau[0] += bj * c->dirs[2 * j];
    tau[1] += bj * c->dirs[2 * j + 1];
  }
  if (l >= 0) {
    z[1 + l] = bl;
    tau[0] += bl * c->dirs[2 * l];
    tau[1] += bl * c->dirs[2 * l + 1];
  }
  mjtNum u[2];
  t_mul(u, c, tau);
  u[0] += c->p[0] * fn;
  u[1] += c->p[1] * fn;
  mjtNum gamma = 0;
  for (int k = 0; k < r; k++) gamma = fmax(gamma, -(dot2(c->dirs + 2 * k, u) + c->bt[k]));
  z[r + 1] = gamma;
}

// sticking on the sector of directions j, l: vn = 0, w_j = w_l = 0 with gamma = 0
static int stick_sector(mjtNum* z, const Contact1* c, int j, int l) {
  const mjtNum* dj = c->dirs + 2 * j;
  const mjtNum* dl = c->dirs + 2 * l;
  mjtNum Tj[2], Tl[2];
  t_mul(Tj, c, dj);
  t_mul(Tl, c, dl);
  mjtNum M[9] = {c->a,         dot2(c->p, dj), dot2(c->p, dl),
                 dot2(c->p, dj), dot2(dj, Tj), dot2(dj, Tl),
                 dot2(c->p, dl), dot2(dl, Tj), dot2(dl, Tl)};
  mjtNum rhs[3] = {-c->bn, -c->bt[j], -c->bt[l]}, x[3];
  if (!solve3(x, M, rhs)) return 0;
  candidate(z, c, x[0], j, x[1], l, x[2]);
  return 1;
}

// sliding on direction j alone: beta_j = mu fn, vn = 0
static int slide_vertex(mjtNum* z, const Contact1* c, int j) {
  mjtNum den = c->a + c->mu * dot2(c->p, c->dirs + 2 * j);
  if (!(den > 0)) return 0;
  mjtNum fn = -c->bn / den;
  candidate(z, c, fn, j, c->mu * fn, -1, 0);
  return 1;
}

// sliding on the edge of directions j, l: beta_j + beta_l = mu fn, vn = 0, w_j = w_l
static int slide_edge(mjtNum* z, const Contact1* c, int j, int l) {
  const mjtNum* dj = c->dirs + 2 * j;
  const mjtNum* dl = c->dirs + 2 * l;
  mjtNum e[2] = {dj[0] - dl[0], dj[1] - dl[1]}, Tl[2], Te[2];
  t_mul(Tl, c, dl);
  t_mul(Te, c, e);
  mjtNum pl[2] = {c->p[0] + c->mu * Tl[0], c->p[1] + c->mu * Tl[1]};  // u per unit fn
  mjtNum x[2];
  if (!solve2(x, c->a + c->mu * dot2(c->p, dl), dot2(c->p, e), dot2(e, pl), dot2(e, Te), -c->bn,
              c->bt[l] - c->bt[j])) {
    return 0;
  }
  candidate(z, c, x[0], j, x[1], l, c->mu * x[0] - x[1]);
  return 1;
}

int cusp_contact1_solve(mjtNum* z, mjtNum* w, cuspLcpInfo* info, mjtNum* res_original,
                        const mjtNum wc[6], mjtNum bn, const mjtNum* bt, mjtNum mu,
                        const mjtNum* dirs, int r, mjtNum eps_n, mjtNum tol) {
  Contact1 c = {.a = wc[0] + eps_n, .eps_n = eps_n, .p = {wc[1], wc[2]},
                .T = {wc[3], wc[4], wc[5]}, .bn = bn, .mu = mu, .bt = bt, .dirs = dirs, .r = r};
  // apart
  z[0] = 0;
  if (r == 0) {
    if (bn < 0 && c.a > 0) z[0] = -bn / c.a;
    return residual(w, info, res_original, z, &c) <= tol;
  }
  candidate(z, &c, 0, -1, 0, -1, 0);
  if (residual(w, info, res_original, z, &c) <= tol) return 1;
  if (!(c.a > 0)) return 0;
  // pushing without friction (no tangential drive)
  candidate(z, &c, -bn / c.a, -1, 0, -1, 0);
  if (residual(w, info, res_original, z, &c) <= tol) return 1;
  // the sector the unconstrained sticking impulse points into: [a p^T; p T] (fn, tau) = -(bn, vb)
  // with vb the tangential free velocity the directions' bt imply (sum_k d_k d_k^T = r/2 I for
  // r >= 3 equally spaced directions; a guess only otherwise)
  mjtNum vb[2] = {0, 0};
  for (int k = 0; k < r; k++) {
    vb[0] += 2.0 / r * bt[k] * dirs[2 * k];
    vb[1] += 2.0 / r * bt[k] * dirs[2 * k + 1];
  }
  mjtNum M[9] = {c.a, c.p[0], c.p[1], c.p[0], c.T[0], c.T[1], c.p[1], c.T[1], c.T[2]};
  mjtNum rhs[3] = {-bn, -vb[0], -vb[1]}, x[3];
  int guess = -1;
  if (r >= 2 && solve3(x, M, rhs)) {
    mjtNum best = -INFINITY;
    for (int k = 0; k < r; k++) {
      mjtNum v = dirs[2 * k] * x[1] + dirs[2 * k + 1] * x[2];
      if (v > best) best = v, guess = k;
    }
    // the sector is (guess, the better of its two neighbours); sectors are indexed by their
    // first direction j (directions j, j + 1 mod r)
    int prev = (guess + r - 1) % r, next = (guess + 1) % r;
    mjtNum vp = dirs[2 * prev] * x[1] + dirs[2 * prev + 1] * x[2];
    mjtNum vn = dirs[2 * next] * x[1] + dirs[2 * next + 1] * x[2];
    if (vp > vn) guess = prev;
    if (stick_sector(z, &c, guess, (guess + 1) % r) &&
        residual(w, info, res_original, z, &c) <= tol) {
      return 1;
    }
  }
  // sliding where the sticking impulse points (it saturates the cone there): the guessed
  // sector's edge, then its two directions
  if (guess >= 0) {
    int next = (guess + 1) % r;
    if (slide_edge(z, &c, guess, next) && residual(w, info, res_original, z, &c) <= tol) return 1;
    if (slide_vertex(z, &c, guess) && residual(w, info, res_original, z, &c) <= tol) return 1;
    if (slide_vertex(z, &c, next) && residual(w, info, res_original, z, &c) <= tol) return 1;
  }
  // every other candidate: sectors, then sliding on a direction, then on an edge
  for (int j = 0; j < r && r >= 2; j++) {
    if (j == guess) continue;
    if (stick_sector(z, &c, j, (j + 1) % r) && residual(w, info, res_original, z, &c) <= tol) {
      return 1;
    }
  }
  for (int j = 0; j < r; j++) {
    if (guess >= 0 && (j == guess || j == (guess + 1) % r)) continue;
    if (slide_vertex(z, &c, j) && residual(w, info, res_original, z, &c) <= tol) return 1;
  }
  for (int j = 0; j < r && r >= 2; j++) {
    if (j == guess) continue;
    if (slide_edge(z, &c, j, (j + 1) % r) && residual(w, info, res_original, z, &c) <= tol) {
      return 1;
    }
  }
  return 0;
}
