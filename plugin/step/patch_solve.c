// The patch contact problem (the model is documented in collide/patch.h): rows, Delassus matrix
// through the shared dynamics (dynamics.h), the MCP residual and its Jacobian, the solve, the
// results (Ln, L, ECP, saturations, mode) and the velocity correction.
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "step/patch_solve.h"

#include "assemble/contact_rows.h"
#include "solver/lapack_shim.h"
#include "solver/mcp_proximal.h"
#include "solver/qp_active.h"

//---------------------------------- workspace ------------------------------------------------------

static void* grow(void* p, size_t bytes) {
  void* q = realloc(p, bytes ? bytes : 1);
  return q;
}

int cusp_patch_work_init(cuspPatchWork* w, const mjModel* m) {
  memset(w, 0, sizeof(*w));
  w->nv = m->nv;
  w->jac = (mjtNum*)calloc(6 * (size_t)m->nv + 1, sizeof(mjtNum));
  w->jac2 = (mjtNum*)calloc(6 * (size_t)m->nv + 1, sizeof(mjtNum));
  w->dv = (mjtNum*)calloc((size_t)m->nv + 1, sizeof(mjtNum));
  w->ntree = (int)m->ntree;
  w->tree_slot = (int*)malloc(((size_t)m->ntree + 1) * sizeof(int));
  w->blk = (int*)malloc((2 * (size_t)m->nv + 1) * sizeof(int));
  if (!w->jac || !w->jac2 || !w->dv || !w->tree_slot || !w->blk ||
      cusp_patch_set_init(&w->set, m)) {
    return -1;
  }
  for (int t = 0; t < w->ntree; t++) w->tree_slot[t] = -1;
  return cusp_patch_work_reserve(w, 8, 64, 72);
}

void cusp_patch_work_free(cuspPatchWork* w) {
  cusp_patch_set_free(&w->set);
  free(w->prev);
  free(w->sorted);
  free(w->row_of);
  free(w->z_of);
  free(w->J);
  free(w->Jr);
  free(w->X);
  free(w->W);
  free(w->span);
  free(w->rspan);
  free(w->hull);
  free(w->pspan);
  free(w->zpatch);
  free(w->order);
  free(w->tree_slot);
  free(w->blk);
  free(w->tree_list);
  free(w->ub0);
  free(w->vfree);
  free(w->ub0_pushout);
  free(w->p);
  free(w->ub);
  free(w->ubw);
  free(w->G);
  free(w->z);
  free(w->F);
  free(w->lo);
  free(w->hi);
  free(w->z_failed);
  free(w->z_start);
  free(w->eval_z);
  free(w->eval_F);
  free(w->p_anchor);
  free(w->w_diag);
  free(w->z_anchor);
  free(w->z_scale);
  free(w->z_phys);
  free(w->mcp_work);
  free(w->voff);
  free(w->qp_work);
  free(w->bb_int);
  free(w->bb_num);
  free(w->jac);
  free(w->jac2);
  free(w->dv);
  memset(w, 0, sizeof(*w));
}

int cusp_patch_work_reserve(cuspPatchWork* w, int npatch, int nrows, int nz) {
  if (cusp_patch_set_reserve(&w->set, npatch)) return -1;
  if (npatch > w->cap_patch) {
    void* a = grow(w->prev, npatch * sizeof(cuspPatch));
    if (!a) return -1;
    w->prev = (cuspPatch*)a;
    a = grow(w->sorted, npatch * sizeof(cuspPatch));
    if (!a) return -1;
    w->sorted = (cuspPatch*)a;
    a = grow(w->row_of, (npatch + 1) * sizeof(int));
    if (!a) return -1;
    w->row_of = (int*)a;
    a = grow(w->z_of, (npatch + 1) * sizeof(int));
    if (!a) return -1;
    w->z_of = (int*)a;
    a = grow(w->voff, (size_t)npatch * 2 * CUSP_PATCH_MAXVERT * sizeof(mjtNum));
    if (!a) return -1;
    w->voff = (mjtNum*)a;
    int** pbufs[5] = {&w->hull, &w->pspan, &w->order, &w->tree_list, NULL};
    size_t pcount[4] = {2 * (size_t)npatch, 4 * (size_t)npatch, 4 * (size_t)npatch,
                        2 * (size_t)npatch + (size_t)w->ntree + 1};
    for (int i = 0; pbufs[i]; i++) {
      a = grow(*pbufs[i], pcount[i] * sizeof(int));
      if (!a) return -1;
      *pbufs[i] = (int*)a;
    }
    w->cap_patch = npatch;
  }
  if (nrows > w->cap_rows || nz > w->cap_z) {
    if (nrows < w->cap_rows) nrows = w->cap_rows;
    if (nz < w->cap_z) nz = w->cap_z;
    size_t nv = w->nv + 1;
    mjtNum** rowbufs[3] = {&w->J, &w->Jr, &w->X};
    for (int i = 0; i < 3; i++) {
      void* a = grow(*rowbufs[i], (size_t)nrows * nv * sizeof(mjtNum));
      if (!a) return -1;
      *rowbufs[i] = (mjtNum*)a;
    }
    void* a = grow(w->W, (size_t)nrows * nrows * sizeof(mjtNum));
    if (!a) return -1;
    w->W = (mjtNum*)a;
    a = grow(w->span, (size_t)nrows * 2 * sizeof(int));
    if (!a) return -1;
    w->span = (int*)a;
    a = grow(w->rspan, (size_t)nrows * 4 * sizeof(int));
    if (!a) return -1;
    w->rspan = (int*)a;
    a = grow(w->zpatch, (size_t)nz * sizeof(int));
    if (!a) return -1;
    w->zpatch = (int*)a;
    mjtNum** vec[8] = {&w->ub0, &w->p, &w->ub, &w->p_anchor, &w->w_diag, &w->vfree,
                       &w->ub0_pushout, &w->ubw};
    for (int i = 0; i < 8; i++) {
      a = grow(*vec[i], nrows * sizeof(mjtNum));
      if (!a) return -1;
      *vec[i] = (mjtNum*)a;
    }
    a = grow(w->G, (size_t)nrows * nz * sizeof(mjtNum));
    if (!a) return -1;
    w->G = (mjtNum*)a;
    mjtNum** zv[11] = {&w->z, &w->F, &w->lo, &w->hi, &w->z_failed, &w->z_anchor, &w->z_scale,
                       &w->z_phys, &w->eval_z, &w->eval_F, &w->z_start};
    w->eval_valid = 0;
    for (int i = 0; i < 11; i++) {
      a = grow(*zv[i], nz * sizeof(mjtNum));
      if (!a) return -1;
      *zv[i] = (mjtNum*)a;
    }
    w->cap_rows = nrows;
    w->cap_z = nz;
  }
  return 0;
}

//---------------------------------- layout ---------------------------------------------------------

static int has_torsion(const cuspPatch* p) { return p->torsion; }
static int patch_rows(const cuspPatch* p) { return p->nvert + 2 + has_torsion(p); }
// unknowns: nvert lambda, 2 or 3 y (the friction residual is a projection, no multiplier)
static int patch_nz(const cuspPatch* p) { return patch_rows(p); }

//---------------------------------- residual and Jacobian -----------------------------------------

// The newton iterates of the FB solver may leave the box (lambda_k < 0) before converging; the
// resultant and the ECP are built from the positive parts of the vertex impulses, so that they stay
// a convex combination of the vertices (inside the patch) at every iterate, and the residual stays
// bounded. At a solution (lambda >= 0) this is the model of patch.h.
static inline mjtNum positive_part(mjtNum x) { return x > 0 ? x : 0; }

// per-patch derived quantities at z
typedef struct Derived_ {
  mjtNum Ln, Ls;        // N s, resultant normal impulse and its safe divisor
  mjtNum d[2];          // m, ECP offset from the origin along t, o
} Derived;

// vertex offsets of island patch i from its origin: (K) along t, then (K) along o
static inline const mjtNum* vertex_offsets(const cuspPatchWork* w, int i) {
  return w->voff + (size_t)i * 2 * CUSP_PATCH_MAXVERT;
}

static void set_vertex_offsets(cuspPatchWork* w) {
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    mjtNum* vt = w->voff + (size_t)i * 2 * CUSP_PATCH_MAXVERT;
    for (int k = 0; k < P->nvert; k++) {
      mjtNum r[3];
      mju_sub3(r, P->vert + 3 * k, P->origin);
      vt[k] = mju_dot3(r, P->frame);
      vt[P->nvert + k] = mju_dot3(r, P->frame + 3);
    }
  }
}

// D of island patch i at its unknowns z
static void derive(Derived* D, const cuspPatchWork* w, int i, const mjtNum* z) {
  const cuspPatch* P = w->island + i;
  const mjtNum* vt = vertex_offsets(w, i);
  const mjtNum* vo = vt + P->nvert;
  const mjtNum floor_impulse = 1e-12 * w->p_ref;
  mjtNum Ln = 0, mt = 0, mo = 0;
  for (int k = 0; k < P->nvert; k++) {
    mjtNum lk = positive_part(z[k]);
    Ln += lk;
    mt += lk * vt[k];
    mo += lk * vo[k];
  }
  D->Ln = Ln;
  D->Ls = Ln > floor_impulse ? Ln : floor_impulse;
  D->d[0] = mt / D->Ls;
  D->d[1] = mo / D->Ls;
}

// F (nz) and, if JF != NULL, JF (nz x nz column-major) at z
// Argument of the limit-surface projection for patch P: q = y - k e * u~ (ny entries), with
// u~ the sliding velocity and spin at the ECP from the row velocities ub; returns |q|, and the
// ball radius mu Ln in *rho.
static mjtNum projection_argument(mjtNum q[3], mjtNum* rho, const cuspPatch* P, const Derived* D,
                                  const mjtNum* zi, const mjtNum* ub) {
  int K = P->nvert, T = has_torsion(P), ny = 2 + T;
  mjtNum u[3];
  u[0] = ub[K] - (T ? D->d[1] * ub[K + 2] : 0);
  u[1] = ub[K + 1] + (T ? D->d[0] * ub[K + 2] : 0);
  u[2] = T ? ub[K + 2] : 0;
  *rho = P->mu * D->Ln > 0 ? P->mu * D->Ln : 0;
  mjtNum qn = 0;
  for (int x = 0; x < ny; x++) {
    q[x] = zi[K + x] - P->k * P->e[x] * u[x];
    qn += q[x] * q[x];
  }
  return sqrt(qn);
}

// The limit-surface projection of a patch at z: its argument's norm qn, direction qh, the ball
// radius rho = mu Ln, and whether the argument lies outside the ball (the patch slides)
typedef struct Projection_ {
  mjtNum qn, rho, qh[3];
  int outside;
} Projection;

static void projection_at(Projection* pr, const cuspPatch* P, const Derived* D, const mjtNum* zi,
                          const mjtNum* ub) {
  mjtNum q[3];
  pr->qn = projection_argument(q, &pr->rho, P, D, zi, ub);
  pr->outside = pr->qn > pr->rho;
  for (int x = 0; x < 3; x++) pr->qh[x] = x < 2 + has_torsion(P) && pr->qn > 0 ? q[x] / pr->qn : 0;
}

// Rows (into rows, relative to the patch's first row) and coefficients of d p / d z_j for the
// patch's own unknown j (the row impulses of patch.h from its unknowns); returns their number
static int impulse_column(int rows[2], mjtNum coef[2], const cuspPatch* P, const Derived* D,
                          const mjtNum* voff, const mjtNum* zi, int j) {
  int K = P->nvert, T = has_torsion(P), nrow = 0;
  mjtNum Lt = P->e[0] * zi[K], Lo = P->e[1] * zi[K + 1];
  if (j < K) {
    rows[nrow] = j;
    coef[nrow++] = 1;
    if (T && zi[j] > 0) {
      mjtNum ddt = (voff[j] - D->d[0]) / D->Ls;
      mjtNum ddo = (voff[K + j] - D->d[1]) / D->Ls;
      rows[nrow] = K + 2;
      coef[nrow++] = -ddo * Lt + ddt * Lo;
    }
  } else if (j == K) {
    rows[nrow] = K;
    coef[nrow++] = P->e[0];
    if (T) {
      rows[nrow] = K + 2;
      coef[nrow++] = -D->d[1] * P->e[0];
    }
  } else if (j == K + 1) {
    rows[nrow] = K + 1;
    coef[nrow++] = P->e[1];
    if (T) {
      rows[nrow] = K + 2;
      coef[nrow++] = D->d[0] * P->e[1];
    }
  } else {
    rows[nrow] = K + 2;
    coef[nrow++] = P->e[2];
  }
  return nrow;
}

// The friction rows (ny entries into out) of d F / d z_j for patch P, from g = d ub / d z_j at the
// patch's rows (K + ny) and, when z_j is one of the patch's own unknowns, its index `local`
// inside the patch (-1 otherwise): the chain rule through the ECP, the ball radius and the
// projection (normal rows: d F_k / d z_j = g_k)
static void friction_column(mjtNum* out, const cuspPatch* P, const Derived* D, const mjtNum* voff,
                            const mjtNum* zi, const mjtNum* ub, const Projection* pr,
                            const mjtNum* g, int local) {
  int K = P->nvert, T = has_torsion(P), ny = 2 + T;
  int own = local >= 0 && local < K + ny;
  mjtNum dLn = (own && local < K && zi[local] > 0) ? 1 : 0, ddt = 0, ddo = 0;
  if (dLn > 0 && T) {
    ddt = (voff[local] - D->d[0]) / D->Ls;
    ddo = (voff[K + local] - D->d[1]) / D->Ls;
  }
  mjtNum du[3];
  du[0] = g[K] - (T ? D->d[1] * g[K + 2] + ub[K + 2] * ddo : 0);
  du[1] = g[K + 1] + (T ? D->d[0] * g[K + 2] + ub[K + 2] * ddt : 0);
  du[2] = T ? g[K + 2] : 0;
  mjtNum dq[3], qdq = 0;
  for (int x = 0; x < ny; x++) {
    dq[x] = (own && local == K + x ? 1 : 0) - P->k * P->e[x] * du[x];
    qdq += pr->qh[x] * dq[x];
  }
  mjtNum drho = pr->rho > 0 ? P->mu * dLn : 0;
  for (int x = 0; x < ny; x++) {
    mjtNum dP = pr->outside
                    ? (pr->qn > 0 ? pr->rho / pr->qn : 0) * (dq[x] - pr->qh[x] * qdq) +
                          pr->qh[x] * drho
                    : dq[x];
    out[x] = ((own && local == K + x ? 1 : 0) - dP) / P->k;
  }
}

