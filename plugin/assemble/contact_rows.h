// The rows of a contact in an island's coordinates: the relative point Jacobian of its two bodies
// at the contact point, and the row of one direction of it (the normal, a friction direction).
// Used by the disk step (step/step.c), the inverse controller (control/inverse_model.c) and the
// patch rows (step/patch_solve.c, over the span of columns of the patch's bodies).
#ifndef CUSP_PLUGIN_ASSEMBLE_CONTACT_ROWS_H_
#define CUSP_PLUGIN_ASSEMBLE_CONTACT_ROWS_H_

#include <mujoco/mujoco.h>

#include "assemble/dynamics.h"

#ifdef __cplusplus
extern "C" {
#endif

// Relative point Jacobians (3 x nv each, row-major, island columns; jacr may be NULL) of the point
// (world, m) moving with body0 minus the point moving with body1 (the world, or a body outside
// the island, is fixed), over the columns [lo, hi) only (they must hold both bodies' chains, see
// cusp_dynamics_chain; [0, nv) for all). scratch: 3 nv, 6 nv with jacr.
void cusp_relative_jac(mjtNum* jacp, mjtNum* jacr, mjtNum* scratch, const cuspDynamics* dyn,
                       const mjModel* m, const mjData* d, const mjtNum point[3], int body0,
                       int body1, int lo, int hi);

// The row of direction dir (3) of the 3 x nv Jacobian jac (row-major): row[j] = dir . jac[:, j],
// over the columns [lo, hi).
void cusp_direction_row(mjtNum* row, const mjtNum* jac, const mjtNum dir[3], int nv, int lo,
                        int hi);

// row[j] := row[j] + dir[0] jac[0][j] + dir[1] jac[1][j] + dir[2] jac[2][j] over the columns
// [lo, hi), summed left to right (a patch vertex's normal row: n . Jp by cusp_direction_row, then
// (r x n) . Jr added: the same sums, in the same order, as the one expression of the six terms).
void cusp_direction_row_add(mjtNum* row, const mjtNum* jac, const mjtNum dir[3], int nv, int lo,
                            int hi);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_ASSEMBLE_CONTACT_ROWS_H_
