// Effective inertia, equality condensation and the reduced inertia factor (see dynamics.h).
#include "dynamics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lapack_shim.h"

static int equality_rows_max(const mjModel* m) {
  int rows = 0;
  for (int i = 0; i < m->neq; i++) {
    switch (m->eq_type[i]) {
      case mjEQ_CONNECT: rows += 3; break;
      case mjEQ_WELD: rows += 6; break;
      case mjEQ_JOINT:
      case mjEQ_TENDON: rows += 1; break;
      default: rows += 6 + m->nflexedge; break;
    }
  }
  return rows;
}

int cusp_dynamics_init(cuspDynamics* dyn, const mjModel* m) {
  memset(dyn, 0, sizeof(*dyn));
  int nv = m->nv;
  dyn->nv = nv;
  dyn->nr = nv;
  dyn->identity = 1;
  dyn->ne_max = equality_rows_max(m);
  dyn->Meff = (mjtNum*)calloc((size_t)nv * nv + 1, sizeof(mjtNum));
  dyn->E = (mjtNum*)calloc((size_t)dyn->ne_max * nv + 1, sizeof(mjtNum));
  dyn->N = (mjtNum*)calloc((size_t)nv * nv + 1, sizeof(mjtNum));
  dyn->L = (mjtNum*)calloc((size_t)nv * nv + 1, sizeof(mjtNum));
  dyn->scratch = (mjtNum*)calloc((size_t)nv * nv + 2 * nv + dyn->ne_max * nv + 1, sizeof(mjtNum));
  if (!dyn->Meff || !dyn->E || !dyn->N || !dyn->L || !dyn->scratch) {
    cusp_dynamics_free(dyn);
    return -1;
  }
  dyn->ne = -1;  // nothing cached yet
  return 0;
}

void cusp_dynamics_free(cuspDynamics* dyn) {
  free(dyn->Meff);
  free(dyn->E);
  free(dyn->N);
  free(dyn->L);
  free(dyn->scratch);
  memset(dyn, 0, sizeof(*dyn));
}

// Meff (nv x nv) from qM at time t and the damping the integrator treated implicitly
static void effective_inertia(mjtNum* Meff, const mjModel* m, const mjData* d) {
  int nv = m->nv;
  mj_fullM(m, d, Meff);
  mjtNum h = m->opt.timestep;
  if (m->opt.integrator == mjINT_EULER) {
    // Euler treats only joint damping implicitly, unless disabled
    if (!(m->opt.disableflags & (mjDSBL_DAMPER | mjDSBL_EULERDAMP))) {
      for (int i = 0; i < nv; i++) Meff[i * nv + i] += h * m->dof_damping[i];
    }
    return;
  }
  if (m->opt.integrator != mjINT_IMPLICITFAST && m->opt.integrator != mjINT_IMPLICIT) return;
  // implicit integrators factor M - h qDeriv (qDeriv: d(passive + actuator - bias)/dqvel at time
  // t, all damping and actuator velocity terms); symmetrised so that it has a Cholesky factor
  for (int i = 0; i < nv; i++) {
    int adr = m->D_rowadr[i];
    for (int k = 0; k < m->D_rownnz[i]; k++) {
      int j = m->D_colind[adr + k];
      Meff[i * nv + j] -= 0.5 * h * d->qDeriv[adr + k];
      Meff[j * nv + i] -= 0.5 * h * d->qDeriv[adr + k];
    }
  }
}

// active equality rows of time t into E (row-major); returns their count
static int equality_rows(mjtNum* E, int ne_max, const mjModel* m, const mjData* d) {
  int nv = m->nv, ne = 0, sparse = mj_isSparse(m);
  for (int i = 0; i < d->nefc && ne < ne_max; i++) {
    if (d->efc_type[i] != mjCNSTR_EQUALITY) continue;
    mjtNum* row = E + (size_t)ne * nv;
    if (sparse) {
      memset(row, 0, nv * sizeof(mjtNum));
      int adr = d->efc_J_rowadr[i];
      for (int k = 0; k < d->efc_J_rownnz[i]; k++) row[d->efc_J_colind[adr + k]] = d->efc_J[adr + k];
    } else {
      memcpy(row, d->efc_J + (size_t)i * nv, nv * sizeof(mjtNum));
    }
    ne++;
  }
  return ne;
}

