// Contact markers for the viewer.
#include "publish/visualize.h"

#include <stdlib.h>
#include <string.h>

#include "instance.h"

#define CUSP_MIN_ARROW 1e-6       // m, shorter arrows are not drawn

cuspMarkerSize cusp_marker_size(const mjModel* m) {
  mjtNum unit = m->stat.meansize > 0 ? m->stat.meansize : 0.045;  // m
  cuspMarkerSize s;
  s.sphere_radius = 0.3 * m->vis.scale.contactwidth * unit;
  s.disc_radius = 0.9 * m->vis.scale.contactwidth * unit;
  s.disc_halfheight = 0.3 * m->vis.scale.contactheight * unit;
  s.arrow_width = 0.45 * m->vis.scale.forcewidth * unit;
  return s;
}

void cusp_mode_rgba(float rgba[4], int mode) {
  static const float colour[3][4] = {
      {0.1f, 0.8f, 0.1f, 1},  // break: green
      {0.1f, 0.3f, 1.0f, 1},  // stick: blue
      {1.0f, 0.1f, 0.1f, 1},  // slide: red
  };
  int k = (mode >= 0 && mode < 3) ? mode : 0;
  for (int i = 0; i < 4; i++) rgba[i] = colour[k][i];
}

static mjvGeom* next_geom(mjvScene* scn) {
  if (scn->ngeom >= scn->maxgeom) return NULL;
  return scn->geoms + scn->ngeom++;
}

static void add_sphere(mjvScene* scn, const mjtNum pos[3], const float rgba[4],
                       const cuspMarkerSize* ms) {
  mjvGeom* g = next_geom(scn);
  if (!g) return;
  const mjtNum size[3] = {ms->sphere_radius, ms->sphere_radius, ms->sphere_radius};
  mjv_initGeom(g, mjGEOM_SPHERE, size, pos, NULL, rgba);
  g->category = mjCAT_DECOR;
}

// flat ellipsoid centred at pos whose short axis is the unit normal n (frame rows t, o, n): a
// disc of the radius and half thickness of ms (mjv_initGeom reads a cylinder's size as radius and
// half length, so the cylinder drawn before stood 2 radii tall)
static void add_disc(mjvScene* scn, const mjtNum pos[3], const mjtNum frame[9],
                     const float rgba[4], const cuspMarkerSize* ms) {
  mjvGeom* g = next_geom(scn);
  if (!g) return;
  const mjtNum size[3] = {ms->disc_radius, ms->disc_radius, ms->disc_halfheight};
  mjtNum mat[9];  // columns t, o, n: the cylinder's local z along n
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) mat[3 * i + j] = frame[3 * j + i];
  }
  mjv_initGeom(g, mjGEOM_ELLIPSOID, size, pos, mat, rgba);
  g->category = mjCAT_DECOR;
}

// arrow from pos along the unit normal n, force_scale (m/N) times force (N) long
static void add_arrow(mjvScene* scn, const mjtNum pos[3], const mjtNum n[3], mjtNum force,
                      mjtNum force_scale, const float rgba[4], const cuspMarkerSize* ms) {
  mjtNum length = force_scale * force;  // m
  if (length <= CUSP_MIN_ARROW) return;
  mjvGeom* g = next_geom(scn);
  if (!g) return;
  mjtNum tip[3];
  mju_addScl3(tip, pos, n, length);
  mjv_initGeom(g, mjGEOM_ARROW, NULL, NULL, NULL, rgba);
  mjv_connector(g, mjGEOM_ARROW, ms->arrow_width, pos, tip);
  g->category = mjCAT_DECOR;
}

