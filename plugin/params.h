// Contact parameters, resolved once at init into tables, one function per fact (MuJoCo's
// mj_contactParam is the model): every detector and the driver ask here, so disks and patches
// cannot disagree about what touches what or with which friction.
#ifndef CUSP_PLUGIN_PARAMS_H_
#define CUSP_PLUGIN_PARAMS_H_

#include <mujoco/mujoco.h>

#include "config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspParams_ {
  int* disk_of_geom;       // (ngeom) index in cfg->disk_geoms, -1: not a disk
  int* patch_of_body;      // (nbody) index in cfg->patch_bodies, -1: not registered
  unsigned char* obstacle; // (ngeom) 1: a registered geom of another body may touch this geom
} cuspParams;

int cusp_params_init(cuspParams* p, const cuspConfig* cfg, const mjModel* m);
void cusp_params_free(cuspParams* p);

// The one touch rule for registered geoms (a disk, or a geom of a patch body): whether `self` may
// touch geom `other`. Never a geom of its own body, never a registered disk (disk-disk contact is
// not modelled); always a geom of a registered patch body (contype 0 as registered, yet solid);
// otherwise the configured environment list, or, when it is empty, every geom MuJoCo could
// collide (contype or conaffinity nonzero): a purely visual geom is never an obstacle.
static inline int cusp_touches(const cuspParams* p, const mjModel* m, int self, int other) {
  return p->obstacle[other] && m->geom_bodyid[other] != m->geom_bodyid[self];
}

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
