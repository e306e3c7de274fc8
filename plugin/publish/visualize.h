// Drawing cusp contacts in MuJoCo's viewer (the plugin's visualize callback):
//   disk and rigid point contacts  a sphere at the contact point coloured by mode (stick blue,
//                                  slide red, break green);
//   patch contacts                 a flat disc at the equivalent contact point (ECP) in the patch
//                                  plane, coloured by mode (a flattened ellipsoid);
//   normals                        an arrow from the point along n whose length is force_scale
//                                  times the normal force (impulse / h).
// Switches: the config key `visualize` (all markers of an instance), and MuJoCo's visual flags as
// for its own contacts: mjVIS_CONTACTPOINT (key C in the viewer) draws points and ECPs,
// mjVIS_CONTACTFORCE (key F) draws the arrows. Both flags are off in mjv_defaultOption;
// `python -m cusp view` and `python -m cusp render` turn them on.
#ifndef CUSP_PLUGIN_VISUALIZE_H_
#define CUSP_PLUGIN_VISUALIZE_H_

#include <mujoco/mujoco.h>

#include "collide/contact.h"
#include "collide/patch.h"

#ifdef __cplusplus
extern "C" {
#endif

// RGBA of a contact mode (cuspContactMode).
void cusp_mode_rgba(float rgba[4], int mode);

// Marker sizes (m), scaled like MuJoCo's own contact markers: by the model's mean body size
// (m->stat.meansize) and its visual scales contactwidth, contactheight and forcewidth (MJCF
// <visual><scale .../>). With MuJoCo's defaults and a mean size of 45 mm: spheres of 4 mm radius,
// discs of 12 mm radius and 1.35 mm half thickness, arrows 2 mm wide.
typedef struct cuspMarkerSize_ {
  mjtNum sphere_radius;   // 0.3 contactwidth meansize
  mjtNum disc_radius;     // 0.9 contactwidth meansize
  mjtNum disc_halfheight; // 0.3 contactheight meansize
  mjtNum arrow_width;     // 0.45 forcewidth meansize
} cuspMarkerSize;
cuspMarkerSize cusp_marker_size(const mjModel* m);

// Append markers for contacts c[0..n-1] to scn (as many as fit): spheres if draw_points, force
// arrows if draw_forces.
void cusp_visualize_contacts(mjvScene* scn, const cuspContact* c, int n, mjtNum timestep,
                             mjtNum force_scale, const cuspMarkerSize* size, int draw_points,
                             int draw_forces);

// Append markers for the patches p[0..n-1] that the patch detector found itself (source < 0):
// a disc at the ECP of surface patches, a sphere at rigid point contacts, and force arrows.
void cusp_visualize_patches(mjvScene* scn, const cuspPatch* p, int n, mjtNum timestep,
                            mjtNum force_scale, const cuspMarkerSize* size, int draw_points,
                            int draw_forces);

// Everything of one step (disk contacts and patches), switched by opt's flags as above.
void cusp_visualize_step(mjvScene* scn, const mjvOption* opt, const cuspContact* contacts,
                         int ncontact, const cuspPatch* patches, int npatch, mjtNum timestep,
                         mjtNum force_scale, const cuspMarkerSize* size);

// The markers every cusp.contact instance of d would draw, exported as plain arrays for viewers
// that render a copy of mjData (MuJoCo's passive viewer copies mjData with mjv_copyData, whose
// plugin instances are not the stepping ones): per marker k < returned count (at most max):
// type[k] (mjtGeom), size[3k..], pos[3k..], mat[9k..], rgba[4k..] as in mjvGeom. Returns -1 if
// out of memory.
int cusp_visualize_export(const mjModel* m, const mjData* d, int draw_points, int draw_forces,
                          int max, int* type, float* size, float* pos, float* mat, float* rgba);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_VISUALIZE_H_
