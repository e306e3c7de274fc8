// The cusp contact step, run from the plugin's advance() after MuJoCo's free motion
// (docs/architecture.md): kinematics at q*, detection of disk and patch contacts, islands, and per
// island: dynamics (Meff, equality condensation, drift projection), assembly, solve (a disk-only
// island: the conditioned LCP (CUSP 10-13) with any backend; an island with patch rows: the MCP
// over all its rows), correction; then qvel and qpos corrected once and the results published.
#ifndef CUSP_PLUGIN_STEP_H_
#define CUSP_PLUGIN_STEP_H_

#include <mujoco/mujoco.h>

#include "solver/condition.h"
#include "config/config.h"
#include "collide/contact.h"
#include "assemble/dynamics.h"
#include "collide/broadphase.h"
#include "assemble/island.h"
#include "config/params.h"
#include "step/patch_solve.h"

#ifdef __cplusplus
extern "C" {
#endif

// Per-mjData workspace: allocated at init, grown only when a step has more contacts than ever.
typedef struct cuspStepWork_ {
  int capacity;         // contacts the buffers hold
  int r;                // friction directions
  mjtNum* cone;         // (2 r) cos, sin of direction k: d_k = cos t + sin o
  int nv;
  cuspContact* contacts;// (capacity) this step's contacts
  int ncontact;
  // previous step, for warm starts matched by (geom[0], geom[1])
  int* prev_pair;       // (3 capacity) geom[0], geom[1], sub
  mjtNum* prev_fn;      // (capacity)
  mjtNum* prev_beta;    // (capacity r)
  mjtNum* prev_gamma;   // (capacity)
  int nprev;
  // assembly (row-major, reduced rows of stride nr <= nv)
  mjtNum* jac;          // (6 nv) point Jacobians of the two bodies
  mjtNum* Jn_r;         // (capacity x nr) normal rows, reduced coordinates (J N)
  mjtNum* Jto_r;        // (capacity 2 x nr) tangent rows t, o of each contact, reduced (the r
                        //   friction-direction rows are cone[2k] t + cone[2k+1] o)
  mjtNum* bn;           // (capacity) m/s
  mjtNum* vn;           // (capacity) m/s, free normal velocity (bn without its gap term)
  mjtNum* failed;       // (capacity (r + 3)) a failed disk island's bn, fn, beta, gamma, kept
  int* failed_keep;     // (capacity) and its keep, while it is solved again without push-out
  mjtNum* bt;           // (capacity r) m/s
  mjtNum* mu;           // (capacity)
  mjtNum* fn;           // (capacity) N s
  mjtNum* beta;         // (capacity r) N s
  mjtNum* gamma;        // (capacity) m/s
  int* keep;            // (capacity)
  int* pair;            // (capacity) an island's geom-pair groups (cuspContactLcp.pair)
  mjtNum* g;            // (nv) generalized impulse, reduced
  mjtNum* dv;           // (nv) velocity correction of every island
  mjtNum* dv_drift;     // (nv) equality drift removed from the free velocity
  cuspContact* sorted;  // (capacity) scratch: contacts reordered by island
  void* solver_work;
  size_t solver_bytes;
  cuspIslands isl;
  cuspParams params;    // contact parameter tables resolved at init
  cuspBroadphase bp;    // this step's candidate pairs
  cuspDynamics* dyn;    // (ndyn) dynamics of island k in slot k (cached basis per slot)
  int ndyn;
  int* island_contact;  // (ntree + 2) first disk contact of each island (prefix sums)
  int* island_patch;    // (ntree + 2) first patch of each island (prefix sums)
  int* island_flag;     // (ntree + 2) island has patch rows
  int* island_cursor;   // (ntree + 2) scratch
  cuspConditionOptions cond_opt;  // the disk islands' conditioning options (from the config)
  cuspConditionInfo info;  // last LCP solve
  double solve_seconds;    // wall time of the disk islands' solves since reset (reduced tries
                           // and full solves; profiling only, never part of the state)
  mjtNum work_left;        // work units this step's disk-island backend runs may still spend
                           // (from step_work_budget; they share it through the LCP options)
  mjtNum solve_work;       // work units the last step's disk-island backend runs spent
  cuspPatchWork patch;     // patch contact: patches, rigid point contacts, MCP
  // the kinematic arrays saved and restored around the step, as one span of d's buffer
  const void* kin_buffer;  // d->buffer the span was found in (NULL: not looked at yet)
  size_t kin_span;         // mjtNum from d->xpos (0: not one span, array by array)
  // RK4: the configuration at the start of the step (cusp_step_record_start)
  mjtNum* q_start;      // (nq)
  mjtNum* q_euler;      // (nq) scratch: q_start (+) h v*
  mjtNum t_start;       // s
  int have_start;
} cuspStepWork;

// The conditioning pipeline's options (stages, backend, tolerance, iterations, warm start,
// fallback) as the contact config sets them: one place for the step and the controllers.
cuspConditionOptions cusp_step_condition_options(const cuspConfig* cfg);

int cusp_step_init(cuspStepWork* w, const mjModel* m, const cuspConfig* cfg);
void cusp_step_free(cuspStepWork* w);
void cusp_step_reset(cuspStepWork* w);

// RK4 only (mj_RungeKutta advances q by h times the step's mean velocity, not by h v*): record
// the configuration the step starts from, called from the plugin's compute callback. The earliest
// call of a step is its start (the stages run later in time); cusp_step_forget_start after the
// step. Trees a registered object may touch then take q = q_start (+) h v* (cusp_step), the
// position the semi-implicit correction assumes; other trees keep RK4's.
void cusp_step_record_start(cuspStepWork* w, const mjModel* m, const mjData* d);
void cusp_step_forget_start(cuspStepWork* w);
// dst (initialised for the same model and config) := the history of src that the next step reads
// (warm-start impulses) and the last step's contacts and patches (sensors, drawing), so that two
// copies of an mjData step identically. 0, or -1 (out of memory).
int cusp_step_copy_history(cuspStepWork* dst, const cuspStepWork* src);

// One contact step. state: the instance's published state (CUSP_NSTATE). Returns 0, or -1 when
// the solve failed this step (counted in state; the free motion is kept).
int cusp_step(cuspStepWork* w, mjtNum* state, const mjModel* m, mjData* d, const cuspConfig* cfg);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_STEP_H_
