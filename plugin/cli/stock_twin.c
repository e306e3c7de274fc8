// Stock twin: plugin instance removed, registered geoms collided by MuJoCo.
#include "cli/stock_twin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int cusp_find_instance(const mjModel* m) {
  for (int i = 0; i < m->nplugin; i++) {
    const mjpPlugin* p = mjp_getPluginAtSlot(m->plugin[i]);
    if (p && p->name && !strcmp(p->name, "cusp.contact")) return i;
  }
  return -1;
}

static void enable_collision(mjsGeom* geom) {
  geom->contype = 1;
  geom->conaffinity = 1;
}

// 1 if the spec's geom el is one of cfg's visual_geoms (named: the config lists names)
static int visual(const mjsElement* el, const cuspConfig* cfg, const mjModel* m) {
  const char* name = mjs_getString(mjs_getName((mjsElement*)el));
  for (int i = 0; name && name[0] && i < cfg->nvisual; i++) {
    if (!strcmp(name, mj_id2name(m, mjOBJ_GEOM, cfg->visual_geoms[i]))) return 1;
  }
  return 0;
}

// the geoms of body and of its descendants welded to it (no joint between them), but the visual
// ones: a registered body's solid geoms (config.h cusp_config_object_geoms); returns how many
// were turned on
static int enable_welded(mjsBody* body, const cuspConfig* cfg, const mjModel* m) {
  int n = 0;
  for (mjsElement* el = mjs_firstChild(body, mjOBJ_GEOM, 0); el; el = mjs_nextChild(body, el, 0)) {
    if (visual(el, cfg, m)) continue;
    enable_collision(mjs_asGeom(el));
    n++;
  }
  for (mjsElement* el = mjs_firstChild(body, mjOBJ_BODY, 0); el; el = mjs_nextChild(body, el, 0)) {
    mjsBody* child = mjs_asBody(el);
    if (!mjs_firstChild(child, mjOBJ_JOINT, 0)) n += enable_welded(child, cfg, m);
  }
  return n;
}

// does a sensor's plugin reference name cusp.contact, directly or through an instance name?
static int is_cusp_reference(const mjSpec* spec, const mjsPlugin* ref) {
  const char* plugin_name = mjs_getString(ref->plugin_name);
  if (plugin_name && !strcmp(plugin_name, "cusp.contact")) return 1;
  const char* instance_name = mjs_getString(ref->name);
  if (!instance_name || !instance_name[0]) return 0;
  for (mjsElement* el = mjs_firstElement(spec, mjOBJ_PLUGIN); el; el = mjs_nextElement(spec, el)) {
    mjsPlugin* plugin = mjs_asPlugin(el);
    if (!strcmp(mjs_getString(plugin->name), instance_name) &&
        !strcmp(mjs_getString(plugin->plugin_name), "cusp.contact")) {
      return 1;
    }
  }
  return 0;
}

int cusp_stock_twin(mjSpec* spec, char* err, int err_sz) {
  mjModel* m = mj_compile(spec, NULL);
  if (!m) {
    snprintf(err, err_sz, "cusp stock twin: the scene does not compile: %s", mjs_getError(spec));
    return -1;
  }
  int instance = cusp_find_instance(m);
  if (instance < 0) {
    mj_deleteModel(m);
    return 0;  // nothing registered: the scene is its own twin
  }
  cuspConfig cfg;
  if (cusp_config_parse(&cfg, m, instance, err, err_sz)) {
    mj_deleteModel(m);
    return -1;
  }

  // geoms by id (compiled model) -> spec elements. Every registered geom of a disk list is named
  // (the config refers to names); patch bodies' geoms are found through their body.
  int nturned = 0;
  for (int i = 0; i < cfg.ndisk; i++) {
    const char* name = mj_id2name(m, mjOBJ_GEOM, cfg.disk_geoms[i]);
    mjsElement* el = mjs_findElement(spec, mjOBJ_GEOM, name);
    if (el) {
      enable_collision(mjs_asGeom(el));
      nturned++;
    }
  }
  for (int i = 0; i < cfg.npatch_body; i++) {
    mjsBody* body = mjs_findBody(spec, mj_id2name(m, mjOBJ_BODY, cfg.patch_bodies[i]));
    if (body) nturned += enable_welded(body, &cfg, m);
  }
  cusp_config_free(&cfg);
  mj_deleteModel(m);

  // plugin sensors that read a cusp instance, then the instances themselves
  mjsElement* el = mjs_firstElement(spec, mjOBJ_SENSOR);
  while (el) {
    mjsElement* next = mjs_nextElement(spec, el);
    mjsSensor* sensor = mjs_asSensor(el);
    if (sensor->type == mjSENS_PLUGIN && is_cusp_reference(spec, &sensor->plugin)) {
      mjs_delete(spec, el);
    }
    el = next;
  }
  el = mjs_firstElement(spec, mjOBJ_PLUGIN);
  while (el) {
    mjsElement* next = mjs_nextElement(spec, el);
    if (!strcmp(mjs_getString(mjs_asPlugin(el)->plugin_name), "cusp.contact")) {
      mjs_delete(spec, el);
    }
    el = next;
  }
  return nturned;
}