static void jacobian_at(cuspPatchWork* w, const mjtNum* z, mjtNum* JF);

// The row impulses p at z and the row velocities without the proximal term, ubw = ub0 + W p
static void row_velocities(cuspPatchWork* w, const mjtNum* z) {
  const int nrows = w->nrows;
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    const mjtNum* zi = z + w->z_of[i];
    mjtNum* pi = w->p + w->row_of[i];
    Derived D;
    derive(&D, w, i, zi);
    int K = P->nvert;
    for (int k = 0; k < K; k++) pi[k] = zi[k];
    pi[K] = P->e[0] * zi[K];
    pi[K + 1] = P->e[1] * zi[K + 1];
    if (has_torsion(P)) {
      pi[K + 2] = P->e[2] * zi[K + 2] - D.d[1] * pi[K] + D.d[0] * pi[K + 1];
    }
  }
  // by columns of W (rows, W being symmetric): each ubw[r] takes its terms in the order of c as a
  // row's dot product would, but the inner loop has no chain of dependent additions and the
  // unloaded rows (p = 0) are skipped
  mjtNum* ubw = w->ubw;
  memcpy(ubw, w->ub0, (size_t)nrows * sizeof(mjtNum));
  for (int c = 0; c < nrows; c++) {
    mjtNum pc = w->p[c];
    if (pc == 0) continue;
    const mjtNum* Wc = w->W + (size_t)c * nrows;
    for (int r = w->span[2 * c]; r < w->span[2 * c + 1]; r++) ubw[r] += Wc[r] * pc;
  }
}

static void evaluate(cuspPatchWork* w, const mjtNum* z, mjtNum* F, mjtNum* JF) {
  const int nrows = w->nrows, nz = w->nz;
  // the point of the last residual (same unknowns): p and ubw are those already computed; with
  // the same proximal term (weight and anchor) ub and F are too (the Jacobian alone is formed),
  // else only the term and the residual are (the proximal loop evaluates each anchor and each
  // inner answer with and without it)
  int same_z = w->eval_valid && memcmp(z, w->eval_z, sizeof(mjtNum) * nz) == 0;
  if (same_z && w->eval_prox == w->prox && w->eval_anchor == w->anchor_id) {
    if (F != w->eval_F) memcpy(F, w->eval_F, sizeof(mjtNum) * nz);
    if (JF) jacobian_at(w, z, JF);
    return;
  }
  if (!same_z) row_velocities(w, z);
  // row velocities ub = ub0 + W p + prox diag(W) (p - p_anchor)
  for (int r = 0; r < nrows; r++) {
    w->ub[r] = w->prox > 0 ? w->ubw[r] + w->prox * w->w_diag[r] * (w->p[r] - w->p_anchor[r])
                           : w->ubw[r];
  }
  // residual
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    const mjtNum* zi = z + w->z_of[i];
    mjtNum* Fi = F + w->z_of[i];
    const mjtNum* ub = w->ub + w->row_of[i];
    Derived D;
    derive(&D, w, i, zi);
    int K = P->nvert, T = has_torsion(P), ny = 2 + T;
    for (int k = 0; k < K; k++) Fi[k] = ub[k];
    // y = P(y - r u~) onto the ball |y| <= mu Ln (Alart-Curnier style natural map, r = k_ref)
    mjtNum q[3], rho;
    mjtNum qn = projection_argument(q, &rho, P, &D, zi, ub);
    mjtNum scale = qn > rho ? (qn > 0 ? rho / qn : 0) : 1;
    for (int x = 0; x < ny; x++) Fi[K + x] = (zi[K + x] - scale * q[x]) / P->k;
  }
  memcpy(w->eval_z, z, sizeof(mjtNum) * nz);
  memcpy(w->eval_F, F, sizeof(mjtNum) * nz);
  w->eval_prox = w->prox;
  w->eval_anchor = w->anchor_id;
  w->eval_valid = 1;
  if (JF) jacobian_at(w, z, JF);
}

// JF (dense nz x nz or band) at z, from the p and ub of the residual just evaluated there
static void jacobian_at(cuspPatchWork* w, const mjtNum* z, mjtNum* JF) {
  const int nrows = w->nrows, nz = w->nz;

  // G = d ub / d z (nrows x nz, column-major): columns of W combined by dp/dz; column j of
  // patch i is nonzero only over the rows hull[2i] .. hull[2i + 1] (the only ones set and read)
  for (int i = 0; i < w->nisland; i++) {
    int z0 = w->z_of[i], lo = w->hull[2 * i], hi = w->hull[2 * i + 1];
    for (int j = z0; j < z0 + patch_nz(w->island + i); j++) {
      memset(w->G + (size_t)j * nrows + lo, 0, (size_t)(hi - lo) * sizeof(mjtNum));
    }
  }
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    const mjtNum* zi = z + w->z_of[i];
    int r0 = w->row_of[i], z0 = w->z_of[i];
    Derived D;
    derive(&D, w, i, zi);
    for (int j = 0; j < patch_nz(P); j++) {
      int rows[2];
      mjtNum coef[2];
      int nrow = impulse_column(rows, coef, P, &D, vertex_offsets(w, i), zi, j);
      mjtNum* Gj = w->G + (size_t)(z0 + j) * nrows;
      for (int a = 0; a < nrow; a++) {
        int row = r0 + rows[a];
        const mjtNum* Wc = w->W + (size_t)row * nrows;  // W symmetric: row = column
        int hi = w->span[2 * row + 1];
        for (int r = w->span[2 * row]; r < hi; r++) Gj[r] += coef[a] * Wc[r];
        Gj[row] += coef[a] * w->prox * w->w_diag[row];  // (W + prox diag W) dp/dz
      }
    }
  }
  // JF: dense (nz x nz), or band (kl, ku) with the band core (zeroed by it); the rows of patch i
  // depend only on the unknowns hull[2i] .. hull[2i + 1] (the others' entries are exact zeros)
  const int lb = w->kl + w->ku + 1;
  if (!w->band) memset(JF, 0, (size_t)nz * nz * sizeof(mjtNum));
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    const mjtNum* zi = z + w->z_of[i];
    const mjtNum* ub = w->ub + w->row_of[i];
    int r0 = w->row_of[i], z0 = w->z_of[i];
    Derived D;
    derive(&D, w, i, zi);
    int K = P->nvert, ny = 2 + has_torsion(P);
    Projection pr;
    projection_at(&pr, P, &D, zi, ub);
    for (int j = w->hull[2 * i]; j < w->hull[2 * i + 1]; j++) {
      const mjtNum* Gj = w->G + (size_t)j * nrows;
      int glo = w->hull[2 * w->zpatch[j]], ghi = w->hull[2 * w->zpatch[j] + 1];
      mjtNum g[3 + CUSP_PATCH_MAXVERT];  // column j of G at this patch's rows (0 outside its hull)
      for (int r = 0; r < K + ny; r++) g[r] = r0 + r >= glo && r0 + r < ghi ? Gj[r0 + r] : 0;
      mjtNum* col = w->band ? JF + (size_t)j * lb + w->ku - j : JF + (size_t)j * nz;  // col[i]: row i
      for (int k = 0; k < K; k++) col[z0 + k] = g[k];
      friction_column(col + z0 + K, P, &D, vertex_offsets(w, i), zi, ub, &pr, g, j - z0);
    }
  }
}

// The solver works on scaled unknowns z / z_scale (velocities, m/s); the problem in N s.
static const mjtNum* physical(cuspPatchWork* w, const mjtNum* z) {
  for (int i = 0; i < w->nz; i++) w->z_phys[i] = z[i] * w->z_scale[i];
  return w->z_phys;
}

static int mcp_residual(mjtNum* F, const mjtNum* z, int n, void* user) {
  (void)n;
  cuspPatchWork* w = (cuspPatchWork*)user;
  evaluate(w, physical(w, z), F, NULL);
  return 0;
}

static int mcp_jacobian(mjtNum* J, int ldj, const mjtNum* z, int n, void* user) {
  cuspPatchWork* w = (cuspPatchWork*)user;
  if (ldj != n || w->band) return -1;
  mjtNum* F = w->F;  // scratch: the solver passes its own F buffer to the residual
  evaluate(w, physical(w, z), F, J);
  for (int j = 0; j < n; j++) {  // dF/d(z_j / s_j) = s_j dF/dz_j
    mjtNum* col = J + (size_t)j * n;
    for (int i = 0; i < n; i++) col[i] *= w->z_scale[j];
  }
  return 0;
}

static int mcp_jacobian_band(mjtNum* J, int ldj, const mjtNum* z, int n, void* user) {
  cuspPatchWork* w = (cuspPatchWork*)user;
  if (!w->band || ldj != w->kl + w->ku + 1) return -1;
  evaluate(w, physical(w, z), w->F, J);
  for (int j = 0; j < n; j++) {
    mjtNum* col = J + (size_t)j * ldj + w->ku - j;
    int i0 = j - w->ku > 0 ? j - w->ku : 0, i1 = j + w->kl < n - 1 ? j + w->kl : n - 1;
    for (int i = i0; i <= i1; i++) col[i] *= w->z_scale[j];
  }
  return 0;
}

//---------------------------------- the Newton step by bodies ---------------------------------------

// The island's Newton matrix (scaled unknowns, mcp.h) is H = Da + Db JF S with
//   JF = Lz + Lu (W + prox Dw) C,   W = Jr X^T (X = Jr Mr^-1, Mr the reduced inertia),
// Lz = dF/dz at fixed row velocities, Lu = dF/dub and C = dp/dz block diagonal over the patches,
// Dw = diag(W), S = diag(z_scale). With A = Da + Db (Lz + prox Lu Dw C) S (block diagonal),
// U = Db Lu Jr (nz x nr) and V = X^T C S (nr x nz), H = A + U V, and by the Woodbury identity
//   H^-1 b = y - A^-1 U (I + V A^-1 U)^-1 V y,   y = A^-1 b:
// one small LU per patch and one LU of the nr x nr capacitance I + V A^-1 U, assembled from each
// patch's bodies only (its rows touch the dofs of two bodies): no W, no dense Jacobian, no LU of
// the island's nz unknowns. A is regular where prox > 0 (a loaded vertex's row is then
// prox W_kk), so the step serves the proximal loop; the plain Newton steps (prox = 0) take the
// dense LU. The island's hyperstatic piles have more unknowns than dofs (four vertex rows on each
// resting face): the capacitance is the smaller matrix.
enum { BODIES_MIN_UNKNOWNS = 25 };

static int* bb_meta(cuspPatchWork* w) { return w->bb_int; }
static int* bb_piv(cuspPatchWork* w) { return w->bb_int + 6 * (size_t)w->nisland; }
static int* bb_mark(cuspPatchWork* w) { return bb_piv(w) + w->nz + w->bb_nr; }
static int* bb_cols(cuspPatchWork* w) { return bb_mark(w) + w->bb_nr; }

static int grow_ints(cuspPatchWork* w, size_t n) {
  if (n <= w->bb_int_cap) return 0;
  void* a = grow(w->bb_int, n * sizeof(int));
  if (!a) return -1;
  w->bb_int = (int*)a;
  w->bb_int_cap = n;
  return 0;
}

// the columns (ascending, into cols) where some row of [r0, r1) of rows (row-major, stride nr) is
// nonzero, each row within its span span[4a + off], span[4a + off + 1]; returns their number
static int patch_dofs(int* cols, int* mark, const mjtNum* rows, const int* span, int off, int r0,
                      int r1, int nr) {
  int lo = nr, hi = 0, n = 0;
  for (int a = r0; a < r1; a++) {
    int l = span[4 * a + off], h = span[4 * a + off + 1];
    for (int c = l; c < h; c++) {
      if (rows[(size_t)a * nr + c] != 0) mark[c] = 1;
    }
    if (l < h && l < lo) lo = l;
    if (l < h && h > hi) hi = h;
  }
  for (int c = lo; c < hi; c++) {
    if (mark[c]) {
      if (cols) cols[n] = c;
      n++;
      mark[c] = 0;
    }
  }
  return n;
}

// w->by_bodies and the layout of the step's blocks, for an island whose dense Newton matrices the
// step replaces (not a band island, not a small one); returns 0, -1 if out of memory
static int bodies_layout(cuspPatchWork* w, const cuspConfig* cfg, int nr) {
  w->by_bodies = 0;
  w->bb_nr = nr;
  if (!cfg->solve_by_bodies || w->band || w->nz < BODIES_MIN_UNKNOWNS || nr <= 0) return 0;
  size_t head = 6 * (size_t)w->nisland + (size_t)w->nz + 2 * (size_t)nr;
  if (grow_ints(w, head)) return -1;
  int* mark = bb_mark(w);
  memset(mark, 0, (size_t)nr * sizeof(int));
  size_t ncols = 0, sa = 0, su = 0, sv = 0;
  for (int i = 0; i < w->nisland; i++) {
    int* meta = bb_meta(w) + 6 * i;
    int r0 = w->row_of[i], r1 = w->row_of[i + 1], m = patch_nz(w->island + i);
    meta[0] = (int)ncols;
    meta[1] = patch_dofs(NULL, mark, w->Jr, w->rspan, 0, r0, r1, nr);
    meta[2] = patch_dofs(NULL, mark, w->X, w->rspan, 2, r0, r1, nr);
    meta[3] = (int)sa;
    meta[4] = (int)su;
    meta[5] = (int)sv;
    ncols += (size_t)meta[1] + meta[2];
    sa += (size_t)m * m;
    su += (size_t)m * meta[1];
    sv += (size_t)meta[2] * m;
  }
  if (grow_ints(w, head + ncols)) return -1;
  for (int i = 0; i < w->nisland; i++) {
    const int* meta = bb_meta(w) + 6 * i;
    int* cols = bb_cols(w) + meta[0];
    int r0 = w->row_of[i], r1 = w->row_of[i + 1];
    patch_dofs(cols, bb_mark(w), w->Jr, w->rspan, 0, r0, r1, nr);
    patch_dofs(cols + meta[1], bb_mark(w), w->X, w->rspan, 2, r0, r1, nr);
  }
  size_t nnum = 2 * sa + 2 * su + sv + (size_t)nr * nr + 3 * (size_t)nr;
  if (nnum > w->bb_num_cap) {
    void* a = grow(w->bb_num, nnum * sizeof(mjtNum));
    if (!a) return -1;
    w->bb_num = (mjtNum*)a;
    w->bb_num_cap = nnum;
  }
  w->bb_sa = sa;
  w->bb_su = su;
  w->bb_sv = sv;
  w->by_bodies = 1;
  return 0;
}

