// Configuration of the controller plugins (cusp.avoid): a key table per plugin with unit, default
// and range, parsed and validated in one place at load; a bad value fails the load with one line
// naming the plugin, the key and the value.
#ifndef CUSP_PLUGIN_CONTROL_CONFIG_H_
#define CUSP_PLUGIN_CONTROL_CONFIG_H_

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cuspControlKeyType_ {
  CUSP_CONTROL_REAL = 0,  // a finite number in [min, max]
  CUSP_CONTROL_CHOICE,    // one word out of a '|'-separated list
  CUSP_CONTROL_SITES,     // space-separated site names that must exist
  CUSP_CONTROL_GEOMS,     // space-separated geom names that must exist
  CUSP_CONTROL_SITE,      // one site name that must exist
  CUSP_CONTROL_BODY,      // one body name that must exist
  CUSP_CONTROL_BODIES,    // space-separated body names that must exist
  CUSP_CONTROL_REALS      // space-separated finite numbers, each in [min, max]
} cuspControlKeyType;

typedef struct cuspControlKey_ {
  const char* key;            // config key as written in MJCF
  cuspControlKeyType type;
  const char* default_value;  // as text; "" for "required" (names) or an empty list
  double min, max;            // range for REAL (inclusive)
  const char* choices;        // for CHOICE: "a|b|c"
  const char* unit;           // unit, or "-" for dimensionless
  const char* doc;            // one-line description
  int optional;               // 1: an empty value is allowed (documented as "(empty)")
} cuspControlKey;

// One parsed value: a number, a choice index, or a list of object ids (owned, free with
// cusp_control_value_free).
typedef struct cuspControlValue_ {
  mjtNum real;
  int choice;
  int* ids;  // (nid) site/geom/body ids
  int nid;
  mjtNum* reals;  // (nreal) numbers of a REALS key
  int nreal;
} cuspControlValue;

int cusp_control_nkey(const cuspControlKey* keys);  // keys terminated by {NULL}

// Parse every key of `keys` (nkey of them) for plugin `plugin` (its name, for messages) of
// instance `instance`: values[k] gets key k. 0, or -1 with "plugin: config key 'K' has value
// 'V': why" in err (the values are then freed).
int cusp_control_parse(cuspControlValue* values, const cuspControlKey* keys, const char* plugin,
                       const mjModel* m, int instance, char* err, int err_sz);
void cusp_control_values_free(cuspControlValue* values, int nkey);

// "plugin: config key 'K' has value 'V': why" into err; returns -1
int cusp_control_fail(char* err, int err_sz, const char* plugin, const char* key,
                      const char* value, const char* why);

// Markdown table of a key table (for mjcf/README.md; a test keeps the two in step)
int cusp_control_markdown(char* out, int out_sz, const cuspControlKey* keys);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_CONTROL_CONFIG_H_