void cusp_visualize_contacts(mjvScene* scn, const cuspContact* c, int n, mjtNum timestep,
                             mjtNum force_scale, const cuspMarkerSize* ms, int draw_points,
                             int draw_forces) {
  for (int i = 0; i < n; i++) {
    float rgba[4];
    cusp_mode_rgba(rgba, c[i].mode);
    if (draw_points) add_sphere(scn, c[i].pos, rgba, ms);
    if (draw_forces) add_arrow(scn, c[i].pos, c[i].frame + 6, c[i].impulse_n / timestep,
                               force_scale, rgba, ms);
  }
}

void cusp_visualize_patches(mjvScene* scn, const cuspPatch* p, int n, mjtNum timestep,
                            mjtNum force_scale, const cuspMarkerSize* ms, int draw_points,
                            int draw_forces) {
  for (int i = 0; i < n; i++) {
    if (p[i].source >= 0) continue;  // a disk contact, drawn with the contacts
    float rgba[4];
    cusp_mode_rgba(rgba, p[i].mode);
    const mjtNum* at = p[i].Ln > 0 ? p[i].ecp : p[i].origin;
    if (draw_points) {
      if (p[i].kind == CUSP_PATCH_SURFACE) add_disc(scn, at, p[i].frame, rgba, ms);
      else add_sphere(scn, at, rgba, ms);
    }
    if (draw_forces) {
      add_arrow(scn, at, p[i].frame + 6, p[i].Ln / timestep, force_scale, rgba, ms);
    }
  }
}

void cusp_visualize_step(mjvScene* scn, const mjvOption* opt, const cuspContact* contacts,
                         int ncontact, const cuspPatch* patches, int npatch, mjtNum timestep,
                         mjtNum force_scale, const cuspMarkerSize* ms) {
  int draw_points = opt->flags[mjVIS_CONTACTPOINT] != 0;
  int draw_forces = opt->flags[mjVIS_CONTACTFORCE] != 0;
  if (!draw_points && !draw_forces) return;
  cusp_visualize_contacts(scn, contacts, ncontact, timestep, force_scale, ms, draw_points,
                          draw_forces);
  cusp_visualize_patches(scn, patches, npatch, timestep, force_scale, ms, draw_points,
                         draw_forces);
}

int cusp_visualize_export(const mjModel* m, const mjData* d, int draw_points, int draw_forces,
                          int max, int* type, float* size, float* pos, float* mat, float* rgba) {
  if (max <= 0) return 0;
  mjvScene scn;
  memset(&scn, 0, sizeof(scn));
  scn.geoms = (mjvGeom*)calloc(max, sizeof(mjvGeom));
  if (!scn.geoms) return -1;
  scn.maxgeom = max;
  const cuspMarkerSize ms = cusp_marker_size(m);
  for (int i = 0; i < m->nplugin; i++) {
    const mjpPlugin* plugin = mjp_getPluginAtSlot(m->plugin[i]);
    if (!plugin || !plugin->name || strcmp(plugin->name, "cusp.contact")) continue;
    const cuspInstance* inst = cusp_instance_find(d, i);  // not d->plugin_data (instance.h)
    if (!inst || !inst->cfg.visualize) continue;
    const cuspStepWork* w = &inst->work;
    cusp_visualize_contacts(&scn, w->contacts, w->ncontact, m->opt.timestep,
                            inst->cfg.force_scale, &ms, draw_points, draw_forces);
    cusp_visualize_patches(&scn, w->patch.set.patch, w->patch.set.npatch, m->opt.timestep,
                           inst->cfg.force_scale, &ms, draw_points, draw_forces);
  }
  for (int k = 0; k < scn.ngeom; k++) {
    const mjvGeom* g = scn.geoms + k;
    type[k] = g->type;
    memcpy(size + 3 * k, g->size, 3 * sizeof(float));
    memcpy(pos + 3 * k, g->pos, 3 * sizeof(float));
    memcpy(mat + 9 * k, g->mat, 9 * sizeof(float));
    memcpy(rgba + 4 * k, g->rgba, 4 * sizeof(float));
  }
  int n = scn.ngeom;
  free(scn.geoms);
  return n;
}
