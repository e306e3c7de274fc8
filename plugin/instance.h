// Per-mjData state of one cusp.contact instance, and the layout of its published state vector.
#ifndef CUSP_PLUGIN_INSTANCE_H_
#define CUSP_PLUGIN_INSTANCE_H_

#include <mujoco/mujoco.h>

#include "config.h"
#include "state.h"
#include "guard.h"
#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif


typedef struct cuspInstance_ {
  cuspConfig cfg;      // validated configuration
  cuspStepWork work;   // per-step workspace and last step's contacts
  cuspGuard guard;     // input checks and undo around the step (issue 8)
  int warned;          // one warning per instance for numerical trouble
  // what the last step left, to notice a state set from outside (mj_setState, mujoco.rollout):
  // the warm start is then dropped, so results depend on the mjData's state alone
  mjtNum last_steps;   // state[CUSP_STATE_STEPS] after the last step
  mjtNum next_time;    // s, d->time the next step will see if nobody sets the state
} cuspInstance;

// version check: 0 if the library and headers agree, else -1 and a message with both
int cusp_check_version(int library_version, int header_version, char* msg, int msg_sz);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_INSTANCE_H_