// The body step's blocks in w->bb_num (the layout bodies_layout sized)
typedef struct BodyBlocks_ {
  mjtNum *A, *LU, *U, *Q, *V, *cap;  // see bb_num in patch_solve.h
  mjtNum *t, *v;                     // (nr) V y, then the capacitance's solution; V d
} BodyBlocks;

static BodyBlocks body_blocks(const cuspPatchWork* w) {
  BodyBlocks b;
  b.A = w->bb_num;
  b.LU = b.A + w->bb_sa;
  b.U = b.LU + w->bb_sa;
  b.Q = b.U + w->bb_su;
  b.V = b.Q + w->bb_su;
  b.cap = b.V + w->bb_sv;
  b.t = b.cap + (size_t)w->bb_nr * w->bb_nr;
  b.v = b.t + w->bb_nr;
  return b;
}

// Patch i's blocks at the last evaluated point (m x m, column-major, m = its unknowns): C = dp/dz,
// Lu = dF/dub and Lz = dF/dz at fixed ub, so that JF's block column is Lz + Lu dub/dz
static void patch_blocks(mjtNum* C, mjtNum* Lu, mjtNum* Lz, const cuspPatchWork* w, int i,
                         const mjtNum* z) {
  const cuspPatch* P = w->island + i;
  const mjtNum* zi = z + w->z_of[i];
  const mjtNum* ub = w->ub + w->row_of[i];
  const mjtNum* voff = vertex_offsets(w, i);
  int m = patch_nz(P), K = P->nvert;
  Derived D;
  derive(&D, w, i, zi);
  Projection pr;
  projection_at(&pr, P, &D, zi, ub);
  memset(C, 0, (size_t)m * m * sizeof(mjtNum));
  mjtNum g[3 + CUSP_PATCH_MAXVERT] = {0};
  for (int j = 0; j < m; j++) {
    int rows[2];
    mjtNum coef[2];
    int nrow = impulse_column(rows, coef, P, &D, voff, zi, j);
    for (int a = 0; a < nrow; a++) C[rows[a] + (size_t)j * m] = coef[a];
    // a unit row velocity (Lu's column j), then the patch's own unknown j alone (Lz's)
    mjtNum* lu = Lu + (size_t)j * m;
    mjtNum* lz = Lz + (size_t)j * m;
    for (int k = 0; k < K; k++) {
      lu[k] = k == j;
      lz[k] = 0;
    }
    if (j < K) {  // a vertex row's velocity is not an argument of the projection
      for (int x = K; x < m; x++) lu[x] = 0;
    } else {
      g[j] = 1;
      friction_column(lu + K, P, &D, voff, zi, ub, &pr, g, -1);
      g[j] = 0;
    }
    friction_column(lz + K, P, &D, voff, zi, ub, &pr, g, j);
  }
}

// A patch's block A_i (m x m, column-major) is lower block triangular, [Dv 0; B Y]: its K vertex
// rows are diagonal (a vertex's impulse is its own unknown, and its row velocity is no argument of
// the limit-surface projection, so Lz, Lu and C are the identity or 0 there), its ny = m - K
// friction rows dense. Factored in place: Dv kept, Y by LU (pivots in piv[K..m)); -1 if a pivot
// is 0. The LU of all m rows cost m^3 / 3 and each solve m^2, most of the body step's work.
static int patch_block_factor(mjtNum* L, int* piv, int K, int m) {
  for (int k = 0; k < K; k++) {
    if (L[k + (size_t)k * m] == 0) return -1;
  }
  mjtNum* Y = L + K + (size_t)K * m;
  return cusp_dgetrf(Y, piv + K, m - K, m - K, m) ? -1 : 0;
}

// x (m x nrhs, leading dimension ldx) := A_i^-1 x with the factor of patch_block_factor
static void patch_block_solve(mjtNum* x, const mjtNum* L, const int* piv, int K, int m, int nrhs,
                              int ldx) {
  for (int c = 0; c < nrhs; c++) {
    mjtNum* xc = x + (size_t)c * ldx;
    for (int k = 0; k < K; k++) {  // the vertex rows, then their share B x_v of the friction rows
      mjtNum v = xc[k] /= L[k + (size_t)k * m];
      if (v == 0) continue;
      const mjtNum* bk = L + (size_t)k * m;
      for (int r = K; r < m; r++) xc[r] -= bk[r] * v;
    }
  }
  cusp_dgetrs(x + K, 'N', L + K + (size_t)K * m, piv + K, m - K, nrhs, m, ldx);
}

// The blocks of the step at z (scaled unknowns) for the FB derivatives da, db: each patch's A and
// its LU, U and Q = A^-1 U, V, and the LU of the capacitance I + V A^-1 U; -1 if a pivot is 0
static int bodies_factor(cuspPatchWork* w, const mjtNum* da, const mjtNum* db, const mjtNum* zs) {
  const int nr = w->bb_nr;
  const mjtNum* z = physical(w, zs);
  evaluate(w, z, w->F, NULL);  // p and ub at z (the point of the last residual: no work)
  BodyBlocks b = body_blocks(w);
  mjtNum *A = b.A, *LU = b.LU, *U = b.U, *Q = b.Q, *V = b.V, *cap = b.cap;
  int* piv = bb_piv(w);
  memset(cap, 0, (size_t)nr * nr * sizeof(mjtNum));
  enum { MAXM = 3 + CUSP_PATCH_MAXVERT };
  mjtNum C[MAXM * MAXM], Lu[MAXM * MAXM], Lz[MAXM * MAXM];
  for (int i = 0; i < w->nisland; i++) {
    const int* meta = bb_meta(w) + 6 * i;
    const int* cj = bb_cols(w) + meta[0];
    const int* cx = cj + meta[1];
    int nJ = meta[1], nX = meta[2], m = patch_nz(w->island + i), z0 = w->z_of[i];
    int r0 = w->row_of[i], K = w->island[i].nvert;
    const mjtNum* sc = w->z_scale + z0;
    patch_blocks(C, Lu, Lz, w, i, z);
    // Lu is the identity on the vertex rows and couples the friction rows [K, m) among
    // themselves only (the limit surface sees the sliding velocity and spin, not the normals)
    // A_i = Da + Db (Lz + prox Lu Dw C) S
    mjtNum* Ai = A + meta[3];
    mjtNum* Li = LU + meta[3];
    for (int c = 0; c < m; c++) {
      for (int r = 0; r < m; r++) {
        mjtNum s = 0;
        if (r < K) {
          s = w->w_diag[r0 + r] * C[r + c * m];
        } else {
          for (int a = K; a < m; a++) s += Lu[r + a * m] * w->w_diag[r0 + a] * C[a + c * m];
        }
        s = Lz[r + c * m] + w->prox * s;
        Ai[r + c * m] = db[z0 + r] * s * sc[c] + (r == c ? da[z0 + r] : 0);
      }
    }
    memcpy(Li, Ai, (size_t)m * m * sizeof(mjtNum));
    if (patch_block_factor(Li, piv + z0, K, m)) return -1;
    // U_i = Db Lu Jr_i over its dofs, Q_i = A_i^-1 U_i
    mjtNum* Ui = U + meta[4];
    mjtNum* Qi = Q + meta[4];
    const mjtNum* Jr = w->Jr + (size_t)r0 * nr;  // the patch's rows
    for (int c = 0; c < nJ; c++) {
      const mjtNum* jc = Jr + cj[c];
      for (int r = 0; r < m; r++) {
        mjtNum s = 0;
        if (r < K) {
          s = jc[(size_t)r * nr];
        } else {
          for (int a = K; a < m; a++) s += Lu[r + a * m] * jc[(size_t)a * nr];
        }
        Ui[r + c * m] = db[z0 + r] * s;
      }
    }
    memcpy(Qi, Ui, (size_t)m * nJ * sizeof(mjtNum));
    if (nJ) patch_block_solve(Qi, Li, piv + z0, K, m, nJ, m);
    // V_i = X_i^T C S over its dofs (C: one or two rows per column)
    mjtNum* Vi = V + meta[5];
    const mjtNum* X = w->X + (size_t)r0 * nr;
    for (int c = 0; c < m; c++) {
      mjtNum* vc = Vi + (size_t)c * nX;
      for (int x = 0; x < nX; x++) vc[x] = 0;
      for (int a = 0; a < m; a++) {
        mjtNum f = C[a + c * m] * sc[c];
        if (f == 0) continue;
        const mjtNum* xa = X + (size_t)a * nr;
        for (int x = 0; x < nX; x++) vc[x] += xa[cx[x]] * f;
      }
    }
    // the capacitance's share V_i Q_i
    for (int c = 0; c < nJ; c++) {
      mjtNum* cc = cap + (size_t)cj[c] * nr;
      for (int r = 0; r < m; r++) {
        mjtNum q = Qi[r + c * m];
        if (q == 0) continue;
        const mjtNum* vr = Vi + (size_t)r * nX;
        for (int x = 0; x < nX; x++) cc[cx[x]] += vr[x] * q;
      }
    }
  }
  for (int k = 0; k < nr; k++) cap[k + (size_t)k * nr] += 1;
  return cusp_dgetrf(cap, piv + w->nz, nr, nr, nr) ? -1 : 0;
}

// t (nr) := V x = sum_i V_i x_i over each patch's dofs
static void bodies_times_v(cuspPatchWork* w, mjtNum* t, const mjtNum* x) {
  const mjtNum* V = body_blocks(w).V;
  memset(t, 0, (size_t)w->bb_nr * sizeof(mjtNum));
  for (int i = 0; i < w->nisland; i++) {
    const int* meta = bb_meta(w) + 6 * i;
    const int* cx = bb_cols(w) + meta[0] + meta[1];
    int nX = meta[2], m = patch_nz(w->island + i), z0 = w->z_of[i];
    const mjtNum* Vi = V + meta[5];
    for (int r = 0; r < m; r++) {
      mjtNum y = x[z0 + r];
      const mjtNum* vr = Vi + (size_t)r * nX;
      for (int x = 0; x < nX && y != 0; x++) t[cx[x]] += vr[x] * y;
    }
  }
}

// x (nz) := H^-1 x with the factors of bodies_factor (Woodbury)
static void bodies_solve(cuspPatchWork* w, mjtNum* x) {
  const int nr = w->bb_nr;
  BodyBlocks b = body_blocks(w);
  const mjtNum *LU = b.LU, *Q = b.Q, *cap = b.cap;
  mjtNum* t = b.t;
  const int* piv = bb_piv(w);
  for (int i = 0; i < w->nisland; i++) {  // y = A^-1 x
    const int* meta = bb_meta(w) + 6 * i;
    int m = patch_nz(w->island + i), z0 = w->z_of[i];
    patch_block_solve(x + z0, LU + meta[3], piv + z0, w->island[i].nvert, m, 1, m);
  }
  bodies_times_v(w, t, x);  // s = cap^-1 V y
  cusp_dgetrs(t, 'N', cap, piv + w->nz, nr, 1, nr, nr);
  for (int i = 0; i < w->nisland; i++) {  // x = y - Q s
    const int* meta = bb_meta(w) + 6 * i;
    const int* cj = bb_cols(w) + meta[0];
    int nJ = meta[1], m = patch_nz(w->island + i), z0 = w->z_of[i];
    const mjtNum* Qi = Q + meta[4];
    for (int c = 0; c < nJ; c++) {
      mjtNum s = t[cj[c]];
      for (int r = 0; r < m && s != 0; r++) x[z0 + r] -= Qi[r + c * m] * s;
    }
  }
}

// hx (nz) := H x = A x + U (V x), from the blocks of bodies_factor
static void bodies_times_h(cuspPatchWork* w, mjtNum* hx, const mjtNum* x) {
  BodyBlocks b = body_blocks(w);
  const mjtNum *A = b.A, *U = b.U;
  mjtNum* v = b.v;
  bodies_times_v(w, v, x);
  for (int i = 0; i < w->nisland; i++) {
    const int* meta = bb_meta(w) + 6 * i;
    const int* cj = bb_cols(w) + meta[0];
    int nJ = meta[1], m = patch_nz(w->island + i), z0 = w->z_of[i];
    const mjtNum* Ai = A + meta[3];
    const mjtNum* Ui = U + meta[4];
    for (int r = 0; r < m; r++) {
      mjtNum s = 0;
      for (int c = 0; c < m; c++) s += Ai[r + c * m] * x[z0 + c];
      for (int c = 0; c < nJ; c++) s += Ui[r + c * m] * v[cj[c]];
      hx[z0 + r] = s;
    }
  }
}

// The structured Newton step of mcp.h for the island (see above), refined once by its own
// residual -phi - H d where that exceeds 1e-12 |phi| (the Woodbury solve is not backward stable:
// its capacitance carries the stiffness 1 / prox of the loaded rows); -1 where it does not apply
static int mcp_newton_by_bodies(mjtNum* d, mjtNum* hd, const mjtNum* phi, const mjtNum* da,
                                const mjtNum* db, const mjtNum* zs, int n, void* user) {
  cuspPatchWork* w = (cuspPatchWork*)user;
  if (!w->by_bodies || !(w->prox > 0) || bodies_factor(w, da, db, zs)) return -1;
  for (int i = 0; i < n; i++) d[i] = -phi[i];
  bodies_solve(w, d);
  bodies_times_h(w, hd, d);
  mjtNum res = 0, pn = 0;
  for (int i = 0; i < n; i++) {
    res = fmax(res, fabs(hd[i] + phi[i]));
    pn = fmax(pn, fabs(phi[i]));
  }
  if (!(res <= 1e-12 * pn)) {
    for (int i = 0; i < n; i++) hd[i] = -phi[i] - hd[i];
    bodies_solve(w, hd);
    for (int i = 0; i < n; i++) d[i] += hd[i];
    bodies_times_h(w, hd, d);
  }
  return 0;
}

