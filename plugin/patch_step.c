// The patch part of the cusp step (issue 6): detection, one MCP over patches, rigid point contacts
// and the step's disk contacts, correction, and publishing (state slots, per-body observables).
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "instance.h"
#include "patch.h"

const char* const cusp_patch_slot_names[CUSP_PATCH_NSLOT] = {
    "Ln", "Lt", "Lo", "Lr", "s", "rho_t", "rho_r", "ecp_x", "ecp_y", "ecp_z", "mode"};

int cusp_patch_nbody(const mjModel* m, int instance) {
  const cuspConfigKey* key = NULL;
  for (const cuspConfigKey* k = cusp_config_keys; k->key; k++) {
    if (!strcmp(k->key, "bodies")) key = k;
  }
  if (!key) return 0;
  const char* s = cusp_config_value(m, instance, key);
  int n = 0, in = 0;
  for (; s && *s; s++) {
    if (isspace((unsigned char)*s)) in = 0;
    else if (!in) { in = 1; n++; }
  }
  return n;
}

static void publish_bodies(mjtNum* slots, const cuspPatchWork* w, const cuspConfig* cfg) {
  for (int i = 0; i < cfg->npatch_body; i++) {
    mjtNum* s = slots + (size_t)i * CUSP_PATCH_NSLOT;
    memset(s, 0, CUSP_PATCH_NSLOT * sizeof(mjtNum));
    const cuspPatch* best = NULL;
    for (int j = 0; j < w->npatch; j++) {
      const cuspPatch* P = w->patch + j;
      if (P->kind != CUSP_PATCH_SURFACE || P->body[0] != cfg->patch_bodies[i]) continue;
      if (!best || P->Ln > best->Ln) best = P;
    }
    if (!best) continue;
    s[CUSP_PATCH_LN] = best->Ln;
    s[CUSP_PATCH_LT] = best->L[0];
    s[CUSP_PATCH_LO] = best->L[1];
    s[CUSP_PATCH_LR] = best->L[2];
    s[CUSP_PATCH_S] = best->s;
    s[CUSP_PATCH_RHO_T] = best->rho_t;
    s[CUSP_PATCH_RHO_R] = best->rho_r;
    s[CUSP_PATCH_ECP_X] = best->ecp[0];
    s[CUSP_PATCH_ECP_Y] = best->ecp[1];
    s[CUSP_PATCH_ECP_Z] = best->ecp[2];
    s[CUSP_PATCH_MODE] = best->mode;
  }
}

int cusp_patch_step(cuspPatchWork* w, mjtNum* state, const mjModel* m, mjData* d,
                    const cuspConfig* cfg, cuspDynamics* dyn, cuspContact* disk_contacts,
                    int ndisk_contact) {
  mjtNum h = m->opt.timestep;
  int nv = m->nv;
  mjtNum* slots = state + CUSP_NSTATE;
  int nrigid = cusp_patch_detect(w, cfg, m, d);
  if (nrigid < 0) return -1;
  if (nrigid == 0) {
    w->npatch = 0;
    w->nprev = 0;
    publish_bodies(slots, w, cfg);
    return 1;
  }
  for (int i = 0; i < ndisk_contact; i++) {
    if (cusp_patch_add_point(w, disk_contacts + i, i)) return -1;
  }
  if (cusp_dynamics_update(dyn, m, d)) {
    state[CUSP_STATE_STATUS] = CUSP_LCP_NUMERICAL;
    state[CUSP_STATE_SOLVER_FAILURES] += 1;
    return -1;
  }
  int status = cusp_patch_solve(w, cfg, m, d, dyn, h);
  state[CUSP_STATE_NCONTACT] = w->npatch;
  state[CUSP_STATE_NKEPT] = w->npatch;
  state[CUSP_STATE_ITERATIONS] = w->info.iterations;
  state[CUSP_STATE_STATUS] = status;
  if (status != CUSP_LCP_SOLVED) state[CUSP_STATE_SOLVER_FAILURES] += 1;
  for (int i = 0; i < nv; i++) {
    if (!isfinite(w->dv[i])) {
      w->nprev = 0;
      return -1;
    }
  }
  cusp_patch_apply(w, m, d, h);

  int nstick = 0, nslide = 0, nbreak = 0;
  mjtNum max_pen = 0;
  for (int i = 0; i < w->npatch; i++) {
    const cuspPatch* P = w->patch + i;
    nstick += P->mode == CUSP_MODE_STICK;
    nslide += P->mode == CUSP_MODE_SLIDE;
    nbreak += P->mode == CUSP_MODE_BREAK;
    for (int k = 0; k < P->nvert; k++) {
      const mjtNum* row = w->J + (size_t)(w->row_of[i] + k) * nv;
      mjtNum after = P->gap[k] + h * mju_dot(row, w->dv, nv);
      if (-after > max_pen) max_pen = -after;
    }
    if (P->source >= 0) {
      cuspContact* c = disk_contacts + P->source;
      c->impulse_n = P->Ln;
      c->impulse_t[0] = P->L[0];
      c->impulse_t[1] = P->L[1];
      c->mode = P->mode;
    }
  }
  state[CUSP_STATE_NSTICK] = nstick;
  state[CUSP_STATE_NSLIDE] = nslide;
  state[CUSP_STATE_NBREAK] = nbreak;
  state[CUSP_STATE_MAX_PENETRATION] = max_pen;
  publish_bodies(slots, w, cfg);
  return status == CUSP_LCP_SOLVED ? 0 : -1;
}
