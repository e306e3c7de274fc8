// FC3D by islands, each an MCP solved by the proximal FB Newton solver (see fc3d.h).
#include "solver/fc3d.h"

#include <math.h>
#include <string.h>

#include "solver/lcp_internal.h"

//---------------------------------- Siconos' error measure --------------------------------------

// x (3) := its projection onto K = {|x_t| <= mu x_n}
static void project_cone(mjtNum x[3], mjtNum mu) {
  mjtNum t = sqrt(x[1] * x[1] + x[2] * x[2]);
  if (mu * t <= -x[0]) {  // in the polar cone
    x[0] = x[1] = x[2] = 0;
  } else if (t > mu * x[0]) {  // outside K and its polar: onto the boundary ray
    mjtNum n = (x[0] + mu * t) / (1 + mu * mu);
    x[0] = n;
    x[1] *= mu * n / t;
    x[2] *= mu * n / t;
  }
}

static mjtNum norm2(const mjtNum* x, int n) {
  mjtNum s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

mjtNum cusp_fc3d_error(mjtNum* u, const mjtNum* r, const cuspFc3dProblem* p) {
  int n = 3 * p->nc;
  for (int i = 0; i < n; i++) u[i] = p->q[i];
  for (int j = 0; j < n; j++) {
    if (r[j] == 0) continue;
    const mjtNum* Wj = p->W + (size_t)j * p->ldw;
    for (int i = 0; i < n; i++) u[i] += Wj[i] * r[j];
  }
  mjtNum e = 0;
  for (int c = 0; c < p->nc; c++) {
    const mjtNum* ri = r + 3 * c;
    const mjtNum* ui = u + 3 * c;
    mjtNum x[3] = {ri[0] - ui[0] - p->mu[c] * sqrt(ui[1] * ui[1] + ui[2] * ui[2]), ri[1] - ui[1],
                   ri[2] - ui[2]};
    project_cone(x, p->mu[c]);
    for (int k = 0; k < 3; k++) e += (ri[k] - x[k]) * (ri[k] - x[k]);
  }
  e = sqrt(e);
  mjtNum scale = fmax(norm2(p->q, n), fmax(norm2(r, n), norm2(u, n)));
  return scale > 2.220446049250313e-16 ? e / scale : e;
}

//---------------------------------- one island as an MCP ----------------------------------------

// Island of m contacts in scaled form: z = r / pref, v = D u / pref = Ws z + qs (+ prox), with
// D = diag(kn_i, kt_i, kt_i) per contact (kn_i = 1 / W_nn,i, kt_i = 1 / mean W_tt,i, each to the
// nearest power of 2), Ws = D W, qs = D q / pref; F_n = v_n and
// F_t = z_t - Proj_{|.| <= mu z_n+}(z_t - v_t): the natural map with step kt_i. The proximal term
// rho (D / k) (z - anchor) is D (rho / k) (r - r_anchor) / pref: W + (rho / k) I, k the island's.
typedef struct Island_ {
  int m, n;             // contacts, unknowns (3 m)
  mjtNum* Ws;           // (n x n) column-major, k W of the island
  mjtNum* qs;           // (n)
  mjtNum* mu;           // (m)
  mjtNum* v;            // (n) scratch: scaled velocity
  mjtNum* wprox;        // (n) row scale of D over k of the island (= proximal weight of the row)
  mjtNum rho;           // proximal weight (0: the original problem)
  const mjtNum* anchor; // (n) proximal anchor (scaled reactions), NULL if rho = 0
} Island;

static void island_velocity(Island* s, const mjtNum* z) {
  int n = s->n;
  for (int i = 0; i < n; i++) s->v[i] = s->qs[i];
  for (int j = 0; j < n; j++) {
    mjtNum zj = z[j];
    if (zj == 0) continue;
    const mjtNum* Wj = s->Ws + (size_t)j * n;
    for (int i = 0; i < n; i++) s->v[i] += Wj[i] * zj;
  }
  if (s->rho > 0) {
    for (int i = 0; i < n; i++) s->v[i] += s->rho * s->wprox[i] * (z[i] - s->anchor[i]);
  }
}

// P (2) := projection of x (2) onto the disk |P| <= R (R >= 0); Px (2 x 2, row-major) := dP/dx
// and PR (2) := dP/dR (an element of the generalized Jacobian on the circle |x| = R), if
// Px != NULL. Returns 1 if P = x (inside the disk).
static int disk_projection(mjtNum P[2], mjtNum Px[4], mjtNum PR[2], const mjtNum x[2],
                           mjtNum R) {
  mjtNum t = sqrt(x[0] * x[0] + x[1] * x[1]);
  if (t <= R) {
    P[0] = x[0];
    P[1] = x[1];
    return 1;
  }
  mjtNum a = t > 0 ? R / t : 0;
  P[0] = a * x[0];
  P[1] = a * x[1];
  if (Px) {
    mjtNum h0 = t > 0 ? x[0] / t : 0, h1 = t > 0 ? x[1] / t : 0;
    Px[0] = a * (1 - h0 * h0);
    Px[1] = -a * h0 * h1;
    Px[2] = Px[1];
    Px[3] = a * (1 - h1 * h1);
    PR[0] = h0;
    PR[1] = h1;
  }
  return 0;
}

static int island_residual(mjtNum* F, const mjtNum* z, int n, void* user) {
  Island* s = (Island*)user;
  (void)n;
  island_velocity(s, z);
  for (int c = 0; c < s->m; c++) {
    const mjtNum* zc = z + 3 * c;
    const mjtNum* vc = s->v + 3 * c;
    mjtNum* Fc = F + 3 * c;
    Fc[0] = vc[0];
    mjtNum x[2] = {zc[1] - vc[1], zc[2] - vc[2]}, P[2];
    disk_projection(P, NULL, NULL, x, zc[0] > 0 ? s->mu[c] * zc[0] : 0);
    Fc[1] = zc[1] - P[0];
    Fc[2] = zc[2] - P[1];
  }
  return 0;
}

static int island_jacobian(mjtNum* J, int ldj, const mjtNum* z, int n, void* user) {
  Island* s = (Island*)user;
  island_velocity(s, z);
  // G = Ws + rho I = dv/dz; normal rows and sticking tangential rows are rows of G
  for (int j = 0; j < n; j++) {
    memcpy(J + (size_t)j * ldj, s->Ws + (size_t)j * n, sizeof(mjtNum) * n);
    J[j + (size_t)j * ldj] += s->rho * s->wprox[j];
  }
  for (int c = 0; c < s->m; c++) {
    const mjtNum* zc = z + 3 * c;
    const mjtNum* vc = s->v + 3 * c;
    mjtNum x[2] = {zc[1] - vc[1], zc[2] - vc[2]}, P[2], Px[4], PR[2];
    if (disk_projection(P, Px, PR, x, zc[0] > 0 ? s->mu[c] * zc[0] : 0)) {
      continue;  // inside the disk: F_t = v_t, rows of G
    }
    // F_t = z_t - P(x, R) with x = z_t - v_t, R = mu z_n+:
    // dF_t = E_t - Px (E_t - G_t) - PR mu e_n^T [z_n > 0]
    int r1 = 3 * c + 1, r2 = 3 * c + 2;
    for (int j = 0; j < n; j++) {
      mjtNum* Jj = J + (size_t)j * ldj;
      // rows r1, r2 of G in column j are still in Jj (set above)
      mjtNum d1 = (j == r1) - Jj[r1], d2 = (j == r2) - Jj[r2];  // (E_t - G_t) column j
      Jj[r1] = (j == r1) - (Px[0] * d1 + Px[1] * d2);
      Jj[r2] = (j == r2) - (Px[2] * d1 + Px[3] * d2);
    }
    if (zc[0] > 0) {
      mjtNum* Jn = J + (size_t)(3 * c) * ldj;
      Jn[r1] -= s->mu[c] * PR[0];
      Jn[r2] -= s->mu[c] * PR[1];
    }
  }
  return 0;
}

static void island_prox(void* user, mjtNum rho, const mjtNum* anchor) {
  Island* s = (Island*)user;
  s->rho = anchor ? rho : 0;
  s->anchor = anchor;
}

//---------------------------------- islands -----------------------------------------------------

static int find_root(int* parent, int a) {
  while (parent[a] != a) {
    parent[a] = parent[parent[a]];
    a = parent[a];
  }
  return a;
}

static int block_nonzero(const cuspFc3dProblem* p, int a, int b) {
  for (int j = 0; j < 3; j++) {
    const mjtNum* col = p->W + (size_t)(3 * b + j) * p->ldw + 3 * a;
    if (col[0] != 0 || col[1] != 0 || col[2] != 0) return 1;
  }
  return 0;
}

// order (nc): contacts grouped by island, islands in order of their first contact; start
// (nislands + 1): first position of each island in order; parent (nc): scratch. Returns the
// island count; *largest := contacts of the largest island.
static int find_islands(int* order, int* start, int* parent, int* largest,
                        const cuspFc3dProblem* p) {
  int nc = p->nc;
  for (int a = 0; a < nc; a++) parent[a] = a;
  for (int b = 0; b < nc; b++) {
    for (int a = 0; a < nc; a++) {
      if (a == b) continue;
      int ra = find_root(parent, a), rb = find_root(parent, b);
      if (ra != rb && block_nonzero(p, a, b)) parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
    }
  }
  // counting sort by root (roots are the smallest contact of their island)
  for (int a = 0; a < nc; a++) parent[a] = find_root(parent, a);
  int count = 0;
  *largest = 0;
  for (int a = 0; a < nc; a++) {
    if (parent[a] != a) continue;
    start[count] = 0;
    int size = 0;
    for (int b = a; b < nc; b++) size += parent[b] == a;
    *largest = size > *largest ? size : *largest;
    count++;
  }
  int pos = 0, isl = 0;
  for (int a = 0; a < nc; a++) {
    if (parent[a] != a) continue;
    start[isl++] = pos;
    for (int b = a; b < nc; b++) {
      if (parent[b] == a) order[pos++] = b;
    }
  }
  start[isl] = pos;
  return count;
}

//---------------------------------- workspace ---------------------------------------------------

typedef struct Layout_ {
  int nmax;  // unknowns of the largest island
  size_t ints, island, mcp, total;
} Layout;

// ints: order, start, parent; island: the island's arrays and u (3 nc) when the caller has none

static Layout layout(int nc, int largest) {
  Layout L;
  size_t nn = (size_t)(3 * largest > 0 ? 3 * largest : 1);
  L.nmax = 3 * largest;
  L.ints = CUSP_ALIGN(sizeof(int) * (3 * (size_t)nc + 2));
  // Ws (nmax^2), qs, v, wprox, z, lo, F (nmax each), mu (largest)
  L.island = CUSP_ALIGN(sizeof(mjtNum) *
                        (nn * nn + 6 * nn + (size_t)(largest > 0 ? largest : 1) + 3 * (size_t)nc));
  L.mcp = CUSP_ALIGN(cusp_mcp_proximal_worksize(L.nmax));
  L.total = L.ints + L.island + L.mcp;
  return L;
}

size_t cusp_fc3d_worksize(int nc) { return layout(nc, nc).total; }

//---------------------------------- the solve ---------------------------------------------------

cuspFc3dOptions cusp_fc3d_default_options(void) {
  cuspFc3dOptions o;
  o.tol = 1e-8;
  o.warm_start = 0;
  o.max_polish = 3;
  o.mcp = cusp_mcp_default_options();
  o.prox = cusp_mcp_proximal_default_options();
  return o;
}

// the power of 2 nearest x > 0 (within a factor sqrt 2)
static mjtNum pow2_near(mjtNum x) {
  int e;
  mjtNum m = frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  return ldexp(1.0, m < 0.70710678118654752 ? e - 1 : e);
}

// gather island isl into s (scaled), its initial guess into z; returns pref
static mjtNum gather_island(Island* s, mjtNum* z, const int* order, int first, int m,
                            const cuspFc3dProblem* p, const mjtNum* r, int warm) {
  int n = 3 * m;
  mjtNum diag = 0, qmax = 0;
  for (int a = 0; a < m; a++) {
    int ca = order[first + a];
    diag += p->W[(size_t)(3 * ca) * p->ldw + 3 * ca];
    for (int k = 0; k < 3; k++) qmax = fmax(qmax, fabs(p->q[3 * ca + k]));
  }
  diag /= m;
  // both scales rounded to powers of 2: scaling is exact, so r -> z -> r round-trips bitwise
  // (a warm start that solves stays exactly what it was)
  mjtNum k = pow2_near(diag > 0 ? 1 / diag : 1);
  mjtNum pref = pow2_near(k * (qmax > 0 ? qmax : 1));
  // rows of contact a scaled by its own steps: the normal row by 1 / W_nn,a, the tangential rows
  // (the natural map's step) by 1 / mean(W_t1t1, W_t2t2) of the contact: contacts on light and
  // heavy bodies alike see O(1) numbers (the tangential step of its own: OneObject 27 -> 11,
  // Confeti 39 -> 32 Newton iterations, Capsules 203 -> 217)
  for (int a = 0; a < m; a++) {
    const mjtNum* Wa = p->W + (size_t)(3 * order[first + a]) * p->ldw + 3 * order[first + a];
    mjtNum dn = Wa[0], dt = 0.5 * (Wa[1 + (size_t)p->ldw] + Wa[2 + 2 * (size_t)p->ldw]);
    mjtNum kn = dn > 0 ? pow2_near(1 / dn) : k;
    mjtNum kt = dt > 0 ? pow2_near(1 / dt) : kn;
    s->wprox[3 * a] = kn / k;
    s->wprox[3 * a + 1] = s->wprox[3 * a + 2] = kt / k;
  }
  for (int b = 0; b < m; b++) {
    int cb = order[first + b];
    for (int jb = 0; jb < 3; jb++) {
      const mjtNum* Wcol = p->W + (size_t)(3 * cb + jb) * p->ldw;
      mjtNum* Scol = s->Ws + (size_t)(3 * b + jb) * n;
      for (int a = 0; a < m; a++) {
        int ca = order[first + a];
        for (int ia = 0; ia < 3; ia++) {
          Scol[3 * a + ia] = k * s->wprox[3 * a + ia] * Wcol[3 * ca + ia];
        }
      }
    }
  }
  for (int a = 0; a < m; a++) {
    int ca = order[first + a];
    s->mu[a] = p->mu[ca];
    for (int i = 0; i < 3; i++) s->qs[3 * a + i] = k * s->wprox[3 * a + i] * p->q[3 * ca + i] / pref;
    if (warm) {
      for (int i = 0; i < 3; i++) z[3 * a + i] = r[3 * ca + i] / pref;
    } else {
      // the impulse that would stop the contact alone, no friction: off the FB kink at z = 0
      z[3 * a] = s->qs[3 * a] < 0 ? -s->qs[3 * a] / s->Ws[(size_t)(3 * a) * n + 3 * a] : 0;
      z[3 * a + 1] = z[3 * a + 2] = 0;
    }
  }
  s->m = m;
  s->n = n;
  s->rho = 0;
  s->anchor = NULL;
  return pref;
}

cuspLcpStatus cusp_fc3d_solve(mjtNum* r, mjtNum* u, cuspFc3dInfo* info,
                              const cuspFc3dProblem* p, const cuspFc3dOptions* opt, void* work,
                              size_t work_bytes) {
  double t0 = cusp_now();
  memset(info, 0, sizeof(*info));
  info->status = CUSP_LCP_BAD_INPUT;
  info->residual = info->error = INFINITY;
  cuspFc3dOptions o = opt ? *opt : cusp_fc3d_default_options();
  if (!p || p->nc < 0 || (p->nc > 0 && (!p->W || !p->q || !p->mu || p->ldw < 3 * p->nc))) {
    info->message = "bad size or missing data";
    return info->status;
  }
  if (!(o.tol > 0)) {
    info->message = "tolerance must be positive";
    return info->status;
  }
  int nc = p->nc, nall = 3 * nc;
  for (int c = 0; c < nc; c++) {
    if (!(p->mu[c] >= 0) || !isfinite(p->mu[c])) {
      info->message = "friction coefficient negative or not finite";
      return info->status;
    }
  }
  if (work_bytes < layout(nc, 0).total) {
    info->message = "workspace too small";
    return info->status;
  }
  int* order = (int*)work;       // (nc)
  int* start = order + nc;       // (nc + 1)
  int* parent = start + nc + 1;  // (nc)
  int largest = 0;
  int nisl = nc ? find_islands(order, start, parent, &largest, p) : 0;
  Layout L = layout(nc, largest);
  if (work_bytes < L.total) {
    info->message = "workspace too small";
    return info->status;
  }
  info->islands = nisl;
  info->largest = largest;
  size_t nn = (size_t)(L.nmax > 0 ? L.nmax : 1);
  Island s;
  s.Ws = (mjtNum*)((char*)work + L.ints);
  s.qs = s.Ws + nn * nn;
  s.v = s.qs + nn;
  s.wprox = s.v + nn;
  mjtNum* z = s.wprox + nn;
  mjtNum* lo = z + nn;
  mjtNum* F = lo + nn;
  s.mu = F + nn;
  mjtNum* uu = u ? u : s.mu + (largest > 0 ? largest : 1);  // (3 nc) velocity for the error
  void* mcp_work = (char*)work + L.ints + L.island;
  if (!o.warm_start) memset(r, 0, sizeof(mjtNum) * nall);
  for (int i = 0; i < nall; i++) {
    if (!isfinite(r[i])) r[i] = 0;
  }

  cuspLcpStatus status = CUSP_LCP_SOLVED;
  mjtNum tol = o.tol;
  int warm = o.warm_start;
  for (int round = 0;; round++) {
    status = CUSP_LCP_SOLVED;
    info->message = "";
    info->residual = 0;
    for (int isl = 0; isl < nisl; isl++) {
      int first = start[isl], m = start[isl + 1] - first, n = 3 * m;
      mjtNum pref = gather_island(&s, z, order, first, m, p, r, warm);
      for (int i = 0; i < n; i++) lo[i] = i % 3 ? -INFINITY : 0;
      cuspMcpProblem mp = {n, lo, NULL, island_residual, island_jacobian, &s, NULL, 0, 0, NULL};
      cuspMcpOptions mo = o.mcp;
      mo.tol = tol;
      mo.warm_start = 1;
      cuspMcpProxInfo pi;
      cuspLcpStatus st = cusp_mcp_proximal(z, F, &pi, &mp, island_prox, &mo, &o.prox, mcp_work,
                                           L.mcp);
      info->iterations += pi.inner_iterations;
      info->outer += pi.outer;
      info->residual = fmax(info->residual, pi.mcp.residual);
      if (st != CUSP_LCP_SOLVED && status == CUSP_LCP_SOLVED) {
        status = st;
        info->message = pi.mcp.message;
      }
      for (int a = 0; a < m; a++) {
        int ca = order[first + a];
        for (int i = 0; i < 3; i++) r[3 * ca + i] = pref * z[3 * a + i];
      }
    }
    info->error = cusp_fc3d_error(uu, r, p);
    if (status != CUSP_LCP_SOLVED || info->error <= o.tol || round >= o.max_polish) break;
    // the islands met tol in their scaled natural map but Siconos' measure (other units, 2-norm
    // over all contacts) did not: polish every island from here with a tighter tolerance
    info->polish++;
    tol = fmax(tol * fmin(0.1, 0.5 * o.tol / info->error), 1e-15);
    warm = 1;
  }
  if (status == CUSP_LCP_SOLVED && !(info->error <= o.tol)) {
    status = CUSP_LCP_MAX_ITER;
    info->message = "islands solved but Siconos' error above tol after polishing";
  }
  info->status = status;
  info->seconds = cusp_now() - t0;
  return status;
}
