// Effective inertia, equality condensation and the reduced inertia factor (see dynamics.h).
#include "assemble/dynamics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/lapack_shim.h"

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

int cusp_dynamics_init(cuspDynamics* dyn, const mjModel* m, int cap) {
  memset(dyn, 0, sizeof(*dyn));
  int nv = cap;
  dyn->cap = cap;
  dyn->nv = 0;
  dyn->nv_model = m->nv;
  dyn->nr = 0;
  dyn->identity = 1;
  dyn->ne_max = equality_rows_max(m);
  size_t nn = (size_t)nv * nv + 1;
  dyn->dofs = (int*)calloc((size_t)nv + 1, sizeof(int));
  dyn->local = (int*)malloc(((size_t)m->nv + 1) * sizeof(int));
  dyn->Meff = (mjtNum*)calloc(nn, sizeof(mjtNum));
  dyn->E = (mjtNum*)calloc((size_t)dyn->ne_max * nv + 1, sizeof(mjtNum));
  dyn->N = (mjtNum*)calloc(nn, sizeof(mjtNum));
  dyn->L = (mjtNum*)calloc(nn, sizeof(mjtNum));
  dyn->n_ptr = (int*)calloc((size_t)nv + 1, sizeof(int));
  dyn->n_row = (int*)calloc(nn, sizeof(int));
  dyn->env = (int*)calloc(2 * (size_t)nv + 1, sizeof(int));
  dyn->meff_first = (int*)calloc((size_t)nv + 1, sizeof(int));
  dyn->l_first = (int*)calloc((size_t)nv + 1, sizeof(int));
  // null_space needs ne nv + nv nv + nv; the projection 2 nv; the reduction 3 nv per row block
  dyn->scratch = (mjtNum*)calloc(nn + 3 * (size_t)nv + (size_t)dyn->ne_max * nv, sizeof(mjtNum));
  if (!dyn->dofs || !dyn->local || !dyn->Meff || !dyn->E || !dyn->N || !dyn->L || !dyn->env ||
      !dyn->n_ptr || !dyn->n_row || !dyn->scratch || !dyn->meff_first || !dyn->l_first) {
    cusp_dynamics_free(dyn);
    return -1;
  }
  for (int i = 0; i < m->nv; i++) dyn->local[i] = -1;
  dyn->ne = -1;  // nothing cached yet
  return 0;
}

void cusp_dynamics_free(cuspDynamics* dyn) {
  free(dyn->dofs);
  free(dyn->local);
  free(dyn->Meff);
  free(dyn->E);
  free(dyn->N);
  free(dyn->L);
  free(dyn->n_ptr);
  free(dyn->n_row);
  free(dyn->env);
  free(dyn->meff_first);
  free(dyn->l_first);
  free(dyn->scratch);
  memset(dyn, 0, sizeof(*dyn));
}

// Euler's implicit damping on the island's diagonal of Meff (nv x nv): MuJoCo's mj_EulerSkip
// factors qH = M + h diag(b) when joint damping is on (not disabled by the damper or eulerdamp
// flags) and some dof has damping, polynomial damping or a joint actuator with damping; b is the
// derivative of the dof's damping force at the step's starting velocity: dof_damping, plus the
// actuator's damping, plus 2 c1 |v| + 3 c2 v^2 of the polynomial terms. With plain linear dof
// damping that is h dof_damping exactly; otherwise b is read back from MuJoCo's factor of this
// step (qH = L^T D L, unit lower L in M's sparsity, D on the diagonal: diag = D_i + sum over the
// rows k below i of L_ki^2 D_k, all in i's tree, so all in the island), which needs no copy of
// MuJoCo's formula and no velocity of time t.
static void euler_damping(mjtNum* Meff, const cuspDynamics* dyn, const mjModel* m,
                          const mjData* d) {
  if (m->opt.disableflags & (mjDSBL_DAMPER | mjDSBL_EULERDAMP)) return;
  int nv = dyn->nv, linear = 1, any = 0;
  for (int i = 0; i < m->nv; i++) {
    int poly = 0;
    for (int k = 0; k < mjNPOLY; k++) poly |= m->dof_dampingpoly[mjNPOLY * i + k] != 0;
    int act = m->jnt_actuatorid[m->dof_jntid[i]] != -1;
    any |= m->dof_damping[i] > 0 || poly || act;
    linear &= !poly && !act;
  }
  if (!any) return;  // MuJoCo integrated explicitly: Meff = M
  mjtNum h = m->opt.timestep;
  if (linear) {
    for (int a = 0; a < nv; a++) Meff[a * nv + a] += h * m->dof_damping[dyn->dofs[a]];
    return;
  }
  mjtNum* diag = dyn->scratch;  // (nv) diagonal of L^T D L over the island's dofs
  for (int a = 0; a < nv; a++) {
    int i = dyn->dofs[a];
    diag[a] = d->qH[m->M_rowadr[i] + m->M_rownnz[i] - 1];
  }
  for (int a = 0; a < nv; a++) {
    int k = dyn->dofs[a], adr = m->M_rowadr[k], last = adr + m->M_rownnz[k] - 1;
    mjtNum Dk = d->qH[last];
    for (int x = adr; x < last; x++) {
      int b = dyn->local[m->M_colind[x]];
      if (b >= 0) diag[b] += d->qH[x] * d->qH[x] * Dk;
    }
  }
  for (int a = 0; a < nv; a++) Meff[a * nv + a] = diag[a];  // M_ii + h b_i as MuJoCo factored it
}

