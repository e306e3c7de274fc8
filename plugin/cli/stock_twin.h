// The stock twin of a scene: the same mjSpec with every cusp.contact instance removed and every
// geom it registered colliding in MuJoCo again (contype = conaffinity = 1). Made in memory.
#ifndef CUSP_PLUGIN_STOCK_TWIN_H_
#define CUSP_PLUGIN_STOCK_TWIN_H_

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

// Edits spec in place. Returns the number of geoms turned on (>= 0), or -1 with a message.
// The spec must compile with the plugin loaded (its config names the registered geoms).
int cusp_stock_twin(mjSpec* spec, char* err, int err_sz);

// Index of the first cusp.contact instance of m, or -1.
int cusp_find_instance(const mjModel* m);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_STOCK_TWIN_H_
