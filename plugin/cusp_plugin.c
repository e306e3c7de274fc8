// Registration of the cusp.contact engine plugin and its callbacks.
// The step itself (detection, assembly, solve, correction) happens in advance(), after MuJoCo has
// integrated the free motion: see docs/architecture.md.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "control/avoid.h"  // the controller plugins (control/) on the same library
#include "control/inverse.h"
#include "config/config.h"
#include "instance.h"
#include "collide/patch.h"
#include "solver/lapack_shim.h"
#include "solver/lcp.h"
#include "publish/sensors.h"
#include "publish/visualize.h"

int cusp_check_version(int library_version, int header_version, char* msg, int msg_sz) {
  if (library_version == header_version) return 0;
  snprintf(msg, msg_sz,
           "cusp.contact: libmujoco version %d differs from the headers the plugin was built "
           "with (%d); rebuild cusp against the pinned MuJoCo",
           library_version, header_version);
  return -1;
}

// The instance of (d, instance), found in the registry (instance.h): d->plugin_data may hold a
// pointer copied from another mjData (Python's pickle) and is repaired, never read through.
// Rebuilt from the model's config if d has none; NULL (with one warning) only if that fails.
static cuspInstance* get_instance(const mjModel* m, mjData* d, int instance) {
  char msg[1024];
  cuspInstance* inst = cusp_instance_get(m, d, instance, msg, sizeof(msg));
  if (!inst) mju_warning("%s", msg);
  return inst;
}

//---------------------------------- callbacks ------------------------------------------------------

static int cusp_nstate(const mjModel* m, int instance) {
  // patch contact: CUSP_PATCH_NSLOT observables per registered rigid body follow
  return CUSP_NSTATE + CUSP_PATCH_NSLOT * cusp_patch_nbody(m, instance);
}

static int cusp_init(const mjModel* m, mjData* d, int instance) {
  char msg[1024];
  if (cusp_check_version(mj_version(), mjVERSION_HEADER, msg, sizeof(msg))) {
    mju_warning("%s", msg);
    return -1;
  }
  // an instance d already owns (init called twice for one mjData) is replaced, not leaked
  cusp_instance_destroy(d, instance);
  cuspInstance* inst = cusp_instance_create(m, d, instance, msg, sizeof(msg));
  if (!inst) {
    mju_warning("%s", msg);
    return -1;
  }
  d->plugin_data[instance] = (uintptr_t)inst;
  return 0;
}

static void cusp_destroy(mjData* d, int instance) {
  // failed solves nobody summarised (a run of cusp-sim or cusp.run does): one warning
  const cuspInstance* inst = cusp_instance_find(d, instance);
  char line[512];
  if (inst && cusp_failure_line(line, sizeof(line), inst->unreported.failures,
                                inst->unreported.steps, inst->unreported.first_time,
                                inst->unreported.first_status, inst->unreported.worst_status)) {
    mju_warning("%s (summary at mj_deleteData)", line);
  }
  // frees only the instance registered for d, whatever d->plugin_data says: a pickled copy whose
  // plugin_data still names the original's instance must not free it a second time
  cusp_instance_destroy(d, instance);
}

// mj_copyData(dest, m, src): dest keeps its own instance (MuJoCo restores dest->plugin_data
// around the copy) and gets src's configuration and history, so that both step alike
static void cusp_copy(mjData* dest, const mjModel* m, const mjData* src, int instance) {
  cuspInstance* to = get_instance(m, dest, instance);
  const cuspInstance* from = cusp_instance_find(src, instance);
  if (to && from && cusp_instance_copy(to, m, from)) {
    mju_warning("cusp.contact: out of memory copying an instance; the copy starts without warm "
                "start");
  }
}

static void cusp_reset(const mjModel* m, mjtNum* plugin_state, void* plugin_data, int instance) {
  (void)plugin_data;  // maybe another mjData's (see get_instance): found by the state instead
  memset(plugin_state, 0, cusp_nstate(m, instance) * sizeof(mjtNum));
  cuspInstance* inst = cusp_instance_find_state(m, plugin_state, instance);
  if (inst) {
    // inst->warned survives resets: one warning per instance, not per episode (MuJoCo resets
    // mjData itself on a diverging state, possibly every step)
    inst->last_steps = 0;
    inst->next_time = 0;
    cusp_step_reset(&inst->work);
  }
}

