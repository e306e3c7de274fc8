// Drawing cusp contacts in MuJoCo's viewer: a sphere at every contact point coloured by mode
// (stick blue, slide red, break green) and the normal as an arrow whose length is force_scale
// times the normal force (impulse / h). Switched by the config key `visualize`.
#ifndef CUSP_PLUGIN_VISUALIZE_H_
#define CUSP_PLUGIN_VISUALIZE_H_

#include <mujoco/mujoco.h>

#include "contact.h"

#ifdef __cplusplus
extern "C" {
#endif

// RGBA of a contact mode (cuspContactMode).
void cusp_mode_rgba(float rgba[4], int mode);

// Append markers for contacts c[0..n-1] to scn (as many as fit).
void cusp_visualize_contacts(mjvScene* scn, const cuspContact* c, int n, mjtNum timestep,
                             mjtNum force_scale);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_VISUALIZE_H_
