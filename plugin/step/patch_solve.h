// The rigid island problem of patch contact (the model is documented in collide/patch.h): its
// workspace, the warm-start history, the solve, and the per-body slots it publishes.
#ifndef CUSP_PLUGIN_STEP_PATCH_SOLVE_H_
#define CUSP_PLUGIN_STEP_PATCH_SOLVE_H_

#include <stddef.h>

#include <mujoco/mujoco.h>

#include "assemble/dynamics.h"
#include "collide/patch.h"
#include "config/config.h"
#include "solver/mcp.h"
#include "state.h"

#ifdef __cplusplus
extern "C" {
#endif

// Workspace and persistent state of the patch problem for one mjData (allocated at init, grown
// only when a step needs more patches or rows than ever before).
typedef struct cuspPatchWork_ {
  int nv;
  cuspPatchSet set;         // this step's patches (collide/patch.h)
  int cap_patch;            // capacity of prev / sorted / row_of / z_of
  int nisland;
  cuspPatch* island;        // (nisland) view into set.patch: the island being solved
  int nprev;
  cuspPatch* prev;          // (cap_patch) last step's patches (warm start)
  cuspPatch* sorted;        // (cap_patch) scratch: the patches reordered by island
  int cap_rows, cap_z;
  int nrows, nz;
  int* row_of;              // (cap_patch) first row of each patch
  int* z_of;                // (cap_patch) first unknown of each patch
  mjtNum* voff;             // (cap_patch x 2 CUSP_PATCH_MAXVERT) m: the island's patches' vertex
                            // offsets from their origin along t, then along o (set per solve)
  mjtNum* J;                // (cap_rows x nv) row-major relative velocity rows
  mjtNum* Jr;               // (cap_rows x nv) row-major reduced rows J N
  mjtNum* X;                // (cap_rows x nv) row-major, row j: Mr^-1 Jr_j^T
  mjtNum* W;                // (cap_rows x cap_rows) row-major Delassus J Meff^-1 J^T
  int* span;                // (2 cap_rows) nonzero column range [lo, hi) of each row of W
  int* rspan;               // (4 cap_rows) nonzero column ranges of each row of Jr, then of X
  int* hull;                // (2 cap_patch) rows [lo, hi) of W a patch's rows may couple to
                            // (the patches sharing dofs with it), then the union of their W spans
                            // and its own rows: the rows of d ub / d z_j and of dF / d z_j for
                            // an unknown z_j of the patch
  int* pspan;               // (4 cap_patch) union of the Jr spans, then of the X spans, of a
                            // patch's rows
  int* zpatch;              // (cap_z) the patch of each unknown
  int* order;               // (4 cap_patch) scratch of the patch ordering
  int ntree;                // m->ntree
  int* tree_slot;           // (ntree) scratch of the patch ordering: -1 between islands
  int* tree_list;           // (2 cap_patch + ntree + 1) scratch: patches by tree
  int* blk;                 // (2 nv) scratch: the diagonal blocks of the envelope of L
  int band, kl, ku;         // the Newton matrices of the island are band (kl, ku) matrices
  int bands;                // islands solved in band mode (since init)
  mjtNum* ub0;              // (cap_rows) velocity of the rows without impulse (+ gap terms)
  mjtNum* vfree;            // (cap_rows) m/s, velocity of the rows without impulse (no gap terms)
  mjtNum* ub0_pushout;      // (cap_rows) ub0 with the push-out, kept while drop_pushout
                            // solves without it
  mjtNum* p;                // (cap_rows) row impulses
  mjtNum* ub;               // (cap_rows) row velocities
  mjtNum* ubw;              // (cap_rows) ub0 + W p at eval_z: ub without the proximal term
  mjtNum* G;                // (cap_rows x cap_z) column-major d ub / d z
  mjtNum* z, *F, *lo, *hi;  // (cap_z) MCP unknowns, residual, bounds
  mjtNum* z_failed;         // (cap_z) a failed warm-started answer, while the cold restart runs
  mjtNum* z_start;          // (cap_z) the island's starting point (drop_pushout starts there)
  mjtNum* p_anchor;         // (cap_rows) row impulses of the proximal anchor
  mjtNum* z_anchor;         // (cap_z) scratch: the unknowns at the proximal anchor
  mjtNum* z_scale;          // (cap_z) -: the solver's unknowns are z / z_scale: a normal impulse
                            // scaled by k of its patch / the island's largest k, so that the
                            // natural residual min(z, F) weighs a light body's impulses like a
                            // heavy one's (a 1e-9 kg box on a 200 kg carrier); friction as is
  mjtNum* z_phys;           // (cap_z) scratch: the unknowns in N s of a callback's scaled z
  mjtNum* w_diag;           // (cap_rows) m/s per N s: the diagonal of W, the proximal metric
  mjtNum prox;              // -, proximal weight (0: the problem itself): the row velocities are
                            // ub0 + W p + prox diag(W) (p - p_anchor)
  mjtNum* eval_z;           // (cap_z) the unknowns (N s) of the last residual evaluated, whose p
  mjtNum* eval_F;           // and ub are in p, ub; (cap_z) its residual; valid while eval_valid,
  mjtNum eval_prox;         // with the weight eval_prox and the anchor eval_anchor (the solver
  int eval_anchor;          // evaluates the same point twice: the residual, then the Jacobian
  int eval_valid;           // there; the anchor, with the proximal term and without)
  int anchor_id;            // counts the proximal anchors set (patch_prox)
  void* mcp_work;
  size_t mcp_bytes;
  void* qp_work;            // the separation finish: its problem and cusp_qp_active's workspace
  size_t qp_bytes;
  mjtNum* jac;              // (6 x nv) scratch: jacp, jacr of one body
  mjtNum* jac2;             // (6 x nv) scratch: the other body
  mjtNum* dv;               // (nv) scratch: an island's velocities (free, then its correction)
  mjtNum p_ref;             // N s, impulse scale of the residual rows
  mjtNum k_ref;             // kg, inertia scale of the island (mean over its patches)
  // the Newton step through the island's bodies (newton_by_bodies in patch_solve.c)
  int by_bodies;            // this island's Newton steps may take it
  int bb_nr;                // reduced dofs of the island
  int* bb_int;              // per patch 6 ints (the first of its columns in the column list, its
                            // Jr columns nJ, its X columns nX, the first double of its A blocks,
                            // of its U and Q blocks, of its V block); pivots (nz + nr); marks (nr);
                            // the column list: each patch's Jr columns, then its X columns
  mjtNum* bb_num;           // A and its LU (sum m^2 each, m = a patch's unknowns), U and Q
                            // (sum m nJ each), V (sum nX m), the capacitance (nr^2), 3 nr vectors
  size_t bb_int_cap, bb_num_cap;
  size_t bb_sa, bb_su, bb_sv;  // sum m^2, sum m nJ, sum nX m of the island
  cuspMcpInfo info;         // last solve (iterations: Newton iterations of every inner solve)
  int outer;                // proximal outer iterations of the last solve
  int solves, failures;
} cuspPatchWork;

int cusp_patch_work_init(cuspPatchWork* w, const mjModel* m);
void cusp_patch_work_free(cuspPatchWork* w);
// grow to hold npatch patches, nrows rows and nz unknowns (only allocation after init)
int cusp_patch_work_reserve(cuspPatchWork* w, int npatch, int nrows, int nz);

int cusp_patch_work_init(cuspPatchWork* w, const mjModel* m);
void cusp_patch_work_free(cuspPatchWork* w);
// grow to hold npatch patches, nrows rows and nz unknowns (only allocation after init)
int cusp_patch_work_reserve(cuspPatchWork* w, int npatch, int nrows, int nz);

// ---- the problem (patch_solve.c) ----

// Assemble (rows, Delassus through dyn) and solve the MCP of patches [first, first + count), one
// island, warm-started from the previous step's patches (w->prev), fill their results and write
// the island's velocity correction dv = N Mr^-1 Jr^T p into dv (nv, at the island's dofs only).
// h: time step (s). Returns the solver status (0 solved); on failure the best iterate is used and
// w->failures counts it. *max_pen gets the deepest linearised penetration after the correction (m).
int cusp_patch_solve(cuspPatchWork* w, mjtNum* dv, mjtNum* max_pen, int first, int count,
                     const cuspConfig* cfg, const mjModel* m, const mjData* d, cuspDynamics* dyn,
                     mjtNum h);

// Publish the per-body slots (CUSP_PATCH_NSLOT per registered body) from this step's patches.
// Largest linearised penetration (m, >= 0) of the last solved island's vertices after the
// correction dv (nv_model): max over vertices of -(gap + h J dv). The solve reports it for its own
// dv; the driver asks again when it scales a failed island's correction down.
mjtNum cusp_patch_penetration(cuspPatchWork* w, const cuspDynamics* dyn, const mjtNum* dv,
                              mjtNum h);

void cusp_patch_publish_bodies(mjtNum* slots, const cuspPatchWork* w, const cuspConfig* cfg);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_STEP_PATCH_SOLVE_H_