// Zero the symmetric profile {(i, k), (k, i): first[i] <= k <= i} of a (n x n, leading dimension
// n): what the last island wrote there, all the rest being zero already.
static void clear_profile(mjtNum* a, int n, const int* first) {
  for (int i = 0; i < n; i++) {
    for (int k = first[i]; k <= i; k++) {
      a[(size_t)i * n + k] = 0;
      a[(size_t)k * n + i] = 0;
    }
  }
}

// Meff (nv x nv, island dofs) from M at time t (MuJoCo's sparse lower triangle: row i holds its
// ancestors and itself) and the damping the integrator treated implicitly. same: the island's dofs
// are those of the last call, so its profile (from the sparsity patterns alone) is too.
static void effective_inertia(mjtNum* Meff, cuspDynamics* dyn, const mjModel* m, const mjData* d,
                              int same) {
  int nv = dyn->nv;
  int* first = dyn->meff_first;
  // the last island's entries back to zero (Meff is zero elsewhere), then this island's profile:
  // M couples a dof to its ancestors only (the trees), qDeriv to the dofs it couples
  if (dyn->meff_ld > 0) clear_profile(Meff, dyn->meff_ld, first);
  same = same && dyn->meff_ld == nv && !dyn->meff_eq_grew;  // else from the patterns again
  dyn->meff_eq_grew = 0;
  if (!same) {
    for (int a = 0; a < nv; a++) first[a] = a;
  }
  dyn->meff_ld = nv;
  for (int a = 0; a < nv; a++) {
    int i = dyn->dofs[a];
    int adr = m->M_rowadr[i];
    for (int k = 0; k < m->M_rownnz[i]; k++) {
      int b = dyn->local[m->M_colind[adr + k]];
      if (b < 0) continue;  // cannot happen: a dof's ancestors share its tree
      Meff[a * nv + b] = d->M[adr + k];
      Meff[b * nv + a] = d->M[adr + k];
      if (same) continue;
      int hi = a > b ? a : b, lo = a > b ? b : a;
      if (lo < first[hi]) first[hi] = lo;
    }
  }
  mjtNum h = m->opt.timestep;
  if (m->opt.integrator == mjINT_EULER) {
    euler_damping(Meff, dyn, m, d);
    return;
  }
  if (m->opt.integrator != mjINT_IMPLICITFAST && m->opt.integrator != mjINT_IMPLICIT) return;
  // implicit integrators factor M - h qDeriv (qDeriv: d(passive + actuator - bias)/dqvel at time
  // t, all damping and actuator velocity terms); symmetrised so that it has a Cholesky factor.
  // Islands join the dofs qDeriv couples, so every entry of an island row lies in the island.
  for (int a = 0; a < nv; a++) {
    int i = dyn->dofs[a];
    int adr = m->D_rowadr[i];
    for (int k = 0; k < m->D_rownnz[i]; k++) {
      int b = dyn->local[m->D_colind[adr + k]];
      if (b < 0) continue;
      mjtNum q = d->qDeriv[adr + k];
      if (q != 0 || signbit(q)) {  // x - (0.5 h (+0)) is x: the many +0 of undamped dofs skipped
        Meff[a * nv + b] -= 0.5 * h * q;
        Meff[b * nv + a] -= 0.5 * h * q;
      }
      if (same) continue;
      int hi = a > b ? a : b, lo = a > b ? b : a;
      if (lo < first[hi]) first[hi] = lo;
    }
  }
}

