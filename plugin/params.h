// Contact parameters, one function per fact (MuJoCo's mj_contactParam is the model): every
// detector and the driver ask here, so disks and patches cannot disagree.
#ifndef CUSP_PLUGIN_PARAMS_H_
#define CUSP_PLUGIN_PARAMS_H_

#include <mujoco/mujoco.h>

#include "config.h"

#ifdef __cplusplus
extern "C" {
#endif

// Friction coefficient of a contact between geoms g1 and g2: the `friction` config key when set
// (>= 0), else the larger sliding friction of the two geoms (MuJoCo's default combination).
static inline mjtNum cusp_pair_friction(const cuspConfig* cfg, const mjModel* m, int g1, int g2) {
  if (cfg->friction >= 0) return cfg->friction;
  mjtNum a = m->geom_friction[3 * g1], b = m->geom_friction[3 * g2];
  return a > b ? a : b;
}

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_PARAMS_H_
