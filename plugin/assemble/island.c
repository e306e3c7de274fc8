// Contact islands over kinematic trees (see island.h).
#include "assemble/island.h"

#include <stdlib.h>
#include <string.h>

int cusp_islands_init(cuspIslands* isl, const mjModel* m) {
  memset(isl, 0, sizeof(*isl));
  int nt = (int)m->ntree;
  isl->ntree = nt;
  isl->parent = (int*)calloc((size_t)nt + 1, sizeof(int));
  isl->id = (int*)calloc((size_t)nt + 1, sizeof(int));
  isl->dofadr = (int*)calloc((size_t)nt + 2, sizeof(int));
  isl->dofs = (int*)calloc((size_t)m->nv + 1, sizeof(int));
  isl->tree_of_dof = (int*)calloc((size_t)m->nv + 1, sizeof(int));
  isl->cursor = (int*)calloc((size_t)nt + 1, sizeof(int));
  if (!isl->cursor || !isl->parent || !isl->id || !isl->dofadr || !isl->dofs || !isl->tree_of_dof) {
    cusp_islands_free(isl);
    return -1;
  }
  for (int i = 0; i < m->nv; i++) isl->tree_of_dof[i] = m->dof_treeid[i];
  // qDeriv's entries across trees (damping through tendons), counted then listed
  for (int pass = 0; pass < 2; pass++) {
    int n = 0;
    for (int i = 0; i < m->nv; i++) {
      int adr = m->D_rowadr[i];
      for (int k = 0; k < m->D_rownnz[i]; k++) {
        int j = m->D_colind[adr + k];
        if (isl->tree_of_dof[j] == isl->tree_of_dof[i]) continue;
        if (pass) {
          isl->cross[2 * n] = isl->tree_of_dof[i];
          isl->cross[2 * n + 1] = isl->tree_of_dof[j];
        }
        n++;
      }
    }
    if (!pass) {
      isl->ncross = n;
      isl->cross = (int*)calloc(2 * (size_t)n + 1, sizeof(int));
      if (!isl->cross) {
        cusp_islands_free(isl);
        return -1;
      }
    }
  }
  return 0;
}

void cusp_islands_free(cuspIslands* isl) {
  free(isl->parent);
  free(isl->id);
  free(isl->dofadr);
  free(isl->dofs);
  free(isl->tree_of_dof);
  free(isl->cursor);
  free(isl->cross);
  memset(isl, 0, sizeof(*isl));
}

static int root(cuspIslands* isl, int t) {
  while (isl->parent[t] != t) {
    isl->parent[t] = isl->parent[isl->parent[t]];  // path halving
    t = isl->parent[t];
  }
  return t;
}

static int root_const(const cuspIslands* isl, int t) {
  while (isl->parent[t] != t) t = isl->parent[t];
  return t;
}

// the smaller root becomes the parent: a root is always its set's smallest tree
static void join_trees(cuspIslands* isl, int a, int b) {
  if (a < 0 || b < 0) return;
  a = root(isl, a);
  b = root(isl, b);
  if (a == b) return;
  if (a < b) isl->parent[b] = a;
  else isl->parent[a] = b;
}

void cusp_islands_begin(cuspIslands* isl, const mjModel* m, const mjData* d) {
  for (int t = 0; t < isl->ntree; t++) {
    isl->parent[t] = t;
    isl->id[t] = -1;
  }
  isl->nisland = 0;
  // active equality rows join the trees of their dofs
  int sparse = mj_isSparse(m);
  for (int i = 0; i < d->nefc; i++) {
    if (d->efc_type[i] != mjCNSTR_EQUALITY) continue;
    int first = -1;
    if (sparse) {
      int adr = d->efc_J_rowadr[i];
      for (int k = 0; k < d->efc_J_rownnz[i]; k++) {
        int t = isl->tree_of_dof[d->efc_J_colind[adr + k]];
        if (first < 0) first = t;
        else join_trees(isl, first, t);
      }
    } else {
      const mjtNum* Ji = d->efc_J + (size_t)i * m->nv;
      for (int j = 0; j < m->nv; j++) {
        if (Ji[j] == 0) continue;
        int t = isl->tree_of_dof[j];
        if (first < 0) first = t;
        else join_trees(isl, first, t);
      }
    }
  }
  // implicit integrators factor M - h qDeriv: damping across trees (tendons) couples them
  if (m->opt.integrator == mjINT_IMPLICIT || m->opt.integrator == mjINT_IMPLICITFAST) {
    for (int c = 0; c < isl->ncross; c++) join_trees(isl, isl->cross[2 * c], isl->cross[2 * c + 1]);
  }
}

void cusp_islands_join(cuspIslands* isl, const mjModel* m, int b0, int b1) {
  int t0 = m->body_treeid[b0], t1 = m->body_treeid[b1];
  if (t0 < 0) return;
  if (t1 >= 0) join_trees(isl, t0, t1);
}

void cusp_islands_mark(cuspIslands* isl, const mjModel* m, int b0, int b1) {
  int t = m->body_treeid[b0] >= 0 ? m->body_treeid[b0] : m->body_treeid[b1];
  if (t < 0) return;
  isl->id[root(isl, t)] = 0;  // owns a contact; numbered in finish
}

void cusp_islands_finish(cuspIslands* isl, const mjModel* m) {
  // number the marked roots in tree order (a root is its island's smallest tree)
  int n = 0;
  for (int t = 0; t < isl->ntree; t++) {
    if (isl->parent[t] == t && isl->id[t] == 0) isl->id[t] = n++ + 1;  // 1-based while counting
  }
  for (int t = 0; t < isl->ntree; t++) {
    if (isl->parent[t] == t) isl->id[t] = isl->id[t] > 0 ? isl->id[t] - 1 : -1;
  }
  isl->nisland = n;
  // dofs of each island: its trees' dof ranges in tree order (ascending dofs)
  for (int i = 0; i <= n; i++) isl->dofadr[i] = 0;
  for (int t = 0; t < isl->ntree; t++) {
    int id = isl->id[root(isl, t)];
    if (id >= 0) isl->dofadr[id + 1] += m->tree_dofnum[t];
  }
  for (int i = 0; i < n; i++) isl->dofadr[i + 1] += isl->dofadr[i];
  int* cursor = isl->cursor;  // (nisland) next free slot of each island
  for (int i = 0; i < n; i++) cursor[i] = isl->dofadr[i];
  for (int t = 0; t < isl->ntree; t++) {
    int id = isl->id[root(isl, t)];
    if (id < 0) continue;
    for (int j = 0; j < m->tree_dofnum[t]; j++) isl->dofs[cursor[id]++] = m->tree_dofadr[t] + j;
  }
}

int cusp_islands_of(const cuspIslands* isl, const mjModel* m, int b0, int b1) {
  int t = m->body_treeid[b0] >= 0 ? m->body_treeid[b0] : m->body_treeid[b1];
  if (t < 0) return -1;
  return isl->id[root_const(isl, t)];
}
