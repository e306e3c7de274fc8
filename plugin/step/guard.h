// Guards around the contact step (robustness): bad inputs are refused before the step,
// and a step whose correction would put a non-finite number into MuJoCo's state is undone.
// Either way the free motion is kept, the status and the failure counter are set in the published
// state, and the caller warns once per instance with the text written into `why`.
#ifndef CUSP_PLUGIN_GUARD_H_
#define CUSP_PLUGIN_GUARD_H_

#include <mujoco/mujoco.h>

#include "config/config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspGuard_ {
  int nq, nv;
  mjtNum* qpos;  // (nq) state before the contact step, restored if the step goes non-finite
  mjtNum* qvel;  // (nv)
} cuspGuard;

int cusp_guard_init(cuspGuard* g, const mjModel* m);  // allocates; 0 or -1 (out of memory)
void cusp_guard_free(cuspGuard* g);

// Before the step: registered disks need finite sizes > 0, the geoms they touch and the geoms of
// registered bodies finite sizes >= 0, qpos and qvel finite. Returns 0, or -1 with the status
// (CUSP_LCP_BAD_INPUT) and counter set and the reason (naming the geom or the dof) in why.
// On 0 the state is saved for cusp_guard_after.
int cusp_guard_before(cuspGuard* g, mjtNum* state, const mjModel* m, const mjData* d,
                      const cuspConfig* cfg, char* why, int why_sz);

// After the step: if qpos or qvel is not finite, restores the saved state (the free motion),
// sets status CUSP_LCP_NUMERICAL, counts a failure (unless the step already counted one) and
// returns -1 with the reason in why.
int cusp_guard_after(cuspGuard* g, mjtNum* state, const mjModel* m, mjData* d, char* why,
                     int why_sz);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_GUARD_H_