//---------------------------------- proximal-point solve -------------------------------------------

// The proximal switch of the shared core (solver/mcp_proximal.h): rho > 0 makes the row velocities
// ub0 + W p + rho diag(W) (p - p(anchor)), so that W + rho diag(W) is positive definite even when
// the contacts are hyperstatic and W is singular (each row weighted by its own diagonal: bodies of
// very unequal mass in one island move at the same pace); rho = 0 restores the problem itself.
static void patch_prox(void* user, mjtNum rho, const mjtNum* anchor) {
  cuspPatchWork* w = (cuspPatchWork*)user;
  w->prox = 0;
  if (rho > 0 && anchor) {
    evaluate(w, physical(w, anchor), w->z_anchor, NULL);  // p at the anchor (F into scratch)
    memcpy(w->p_anchor, w->p, sizeof(mjtNum) * w->nrows);
    w->prox = rho;
    w->anchor_id++;
  }
}

// Solve the island's MCP from w->z with the shared proximal-point core: plain semismooth Newton
// first (a few steps solve an island that is not hyperstatic), then proximal points that vanish at
// the answer, then a plain Newton polish where they stall; one work budget (solver/lcp.h) bounds
// the Newton steps of all of them. A warm start that already solves costs one residual.
enum { kSmallIsland = 24, kSmallIslandSteps = 5, kPlainLastSteps = 250 };

static cuspLcpStatus solve_proximal(cuspPatchWork* w, const cuspMcpProblem* prob,
                                    const cuspMcpOptions* opt, int fallbacks) {
  int budget_binds = 0;
  cuspMcpOptions o = *opt;
  if (o.work_budget >= 0) {
    // a rigid island's budget is at least 200 dense Newton steps of its own size, what its
    // solve may need on a hyperstatic island, whatever the default budget alone would allow
    // (1e7 work units: less than one step of a 64-box stack's 448 unknowns)
    mjtNum base = o.work_budget > 0 ? o.work_budget : CUSP_SOLVE_WORK_BUDGET;
    o.work_budget = fmax(base, 200 * cusp_solve_iteration_cost(CUSP_ITER_NEWTON, w->nz, 0));
  }
  opt = &o;
  cuspMcpProxOptions po = cusp_mcp_proximal_default_options();
  po.max_iterations = cusp_solve_iteration_cap(&budget_binds, opt->max_iter, opt->work_budget,
                                               CUSP_ITER_NEWTON, w->nz, 0);
  // plain Newton first on a small island only, where its Levenberg-Marquardt fallback (n^3 / 3
  // for H^T H, then Cholesky) is cheap. Four steps: from a warm start it converges in 0-2 where
  // the impulses are unique; where they are not (two tips per finger, a jaw's faces) it crawled
  // through all of a 50-step cap before the proximal loop solved in one outer step (jaw lift: 72
  // of 1000 steps; 3.7x -> 1.6x stock CPU). An island of more than kSmallIsland unknowns is
  // hyperstatic where it matters (a pile's resting faces: 4 vertex rows on 3 dofs each), and its
  // four steps were most of its Newton steps: random piles (73 runs) 79 -> 52 s with the loop
  // straight away (islands of up to 96 unknowns had the four steps before)
  po.plain_first_iter = w->nz <= kSmallIsland ? 4 : 0;
  // and where the loop leaves such an island short, the plain Newton of its starting point with a
  // budget of its own (a single 4-vertex patch of a 0.1 g body pushed out of 1.3 mm of overlap:
  // the loop stalled at 1.7e-4, the plain Newton's damped path solved it in 124 steps)
  // a small island's Newton steps are cheap (n^3 / 3 with n <= kSmallIsland: under 5000 flops):
  // it may take kSmallIslandSteps times the key's limit. A box leaning on a wall on one vertex
  // while it slides on the floor at its cone's edge (a ladder, 13 unknowns) needs 450-720 damped
  // Newton steps on the first step of its slide and few after it; cut at the limit, each step of
  // the slide failed and cost the cold restart and the fallbacks (pile_bin under implicit at 1 ms:
  // 56 failed solves in 1000 steps -> 0, mean step 411 -> 188 us)
  if (w->nz <= kSmallIsland) po.max_iterations *= kSmallIslandSteps;
  // the plain Newton that solves does so within kPlainLastSteps: of its 549 runs in the 116 pile
  // runs, Fetch PickAndPlace, Meta-World and the scene fuzzer's 138500 steps, the 137 that solved
  // took 6-189 steps; the 412 that failed ran to their limit (up to 2394 steps, 382000 of the
  // 388000 the runs took; a Fetch grip's step 17 ms)
  int plain_last = po.max_iterations < kPlainLastSteps ? po.max_iterations : kPlainLastSteps;
  po.plain_last_iter = fallbacks && w->nz <= 96 ? plain_last : 0;
  po.polish_iter = fallbacks ? 100 : 0;
  po.rho0 = 1e-2;
  po.rho_per_residual = 1e2;  // s/m: a warm start within 1e-6 m/s starts at rho <= 1e-4
  po.rho_max = 1e4;
  po.inner_tol_rel = 1e-3;
  po.inner_tol_factor = 0.5;
  // a loop that has not lowered its best residual by 10 % in 10 outer steps has stalled (a
  // hyperstatic grip whose pads carry the squeeze on opposite corners, its friction at 97 % of
  // the balls: 3e-6 -> 2.7e-6 in 24 outer steps, then 60 more at 7e-10): what follows it (the
  // polish, the finishes, the cold restart) solves such an island in a few steps. Fetch
  // PickAndPlace's pick: 231 -> 126 us a step under Euler; a window of 6: 99 us, but 10 more
  // failed steps of the scene fuzzer's 138500 (bench/RESULTS.md)
  po.stall_outer = 10;
  po.stall_factor = 0.9;
  cuspMcpProxInfo info;
  for (int i = 0; i < w->nz; i++) w->z[i] /= w->z_scale[i];
  cuspLcpStatus status = cusp_mcp_proximal(w->z, NULL, &info, prob, patch_prox, opt, &po,
                                           w->mcp_work, w->mcp_bytes);
  for (int i = 0; i < w->nz; i++) w->z[i] *= w->z_scale[i];
  w->info = info.mcp;
  w->outer = info.outer;
  if (status == CUSP_LCP_MAX_ITER && budget_binds) w->info.message = "work budget reached";
  return status;
}

//---------------------------------- separation finish ------------------------------------------------

// Where every patch of the island sticks, the MCP is linear in the row impulses p: the vertices'
// normal rows 0 <= p_k _|_ ub_k >= 0, the friction rows of a loaded patch ub = 0 (the spin and
// sliding at its ECP are those of its rows). That is the convex QP of solver/qp_active.h with the
// Delassus W, and its active-set solve decides exactly what the proximal loop cannot: which
// vertices leave. A patch that clearly slides at the iterate (its limit-surface argument more
// than 1 % outside the ball) keeps its friction impulses of the iterate as known impulses: its
// vertex rows are in the QP, its friction rows are not (a box sliding on the floor while another
// leans on it: the leaning body's vertices are decided by the QP all the same). A face whose vertices' gap terms are not quite those of a rigid motion gives
// W a soft direction (a redistribution of the impulses over the face) that carries a velocity
// residual no impulse on all its vertices removes; the loop drifts along it at the rate of its
// regularisation and stalls, the active-set method moves along it until a vertex leaves (a box
// about to tip in a pile). The QP's friction is one of many (the island is hyperstatic) and may
// leave a cone, so its answer only says which vertices separate: they are held at 0 and the MCP,
// cones included, is solved again from the QP's answer, its rows now consistent. At most
// kStickRounds rounds (a round's answer may show another vertex leaving); the result is kept
// only if it solves the MCP itself with every bound restored (natural residual <= tol, so a held
// vertex must be opening).
enum { kStickRounds = 3 };

static size_t aligned(size_t bytes) { return (bytes + 15u) & ~(size_t)15u; }

// natural residual of the MCP at w->z on the solver's scaled unknowns (evaluates F)
static mjtNum scaled_residual(cuspPatchWork* w) {
  evaluate(w, w->z, w->F, NULL);
  mjtNum res = 0;
  for (int i = 0; i < w->nz; i++) {
    mjtNum zs = w->z[i] / w->z_scale[i];
    mjtNum r = fabs(zs - fmin(fmax(zs - w->F[i], w->lo[i]), w->hi[i]));
    if (!(r <= res)) res = isnan(r) ? INFINITY : r;
  }
  return res;
}

// 1 if loaded island patch i slides at w->z (p, ub of w->z evaluated): its limit-surface
// argument lies more than `edge` times the ball's radius from its centre
static int patch_slides(const cuspPatchWork* w, int i, const Derived* D, mjtNum edge) {
  const cuspPatch* P = w->island + i;
  const mjtNum* zi = w->z + w->z_of[i];
  mjtNum q[3], rho;
  return D->Ln > 0 && projection_argument(q, &rho, P, D, zi, w->ub + w->row_of[i]) > edge * rho;
}

// The unknowns of the row impulses p (nrows): lambda from the vertex rows, y from the friction
// rows and the ECP of the new lambda.
static void unknowns_of_impulses(cuspPatchWork* w, const mjtNum* p) {
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    mjtNum* zi = w->z + w->z_of[i];
    const mjtNum* pi = p + w->row_of[i];
    int K = P->nvert;
    for (int k = 0; k < K; k++) zi[k] = pi[k];
    Derived D;
    derive(&D, w, i, zi);
    zi[K] = P->e[0] > 0 ? pi[K] / P->e[0] : 0;
    zi[K + 1] = P->e[1] > 0 ? pi[K + 1] / P->e[1] : 0;
    if (has_torsion(P)) {
      zi[K + 2] = P->e[2] > 0 ? (pi[K + 2] + D.d[1] * pi[K] - D.d[0] * pi[K + 1]) / P->e[2] : 0;
    }
  }
}

// The finish's QP's layout in w->qp_work (reserve_stick_work): the held list, W_EE, q, x, p,
// the rows and their kinds, cusp_qp_active's workspace.
typedef struct StickWork_ {
  int* held;     // (nz) vertices held at 0 by the finish
  mjtNum* Wee;   // (ne x ne) column-major
  mjtNum* q;     // (ne) m/s, free velocity of the rows
  mjtNum* x;     // (ne) N s, their impulses
  mjtNum* p;     // (nrows) N s, every row's impulse of the answer
  int* row;      // (ne) the rows of the problem
  int* bounded;  // (ne) 1: a vertex row
  int* slides;   // (nisland) 1: the patch slides at the iterate (its friction rows keep their
                 // impulses and are not in the problem)
  mjtNum edge;   // a loaded patch slides where its limit-surface argument lies more than this
                 // times its ball's radius from the centre
  void* qp;
} StickWork;

static int reserve_stick_work(cuspPatchWork* w, StickWork* sw) {
  const size_t nr = (size_t)w->nrows;
  size_t held = aligned(sizeof(int) * (size_t)w->nz);
  size_t dbl = aligned(sizeof(mjtNum) * (nr * nr + 3 * nr)), ints = aligned(sizeof(int) * (2 * nr + (size_t)w->nisland));
  size_t bytes = held + dbl + ints + cusp_qp_active_worksize(w->nrows);
  if (bytes > w->qp_bytes) {
    void* a = grow(w->qp_work, bytes);
    if (!a) return 0;
    w->qp_work = a;
    w->qp_bytes = bytes;
  }
  char* b = (char*)w->qp_work;
  sw->held = (int*)b;
  sw->Wee = (mjtNum*)(b + held);
  sw->q = sw->Wee + nr * nr;
  sw->x = sw->q + nr;
  sw->p = sw->x + nr;
  sw->row = (int*)(b + held + dbl);
  sw->bounded = sw->row + nr;
  sw->slides = sw->bounded + nr;
  sw->qp = b + held + dbl + ints;
  return 1;
}

// The QP's rows (non-inert vertex rows, friction rows of loaded patches that do not slide) into
// sw->row, sw->bounded, and which patches slide into sw->slides; returns the row count (p, ub of
// w->z evaluated).
static int stick_rows(cuspPatchWork* w, StickWork* sw) {
  int ne = 0;
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    Derived D;
    derive(&D, w, i, w->z + w->z_of[i]);
    sw->slides[i] = patch_slides(w, i, &D, sw->edge);
    for (int j = 0; j < patch_rows(P); j++) {
      int z = w->z_of[i] + j;
      if (!(w->hi[z] > w->lo[z] && (j < P->nvert || (D.Ln > 0 && !sw->slides[i])))) continue;
      sw->row[ne] = w->row_of[i] + j;
      sw->bounded[ne++] = j < P->nvert;
    }
  }
  return ne;
}

// The finish's QP from w->z (warm: its row impulses; the sliding patches' friction impulses
// shift the free velocities q); returns its row count ne (sw->x: the answer), or -1 if it has no
// rows or no solution.
static int stick_qp(cuspPatchWork* w, StickWork* sw, mjtNum tol) {
  const size_t nr = (size_t)w->nrows;
  evaluate(w, w->z, w->F, NULL);
  int ne = stick_rows(w, sw);
  if (ne <= 0) return -1;
  const size_t ns = (size_t)ne;
  for (int c = 0; c < ne; c++) {
    const mjtNum* Wr = w->W + (size_t)sw->row[c] * nr;  // row = column (W symmetric)
    int lo = w->span[2 * sw->row[c]], hi = w->span[2 * sw->row[c] + 1];
    for (int r = 0; r < ne; r++) {
      sw->Wee[r + ns * c] = sw->row[r] >= lo && sw->row[r] < hi ? Wr[sw->row[r]] : 0;
    }
    sw->q[c] = w->ub0[sw->row[c]];
    sw->x[c] = w->p[sw->row[c]];
  }
  for (int i = 0; i < w->nisland; i++) {
    if (!sw->slides[i]) continue;
    for (int f = w->row_of[i] + w->island[i].nvert; f < w->row_of[i + 1]; f++) {
      if (w->p[f] == 0) continue;
      const mjtNum* Wf = w->W + (size_t)f * nr;  // W symmetric: row f = column f
      for (int c = 0; c < ne; c++) {
        int r = sw->row[c];
        if (r >= w->span[2 * f] && r < w->span[2 * f + 1]) sw->q[c] += Wf[r] * w->p[f];
      }
    }
  }
  cuspQpInfo info;
  if (cusp_qp_active(sw->x, &info, sw->Wee, ne, sw->q, sw->bounded, ne, 0.5 * tol, 0, sw->qp,
                     cusp_qp_active_worksize(ne)) != CUSP_LCP_SOLVED) {
    return -1;
  }
  return ne;
}