// N (nv x nr, column-major): orthonormal basis of null(E) by pivoted modified Gram-Schmidt,
// first on E's rows (their span), then on the columns of the projector I - Q Q^T.
static int null_space(mjtNum* N, const mjtNum* E, int ne, int nv, mjtNum* work) {
  mjtNum* Q = work;                  // (ne x nv) orthonormal rows spanning row(E)
  mjtNum* R = work + (size_t)ne * nv;  // (nv x nv) column j: residual of e_j
  mjtNum* norms = R + (size_t)nv * nv; // (nv)
  mjtNum scale = 0;
  for (int i = 0; i < ne * nv; i++) scale = fmax(scale, fabs(E[i]));
  int k = 0;
  for (int i = 0; i < ne; i++) {
    mjtNum* row = Q + (size_t)k * nv;
    memcpy(row, E + (size_t)i * nv, nv * sizeof(mjtNum));
    for (int pass = 0; pass < 2; pass++) {
      for (int j = 0; j < k; j++) {
        mjtNum dot = mju_dot(row, Q + (size_t)j * nv, nv);
        mju_addToScl(row, Q + (size_t)j * nv, -dot, nv);
      }
    }
    mjtNum norm = mju_norm(row, nv);
    if (norm > 1e-9 * (scale > 0 ? scale : 1)) {
      mju_scl(row, row, 1 / norm, nv);
      k++;
    }
  }
  // R = I - Q^T Q
  for (int j = 0; j < nv; j++) {
    mjtNum* col = R + (size_t)j * nv;
    for (int i = 0; i < nv; i++) col[i] = (i == j);
    for (int a = 0; a < k; a++) {
      mjtNum qa = Q[(size_t)a * nv + j];
      if (qa != 0) mju_addToScl(col, Q + (size_t)a * nv, -qa, nv);
    }
    norms[j] = mju_dot(col, col, nv);
  }
  int nr = 0;
  while (nr < nv - k) {
    int best = -1;
    for (int j = 0; j < nv; j++) {
      if (norms[j] >= 0 && (best < 0 || norms[j] > norms[best])) best = j;
    }
    if (best < 0 || norms[best] < 1e-16) break;
    mjtNum* q = N + (size_t)nr * nv;
    memcpy(q, R + (size_t)best * nv, nv * sizeof(mjtNum));
    for (int a = 0; a < nr; a++) {  // reorthogonalise against accepted columns
      mju_addToScl(q, N + (size_t)a * nv, -mju_dot(q, N + (size_t)a * nv, nv), nv);
    }
    mju_scl(q, q, 1 / mju_norm(q, nv), nv);
    norms[best] = -1;
    for (int j = 0; j < nv; j++) {
      if (norms[j] < 0) continue;
      mjtNum* col = R + (size_t)j * nv;
      mju_addToScl(col, q, -mju_dot(q, col, nv), nv);
      norms[j] = mju_dot(col, col, nv);
    }
    nr++;
  }
  return nr;
}

int cusp_dynamics_update(cuspDynamics* dyn, const mjModel* m, const mjData* d) {
  int nv = dyn->nv;
  if (nv == 0) return 0;
  effective_inertia(dyn->Meff, m, d);
  int ne = equality_rows(dyn->scratch, dyn->ne_max, m, d);
  if (ne == 0) {
    dyn->identity = 1;
    dyn->nr = nv;
    dyn->ne = 0;
  } else if (ne != dyn->ne ||
             memcmp(dyn->scratch, dyn->E, (size_t)ne * nv * sizeof(mjtNum)) != 0) {
    memcpy(dyn->E, dyn->scratch, (size_t)ne * nv * sizeof(mjtNum));
    dyn->ne = ne;
    dyn->nr = null_space(dyn->N, dyn->E, ne, nv, dyn->scratch);
    dyn->identity = dyn->nr == nv;  // the rows were all zero: N = I
    dyn->basis_updates++;
  }
  int nr = dyn->nr;
  if (nr == 0) return 0;
  if (dyn->identity) {
    memcpy(dyn->L, dyn->Meff, (size_t)nv * nv * sizeof(mjtNum));
  } else {
    // L := N^T Meff N  (scratch := Meff N, nv x nr)
    cusp_dgemm(dyn->scratch, 'N', 'N', dyn->Meff, dyn->N, 1, 0, nv, nr, nv, nv, nv, nv);
    cusp_dgemm(dyn->L, 'T', 'N', dyn->N, dyn->scratch, 1, 0, nr, nr, nv, nv, nv, nr);
  }
  // the factor keeps leading dimension nr
  return cusp_dpotrf(dyn->L, nr, nr) == 0 ? 0 : -1;
}

void cusp_dynamics_reduce(mjtNum* Jr, const cuspDynamics* dyn, const mjtNum* J, int k) {
  int nv = dyn->nv, nr = dyn->nr;
  if (k == 0 || nr == 0) return;
  if (dyn->identity) {
    memcpy(Jr, J, (size_t)k * nv * sizeof(mjtNum));
    return;
  }
  // row-major J (k x nv) is column-major J^T (nv x k); Jr^T = N^T J^T (nr x k)
  cusp_dgemm(Jr, 'T', 'N', dyn->N, J, 1, 0, nr, k, nv, nv, nv, nr);
}

void cusp_dynamics_solve(mjtNum* du, const cuspDynamics* dyn, const mjtNum* g) {
  if (du != g) memcpy(du, g, dyn->nr * sizeof(mjtNum));
  if (dyn->nr) cusp_dpotrs(du, dyn->L, dyn->nr, 1, dyn->nr, dyn->nr);
}

void cusp_dynamics_expand(mjtNum* dv, const cuspDynamics* dyn, const mjtNum* du) {
  if (dyn->identity) {
    memcpy(dv, du, dyn->nv * sizeof(mjtNum));
    return;
  }
  cusp_dgemv(dv, 'N', dyn->N, du, 1, 0, dyn->nv, dyn->nr, dyn->nv);
}

void cusp_dynamics_project(mjtNum* dv, const cuspDynamics* dyn, const mjtNum* v) {
  int nv = dyn->nv, nr = dyn->nr;
  if (dyn->identity) {
    mju_zero(dv, nv);
    return;
  }
  // u = Mr^-1 N^T Meff v, v_proj = N u, dv = v_proj - v (Meff-orthogonal projection onto null(E))
  mjtNum* meff_v = dyn->scratch;        // (nv)
  mjtNum* u = dyn->scratch + nv;        // (nv >= nr)
  cusp_dgemv(meff_v, 'N', dyn->Meff, v, 1, 0, nv, nv, nv);
  cusp_dgemv(u, 'T', dyn->N, meff_v, 1, 0, nv, nr, nv);
  cusp_dynamics_solve(u, dyn, u);
  cusp_dynamics_expand(dv, dyn, u);
  mju_subFrom(dv, v, nv);
}