// active equality rows of time t acting on the island: the compliant ones added to Meff, the
// others into E (row-major, island columns); returns the count of the latter
static int equality_rows(mjtNum* E, int ne_max, cuspDynamics* dyn, const mjModel* m,
                         const mjData* d) {
  int nv = dyn->nv, nvm = m->nv, ne = 0, sparse = mj_isSparse(m);
  for (int i = 0; i < d->nefc && ne < ne_max; i++) {
    if (d->efc_type[i] != mjCNSTR_EQUALITY) continue;
    mjtNum* row = E + (size_t)ne * nv;
    memset(row, 0, nv * sizeof(mjtNum));
    int hit = 0;
    if (sparse) {
      int adr = d->efc_J_rowadr[i];
      for (int k = 0; k < d->efc_J_rownnz[i]; k++) {
        int b = dyn->local[d->efc_J_colind[adr + k]];
        if (b >= 0) {
          row[b] = d->efc_J[adr + k];
          hit = 1;
        }
      }
    } else {
      const mjtNum* Ji = d->efc_J + (size_t)i * nvm;
      for (int b = 0; b < nv; b++) {
        row[b] = Ji[dyn->dofs[b]];
        hit |= row[b] != 0;
      }
    }
    if (hit && dyn->eq_compliant && dyn->eq_compliant[d->efc_id[i]]) {
      // a soft row of the object's own constraint: Meff += D row row^T (row not kept in E)
      // (the profile grows by the couplings it adds: a weld between two registered bodies
      // couples their trees)
      mjtNum D = d->efc_D[i];
      int lowest = nv;
      for (int a = 0; a < nv; a++) {
        if (row[a] == 0) continue;
        if (lowest == nv) lowest = a;
        for (int b = 0; b < nv; b++) dyn->Meff[a * nv + b] += D * row[a] * row[b];
        if (lowest < dyn->meff_first[a]) dyn->meff_first[a] = lowest, dyn->meff_eq_grew = 1;
      }
      continue;
    }
    ne += hit;
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

// the nonzero rows of N's first nr columns (n_ptr, n_row)
static void basis_pattern(cuspDynamics* dyn) {
  int nv = dyn->nv, at = 0;
  for (int j = 0; j < dyn->nr; j++) {
    dyn->n_ptr[j] = at;
    const mjtNum* col = dyn->N + (size_t)j * nv;
    for (int p = 0; p < nv; p++) {
      if (col[p] != 0) dyn->n_row[at++] = p;
    }
  }
  dyn->n_ptr[dyn->nr] = at;
}

// N(:, j)^T x over N's nonzeros in ascending row order (the sum of the dense product without its
// zero terms: the same value)
static mjtNum basis_dot(const cuspDynamics* dyn, int j, const mjtNum* x) {
  const mjtNum* col = dyn->N + (size_t)j * dyn->nv;
  mjtNum s = 0;
  for (int q = dyn->n_ptr[j]; q < dyn->n_ptr[j + 1]; q++) {
    int p = dyn->n_row[q];
    s += col[p] * x[p];
  }
  return s;
}

int cusp_dynamics_update(cuspDynamics* dyn, const mjModel* m, const mjData* d, const int* dofs,
                         int ndof) {
  if (ndof > dyn->cap) {
    cuspDynamics bigger;
    if (cusp_dynamics_init(&bigger, m, ndof)) return -2;
    bigger.eq_compliant = dyn->eq_compliant;
    cusp_dynamics_free(dyn);
    *dyn = bigger;
  }
  // the island: a different dof set invalidates the cached basis
  int same = ndof == dyn->nv && memcmp(dofs, dyn->dofs, ndof * sizeof(int)) == 0;
  for (int a = 0; a < dyn->nv; a++) dyn->local[dyn->dofs[a]] = -1;
  memcpy(dyn->dofs, dofs, ndof * sizeof(int));
  dyn->nv = ndof;
  for (int a = 0; a < ndof; a++) dyn->local[dofs[a]] = a;
  if (!same) dyn->ne = -1;
  int nv = ndof;
  if (nv == 0) {
    dyn->nr = 0;
    return 0;
  }
  effective_inertia(dyn->Meff, dyn, m, d, same);
  int ne = equality_rows(dyn->scratch, dyn->ne_max, dyn, m, d);
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
    basis_pattern(dyn);
  }
  int nr = dyn->nr;
  if (nr == 0) return 0;
  // L := Mr (then its factor), zero outside its profile: the last island's profile cleared, and
  // with N = I only Meff's profile copied (a copy of all of Meff, at the cost of the profile)
  // (with N = I and the last island's profile the same as this one's, the copy below overwrites
  // every entry the last factor wrote: nothing to clear)
  int same_profile = dyn->identity && dyn->l_ld == nv &&
                     memcmp(dyn->l_first, dyn->meff_first, (size_t)nv * sizeof(int)) == 0;
  if (dyn->l_ld > 0 && !same_profile) clear_profile(dyn->L, dyn->l_ld, dyn->l_first);
  dyn->l_ld = nr;
  int* first = dyn->l_first;
  if (dyn->identity) {
    memcpy(first, dyn->meff_first, (size_t)nv * sizeof(int));
    for (int i = 0; i < nv; i++) {
      for (int k = first[i]; k <= i; k++) {
        dyn->L[(size_t)i * nv + k] = dyn->Meff[(size_t)i * nv + k];
        dyn->L[(size_t)k * nv + i] = dyn->Meff[(size_t)k * nv + i];
      }
    }
  } else {
    // L := N^T Meff N  (scratch := Meff N, nv x nr)
    cusp_dgemm(dyn->scratch, 'N', 'N', dyn->Meff, dyn->N, 1, 0, nv, nr, nv, nv, nv, nv);
    for (int j = 0; j < nr; j++) {
      for (int i = 0; i < nr; i++) {
        dyn->L[(size_t)j * nr + i] = basis_dot(dyn, i, dyn->scratch + (size_t)j * nv);
      }
    }
    for (int i = 0; i < nr; i++) first[i] = 0;
  }
  // the factor keeps leading dimension nr and the envelope of Mr, each row scanned from its
  // profile instead of from column 0
  cusp_envelope(dyn->env, dyn->L, nr, nr, first);
  return cusp_dpotrf_env(dyn->L, nr, nr, dyn->env) == 0 ? 0 : -1;
}

void cusp_dynamics_jac(mjtNum* jacp, mjtNum* jacr, const cuspDynamics* dyn, const mjModel* m,
                       const mjData* d, const mjtNum point[3], int body) {
  cusp_dynamics_jac_span(jacp, jacr, dyn, m, d, point, body, 0, dyn->nv);
}

void cusp_dynamics_chain(int* lo, int* hi, const cuspDynamics* dyn, const mjModel* m, int body) {
  *lo = *hi = 0;
  while (body > 0 && m->body_dofnum[body] == 0) body = m->body_parentid[body];
  if (body <= 0) return;
  int a0 = dyn->nv, a1 = -1;
  for (int j = m->body_dofadr[body] + m->body_dofnum[body] - 1; j >= 0; j = m->dof_parentid[j]) {
    int a = dyn->local[j];
    if (a < 0) continue;
    if (a < a0) a0 = a;
    if (a > a1) a1 = a;
  }
  if (a1 >= a0) {
    *lo = a0;
    *hi = a1 + 1;
  }
}

void cusp_dynamics_jac_span(mjtNum* jacp, mjtNum* jacr, const cuspDynamics* dyn,
                            const mjModel* m, const mjData* d, const mjtNum point[3], int body,
                            int lo, int hi) {
  int nv = dyn->nv;
  for (int r = 0; r < 3 && hi > lo; r++) {
    if (jacp) memset(jacp + (size_t)r * nv + lo, 0, (size_t)(hi - lo) * sizeof(mjtNum));
    if (jacr) memset(jacr + (size_t)r * nv + lo, 0, (size_t)(hi - lo) * sizeof(mjtNum));
  }
  // a body without own dofs moves with the nearest ancestor that has some
  while (body > 0 && m->body_dofnum[body] == 0) body = m->body_parentid[body];
  if (body <= 0) return;
  // cdof rows are (rotation, translation) about the subtree com of the tree's root
  mjtNum offset[3];
  mju_sub3(offset, point, d->subtree_com + 3 * m->body_rootid[body]);
  for (int j = m->body_dofadr[body] + m->body_dofnum[body] - 1; j >= 0; j = m->dof_parentid[j]) {
    int a = dyn->local[j];
    if (a < 0) continue;  // cannot happen: an island holds whole trees
    const mjtNum* cdof = d->cdof + 6 * j;
    if (jacp) {  // translation + rotation x offset (mju_cross's products and order, inline)
      jacp[a] = cdof[3] + (cdof[1] * offset[2] - cdof[2] * offset[1]);
      jacp[nv + a] = cdof[4] + (cdof[2] * offset[0] - cdof[0] * offset[2]);
      jacp[2 * nv + a] = cdof[5] + (cdof[0] * offset[1] - cdof[1] * offset[0]);
    }
    if (jacr) {
      jacr[a] = cdof[0];
      jacr[nv + a] = cdof[1];
      jacr[2 * nv + a] = cdof[2];
    }
  }
}

void cusp_dynamics_gather(mjtNum* v, const cuspDynamics* dyn, const mjtNum* full) {
  for (int a = 0; a < dyn->nv; a++) v[a] = full[dyn->dofs[a]];
}

void cusp_dynamics_reduce(mjtNum* Jr, cuspDynamics* dyn, const mjtNum* J, int k) {
  int nv = dyn->nv, nr = dyn->nr;
  if (k == 0 || nr == 0) return;
  if (dyn->identity) {
    memcpy(Jr, J, (size_t)k * nv * sizeof(mjtNum));
    return;
  }
  // Jr (k x nr, row-major): Jr(i, j) = N(:, j)^T J(i, :)
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < nr; j++) Jr[(size_t)i * nr + j] = basis_dot(dyn, j, J + (size_t)i * nv);
  }
}