// w->z := the unknowns of the QP's answer (the sliding patches' friction rows keep the
// iterate's impulses, the other rows not in the problem carry none)
static void take_stick_answer(cuspPatchWork* w, StickWork* sw, int ne) {
  for (int i = 0; i < w->nisland; i++) {
    for (int r = w->row_of[i]; r < w->row_of[i + 1]; r++) {
      sw->p[r] = sw->slides[i] && r >= w->row_of[i] + w->island[i].nvert ? w->p[r] : 0;
    }
  }
  for (int c = 0; c < ne; c++) sw->p[sw->row[c]] = sw->x[c];
  unknowns_of_impulses(w, sw->p);
}

// One round of the finish: the QP from w->z; the vertices it separates join held
// (their hi set to 0) and the MCP is solved again from its answer. Returns the vertices it added
// (0: the round changed nothing, -1: not applicable).
static int stick_round(cuspPatchWork* w, StickWork* sw, int* nheld, const cuspMcpProblem* prob,
                       const cuspMcpOptions* opt) {
  int ne = stick_qp(w, sw, opt->tol);
  if (ne < 0) return -1;
  int added = 0;
  for (int c = 0; c < ne; c++) {
    if (!sw->bounded[c] || sw->x[c] > 0) continue;
    int r = sw->row[c], i = 0;
    while (w->row_of[i + 1] <= r) i++;
    int z = w->z_of[i] + (r - w->row_of[i]);
    if (w->z[z] > 0) {  // a vertex the iterate loads and the answer separates
      sw->held[(*nheld)++] = z;
      w->hi[z] = 0;
      added++;
    }
  }
  if (added == 0) return 0;
  take_stick_answer(w, sw, ne);
  solve_proximal(w, prob, opt, 1);
  return added;
}

// The finish of an island whose patches slide (a clamped object's pads at the edge of their
// friction balls, sliding at micro-metres a second: Fetch's clamp while its gripper's mocap weld
// was condensed as a hard tie), run where the separation finish leaves it short: there the QP with
// every patch sticking has no answer, and the proximal loop crawls. A round: the QP of stick_qp
// with the patches whose limit-surface argument reaches kSlideEdge times their ball's radius
// counted as sliding (their friction impulses held; the next, lower edge where the QP has no
// answer, so a pad just inside its ball joins the sliding ones), then each sliding patch's friction
// put on its ball's edge along the projection's argument at the QP's answer (the
// maximum-dissipation direction of its new sliding velocity, the radius mu Ln of its new load),
// then the MCP solved from there. At most kSlideRounds rounds; kept only if it solves the MCP
// (natural residual <= tol). Returns 1 if w->z was replaced, else 0 (w->z unchanged). Fetch
// PickAndPlace's clamp (the weld condensed): 2 / 4 / 19 failed solves (Euler / implicitfast / RK4)
// -> 0 / 0 / 3; Meta-World's pick 19 -> 4 (bench/RESULTS.md). With the mocap weld compliant they no
// longer reach it; it still solves 10 steps of the 116 pile runs and 11 of the scene fuzzer's
// 138500 that every other path left.
enum { kSlideRounds = 4, kSlideEdges = 4 };
static const mjtNum kSlideEdge[kSlideEdges] = {0.999, 0.99, 0.9, 0.5};

static int slide_finish(cuspPatchWork* w, const cuspMcpProblem* prob, const cuspMcpOptions* opt) {
  StickWork sw;
  if (!reserve_stick_work(w, &sw)) return 0;
  const int nz = w->nz;
  const cuspMcpInfo info = w->info;  // the failed solve's, restored if the finish fails too
  int iterations = 0;                // Newton steps of the finish's proximal solves
  memcpy(w->z_failed, w->z, sizeof(mjtNum) * nz);
  for (int round = 0; round < kSlideRounds; round++) {
    int ne = -1;
    for (int e = 0; e < kSlideEdges && ne < 0; e++) {
      sw.edge = kSlideEdge[e];
      ne = stick_qp(w, &sw, opt->tol);  // evaluates at w->z, marks the sliding patches
    }
    if (ne < 0) break;
    int sliding = 0;
    for (int i = 0; i < w->nisland; i++) sliding |= sw.slides[i];
    if (!sliding) break;  // every loaded patch sticks: the separation finish's case
    take_stick_answer(w, &sw, ne);
    evaluate(w, w->z, w->F, NULL);
    for (int i = 0; i < w->nisland; i++) {
      if (!sw.slides[i]) continue;
      const cuspPatch* P = w->island + i;
      mjtNum* zi = w->z + w->z_of[i];
      Derived D;
      derive(&D, w, i, zi);
      mjtNum q[3], rho;
      mjtNum qn = projection_argument(q, &rho, P, &D, zi, w->ub + w->row_of[i]);
      for (int x = 0; x < 2 + has_torsion(P); x++) {
        zi[P->nvert + x] = qn > 0 ? rho * q[x] / qn : 0;
      }
    }
    mjtNum res = scaled_residual(w);
    if (res > opt->tol) {
      solve_proximal(w, prob, opt, 1);
      iterations += w->info.iterations;
      res = scaled_residual(w);
    }
    if (res <= opt->tol) {
      w->info = info;
      w->info.status = CUSP_LCP_SOLVED;
      w->info.message = "";
      w->info.residual = res;
      w->info.iterations += iterations;
      return 1;
    }
  }
  memcpy(w->z, w->z_failed, sizeof(mjtNum) * nz);
  w->info = info;
  return 0;
}

// Returns 1 if w->z was replaced by a solution of the island's MCP, else 0 (w->z unchanged).
static int separation_finish(cuspPatchWork* w, const cuspMcpProblem* prob,
                            const cuspMcpOptions* opt) {
  const int nz = w->nz;
  StickWork sw;
  if (!reserve_stick_work(w, &sw)) return 0;
  sw.edge = 1.01;  // clearly outside
  int* held = sw.held;  // the vertices held at 0, their hi restored at the end
  int nheld = 0;
  cuspMcpInfo info = w->info;
  memcpy(w->z_failed, w->z, sizeof(mjtNum) * nz);
  mjtNum res = INFINITY;
  for (int round = 0; round < kStickRounds; round++) {
    int added = stick_round(w, &sw, &nheld, prob, opt);
    if (added < 0) break;
    for (int h = 0; h < nheld; h++) w->hi[held[h]] = INFINITY;
    res = scaled_residual(w);
    if (res <= opt->tol) break;
    // a held vertex that pushes (F < 0) carries load after all (the cones the QP leaves out
    // move it): released, and the MCP solved again from here
    int kept = 0;
    for (int h = 0; h < nheld; h++) {
      if (w->F[held[h]] >= 0) held[kept++] = held[h];
    }
    int released = nheld - kept;
    nheld = kept;
    for (int h = 0; h < nheld; h++) w->hi[held[h]] = 0;
    if (released == 0 && added == 0) break;
    if (released == 0) continue;
    solve_proximal(w, prob, opt, 1);
    for (int h = 0; h < nheld; h++) w->hi[held[h]] = INFINITY;
    res = scaled_residual(w);
    if (res <= opt->tol) break;
    for (int h = 0; h < nheld; h++) w->hi[held[h]] = 0;
  }
  for (int h = 0; h < nheld; h++) w->hi[held[h]] = INFINITY;
  if (!(res <= opt->tol)) {
    memcpy(w->z, w->z_failed, sizeof(mjtNum) * nz);
    w->info = info;
    return slide_finish(w, prob, opt);
  }
  w->info.status = CUSP_LCP_SOLVED;
  w->info.message = "";
  w->info.residual = res;
  w->info.iterations += info.iterations;
  return 1;
}

//---------------------------------- assembly --------------------------------------------------------

// relative rows of patch P into J (row-major, stride nv of the island), written over the
// columns [lo, hi) only (the hull of the chains of dofs of its bodies; the rest is never read):
// a vertex's normal row n . Jp + (r x n) . Jr (r from the origin), the friction rows t . Jp and
// o . Jp, the torsion row n . Jr, from the relative Jacobians at the patch origin
static void patch_jacobian(cuspPatchWork* w, const cuspPatch* P, const cuspDynamics* dyn,
                           const mjModel* m, const mjData* d, mjtNum* J, int lo, int hi) {
  int nv = dyn->nv;
  mjtNum* jp = w->jac;
  mjtNum* jr = w->jac + 3 * nv;
  cusp_relative_jac(jp, jr, w->jac2, dyn, m, d, P->origin, P->body[0], P->body[1], lo, hi);
  const mjtNum* n = P->frame + 6;
  int K = P->nvert;
  for (int k = 0; k < K; k++) {
    mjtNum r[3], rn[3];
    mju_sub3(r, P->vert + 3 * k, P->origin);
    mju_cross(rn, r, n);
    mjtNum* row = J + (size_t)k * nv;
    cusp_direction_row(row, jp, n, nv, lo, hi);
    cusp_direction_row_add(row, jr, rn, nv, lo, hi);
  }
  cusp_direction_row(J + (size_t)K * nv, jp, P->frame, nv, lo, hi);
  cusp_direction_row(J + (size_t)(K + 1) * nv, jp, P->frame + 3, nv, lo, hi);
  if (has_torsion(P)) cusp_direction_row(J + (size_t)(K + 2) * nv, jr, n, nv, lo, hi);
}

// [*lo, *hi): the island columns patch P's rows can be nonzero at (the hull of its bodies'
// chains), or all of them when the rows are reduced through a null-space basis (N mixes them)
static void patch_columns(int* lo, int* hi, const cuspPatch* P, const cuspDynamics* dyn,
                          const mjModel* m) {
  if (!dyn->identity) {
    *lo = 0;
    *hi = dyn->nv;
    return;
  }
  int l0, h0, l1 = 0, h1 = 0;
  cusp_dynamics_chain(&l0, &h0, dyn, m, P->body[0]);
  if (P->body[1] > 0) cusp_dynamics_chain(&l1, &h1, dyn, m, P->body[1]);
  if (h1 <= l1) {
    l1 = l0;
    h1 = h0;
  } else if (h0 <= l0) {
    l0 = l1;
    h0 = h1;
  }
  *lo = l0 < l1 ? l0 : l1;
  *hi = h0 > h1 ? h0 : h1;
}

// blk[i] := one past the last column of the diagonal block of the envelope of L that holds
// column i (Mr^-1 maps a vector supported on whole blocks to the same blocks), blk[nr + i] :=
// its first column
static void envelope_blocks(int* blk, const cuspDynamics* dyn) {
  int nr = dyn->nr, start = 0, reach = -1;
  const int* last = dyn->env + nr;
  for (int i = 0; i <= nr; i++) {
    if (i == nr || i > reach) {  // a block [start, i) closes
      for (int k = start; k < i; k++) {
        blk[k] = i;
        blk[nr + k] = start;
      }
      start = i;
    }
    if (i < nr && last[i] > reach) reach = last[i];
  }
}

static int same_patch(const cuspPatch* a, const cuspPatch* b) {
  return a->kind == b->kind && a->body[0] == b->body[0] && a->body[1] == b->body[1] &&
         a->geom[1] == b->geom[1] && (a->kind == CUSP_PATCH_SURFACE || a->geom[0] == b->geom[0]);
}

// initial guess of patch i from last step; returns 0 (zi zeroed) if no match
static int warm_start(cuspPatchWork* w, int i, mjtNum* zi) {
  const cuspPatch* P = w->island + i;
  int K = P->nvert, ny = 2 + has_torsion(P);
  memset(zi, 0, patch_nz(P) * sizeof(mjtNum));
  for (int j = 0; j < w->nprev; j++) {
    const cuspPatch* Q = w->prev + j;
    if (!same_patch(P, Q)) continue;
    if (Q->nvert == K) {
      for (int k = 0; k < K; k++) zi[k] = Q->lambda[k];
    } else {
      for (int k = 0; k < K; k++) zi[k] = Q->Ln / K;
    }
    for (int x = 0; x < ny; x++) zi[K + x] = Q->e[x] > 0 ? Q->L[x] / Q->e[x] : 0;
    return 1;
  }
  return 0;
}

// cold start of patch i's unknowns away from the kink z = 0 of the break case: the weight-scale
// impulse spread over the vertices, no friction
static void cold_start(cuspPatchWork* w, int i) {
  const cuspPatch* P = w->island + i;
  mjtNum* z = w->z + w->z_of[i];
  mju_zero(z, patch_nz(P));
  for (int k = 0; k < P->nvert; k++) z[k] = fmin(w->p_ref / P->nvert, w->hi[w->z_of[i] + k]);
}

// range[0], range[1] := the first nonzero entry of row (n) and one past its last (equal: none)
static void nonzero_range(int range[2], const mjtNum* row, int n) {
  int lo = 0, hi = n;
  while (lo < n && row[lo] == 0) lo++;
  while (hi > lo && row[hi - 1] == 0) hi--;
  range[0] = lo;
  range[1] = hi;
}

//---------------------------------- structure of the island ----------------------------------------

// The Newton matrices of an island are band matrices once its patches are ordered along the
// chains of bodies they join (a stack: patch k couples to k - 1 and k + 1 only). The band solve
// costs O(n (kl + ku)^2) a Newton step against the dense LU's n^3 / 3; it is used when the band
// is at most two thirds of the unknowns and the island has at least BAND_MIN_UNKNOWNS of them.
// Measured on stacks of equal boxes (band kl = ku = 13): from 6 boxes (42 unknowns) up the band
// solve costs less a Newton step; a tapering stack of 5 (43 unknowns, band 43) is faster dense.
enum { BAND_MIN_UNKNOWNS = 40 };
static int band_pays(int n, int kl, int ku) {
  return n >= BAND_MIN_UNKNOWNS && 3 * (kl + ku + 1) <= 2 * n;
}

static inline int ranges_meet(int alo, int ahi, int blo, int bhi) {
  return (alo > blo ? alo : blo) < (ahi < bhi ? ahi : bhi);
}

