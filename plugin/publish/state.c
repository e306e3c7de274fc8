// The published state: slot names of the instance and per-body slots (state.h), and the per-body
// observables of the patch contact.
#include <ctype.h>
#include <math.h>
#include <string.h>

#include "instance.h"
#include "collide/patch.h"
#include "publish/state.h"

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

void cusp_patch_publish_bodies(mjtNum* slots, const cuspPatchWork* w, const cuspConfig* cfg) {
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


static const char* const state_slot_names[CUSP_NSTATE] = {
    "ncontact", "nkept",      "nstick", "nslide",          "nbreak", "iterations",
    "status",   "max_penetration", "solver_failures", "steps", "rcond_before", "rcond_after",
    "reduced_islands", "reduction_fallbacks"};

const char* cusp_state_slot_name(int slot) {
  if (slot < 0) return NULL;
  if (slot < CUSP_NSTATE) return state_slot_names[slot];
  if (slot < CUSP_NSTATE + CUSP_PATCH_NSLOT) return cusp_patch_slot_names[slot - CUSP_NSTATE];
  return NULL;
}

int cusp_state_nslot(void) { return CUSP_NSTATE; }
int cusp_state_nbody_slot(void) { return CUSP_PATCH_NSLOT; }
