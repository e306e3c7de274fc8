// Registration of the cusp.contact engine plugin and its callbacks.
// The step itself (detection, assembly, solve, correction) happens in advance(), after MuJoCo has
// integrated the free motion: see design.md section 2.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "config.h"
#include "instance.h"
#include "patch.h"  // patch contact (issue 6)
#include "lapack_shim.h"
#include "lcp.h"
#include "sensors.h"
#include "visualize.h"

int cusp_check_version(int library_version, int header_version, char* msg, int msg_sz) {
  if (library_version == header_version) return 0;
  snprintf(msg, msg_sz,
           "cusp.contact: libmujoco version %d differs from the headers the plugin was built "
           "with (%d); rebuild cusp against the pinned MuJoCo",
           library_version, header_version);
  return -1;
}

static cuspInstance* get_instance(const mjData* d, int instance) {
  return (cuspInstance*)d->plugin_data[instance];
}

//---------------------------------- callbacks ------------------------------------------------------

static int cusp_nstate(const mjModel* m, int instance) {
  // patch contact (issue 6): CUSP_PATCH_NSLOT observables per registered rigid body follow
  return CUSP_NSTATE + CUSP_PATCH_NSLOT * cusp_patch_nbody(m, instance);
}

static int cusp_init(const mjModel* m, mjData* d, int instance) {
  char msg[1024];
  if (cusp_check_version(mj_version(), mjVERSION_HEADER, msg, sizeof(msg))) {
    mju_warning("%s", msg);
    return -1;
  }
  cuspInstance* inst = (cuspInstance*)calloc(1, sizeof(cuspInstance));
  if (!inst) {
    mju_warning("cusp.contact: out of memory");
    return -1;
  }
  if (cusp_config_parse(&inst->cfg, m, instance, msg, sizeof(msg))) {
    mju_warning("%s", msg);
    free(inst);
    return -1;
  }
  if (cusp_sensor_validate(m, instance, &inst->cfg, msg, sizeof(msg))) {
    mju_warning("%s", msg);
    cusp_config_free(&inst->cfg);
    free(inst);
    return -1;
  }
  if (cusp_step_init(&inst->work, m, &inst->cfg) || cusp_guard_init(&inst->guard, m)) {
    mju_warning("cusp.contact: out of memory for the step workspace");
    cusp_guard_free(&inst->guard);
    cusp_step_free(&inst->work);
    cusp_config_free(&inst->cfg);
    free(inst);
    return -1;
  }
  d->plugin_data[instance] = (uintptr_t)inst;
  return 0;
}

static void cusp_destroy(mjData* d, int instance) {
  cuspInstance* inst = get_instance(d, instance);
  if (!inst) return;
  cusp_guard_free(&inst->guard);
  cusp_step_free(&inst->work);
  cusp_config_free(&inst->cfg);
  free(inst);
  d->plugin_data[instance] = 0;
}

static void cusp_reset(const mjModel* m, mjtNum* plugin_state, void* plugin_data, int instance) {
  memset(plugin_state, 0, cusp_nstate(m, instance) * sizeof(mjtNum));
  cuspInstance* inst = (cuspInstance*)plugin_data;
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
  const cuspInstance* inst = get_instance(d, instance);
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
  cuspInstance* inst = get_instance(d, instance);
  if (state[CUSP_STATE_STEPS] != inst->last_steps || d->time != inst->next_time) {
    cusp_step_reset(&inst->work);  // state set from outside since the last step: no warm start
  }
  // guards (guard.h): bad inputs skip the step, a non-finite result is undone
  char why[512] = "";
  int failed = cusp_guard_before(&inst->guard, state, m, d, &inst->cfg, why, sizeof(why)) ||
               cusp_step(&inst->work, state, m, d, &inst->cfg);
  if (!why[0]) failed |= cusp_guard_after(&inst->guard, state, m, d, why, sizeof(why));
  inst->last_steps = state[CUSP_STATE_STEPS];
  inst->next_time = d->time + m->opt.timestep;
  if (failed && !inst->warned) {
    inst->warned = 1;
    mju_warning("cusp.contact: contact solve failed at t = %g s (status %d: %s)%s%s; counted in "
                "solver_failures, further failures of this instance are not reported",
                d->time, (int)state[CUSP_STATE_STATUS],
                cusp_lcp_status_string((cuspLcpStatus)state[CUSP_STATE_STATUS]),
                why[0] ? ": " : "", why);
  }
  cusp_sensor_fill(m, d, instance, inst);  // so that after mj_step they are this step's
}

static void cusp_visualize(const mjModel* m, mjData* d, const mjvOption* opt, mjvScene* scn,
                           int instance) {
  const cuspInstance* inst = get_instance(d, instance);
  if (!inst || !inst->cfg.visualize) return;
  cusp_visualize_step(scn, opt, inst->work.contacts, inst->work.ncontact, inst->work.patch.patch,
                      inst->work.patch.npatch, m->opt.timestep, inst->cfg.force_scale);
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
  int nkey = cusp_config_nkey();
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
  plugin.reset = cusp_reset;
  plugin.compute = cusp_compute;
  plugin.advance = cusp_advance;
  plugin.visualize = cusp_visualize;
  mjp_registerPlugin(&plugin);
}