// hull[2i], hull[2i + 1] := the rows of every patch whose rows can couple to patch i's through
// W = Jr Mr^-1 Jr^T (a Jr span of one meets an X span of the other; rspan holds the rows' spans)
static void couple_patches(cuspPatchWork* w) {
  const int n = w->nisland;
  for (int i = 0; i < n; i++) {
    int* ps = w->pspan + 4 * i;
    ps[0] = ps[2] = INT_MAX;
    ps[1] = ps[3] = INT_MIN;
    for (int a = w->row_of[i]; a < w->row_of[i + 1]; a++) {
      for (int t = 0; t < 2; t++) {
        const int* rs = w->rspan + 4 * a + 2 * t;
        if (rs[0] >= rs[1]) continue;
        if (rs[0] < ps[2 * t]) ps[2 * t] = rs[0];
        if (rs[1] > ps[2 * t + 1]) ps[2 * t + 1] = rs[1];
      }
    }
    w->hull[2 * i] = w->row_of[i];
    w->hull[2 * i + 1] = w->row_of[i + 1];
  }
  for (int i = 0; i < n; i++) {
    const int* pi = w->pspan + 4 * i;
    for (int j = i + 1; j < n; j++) {
      const int* pj = w->pspan + 4 * j;
      if (!ranges_meet(pi[0], pi[1], pj[2], pj[3]) && !ranges_meet(pj[0], pj[1], pi[2], pi[3])) {
        continue;
      }
      if (w->row_of[j] < w->hull[2 * i]) w->hull[2 * i] = w->row_of[j];
      if (w->row_of[j + 1] > w->hull[2 * i + 1]) w->hull[2 * i + 1] = w->row_of[j + 1];
      if (w->row_of[i] < w->hull[2 * j]) w->hull[2 * j] = w->row_of[i];
      if (w->row_of[i + 1] > w->hull[2 * j + 1]) w->hull[2 * j + 1] = w->row_of[i + 1];
    }
  }
}

// band (kl, ku) of the Newton matrix when patch i's rows [r0, r1) depend on the unknowns
// [h0, h1) (rows and unknowns share one layout)
static void band_of(int* kl, int* ku, int r0, int r1, int h0, int h1) {
  if (r1 - 1 - h0 > *kl) *kl = r1 - 1 - h0;
  if (h1 - 1 - r0 > *ku) *ku = h1 - 1 - r0;
}

// hull[2i], hull[2i + 1] := patch i's rows and the union of their W spans (the unknowns its
// residual depends on); w->band, kl, ku: the band solve, if it pays
static void band_layout(cuspPatchWork* w) {
  int kl = 0, ku = 0;
  for (int i = 0; i < w->nisland; i++) {
    int lo = w->row_of[i], hi = w->row_of[i + 1];
    for (int a = w->row_of[i]; a < w->row_of[i + 1]; a++) {
      const int* sp = w->span + 2 * a;
      if (sp[0] >= sp[1]) continue;
      if (sp[0] < lo) lo = sp[0];
      if (sp[1] > hi) hi = sp[1];
    }
    w->hull[2 * i] = lo;
    w->hull[2 * i + 1] = hi;
    band_of(&kl, &ku, w->row_of[i], w->row_of[i + 1], lo, hi);
  }
  w->band = band_pays(w->nz, kl, ku);
  w->kl = w->band ? kl : 0;
  w->ku = w->band ? ku : 0;
  w->bands += w->band;
}

// tree of body b (-1: the world or a static body)
static int tree_of(const mjModel* m, int b) { return b > 0 ? m->body_treeid[b] : -1; }

// Reverse Cuthill-McKee order of the island's patches on the graph "shares a kinematic tree"
// (patches on the bodies of one tree are coupled through its inertia): a stack's patches from
// the top to the floor. The patches are permuted into it when the band it gives (predicted from
// the trees) pays (band_pays); else they keep their order (and the dense solve).
static void order_patches(cuspPatchWork* w, const mjModel* m) {
  const int n = w->nisland;
  if (n < 3 || w->ntree <= 0) return;
  int* perm = w->order;       // (n) new position -> patch
  int* deg = perm + n;        // (n) neighbours of each patch through its trees
  int* placed = deg + n;      // (n) 1 once placed, then the new position of each patch
  int* rowstart = placed + n; // (n) first row of each patch in the new order
  int* cnt = w->tree_list;    // (nt + 1) per tree slot: counts, then list offsets
  int* lst = w->tree_list + w->ntree + 1;  // (2n) the patches of each tree slot
  int nt = 0;
  // tree slots of the island's trees, two per patch at most (its body and its support)
  for (int i = 0; i < n; i++) {
    const cuspPatch* P = w->island + i;
    int t0 = tree_of(m, P->body[0]), t1 = tree_of(m, P->body[1]);
    int ts[2] = {t0, t1 != t0 ? t1 : -1};
    for (int s = 0; s < 2; s++) {
      if (ts[s] < 0) continue;
      if (w->tree_slot[ts[s]] < 0) {
        w->tree_slot[ts[s]] = nt;
        cnt[nt++] = 0;
      }
      cnt[w->tree_slot[ts[s]]]++;
    }
  }
  for (int k = 1; k < nt; k++) cnt[k] += cnt[k - 1];
  cnt[nt] = nt ? cnt[nt - 1] : 0;
  for (int i = n - 1; i >= 0; i--) {  // lists in patch order; cnt[k] ends as slot k's start
    const cuspPatch* P = w->island + i;
    int t0 = tree_of(m, P->body[0]), t1 = tree_of(m, P->body[1]);
    if (t0 >= 0) lst[--cnt[w->tree_slot[t0]]] = i;
    if (t1 >= 0 && t1 != t0) lst[--cnt[w->tree_slot[t1]]] = i;
  }
  for (int i = 0; i < n; i++) {
    const cuspPatch* P = w->island + i;
    int t0 = tree_of(m, P->body[0]), t1 = tree_of(m, P->body[1]);
    deg[i] = 0;
    if (t0 >= 0) deg[i] += cnt[w->tree_slot[t0] + 1] - cnt[w->tree_slot[t0]] - 1;
    if (t1 >= 0 && t1 != t0) deg[i] += cnt[w->tree_slot[t1] + 1] - cnt[w->tree_slot[t1]] - 1;
    placed[i] = 0;
  }
  // Cuthill-McKee: breadth first from a patch of least degree, each patch's unplaced neighbours
  // (tree by tree) by increasing degree, then the order reversed
  int head = 0, tail = 0;
  while (tail < n) {
    int start = -1;
    for (int i = 0; i < n; i++) {
      if (!placed[i] && (start < 0 || deg[i] < deg[start])) start = i;
    }
    perm[tail++] = start;
    placed[start] = 1;
    while (head < tail) {
      const cuspPatch* P = w->island + perm[head++];
      int t0 = tree_of(m, P->body[0]), t1 = tree_of(m, P->body[1]);
      int ts[2] = {t0, t1 != t0 ? t1 : -1};
      for (int s = 0; s < 2; s++) {
        if (ts[s] < 0) continue;
        int k = w->tree_slot[ts[s]], first = tail;
        for (int e = cnt[k]; e < cnt[k + 1]; e++) {
          int q = lst[e];
          if (placed[q]) continue;
          placed[q] = 1;
          int at = tail++;  // insertion by (degree, index)
          while (at > first && (deg[perm[at - 1]] > deg[q] ||
                                (deg[perm[at - 1]] == deg[q] && perm[at - 1] > q))) {
            perm[at] = perm[at - 1];
            at--;
          }
          perm[at] = q;
        }
      }
    }
  }
  for (int a = 0, b = n - 1; a < b; a++, b--) {
    int t = perm[a];
    perm[a] = perm[b];
    perm[b] = t;
  }
  // the band in that order: patch i's rows couple to the rows of every patch on its trees
  int row = 0, identity = 1;
  for (int k = 0; k < n; k++) {
    placed[perm[k]] = k;
    identity &= perm[k] == k;
  }
  for (int k = 0; k < n; k++) {
    rowstart[k] = row;
    row += patch_rows(w->island + perm[k]);
  }
  int kl = 0, ku = 0;
  for (int i = 0; i < n; i++) {
    const cuspPatch* P = w->island + i;
    int k = placed[i], r0 = rowstart[k], r1 = r0 + patch_rows(P), h0 = r0, h1 = r1;
    int t0 = tree_of(m, P->body[0]), t1 = tree_of(m, P->body[1]);
    int ts[2] = {t0, t1 != t0 ? t1 : -1};
    for (int s = 0; s < 2; s++) {
      if (ts[s] < 0) continue;
      int slot = w->tree_slot[ts[s]];
      for (int e = cnt[slot]; e < cnt[slot + 1]; e++) {
        int kq = placed[lst[e]];
        if (rowstart[kq] < h0) h0 = rowstart[kq];
        if (rowstart[kq] + patch_rows(w->island + lst[e]) > h1) {
          h1 = rowstart[kq] + patch_rows(w->island + lst[e]);
        }
      }
    }
    band_of(&kl, &ku, r0, r1, h0, h1);
  }
  for (int i = 0; i < n; i++) {  // tree slots back to -1 for the next island
    const cuspPatch* P = w->island + i;
    int t0 = tree_of(m, P->body[0]), t1 = tree_of(m, P->body[1]);
    if (t0 >= 0) w->tree_slot[t0] = -1;
    if (t1 >= 0) w->tree_slot[t1] = -1;
  }
  if (identity || !band_pays(row, kl, ku)) return;
  for (int k = 0; k < n; k++) w->sorted[k] = w->island[perm[k]];
  memcpy(w->island, w->sorted, n * sizeof(cuspPatch));
}

// A row no impulse can move: W_kk <= 1e-12 of the island's largest diagonal wmax (Jr_k = 0: a
// drawer's vertex on the shelf it slides along, whose weight its joint carries). Its impulse
// would move nothing and only lend friction: a vertex on such a row carries none (bound 0), else
// its impulse is undetermined (any value solves its row) and the friction it lends held the
// drawer on its slide.
static int inert_row(mjtNum wkk, mjtNum wmax) { return wkk <= 1e-12 * wmax; }

// Largest diagonal of W over the rows of patch i (its own scale: an inert row is one that is
// inert relative to its own body's mobility, not to the lightest body of the island; a 200 kg
// carrier's rows beside a 1e-9 kg box's are not inert)
static mjtNum patch_wmax(const cuspPatchWork* w, int i) {
  mjtNum wmax = 0;
  int r0 = w->row_of[i], nr = patch_rows(w->island + i);
  for (int r = r0; r < r0 + nr; r++) wmax = fmax(wmax, w->W[(size_t)r * w->nrows + r]);
  return wmax;
}

// Mobility of normal row k of patch i while the patch sticks: the Schur complement
// W_kk - W_kf W_ff^-1 W_fk over the patch's friction rows f (none when mu = 0); W is PSD, so a
// pivot that vanishes has a vanishing row and column and is skipped (the pseudo-inverse).
static mjtNum stick_mobility(const cuspPatchWork* w, int i, int k) {
  const cuspPatch* P = w->island + i;
  int r0 = w->row_of[i], nf = P->mu > 0 ? 2 + has_torsion(P) : 0, n = nf + 1, nrows = w->nrows;
  int idx[4];
  for (int f = 0; f < nf; f++) idx[f] = r0 + P->nvert + f;
  idx[nf] = r0 + k;
  mjtNum A[16], scale = 0;
  for (int a = 0; a < n; a++) {
    for (int b = 0; b < n; b++) A[4 * a + b] = w->W[(size_t)idx[a] * nrows + idx[b]];
    scale = fmax(scale, A[5 * a]);
  }
  for (int p = 0; p < nf; p++) {
    if (!(A[5 * p] > 1e-12 * scale)) continue;
    for (int a = p + 1; a < n; a++) {
      mjtNum f = A[4 * a + p] / A[5 * p];
      for (int b = p + 1; b < n; b++) A[4 * a + b] -= f * A[4 * p + b];
    }
  }
  return A[5 * nf];
}

// Penetrating vertices (start-of-step gap g0 < 0) that the bodies cannot push out are held at their
// depth instead: rhs = the free normal velocity (no deeper, no push-out). A body with fewer dofs
// than a free one can lack the normal motion a push-out needs: at a vertex it cannot move along the
// normal at all (a drawer on its slide overlapping a shelf: J_n = 0), or only by sliding, which its
// friction forbids (a hinged lever whose tip jams on the floor, Painleve's wedge: stick mobility
// 1e-3 of W_kk). The push-out then has no solution, or one with impulses 1 / mobility larger: the
// solve failed every step and the body froze. Held: an inert row (inert_row), or the stick
// mobility (stick_mobility) <= 1e-2 W_kk. A free body keeps 3 dofs for its normal rows
// whatever its patch's friction rows hold (none of the mjcf/ scenes' rows is held: trajectories
// bitwise unchanged). vn: the free row velocities (w->vfree).
// m, start-of-step gap g0 of vertex k of island patch i (its gap at q* less h times its free
// normal velocity; below -rest_depth(cfg, h): cusp_normal_rhs asks for push-out)
static mjtNum start_gap(const cuspPatchWork* w, int i, int k, mjtNum h) {
  return cusp_start_gap(w->island[i].gap[k], w->vfree[w->row_of[i] + k], h);
}

// m, the depth down to which a vertex is held at rest (cusp_normal_rhs): the config's
// pushout_slop, at least the rest band cusp_rest_gap(h)
static mjtNum rest_depth(const cuspConfig* cfg, mjtNum h) {
  return fmax(cfg->pushout_slop, cusp_rest_gap(h));
}

static void hold_immobile_rows(cuspPatchWork* w, const cuspConfig* cfg, mjtNum h) {
  const mjtNum* vn = w->vfree;
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    mjtNum wmax = patch_wmax(w, i);
    for (int k = 0; k < P->nvert; k++) {
      int r = w->row_of[i] + k;
      if (start_gap(w, i, k, h) >= -rest_depth(cfg, h)) continue;  // no push-out asked
      mjtNum wkk = w->W[(size_t)r * w->nrows + r];
      if (inert_row(wkk, wmax) || stick_mobility(w, i, k) <= 1e-2 * wkk) w->ub0[r] = vn[r];
    }
  }
}

