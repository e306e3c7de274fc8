// The dynamics a contact correction acts through:
//   effective inertia  Meff = the matrix MuJoCo's integrator used for the free step
//                      (Euler: M + h diag(dof_damping); implicitfast/implicit: M - h qDeriv, the
//                      matrix MuJoCo factors, symmetrised; RK4: M), at time t as the integrator did;
//                      plus Je^T D Je for the compliant equality rows Je (eq_compliant: those on a
//                      registered rigid object, and the ties to a mocap body), D = MuJoCo's efc_D
//                      (N/(m/s^2) in the row's units): the soft constraint's own response, as
//                      MuJoCo's solver weighs it, so that a weld holding the object, or a hand
//                      following its mocap target, yields to a contact as it would to a force;
//   the other active equality constraints E dv = 0 condensed: dv = N du with N (nv x nr) an orthonormal
//                      basis of null(E), so a correction never breaks e.g. the PCC joint ties;
//   reduced inertia    Mr = N^T Meff N = L L^T (nr x nr).
// A contact with full Jacobian rows J (k x nv) acts through Jr = J N (k x nr); an impulse p (k)
// changes the velocity by dv = N Mr^-1 Jr^T p. When there is no equality, N = I (not stored).
// Everything is local to one contact island: its dofs only (M is block diagonal over kinematic
// trees; the islands join trees coupled by equalities, contacts and implicit damping).
#ifndef CUSP_PLUGIN_DYNAMICS_H_
#define CUSP_PLUGIN_DYNAMICS_H_

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspDynamics_ {
  int nv;           // generalized velocities of the island (its dofs, ascending)
  int nv_model;     // m->nv: row stride of full-width Jacobians
  int cap;          // dofs the buffers hold
  int nr;           // reduced dimension (nv - rank(E))
  int identity;     // 1: no equality constraint active, N = I
  int ne;           // equality rows last seen
  int ne_max;       // capacity of E
  int* dofs;        // (cap) model dof of each island dof
  int* local;       // (nv_model) island index of each model dof, -1 outside the island
  mjtNum* Meff;     // (nv x nv) column-major effective inertia
  mjtNum* E;        // (ne_max x nv) row-major active equality rows (cached to reuse N)
  mjtNum* N;        // (nv x nv) column-major, first nr columns: basis of null(E)
  int* n_ptr;       // (cap + 1) column j of N is nonzero at rows n_row[n_ptr[j] .. n_ptr[j + 1])
  int* n_row;       // (cap x cap) ascending: products with N skip its zeros (a PCC section's
                    // column holds the few dofs its equalities tie), in the same order
  mjtNum* L;        // (nv x nv) column-major, leading nr x nr: lower Cholesky factor of Mr
  int* env;         // (2 cap) envelope of L (cusp_envelope): block diagonal for many bodies
  mjtNum* scratch;  // (nv x nv + 2 nv + ne_max nv)
  int meff_ld;      // leading dimension Meff was last written with (0: all of it is zero)
  int l_ld;         // the same for L
  int* meff_first;  // (cap) row i of the last Meff holds nonzeros at columns >= meff_first[i]
                    // only (and column i at rows >= it): cleared before the next island's, so
                    // that an island of many bodies costs its envelope, not nv^2
  int meff_eq_grew; // 1: soft equality rows grew that profile (it then depends on values)
  int* l_first;     // (cap) the same for L
  int basis_updates;// how many times N was recomputed (E changed)
  const unsigned char* eq_compliant;  // (neq) borrowed, NULL: none; 1: the equality's rows enter
                                      // Meff as Je^T D Je instead of E
} cuspDynamics;

// Allocate for up to cap dofs of model m (at init, or when an island outgrows the buffers).
int cusp_dynamics_init(cuspDynamics* dyn, const mjModel* m, int cap);
void cusp_dynamics_free(cuspDynamics* dyn);

// Build Meff, E, N (only when the island or E changed), L for the island of ndof model dofs
// (ascending) from d after mj_step's integration (M, qDeriv and efc_J are those of time t).
// Returns 0, -1 if Mr is not positive definite, -2 if out of memory.
int cusp_dynamics_update(cuspDynamics* dyn, const mjModel* m, const mjData* d, const int* dofs,
                         int ndof);

// Point Jacobians (3 x nv each, row-major, island columns; either may be NULL) of the point
// (world, m) moving with body b, computed over the island's dofs only (the columns of the dofs
// b's motion depends on, as mj_jac; the others are 0): O(nv of the island), not O(nv of the
// model), so that many small islands cost linear time.
void cusp_dynamics_jac(mjtNum* jacp, mjtNum* jacr, const cuspDynamics* dyn, const mjModel* m,
                       const mjData* d, const mjtNum point[3], int body);

// [*lo, *hi): the island columns the point Jacobians of body b can be nonzero at (the hull of
// its chain of dofs); 0, 0 for the world or a body without dofs above it.
void cusp_dynamics_chain(int* lo, int* hi, const cuspDynamics* dyn, const mjModel* m, int body);

// As cusp_dynamics_jac, but only the columns [lo, hi) are written (they must hold b's chain):
// O(chain) instead of O(nv) when the caller reads no other column.
void cusp_dynamics_jac_span(mjtNum* jacp, mjtNum* jacr, const cuspDynamics* dyn,
                            const mjModel* m, const mjData* d, const mjtNum point[3], int body,
                            int lo, int hi);

// v (nv, island) := the island's entries of a model vector (nv_model)
void cusp_dynamics_gather(mjtNum* v, const cuspDynamics* dyn, const mjtNum* full);

// Jr (k x nr, row-major, row stride nr) := J N for island rows J (k x nv, row-major).
void cusp_dynamics_reduce(mjtNum* Jr, cuspDynamics* dyn, const mjtNum* J, int k);

// du (nr) := Mr^-1 g for g (nr); in place allowed.
void cusp_dynamics_solve(mjtNum* du, const cuspDynamics* dyn, const mjtNum* g);

// dv (nv_model) at the island's dofs := N du; other entries untouched.
void cusp_dynamics_expand(mjtNum* dv, const cuspDynamics* dyn, const mjtNum* du);

// dv (nv_model) at the island's dofs := P v - v, where P v is the Meff-orthogonal projection of
// v (nv_model) onto null(E): the smallest (in kinetic-energy metric) change that makes the
// equality velocities E v zero. Removing that drift before a contact correction keeps the
// correction dissipative: otherwise the bilateral impulses that hold E dv = 0 work against
// E v* != 0 (MuJoCo's equalities are soft) and, with the large implicit tendon damping of PCC
// chambers, inject energy. Zero when no equality is active. A tie to a mocap body is never in E
// (it is compliant, cuspParams.eq_compliant): the mocap moves and the body follows it, which is
// no drift (a pusher welded to a moving mocap, its weld's velocity removed, stopped in every step
// it touched something and lagged its target by centimetres).
void cusp_dynamics_project(mjtNum* dv, cuspDynamics* dyn, const mjtNum* v);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_DYNAMICS_H_
