// Contact islands: the kinematic trees a step's contacts join, grouped so
// that each group is one independent complementarity problem. Trees are joined by a contact
// between them, by an active equality constraint acting on both, and (implicit integrators) by
// damping that couples their dofs in qDeriv; MuJoCo's own island pass groups constraints the same
// way. Islands are numbered by their smallest tree id, so the order is deterministic and does not
// depend on where in the scene other bodies are.
#ifndef CUSP_PLUGIN_ISLAND_H_
#define CUSP_PLUGIN_ISLAND_H_

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspIslands_ {
  int ntree;         // trees of the model (m->ntree)
  int* parent;       // (ntree) union-find forest over trees
  int* id;           // (ntree) island of each tree's root this step, -1: no contact
  int* tree_of_dof;  // (nv) copy of m->dof_treeid
  int nisland;       // islands with at least one contact this step
  int* dofadr;       // (ntree + 1) island i owns dofs[dofadr[i] .. dofadr[i + 1])
  int* dofs;         // (nv) model dofs of every island, ascending within an island
  int* cursor;       // (ntree) scratch
  int ncross;        // qDeriv entries between two trees (implicit integrators; m->D_* order)
  int* cross;        // (2 ncross) their trees (i's, j's): the pattern is the model's
} cuspIslands;

int cusp_islands_init(cuspIslands* isl, const mjModel* m);
void cusp_islands_free(cuspIslands* isl);

// Start a step: every tree alone, then joined by the active equality rows and (implicit
// integrators) the qDeriv pattern of d.
void cusp_islands_begin(cuspIslands* isl, const mjModel* m, const mjData* d);

// Join the trees of bodies b0 and b1 (a contact between them; the world and static bodies have
// no tree and join nothing).
void cusp_islands_join(cuspIslands* isl, const mjModel* m, int b0, int b1);

// After every join: the island of a contact between bodies b0, b1 (numbering by smallest tree, over
// the islands that own a contact). Call cusp_islands_mark for every contact first, then
// cusp_islands_finish, then cusp_islands_of.
void cusp_islands_mark(cuspIslands* isl, const mjModel* m, int b0, int b1);
void cusp_islands_finish(cuspIslands* isl, const mjModel* m);
int cusp_islands_of(const cuspIslands* isl, const mjModel* m, int b0, int b1);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_ISLAND_H_
