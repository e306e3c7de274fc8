// Contact markers for the viewer.
#include "visualize.h"

void cusp_mode_rgba(float rgba[4], int mode) {
  static const float colour[3][4] = {
      {0.1f, 0.8f, 0.1f, 1},  // break: green
      {0.1f, 0.3f, 1.0f, 1},  // stick: blue
      {1.0f, 0.1f, 0.1f, 1},  // slide: red
  };
  int k = (mode >= 0 && mode < 3) ? mode : 0;
  for (int i = 0; i < 4; i++) rgba[i] = colour[k][i];
}

void cusp_visualize_contacts(mjvScene* scn, const cuspContact* c, int n, mjtNum timestep,
                             mjtNum force_scale) {
  for (int i = 0; i < n; i++) {
    float rgba[4];
    cusp_mode_rgba(rgba, c[i].mode);
    if (scn->ngeom >= scn->maxgeom) return;
    mjvGeom* point = scn->geoms + scn->ngeom++;
    const mjtNum size[3] = {0.004, 0.004, 0.004};
    mjv_initGeom(point, mjGEOM_SPHERE, size, c[i].pos, NULL, rgba);
    point->category = mjCAT_DECOR;
    mjtNum force = c[i].impulse_n / timestep;  // N
    mjtNum length = force_scale * force;       // m
    if (length <= 1e-6 || scn->ngeom >= scn->maxgeom) continue;
    mjvGeom* arrow = scn->geoms + scn->ngeom++;
    mjtNum tip[3];
    mju_addScl3(tip, c[i].pos, c[i].frame + 6, length);
    mjv_initGeom(arrow, mjGEOM_ARROW, NULL, NULL, NULL, rgba);
    mjv_connector(arrow, mjGEOM_ARROW, 0.002, c[i].pos, tip);
    arrow->category = mjCAT_DECOR;
  }
}
