// The plugin callbacks and registration the controller plugins (cusp.avoid, cusp.inverse) share.
// A controller describes itself once (name, key table, state slots, how its per-mjData object
// is built and freed, its own control callbacks); the shared part owns the object through the
// registry (control_registry.h: found by (mjData, instance), never through d->plugin_data, which
// pickles and byte copies carry to other mjData), zeroes the state on reset, and counts failed
// steps at advance with one warning per object.
#ifndef CUSP_PLUGIN_CONTROL_PLUGIN_H_
#define CUSP_PLUGIN_CONTROL_PLUGIN_H_

#include <mujoco/mujoco.h>

#include "config/keys.h"
#include "control/control_registry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspControlPlugin_ {
  const char* name;     // "cusp.avoid"
  const cuspKey* keys;  // its config keys: the attributes it declares to MuJoCo
  int nstate;           // its plugin_state slots, zeroed on reset
  // its object of one mjData: built from the model's config (NULL with a one-line message in err)
  void* (*create)(const mjModel* m, int instance, char* err, int err_sz);
  cuspControlFreeFn free;
  // its state slots counted at advance; started_slot (-1: none) is set to 1 at the first one
  int started_slot, steps_slot, failures_slot, status_slot, last_failed_slot;
  // the warning at the first failed step: "<name>: <failure> failed at t = ... s (status ...);
  // <fallback>; counted in the failures slot, ..."
  const char* failure;   // "avoidance LCP"
  const char* fallback;  // "the joints held their pose"
  // its control callbacks, given its object: the actuator forces (mjPLUGIN_ACTUATOR's compute),
  // and the actuators' activation rates (NULL: none)
  void (*compute)(void* object, const mjModel* m, mjData* d, int instance);
  void (*act_dot)(void* object, const mjModel* m, mjData* d, int instance);
} cuspControlPlugin;

// Register p (static storage: it is kept) with MuJoCo as an actuator plugin.
void cusp_control_plugin_register(const cuspControlPlugin* p);

// The object of (d, instance), built and registered if d has none (an mjData whose init never ran
// for this instance: a byte copy); d->plugin_data repaired. NULL (with a warning) if that fails.
void* cusp_control_plugin_object(const cuspControlPlugin* p, const mjModel* m, mjData* d,
                                 int instance);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_CONTROL_PLUGIN_H_