// Point contacts (one-vertex patches) of the same two bodies with parallel normals, equal friction
// and normal rows that act alike to rounding (W_ii + W_jj - 2 W_ij <= 1e-9 (W_ii + W_jj): two geoms
// of a heavy arm on a light object, whose own response dominates both rows) are one constraint
// written twice. Left both, impulse can pass from one to the other along a direction W does not
// see, the Newton matrix is singular there and the solve stalls above its tolerance (two capsules
// of Gymnasium's pusher arm on its object: residual 9e-10 m/s, 200 iterations). Only the stricter
// row (the smaller ub0: it needs the larger impulse) carries impulse; the other is held at zero
// with its friction (the limit surface scales with the normal impulse) and is met to within the
// rows' difference.
static void drop_duplicate_points(cuspPatchWork* w) {
  int nrows = w->nrows;
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* A = w->island + i;
    int ri = w->row_of[i];
    if (A->nvert != 1 || w->hi[w->z_of[i]] == 0) continue;
    for (int j = i + 1; j < w->nisland; j++) {
      const cuspPatch* B = w->island + j;
      int rj = w->row_of[j];
      if (B->nvert != 1 || w->hi[w->z_of[j]] == 0 || A->body[0] != B->body[0] ||
          A->body[1] != B->body[1] || A->mu != B->mu || A->torsion != B->torsion ||
          mju_dot3(A->frame + 6, B->frame + 6) < 1 - 1e-9) {
        continue;
      }
      mjtNum wii = w->W[(size_t)ri * nrows + ri], wjj = w->W[(size_t)rj * nrows + rj];
      mjtNum wij = w->W[(size_t)ri * nrows + rj];
      if (!(wii + wjj - 2 * wij <= 1e-9 * (wii + wjj))) continue;
      int drop = w->ub0[ri] > w->ub0[rj] ? i : j;
      w->hi[w->z_of[drop]] = 0;
      w->z[w->z_of[drop]] = 0;
      if (drop == i) break;
    }
  }
}

//---------------------------------- the island's problem ------------------------------------------

// row_of, z_of (island patch i's first row and unknown, i <= nisland), zpatch (the patch of each
// unknown), nrows, nz; the workspace sized for them. Returns 0, or CUSP_LCP_NUMERICAL when it
// cannot be sized.
static int island_layout(cuspPatchWork* w) {
  int nrows = 0, nz = 0;
  for (int i = 0; i < w->nisland; i++) {
    w->row_of[i] = nrows;
    w->z_of[i] = nz;
    nrows += patch_rows(w->island + i);
    nz += patch_nz(w->island + i);
  }
  w->row_of[w->nisland] = nrows;
  w->z_of[w->nisland] = nz;
  if (cusp_patch_work_reserve(w, w->nisland, nrows, nz)) return CUSP_LCP_NUMERICAL;
  for (int i = 0; i < w->nisland; i++) {
    for (int j = w->z_of[i]; j < w->z_of[i + 1]; j++) w->zpatch[j] = i;
  }
  w->nrows = nrows;
  w->nz = nz;
  return 0;
}

// The rows J (nrows x nv, row-major) of every patch, the free row velocities ub (J v*, v* the
// island's free velocity in w->dv) and the right-hand sides ub0 (the gap stabilisation on the
// normal rows); rspan[4a], rspan[4a + 1]: the columns row a is written at (outside them the
// buffers hold stale numbers, never read)
static void island_rows(cuspPatchWork* w, const cuspConfig* cfg, const mjModel* m,
                        const mjData* d, const cuspDynamics* dyn, mjtNum h) {
  int nv = dyn->nv;
  const mjtNum* vloc = w->dv;  // (nv)
  int* span = w->rspan;
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    mjtNum* J = w->J + (size_t)w->row_of[i] * nv;
    int lo, hi;
    patch_columns(&lo, &hi, P, dyn, m);
    patch_jacobian(w, P, dyn, m, d, J, lo, hi);
    for (int r = 0; r < patch_rows(P); r++) {
      int a = w->row_of[i] + r;
      span[4 * a] = lo;
      span[4 * a + 1] = hi;
      mjtNum vfree = mju_dot(J + (size_t)r * nv + lo, vloc + lo, hi - lo);
      w->vfree[w->row_of[i] + r] = vfree;
      if (r < P->nvert) {
        vfree = cusp_normal_rhs(vfree, P->gap[r], h, cfg->gap_alpha, cfg->pushout_speed,
                                cusp_rest_gap(h), rest_depth(cfg, h));
      }
      w->ub0[w->row_of[i] + r] = vfree;
    }
  }
}

// The reduced rows Jr (nrows x nr, row-major) and X = Mr^-1 Jr^T (its rows), with the columns
// each can be nonzero at: row a of Jr in [rspan[4a], rspan[4a + 1]), of X in [rspan[4a + 2],
// rspan[4a + 3])
static void reduced_rows(cuspPatchWork* w, cuspDynamics* dyn) {
  int nv = dyn->nv, nr = dyn->nr, nrows = w->nrows;
  int* span = w->rspan;
  if (dyn->identity) {
    // Jr = J; X_a = Mr^-1 Jr_a over the diagonal blocks of L that row a's columns touch (Mr is
    // block diagonal over the island's trees: a row costs its bodies' dofs, not the island's)
    int* blk = w->blk;
    envelope_blocks(blk, dyn);
    for (int a = 0; a < nrows; a++) {
      int lo = span[4 * a], hi = span[4 * a + 1];
      const mjtNum* ja = w->J + (size_t)a * nv;
      mjtNum* jr = w->Jr + (size_t)a * nr;
      mjtNum* xa = w->X + (size_t)a * nr;
      memcpy(jr + lo, ja + lo, (size_t)(hi - lo) * sizeof(mjtNum));
      if (hi <= lo) {
        span[4 * a + 2] = span[4 * a + 3] = 0;
        continue;
      }
      int xlo = blk[nr + lo], xhi = blk[hi - 1];
      span[4 * a + 2] = xlo;
      span[4 * a + 3] = xhi;
      memset(xa + xlo, 0, (size_t)(xhi - xlo) * sizeof(mjtNum));
      memcpy(xa + lo, ja + lo, (size_t)(hi - lo) * sizeof(mjtNum));
      cusp_dpotrs_env_range(xa, dyn->L, nr, dyn->env, nr, xlo, xhi);
    }
  } else {
    cusp_dynamics_reduce(w->Jr, dyn, w->J, nrows);
    // X (row-major nrows x nr) is column-major nr x nrows: one solve with nrows right-hand sides
    memcpy(w->X, w->Jr, (size_t)nrows * nr * sizeof(mjtNum));
    if (nr > 0) cusp_dpotrs_env(w->X, dyn->L, nr, nrows, nr, nr, dyn->env);
    for (int a = 0; a < nrows; a++) {
      for (int t = 0; t < 2; t++) {
        const mjtNum* row = (t ? w->X : w->Jr) + (size_t)a * nr;
        nonzero_range(span + 4 * a + 2 * t, row, nr);
      }
    }
  }
}

// Delassus W = Jr Mr^-1 Jr^T (nrows x nrows) over the rows couple_patches found coupled (hull),
// its diagonal w_diag, and span[2a], span[2a + 1]: the nonzero column range of row a of W
static void delassus(cuspPatchWork* w, int nr) {
  int nrows = w->nrows;
  const int* span = w->rspan;
  // only the entries of W over each row's hull are set (and read: the others are exact zeros)
  for (int i = 0; i < w->nisland; i++) {
    int lo = w->hull[2 * i], hi = w->hull[2 * i + 1];
    for (int a = w->row_of[i]; a < w->row_of[i + 1]; a++) {
      memset(w->W + (size_t)a * nrows + lo, 0, (size_t)(hi - lo) * sizeof(mjtNum));
    }
  }
  // W_ab = Jr_a . X_b over the columns where both can be nonzero: a row touches one or two
  // bodies, and with many bodies in one island (a stack) Mr is block diagonal, so most pairs of
  // rows share no column (exact zeros skipped: the same sums in the same order)
  for (int i = 0; i < w->nisland; i++) {
    int hi_b = w->hull[2 * i + 1];
    for (int a = w->row_of[i]; a < w->row_of[i + 1]; a++) {
      for (int b = a; b < hi_b; b++) {
        mjtNum s = 0;
        const mjtNum* ja = w->Jr + (size_t)a * nr;
        const mjtNum* xb = w->X + (size_t)b * nr;
        int lo = span[4 * a] > span[4 * b + 2] ? span[4 * a] : span[4 * b + 2];
        int hi = span[4 * a + 1] < span[4 * b + 3] ? span[4 * a + 1] : span[4 * b + 3];
        for (int c = lo; c < hi; c++) s += ja[c] * xb[c];
        w->W[(size_t)a * nrows + b] = s;
        w->W[(size_t)b * nrows + a] = s;  // 0 when b's patch does not couple to a's (no hull)
      }
    }
  }
  // the rows of a body touch the rows of its neighbours only: ub = ub0 + W p and dub/dz skip
  // the rest
  for (int i = 0; i < w->nisland; i++) {
    int lo = w->hull[2 * i], hi = w->hull[2 * i + 1];
    for (int a = w->row_of[i]; a < w->row_of[i + 1]; a++) {
      nonzero_range(w->span + 2 * a, w->W + (size_t)a * nrows + lo, hi - lo);
      w->span[2 * a] += lo;
      w->span[2 * a + 1] += lo;
      if (w->span[2 * a] == w->span[2 * a + 1]) w->span[2 * a] = w->span[2 * a + 1] = 0;
      w->w_diag[a] = w->W[(size_t)a * nrows + a];
    }
  }
}

// Each patch's stiffness scale k (its vertices over the sum of their W diagonals), the island's
// k_ref (the mean normal diagonal, inverted: a patch without normal mobility takes it) and its
// impulse scale p_ref (the impulse of gravity over one step at k_ref)
static void island_scales(cuspPatchWork* w, const mjModel* m, mjtNum h) {
  int nrows = w->nrows;
  mjtNum diag = 0;
  int ndiag = 0;
  for (int i = 0; i < w->nisland; i++) {
    cuspPatch* P = w->island + i;
    mjtNum own = 0;
    for (int k = 0; k < P->nvert; k++) {
      int r = w->row_of[i] + k;
      own += w->W[(size_t)r * nrows + r];
    }
    diag += own;
    ndiag += P->nvert;
    P->k = own > 0 ? P->nvert / own : 0;
  }
  diag = ndiag && diag > 0 ? diag / ndiag : 1;
  mjtNum gravity = mju_norm3(m->opt.gravity);
  w->k_ref = 1 / diag;
  for (int i = 0; i < w->nisland; i++) {
    if (!(w->island[i].k > 0)) w->island[i].k = w->k_ref;
  }
  w->p_ref = w->k_ref * fmax(gravity * h, 1e-4);
}

// Bounds and starting point of the unknowns; returns 1 if some patch starts from the previous
// step's answer. A vertex no impulse can move (inert_row) carries none, and neither does a
// friction row along which the bodies cannot move (a planar object's contact, tangent across its
// plane: W_tt = 0, so its friction unknown would only make the Newton matrix singular: every step
// a Levenberg-Marquardt step, the proximal term no help, W being 0 there).
static int start_unknowns(cuspPatchWork* w, const cuspConfig* cfg) {
  int warm = 0;
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    int z0 = w->z_of[i], K = P->nvert, ny = 2 + has_torsion(P);
    mjtNum wmax = patch_wmax(w, i);
    for (int k = 0; k < K; k++) {
      w->lo[z0 + k] = 0;
      w->hi[z0 + k] = inert_row(w->w_diag[w->row_of[i] + k], wmax) ? 0 : INFINITY;
    }
    for (int x = 0; x < ny; x++) {
      int inert = inert_row(w->w_diag[w->row_of[i] + K + x], wmax);
      w->lo[z0 + K + x] = inert ? 0 : -INFINITY;
      w->hi[z0 + K + x] = inert ? 0 : INFINITY;
    }
    if (!cfg->warm_start || !warm_start(w, i, w->z + z0)) cold_start(w, i);
    else warm = 1;
    for (int k = 0; k < K + ny; k++) {
      w->z[z0 + k] = fmin(fmax(w->z[z0 + k], w->lo[z0 + k]), w->hi[z0 + k]);
    }
  }
  return warm;
}

// Scaled unknowns: normal impulses relative to the heaviest patch of the island (its impulses
// keep their units; a 1e-9 kg box's are raised to velocities of the same size), friction as is
static void scale_unknowns(cuspPatchWork* w) {
  mjtNum kmax = 0;
  for (int i = 0; i < w->nisland; i++) kmax = fmax(kmax, w->island[i].k);
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    int z0 = w->z_of[i], K = P->nvert, ny = 2 + has_torsion(P);
    for (int j = 0; j < K + ny; j++) w->z_scale[z0 + j] = j < K ? P->k / kmax : 1;
  }
}

//---------------------------------- the solve and its results -------------------------------------

// The island's MCP (the band Jacobian when the band solve pays) and the solver's workspace sized
// for it (the dense solve's n^2 or the band solve's n (kl + ku)); returns 0, -1 if it cannot be.
static int island_problem(cuspMcpProblem* prob, cuspPatchWork* w) {
  *prob = (cuspMcpProblem){w->nz, w->lo, w->hi, mcp_residual, mcp_jacobian, w,
                           w->band ? mcp_jacobian_band : NULL, w->kl, w->ku,
                           w->by_bodies ? mcp_newton_by_bodies : NULL};
  size_t bytes = cusp_mcp_proximal_problem_worksize(prob);
  if (bytes > w->mcp_bytes) {
    void* a = grow(w->mcp_work, bytes);
    if (!a) return -1;
    w->mcp_work = a;
    w->mcp_bytes = bytes;
  }
  return 0;
}