static void cusp_compute(const mjModel* m, mjData* d, int instance, int capability_bit) {
  // contact impulses are applied in advance(): nothing to add to the passive forces; sensors
  // report the last step's results
  cuspInstance* inst = get_instance(m, d, instance);
  if (inst && (capability_bit & mjPLUGIN_PASSIVE)) cusp_step_record_start(&inst->work, m, d);
  if (inst && (capability_bit & mjPLUGIN_SENSOR)) cusp_sensor_fill(m, d, instance, inst);
}

static int cusp_nsensordata(const mjModel* m, int instance, int sensor_id) {
  (void)m;
  (void)instance;
  (void)sensor_id;
  return CUSP_SENSOR_DIM;
}

static void cusp_advance(const mjModel* m, mjData* d, int instance) {
  mjtNum* state = d->plugin_state + m->plugin_stateadr[instance];
  cuspInstance* inst = get_instance(m, d, instance);
  if (!inst) return;  // out of memory rebuilding it: warned; the step stays MuJoCo's
  if (state[CUSP_STATE_STEPS] != inst->last_steps || d->time != inst->next_time) {
    cusp_step_reset(&inst->work);  // state set from outside since the last step: no warm start
  }
  // guards (guard.h): bad inputs skip the step, a non-finite result is undone
  char why[512] = "";
  mjtNum failures_before = state[CUSP_STATE_SOLVER_FAILURES];
  int failed = cusp_guard_before(&inst->guard, state, m, d, &inst->cfg, why, sizeof(why)) ||
               cusp_step(&inst->work, state, m, d, &inst->cfg);
  if (!why[0]) failed |= cusp_guard_after(&inst->guard, state, m, d, why, sizeof(why));
  cusp_step_forget_start(&inst->work);
  inst->last_steps = state[CUSP_STATE_STEPS];
  inst->next_time = d->time + m->opt.timestep;
  cusp_instance_note_step(inst, state, failures_before, d->time);
  if (failed && !inst->warned) {
    inst->warned = 1;
    mju_warning("cusp.contact: contact solve failed at t = %g s (status %d: %s)%s%s; counted in "
                "solver_failures, further failures of this instance are summarised when the run ends or its mjData is freed",
                d->time, (int)state[CUSP_STATE_STATUS],
                cusp_lcp_status_string((cuspLcpStatus)state[CUSP_STATE_STATUS]),
                why[0] ? ": " : "", why);
  }
  cusp_sensor_fill(m, d, instance, inst);  // so that after mj_step they are this step's
}

static void cusp_visualize(const mjModel* m, mjData* d, const mjvOption* opt, mjvScene* scn,
                           int instance) {
  const cuspInstance* inst = get_instance(m, d, instance);
  if (!inst || !inst->cfg.visualize) return;
  const cuspMarkerSize size = cusp_marker_size(m);
  cusp_visualize_step(scn, opt, inst->work.contacts, inst->work.ncontact, inst->work.patch.set.patch,
                      inst->work.patch.set.npatch, m->opt.timestep, inst->cfg.force_scale, &size);
}

//---------------------------------- registration ---------------------------------------------------

mjPLUGIN_LIB_INIT(cusp) {
  char msg[512];
  if (cusp_check_version(mj_version(), mjVERSION_HEADER, msg, sizeof(msg))) {
    // still register, so that loading a scene fails with this message instead of "unknown plugin"
    mju_warning("%s", msg);
  }
  cusp_blas_single_thread();  // small matrices: BLAS threads only cost (see lapack_shim.h)
  static const char* attributes[128];
  int nkey = cusp_key_count(cusp_config_keys);
  for (int i = 0; i < nkey; i++) attributes[i] = cusp_config_keys[i].key;

  mjpPlugin plugin;
  mjp_defaultPlugin(&plugin);
  plugin.name = "cusp.contact";
  plugin.capabilityflags = mjPLUGIN_PASSIVE | mjPLUGIN_SENSOR;
  plugin.needstage = mjSTAGE_POS;  // sensors only copy the last step's results
  plugin.nsensordata = cusp_nsensordata;
  plugin.nattribute = nkey;
  plugin.attributes = attributes;
  plugin.nstate = cusp_nstate;
  plugin.init = cusp_init;
  plugin.destroy = cusp_destroy;
  plugin.copy = cusp_copy;
  plugin.reset = cusp_reset;
  plugin.compute = cusp_compute;
  plugin.advance = cusp_advance;
  plugin.visualize = cusp_visualize;
  mjp_registerPlugin(&plugin);
  cusp_avoid_register();
  cusp_inverse_register();
}
