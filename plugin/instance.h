// Per-mjData state of one cusp.contact instance, and the layout of its published state vector.
#ifndef CUSP_PLUGIN_INSTANCE_H_
#define CUSP_PLUGIN_INSTANCE_H_

#include <mujoco/mujoco.h>

#include "config/config.h"
#include "state.h"
#include "step/guard.h"
#include "step/step.h"

#ifdef __cplusplus
extern "C" {
#endif


// Failed solves of an instance not summarised yet: kept over resets, cleared by a run's summary
// (cusp_sim_run, for cusp-sim and cusp.run); whatever is left warns once when the mjData is freed.
typedef struct cuspFailureLog_ {
  mjtNum failures;      // failed solves (the increments of state[CUSP_STATE_SOLVER_FAILURES])
  mjtNum steps;         // steps advanced
  mjtNum first_time;    // s, d->time of the first failed solve
  int first_status;     // its cuspLcpStatus
  int worst_status;     // the largest status of a failed solve
} cuspFailureLog;

typedef struct cuspInstance_ {
  cuspConfig cfg;      // validated configuration
  cuspStepWork work;   // per-step workspace and last step's contacts
  cuspGuard guard;     // input checks and undo around the step
  int warned;          // one warning per instance for numerical trouble
  cuspFailureLog unreported;  // failed solves not summarised by a run (cusp_sim_run) yet
  // what the last step left, to notice a state set from outside (mj_setState, mujoco.rollout):
  // the warm start is then dropped, so results depend on the mjData's state alone
  mjtNum last_steps;   // state[CUSP_STATE_STEPS] after the last step
  mjtNum next_time;    // s, d->time the next step will see if nobody sets the state
  // the mjData and instance index this instance belongs to (see "Ownership" below)
  const mjData* owner;
  int index;
} cuspInstance;

// version check: 0 if the library and headers agree, else -1 and a message with both
int cusp_check_version(int library_version, int header_version, char* msg, int msg_sz);

//---------------------------------- ownership ------------------------------------------------------
// d->plugin_data[i] is a raw pointer that MuJoCo and its bindings copy as bytes: Python's pickle
// writes it out and its unpickling writes it over the instance that mj_makeData had just made
// (the loaded data then holds a pointer of another mjData, or of another process), and any code
// that copies plugin_data by hand does the same. So the plugin never trusts d->plugin_data: every
// live instance is kept in a process-wide registry with the mjData that owns it, callbacks find
// the instance by (d, index), repair d->plugin_data, and only ever free an instance they find
// there. A pointer that is not in the registry is never dereferenced.

// Parse the config of instance `index` of m, allocate an instance for d and register it (the
// caller stores it in d->plugin_data). NULL with a one-line message in err on failure.
cuspInstance* cusp_instance_create(const mjModel* m, const mjData* d, int index, char* err,
                                   int err_sz);

// The registered instance owned by (d, index); NULL if there is none.
cuspInstance* cusp_instance_find(const mjData* d, int index);

// The registered instance whose owner's published state is `state` (for MuJoCo's reset
// callback, which gets neither d nor a trustworthy plugin_data); NULL if there is none.
cuspInstance* cusp_instance_find_state(const mjModel* m, const mjtNum* state, int index);

// The instance of (d, index): the registered one, or, if d has none (an mjData whose
// instances were never made for it), a new one built from m's config. d->plugin_data[index] is
// set to it. NULL only if a new one could not be built (err gets why).
cuspInstance* cusp_instance_get(const mjModel* m, mjData* d, int index, char* err, int err_sz);

// Make dst (an instance of another mjData of the same model) a copy of src: the same
// configuration and the history the next step reads (warm start, last contacts and patches,
// counters), so that both step identically. 0, or -1 (out of memory: dst then starts cold).
int cusp_instance_copy(cuspInstance* dst, const mjModel* m, const cuspInstance* src);

// Unregister and free the instance owned by (d, index), if any; d->plugin_data[index] := 0.
void cusp_instance_destroy(mjData* d, int index);

// After a step of inst: inst->unreported updated from the growth of
// state[CUSP_STATE_SOLVER_FAILURES] since `failures_before` (its value before the step) and the
// step's state[CUSP_STATE_STATUS]; time: d->time of the step (s).
void cusp_instance_note_step(cuspInstance* inst, const mjtNum* state, mjtNum failures_before,
                             mjtNum time);

// One line summarising `failures` failed solves in `steps` steps, the first at first_time (s)
// with first_status, the worst worst_status: "cusp.contact: 3 failed contact solves in 1000
// steps (solver_failures); the first at t = 0.124 s (max_iter), the worst max_iter". The
// number of characters written (0 when failures == 0: nothing to say).
int cusp_failure_line(char* out, int out_sz, mjtNum failures, mjtNum steps, mjtNum first_time,
                      int first_status, int worst_status);

// Number of registered instances (tests).
int cusp_instance_count(void);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_INSTANCE_H_