void cusp_dynamics_solve(mjtNum* du, const cuspDynamics* dyn, const mjtNum* g) {
  if (du != g) memcpy(du, g, dyn->nr * sizeof(mjtNum));
  if (dyn->nr) cusp_dpotrs_env(du, dyn->L, dyn->nr, 1, dyn->nr, dyn->nr, dyn->env);
}

// dv (nv, island) := N du
static void expand_local(mjtNum* dv, const cuspDynamics* dyn, const mjtNum* du) {
  if (dyn->identity) {
    memcpy(dv, du, dyn->nv * sizeof(mjtNum));
    return;
  }
  memset(dv, 0, (size_t)dyn->nv * sizeof(mjtNum));
  for (int j = 0; j < dyn->nr; j++) {
    if (du[j] == 0) continue;
    const mjtNum* col = dyn->N + (size_t)j * dyn->nv;
    for (int q = dyn->n_ptr[j]; q < dyn->n_ptr[j + 1]; q++) {
      dv[dyn->n_row[q]] += du[j] * col[dyn->n_row[q]];
    }
  }
}

void cusp_dynamics_expand(mjtNum* dv, const cuspDynamics* dyn, const mjtNum* du) {
  mjtNum* local = dyn->scratch;  // (nv)
  expand_local(local, dyn, du);
  for (int a = 0; a < dyn->nv; a++) dv[dyn->dofs[a]] = local[a];
}

void cusp_dynamics_project(mjtNum* dv, cuspDynamics* dyn, const mjtNum* v) {
  int nv = dyn->nv, nr = dyn->nr;
  if (dyn->identity) {
    for (int a = 0; a < nv; a++) dv[dyn->dofs[a]] = 0;
    return;
  }
  // u = Mr^-1 N^T Meff v, v_proj = N u, dv = v_proj - v (Meff-orthogonal projection onto null(E))
  mjtNum* vl = dyn->scratch;               // (nv) island velocities
  mjtNum* meff_v = dyn->scratch + nv;      // (nv)
  mjtNum* u = dyn->scratch + 2 * nv;       // (nv >= nr)
  mjtNum* vp = dyn->scratch + 3 * nv;      // (nv)
  for (int a = 0; a < nv; a++) vl[a] = v[dyn->dofs[a]];
  cusp_dgemv(meff_v, 'N', dyn->Meff, vl, 1, 0, nv, nv, nv);
  for (int j = 0; j < nr; j++) u[j] = basis_dot(dyn, j, meff_v);
  cusp_dynamics_solve(u, dyn, u);
  expand_local(vp, dyn, u);
  for (int a = 0; a < nv; a++) dv[dyn->dofs[a]] = vp[a] - vl[a];
}
