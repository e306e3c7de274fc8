// Copying the last step's contact results out of a cusp.contact instance (see contacts_api.h).
#include "publish/contacts_api.h"

#include <string.h>

#include "instance.h"

_Static_assert(sizeof(mjtNum) == sizeof(double), "the copy API hands out doubles");

static const cuspInstance* find_instance(const mjModel* m, const mjData* d, int instance) {
  if (!m || !d || instance < 0 || instance >= m->nplugin) return NULL;
  const mjpPlugin* plugin = mjp_getPluginAtSlot(m->plugin[instance]);
  if (!plugin || !plugin->name || strcmp(plugin->name, "cusp.contact")) return NULL;
  return cusp_instance_find(d, instance);  // never d->plugin_data: it may be a copied pointer
}

static int is_own_patch(const cuspPatch* p) { return p->source < 0; }

int cusp_contacts_count(const mjModel* m, const mjData* d, int instance) {
  const cuspInstance* inst = find_instance(m, d, instance);
  if (!inst) return -1;
  int n = inst->work.ncontact;
  for (int i = 0; i < inst->work.patch.set.npatch; i++) n += is_own_patch(inst->work.patch.set.patch + i);
  return n;
}

int cusp_contacts_copy(const mjModel* m, const mjData* d, int instance, int capacity,
                       double* pos, double* frame, double* impulse, double* gap, int* mode,
                       int* kind, int* geom, int* body) {
  const cuspInstance* inst = find_instance(m, d, instance);
  if (!inst) return -1;
  int n = 0;
  for (int i = 0; i < inst->work.ncontact && n < capacity; i++, n++) {
    const cuspContact* c = inst->work.contacts + i;
    if (pos) memcpy(pos + 3 * n, c->pos, 3 * sizeof(double));
    if (frame) memcpy(frame + 9 * n, c->frame, 9 * sizeof(double));
    if (impulse) {
      impulse[4 * n] = c->impulse_n;
      impulse[4 * n + 1] = c->impulse_t[0];
      impulse[4 * n + 2] = c->impulse_t[1];
      impulse[4 * n + 3] = 0;
    }
    if (gap) gap[n] = c->gap;
    if (mode) mode[n] = c->mode;
    if (kind) kind[n] = CUSP_RECORD_DISK;
    if (geom) memcpy(geom + 2 * n, c->geom, 2 * sizeof(int));
    if (body) memcpy(body + 2 * n, c->body, 2 * sizeof(int));
  }
  for (int i = 0; i < inst->work.patch.set.npatch && n < capacity; i++) {
    const cuspPatch* p = inst->work.patch.set.patch + i;
    if (!is_own_patch(p)) continue;
    if (pos) memcpy(pos + 3 * n, p->Ln > 0 ? p->ecp : p->origin, 3 * sizeof(double));
    if (frame) memcpy(frame + 9 * n, p->frame, 9 * sizeof(double));
    if (impulse) {
      impulse[4 * n] = p->Ln;
      for (int k = 0; k < 3; k++) impulse[4 * n + 1 + k] = p->L[k];
    }
    if (gap) {
      double smallest = p->nvert ? p->gap[0] : 0;
      for (int k = 1; k < p->nvert; k++) smallest = p->gap[k] < smallest ? p->gap[k] : smallest;
      gap[n] = smallest;
    }
    if (mode) mode[n] = p->mode;
    if (kind) kind[n] = p->kind == CUSP_PATCH_SURFACE ? CUSP_RECORD_PATCH : CUSP_RECORD_POINT;
    if (geom) memcpy(geom + 2 * n, p->geom, 2 * sizeof(int));
    if (body) memcpy(body + 2 * n, p->body, 2 * sizeof(int));
    n++;
  }
  return n;
}

double cusp_contacts_normal_force(const mjModel* m, const mjData* d, int instance) {
  const cuspInstance* inst = find_instance(m, d, instance);
  if (!inst) return 0;
  double impulse = 0;  // N s
  for (int i = 0; i < inst->work.ncontact; i++) impulse += inst->work.contacts[i].impulse_n;
  for (int i = 0; i < inst->work.patch.set.npatch; i++) {
    const cuspPatch* p = inst->work.patch.set.patch + i;
    if (is_own_patch(p)) impulse += p->Ln;
  }
  return impulse / m->opt.timestep;
}

double cusp_contacts_solve_seconds(const mjModel* m, const mjData* d, int instance) {
  const cuspInstance* inst = find_instance(m, d, instance);
  return inst ? inst->work.solve_seconds : 0;
}

double cusp_contacts_solve_work(const mjModel* m, const mjData* d, int instance) {
  const cuspInstance* inst = find_instance(m, d, instance);
  return inst ? inst->work.solve_work : 0;
}

int cusp_contacts_points(const mjModel* m, const mjData* d, int instance, cuspContact* out,
                         int capacity) {
  const cuspInstance* inst = find_instance(m, d, instance);
  if (!inst) return -1;
  int n = 0;
  for (int k = 0; k < inst->work.ncontact && (!out || n < capacity); k++, n++) {
    if (out) out[n] = inst->work.contacts[k];
  }
  for (int i = 0; i < inst->work.patch.set.npatch; i++) {
    const cuspPatch* p = inst->work.patch.set.patch + i;
    if (!is_own_patch(p)) continue;  // one of the point contacts above
    for (int k = 0; k < p->nvert && (!out || n < capacity); k++, n++) {
      if (!out) continue;
      cuspContact* c = out + n;
      memset(c, 0, sizeof(*c));
      c->geom[0] = p->geom[0];
      c->geom[1] = p->geom[1];
      c->body[0] = p->body[0];
      c->body[1] = p->body[1];
      c->sub = k;
      c->island = p->island;
      c->gap = p->gap[k];
      memcpy(c->pos, p->vert + 3 * k, 3 * sizeof(mjtNum));
      memcpy(c->frame, p->frame, 9 * sizeof(mjtNum));
      c->mu = p->mu;
      c->impulse_n = p->lambda[k];
      c->mode = p->mode;
    }
  }
  return n;
}

int cusp_contacts_cone(const mjModel* m, const mjData* d, int instance, const mjtNum** cone) {
  const cuspInstance* inst = find_instance(m, d, instance);
  if (!inst) return -1;
  *cone = inst->work.cone;
  return inst->work.r;
}

const cuspConfig* cusp_contacts_config(const mjModel* m, const mjData* d, int instance) {
  const cuspInstance* inst = find_instance(m, d, instance);
  return inst ? &inst->cfg : NULL;
}
