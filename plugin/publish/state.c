// The published state's slot names (state.h).
#include "state.h"

#include <stddef.h>

const char* const cusp_patch_slot_names[CUSP_PATCH_NSLOT] = {
    "Ln", "Lt", "Lo", "Lr", "s", "rho_t", "rho_r", "ecp_x", "ecp_y", "ecp_z", "mode"};

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
