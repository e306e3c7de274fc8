// The published state of a cusp.contact instance: the layout of its slots in d->plugin_state,
// the lowest level of the plugin (no other plugin header is needed to read it). Written after
// every step; read by the sensors, cusp-sim, the tests and Python (cusp.state, by slot name from
// cusp_state_slot_name, never by hard-coded numbers).
#ifndef CUSP_PLUGIN_STATE_H_
#define CUSP_PLUGIN_STATE_H_

#ifdef __cplusplus
extern "C" {
#endif

// Layout of d->plugin_state for one instance (mjtNum each). Published after every step so that
// tools read it without linking against the plugin (Python: d.plugin_state). Counts are for the
// last step unless named total.
typedef enum cuspStateSlot_ {
  CUSP_STATE_NCONTACT = 0,        // contacts detected (within margin)
  CUSP_STATE_NKEPT,               // contacts kept after rank selection
  CUSP_STATE_NSTICK,              // kept contacts sticking
  CUSP_STATE_NSLIDE,              // kept contacts sliding
  CUSP_STATE_NBREAK,              // contacts with zero normal impulse
  CUSP_STATE_ITERATIONS,          // solver iterations (all backends tried)
  CUSP_STATE_STATUS,              // cuspSolveStatus of the accepted solve (0: solved)
  CUSP_STATE_MAX_PENETRATION,     // m, deepest penetration of a registered contact at q*
  CUSP_STATE_SOLVER_FAILURES,     // total steps whose solve failed, since reset
  CUSP_STATE_STEPS,               // total steps advanced since reset
  CUSP_STATE_RCOND_BEFORE,        // reciprocal condition estimate before conditioning
  CUSP_STATE_RCOND_AFTER,         // ... and after
  CUSP_STATE_REDUCED_ISLANDS,     // islands solved in the contact-space basis (reduction_basis)
  CUSP_STATE_REDUCTION_FALLBACKS, // total islands where the reduction fell back to the full LCP
  CUSP_NSTATE
} cuspStateSlot;

// Published per registered body (config `bodies` order) after the instance's CUSP_NSTATE slots of
// d->plugin_state: the body's surface patch with the largest normal impulse this step.
typedef enum cuspPatchSlot_ {
  CUSP_PATCH_LN = 0,   // N s, resultant normal impulse
  CUSP_PATCH_LT,       // N s, friction impulse along t at the ECP
  CUSP_PATCH_LO,       // N s, friction impulse along o
  CUSP_PATCH_LR,       // N m s, torsional impulse about n
  CUSP_PATCH_S,        // -, saturation (Unicomp 48)
  CUSP_PATCH_RHO_T,    // -, tangential saturation (Unicomp 49)
  CUSP_PATCH_RHO_R,    // -, torsional saturation (Unicomp 49)
  CUSP_PATCH_ECP_X,    // m, ECP (world)
  CUSP_PATCH_ECP_Y,
  CUSP_PATCH_ECP_Z,
  CUSP_PATCH_MODE,     // cuspContactMode (0 break or no contact, 1 stick, 2 slide)
  CUSP_PATCH_NSLOT
} cuspPatchSlot;

// names of the slots as CSV suffixes ("Ln", "Lt", ..., "mode")
extern const char* const cusp_patch_slot_names[CUSP_PATCH_NSLOT];

// Name of instance slot `slot` (0 <= slot < CUSP_NSTATE: "ncontact", ..., "rcond_after"), or of
// per-body slot slot - CUSP_NSTATE (CUSP_PATCH_NSLOT of them: "Ln", ..., "mode"); NULL beyond.
const char* cusp_state_slot_name(int slot);

// CUSP_NSTATE and CUSP_PATCH_NSLOT, for tools that read the layout at run time.
int cusp_state_nslot(void);
int cusp_state_nbody_slot(void);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_STATE_H_