// After a warm start that failed: the FB merit of this MCP (Coulomb friction, not monotone) has
// stationary points that are not solutions; a warm start can land in one's basin (tutorial arm
// pushing a box, t = 0.844 s: natural residual 6.9e-3 after 200 and after 5000 iterations).
// Restart cold, keep the better; the iterations of both are counted.
static cuspLcpStatus cold_restart(cuspPatchWork* w, const cuspMcpProblem* prob,
                                  const cuspMcpOptions* opt, const cuspConfig* cfg) {
  int nz = w->nz;
  cuspMcpInfo warm_info = w->info;
  memcpy(w->z_failed, w->z, sizeof(mjtNum) * nz);
  for (int i = 0; i < w->nisland; i++) cold_start(w, i);
  cuspLcpStatus status = solve_proximal(w, prob, opt, 1);
  int iterations = warm_info.iterations + w->info.iterations;
  if (status != CUSP_LCP_SOLVED && !(w->info.residual < warm_info.residual)) {
    memcpy(w->z, w->z_failed, sizeof(mjtNum) * nz);
    w->info = warm_info;
    status = warm_info.status;
  }
  w->info.iterations = iterations;
  if (status != CUSP_LCP_SOLVED && cfg->finish && !w->band && separation_finish(w, prob, opt)) {
    status = CUSP_LCP_SOLVED;
  }
  return status;
}

// m, the depth vertex k of island patch i asks to be pushed out of (cusp_normal_rhs), 0 if none
// (an open gap, or a vertex held at its depth)
static mjtNum pushout_depth(const cuspPatchWork* w, int i, int k, mjtNum h) {
  int r = w->row_of[i] + k;
  mjtNum g0 = start_gap(w, i, k, h);
  return g0 < 0 && w->ub0[r] != w->vfree[r] ? -g0 : 0;
}

// the number of vertex rows of the island asking for push-out
static int pushout_rows(const cuspPatchWork* w, mjtNum h) {
  int n = 0;
  for (int i = 0; i < w->nisland; i++) {
    for (int k = 0; k < w->island[i].nvert; k++) n += pushout_depth(w, i, k, h) > 0;
  }
  return n;
}

typedef enum DropStart_ { DROP_FROM_BEST, DROP_FROM_START, DROP_FROM_ZERO } DropStart;

// A failed island whose penetrating vertices ask for push-out (the gap stabilisation, not the
// physics) may have no solution because of it: a body squeezed between the floor and a pusher
// that cannot move along the normal is asked to recede from both. Solved once more with the
// push-out of every vertex dropped (held at its depth: rhs = its free velocity, as
// hold_immobile_rows does for one that cannot move); kept if that solves it, the problem restored
// otherwise. From the failed solve's best iterate, from the island's starting point (where the
// failed solve's impulses grew without bound against a push-out that has no solution: from them
// the solve stalls where from the start it solves, the squeezed box of test_grasp_stack), or from
// zero impulses (that box under implicitfast at 1 ms, its step 49: from the best iterate and from
// the start the solve stalled at natural residuals 9e-10 and 1.4e-9, from zero it solves).
// Returns 1 if kept. Only what fails is dropped: a body rolling on a rim ratchets deeper each
// step its push-out is dropped (a tumbling cylinder in a pile: 3e-5 -> 9e-5 m in 14 steps).
static int drop_pushout(cuspPatchWork* w, const cuspMcpProblem* prob, const cuspMcpOptions* opt,
                        const cuspConfig* cfg, mjtNum h, DropStart from) {
  memcpy(w->ub0_pushout, w->ub0, sizeof(mjtNum) * w->nrows);
  for (int i = 0; i < w->nisland; i++) {
    for (int k = 0; k < w->island[i].nvert; k++) {
      int r = w->row_of[i] + k;
      if (pushout_depth(w, i, k, h) > 0) w->ub0[r] = w->vfree[r];
    }
  }
  cuspMcpInfo info = w->info;
  memcpy(w->z_failed, w->z, sizeof(mjtNum) * w->nz);
  if (from == DROP_FROM_START) memcpy(w->z, w->z_start, sizeof(mjtNum) * w->nz);
  if (from == DROP_FROM_ZERO) memset(w->z, 0, sizeof(mjtNum) * w->nz);
  w->eval_valid = 0;
  cuspLcpStatus status = solve_proximal(w, prob, opt, 0);
  if (status != CUSP_LCP_SOLVED && cfg->finish && !w->band && separation_finish(w, prob, opt)) {
    status = CUSP_LCP_SOLVED;
  }
  w->info.iterations += info.iterations;
  if (status == CUSP_LCP_SOLVED) return 1;
  int iterations = w->info.iterations;  // both solves' (the work is counted, the answer not kept)
  memcpy(w->ub0, w->ub0_pushout, sizeof(mjtNum) * w->nrows);
  memcpy(w->z, w->z_failed, sizeof(mjtNum) * w->nz);
  w->info = info;
  w->info.iterations = iterations;
  w->eval_valid = 0;
  return 0;
}

// The solve chain of the island's MCP from its starting point: the proximal-point loop (without
// its Newton fallbacks where vertices ask for push-out: then the loop with the push-out dropped,
// from its best iterate, from the starting point, from zero), the separation finish where it
// leaves a dense island short, the cold restart after a failed warm start. Statically
// indeterminate contact (several contacts on one body: fingertips, a face on a face, a stack; the
// vertical friction on the shared face of two pushed blocks) leaves W singular and the impulses
// non-unique; the proximal-point loop (solve_proximal) makes every Newton matrix regular with
// W + prox I and lets the term vanish at the answer, so the physics there is exact.
static cuspLcpStatus solve_island(cuspPatchWork* w, const cuspMcpProblem* prob,
                                  const cuspConfig* cfg, int warm, mjtNum h) {
  cuspMcpOptions opt = cusp_mcp_default_options();
  opt.tol = cfg->tolerance;
  opt.max_iter = cfg->max_iterations;
  opt.warm_start = 1;
  // the line search's reference merit: the largest of the last line_search_memory iterates'. The
  // island's map has kinks where a vertex is loaded from 0 (the resultant, so the ball radius,
  // gains slope mu) and where a patch changes between stick and slip; a monotone search (1)
  // halved a Newton step across one 10-30 times. With 5 (the default): 36 random piles x 1.5 s
  // 19.8 -> 10.8 s CPU, failed solves 8 -> 0 (bench/RESULTS.md)
  opt.nonmonotone = cfg->line_search_memory;
  int pushout = cfg->finish ? pushout_rows(w, h) : 0;
  // where the push-out may be what has no solution, its fallbacks wait until it is dropped
  if (pushout) memcpy(w->z_start, w->z, sizeof(mjtNum) * w->nz);
  // the solver's F buffer must differ from w->F (used as scratch by the Jacobian callback)
  cuspLcpStatus status = solve_proximal(w, prob, &opt, !pushout);
  if (status != CUSP_LCP_SOLVED && pushout &&
      (drop_pushout(w, prob, &opt, cfg, h, DROP_FROM_BEST) ||
       drop_pushout(w, prob, &opt, cfg, h, DROP_FROM_START) ||
       drop_pushout(w, prob, &opt, cfg, h, DROP_FROM_ZERO))) {
    return CUSP_LCP_SOLVED;
  }
  if (status != CUSP_LCP_SOLVED && cfg->finish && !w->band && separation_finish(w, prob, &opt)) {
    status = CUSP_LCP_SOLVED;
  }
  if (status != CUSP_LCP_SOLVED && warm) status = cold_restart(w, prob, &opt, cfg);
  return status;
}

// The answer on each patch, from one more evaluation at the returned z (p and ub): the vertex
// impulses, the resultant, the friction impulses, the slip speed, the ECP, the saturations
// (the mode is set by the driver: one rule for every contact, step.c)
static void publish_patches(cuspPatchWork* w) {
  evaluate(w, w->z, w->F, NULL);
  for (int i = 0; i < w->nisland; i++) {
    cuspPatch* P = w->island + i;
    const mjtNum* zi = w->z + w->z_of[i];
    int K = P->nvert, ny = 2 + has_torsion(P);
    Derived D;
    derive(&D, w, i, zi);
    for (int k = 0; k < K; k++) P->lambda[k] = zi[k];
    P->Ln = D.Ln;
    P->L[2] = 0;
    mjtNum y2 = 0;
    for (int x = 0; x < ny; x++) {
      P->L[x] = P->e[x] * zi[K + x];
      y2 += zi[K + x] * zi[K + x];
    }
    {
      const mjtNum* ub = w->ub + w->row_of[i];
      mjtNum u0 = ub[K] - (ny == 3 ? D.d[1] * ub[K + 2] : 0);
      mjtNum u1 = ub[K + 1] + (ny == 3 ? D.d[0] * ub[K + 2] : 0);
      mjtNum u2 = ny == 3 ? P->e[2] * ub[K + 2] : 0;
      P->sigma = sqrt(u0 * u0 + u1 * u1 + u2 * u2);  // m/s, slip speed |u~| at the ECP
    }
    for (int j = 0; j < 3; j++) {
      P->ecp[j] = P->origin[j] + D.d[0] * P->frame[j] + D.d[1] * P->frame[3 + j];
    }
    mjtNum cap = P->mu * D.Ln;
    if (cap > 0) {
      P->s = y2 / (cap * cap);
      P->rho_t = sqrt(zi[K] * zi[K] + zi[K + 1] * zi[K + 1]) / cap;
      P->rho_r = ny == 3 ? fabs(zi[K + 2]) / cap : 0;
    } else {
      P->s = P->rho_t = P->rho_r = 0;
    }
  }
}

// dv (nv) := N Mr^-1 Jr^T p = N sum_r p_r X_r, the island's velocity correction
static void island_correction(mjtNum* dv, cuspPatchWork* w, const cuspDynamics* dyn) {
  int nr = dyn->nr;
  const int* span = w->rspan;
  mjtNum* du = w->jac;  // (nr) scratch
  mju_zero(du, nr);
  for (int r = 0; r < w->nrows; r++) {
    int lo = span[4 * r + 2], hi = span[4 * r + 3];
    if (w->p[r] != 0 && hi > lo) {
      mju_addToScl(du + lo, w->X + (size_t)r * nr + lo, w->p[r], hi - lo);
    }
  }
  cusp_dynamics_expand(dv, dyn, du);
}

// The island in w->island (ordered): its problem, the solve, the results on its patches, its
// correction dv (nv) and the deepest linearised penetration after it (*max_pen)
static int solve_range(cuspPatchWork* w, mjtNum* dv, mjtNum* max_pen, const cuspConfig* cfg,
                       const mjModel* m, const mjData* d, cuspDynamics* dyn, mjtNum h) {
  cusp_dynamics_gather(w->dv, dyn, d->qvel);  // (nv) the island's free velocity
  if (island_layout(w)) return CUSP_LCP_NUMERICAL;
  w->eval_valid = 0;  // a new problem (rows, W, free velocities)
  w->prox = 0;
  *max_pen = 0;
  if (!w->nisland) return 0;

  island_rows(w, cfg, m, d, dyn, h);
  reduced_rows(w, dyn);
  couple_patches(w);
  delassus(w, dyn->nr);
  band_layout(w);
  if (bodies_layout(w, cfg, dyn->nr)) return CUSP_LCP_NUMERICAL;
  island_scales(w, m, h);
  hold_immobile_rows(w, cfg, h);
  set_vertex_offsets(w);
  int warm = start_unknowns(w, cfg);
  drop_duplicate_points(w);
  scale_unknowns(w);

  cuspMcpProblem prob;
  if (island_problem(&prob, w)) return CUSP_LCP_NUMERICAL;
  cuspLcpStatus status = solve_island(w, &prob, cfg, warm, h);
  w->solves++;
  if (status != CUSP_LCP_SOLVED) w->failures++;

  publish_patches(w);
  island_correction(dv, w, dyn);
  *max_pen = cusp_patch_penetration(w, dyn, dv, h);
  return status;
}

int cusp_patch_solve(cuspPatchWork* w, mjtNum* dv, mjtNum* max_pen, int first, int count,
                     const cuspConfig* cfg, const mjModel* m, const mjData* d, cuspDynamics* dyn,
                     mjtNum h) {
  // the island's patches: a view into this step's set while it is solved
  w->island = w->set.patch + first;
  w->nisland = count;
  order_patches(w, m);
  return solve_range(w, dv, max_pen, cfg, m, d, dyn, h);
}

mjtNum cusp_patch_penetration(cuspPatchWork* w, const cuspDynamics* dyn, const mjtNum* dv,
                              mjtNum h) {
  // linearised gaps after the correction: g + h J dv at every vertex (island rows)
  int nv = dyn->nv;
  mjtNum* vloc = w->dv;  // (nv)
  const int* span = w->rspan;  // row a of Jr: [span[4a], span[4a+1]) (the last solve's rows)
  mjtNum pen = 0;
  cusp_dynamics_gather(vloc, dyn, dv);
  for (int i = 0; i < w->nisland; i++) {
    const cuspPatch* P = w->island + i;
    for (int k = 0; k < P->nvert; k++) {
      int a = w->row_of[i] + k, lo = span[4 * a], hi = span[4 * a + 1];
      const mjtNum* row = w->J + (size_t)a * nv;
      mjtNum after = P->gap[k] + h * mju_dot(row + lo, vloc + lo, hi - lo);
      if (-after > pen) pen = -after;
    }
  }
  return pen;
}

void cusp_patch_publish_bodies(mjtNum* slots, const cuspPatchWork* w, const cuspConfig* cfg) {
  for (int i = 0; i < cfg->npatch_body; i++) {
    mjtNum* s = slots + (size_t)i * CUSP_PATCH_NSLOT;
    memset(s, 0, CUSP_PATCH_NSLOT * sizeof(mjtNum));
    const cuspPatch* best = NULL;
    for (int j = 0; j < w->set.npatch; j++) {
      const cuspPatch* P = w->set.patch + j;
      if (P->kind != CUSP_PATCH_SURFACE || P->body[0] != cfg->patch_bodies[i]) continue;
      if (!best || P->Ln > best->Ln) best = P;
    }
    if (!best) continue;
    s[CUSP_PATCH_LN] = best->Ln;
    s[CUSP_PATCH_LT] = best->L[0];
    s[CUSP_PATCH_LO] = best->L[1];
    s[CUSP_PATCH_LR] = best->L[2];
    s[CUSP_PATCH_S] = best->s;
    s[CUSP_PATCH_RHO_T] = best->rho_t;
    s[CUSP_PATCH_RHO_R] = best->rho_r;
    s[CUSP_PATCH_ECP_X] = best->ecp[0];
    s[CUSP_PATCH_ECP_Y] = best->ecp[1];
    s[CUSP_PATCH_ECP_Z] = best->ecp[2];
    s[CUSP_PATCH_MODE] = best->mode;
  }
}
