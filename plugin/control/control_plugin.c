// The controller plugins' shared callbacks and registration (control_plugin.h).
#include "control/control_plugin.h"

#include <stdint.h>
#include <stdio.h>

#include "solver/lcp.h"

#define CUSP_MAX_CONTROL_PLUGIN 8
#define CUSP_MAX_CONTROL_KEY 64

// the registered controllers and their MuJoCo plugin slots (written once, at library load)
static const cuspControlPlugin* registered[CUSP_MAX_CONTROL_PLUGIN];
static int registered_slot[CUSP_MAX_CONTROL_PLUGIN];
static int nregistered = 0;

// the controller of plugin instance `instance` of m (MuJoCo's callbacks carry no pointer of ours)
static const cuspControlPlugin* plugin_of(const mjModel* m, int instance) {
  for (int i = 0; i < nregistered; i++) {
    if (registered_slot[i] == m->plugin[instance]) return registered[i];
  }
  return NULL;
}

void* cusp_control_plugin_object(const cuspControlPlugin* p, const mjModel* m, mjData* d,
                                 int instance) {
  void* object = cusp_control_registry_find(d, instance);
  if (!object) {
    char err[1024];
    object = p->create(m, instance, err, sizeof(err));
    if (!object || cusp_control_registry_add(d, instance, object, p->free)) {
      if (object) {
        mju_warning("%s: out of memory", p->name);
      } else {
        mju_warning("%s", err);
      }
      return NULL;
    }
  }
  d->plugin_data[instance] = (uintptr_t)object;
  return object;
}

//---------------------------------- callbacks ------------------------------------------------------

static int control_nstate(const mjModel* m, int instance) {
  const cuspControlPlugin* p = plugin_of(m, instance);
  return p ? p->nstate : 0;
}

static int control_init(const mjModel* m, mjData* d, int instance) {
  const cuspControlPlugin* p = plugin_of(m, instance);
  if (!p) return -1;
  char err[1024];
  void* object = p->create(m, instance, err, sizeof(err));
  if (!object) {
    mju_warning("%s", err);
    return -1;
  }
  if (cusp_control_registry_add(d, instance, object, p->free)) {
    mju_warning("%s: out of memory", p->name);
    return -1;
  }
  d->plugin_data[instance] = (uintptr_t)object;
  return 0;
}

static void control_destroy(mjData* d, int instance) {
  cusp_control_registry_remove(d, instance);
  d->plugin_data[instance] = 0;
}

static void control_reset(const mjModel* m, mjtNum* plugin_state, void* plugin_data,
                          int instance) {
  (void)plugin_data;
  const cuspControlPlugin* p = plugin_of(m, instance);
  if (p) mju_zero(plugin_state, p->nstate);
}

static void control_act_dot(const mjModel* m, mjData* d, int instance) {
  const cuspControlPlugin* p = plugin_of(m, instance);
  void* object = p ? cusp_control_plugin_object(p, m, d, instance) : NULL;
  if (object) p->act_dot(object, m, d, instance);
}

static void control_compute(const mjModel* m, mjData* d, int instance, int capability_bit) {
  if (!(capability_bit & mjPLUGIN_ACTUATOR)) return;
  const cuspControlPlugin* p = plugin_of(m, instance);
  void* object = p ? cusp_control_plugin_object(p, m, d, instance) : NULL;
  if (object) p->compute(object, m, d, instance);
}

// the step counted; a failed one also in the failures slot, the first with a warning
static void control_advance(const mjModel* m, mjData* d, int instance) {
  const cuspControlPlugin* p = plugin_of(m, instance);
  if (!p) return;
  void* object = cusp_control_plugin_object(p, m, d, instance);
  mjtNum* state = d->plugin_state + m->plugin_stateadr[instance];
  if (p->started_slot >= 0) state[p->started_slot] = 1;
  state[p->steps_slot] += 1;
  if (!state[p->last_failed_slot]) return;
  state[p->failures_slot] += 1;
  if (object && cusp_control_registry_first_warning(d, instance)) {
    mju_warning("%s: %s failed at t = %g s (status %d: %s); %s; counted in the failures slot, "
                "further failures of this instance are not reported",
                p->name, p->failure, d->time, (int)state[p->status_slot],
                cusp_lcp_status_string((cuspLcpStatus)state[p->status_slot]), p->fallback);
  }
}

//---------------------------------- registration ---------------------------------------------------

void cusp_control_plugin_register(const cuspControlPlugin* p) {
  static const char* attributes[CUSP_MAX_CONTROL_PLUGIN][CUSP_MAX_CONTROL_KEY];
  int nkey = cusp_key_count(p->keys);
  if (nregistered == CUSP_MAX_CONTROL_PLUGIN || nkey > CUSP_MAX_CONTROL_KEY) {
    mju_warning("%s: not registered (more controllers or keys than the library holds)", p->name);
    return;
  }
  for (int k = 0; k < nkey; k++) attributes[nregistered][k] = p->keys[k].key;
  mjpPlugin plugin;
  mjp_defaultPlugin(&plugin);
  plugin.name = p->name;
  plugin.capabilityflags = mjPLUGIN_ACTUATOR;
  plugin.nattribute = nkey;
  plugin.attributes = attributes[nregistered];
  plugin.nstate = control_nstate;
  plugin.init = control_init;
  plugin.destroy = control_destroy;
  plugin.reset = control_reset;
  if (p->act_dot) plugin.actuator_act_dot = control_act_dot;
  plugin.compute = control_compute;
  plugin.advance = control_advance;
  registered[nregistered] = p;
  registered_slot[nregistered] = mjp_registerPlugin(&plugin);
  nregistered++;
}
