// cusp.inverse: inverse control through contact as an actuator plugin (after Coevoet, Escande
// and Duriez's QP with complementarity constraints, on cusp's own contact rows).
//
// Every step the plugin chooses the forces u of its actuators (boxes: their forceranges) for
//   min_u  1/2 |Je v_H(u, lambda) - v_des|^2 + 1/2 eps |u|^2,
// v_des = bandwidth (target - effector), capped at max_speed, per effector site, where v_H is the
// velocity over a horizon H implicit in inertia and damping (M + H D, equality-condensed as in
// plugin/dynamics.h), v_H = Mh^-1 (M v + H (f + B u) + Jc^T lambda): for the overdamped soft arms
// the quasi-static flow (Coevoet's setting is quasi-static). Jc are the rows of the contacts
// cusp.contact resolved in the last step on the robot (normal and r friction directions: the
// simulation's polyhedral cone, sticking and sliding), lambda their impulses under the
// simulation's complementarity (CUSP 10-13, conditioned and solved by cusp_contact_solve with the
// scene's cusp.contact settings). Actuation and impulses are found in up to three tries: the
// contacts keep their last mode (Coevoet's QP with sticking rows bilateral, a monotone box LCP);
// else the whole complementarity as one Ruiz-scaled box LCP (FB Newton); else a block
// Gauss-Seidel (the actuation box QP for the impulses, the contact LCP for the actuation,
// impulses under-relaxed, until u settles or `iterations` rounds). With `contact` = ignore the
// rows are left out: the same controller on a contact-free model.
#ifndef CUSP_PLUGIN_INVERSE_H_
#define CUSP_PLUGIN_INVERSE_H_

#include <mujoco/mujoco.h>

#include "config/keys.h"
#include "assemble/dynamics.h"
#include "solver/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

// published state of a cusp.inverse instance (d->plugin_state + m->plugin_stateadr[instance])
typedef enum cuspInverseStateSlot_ {
  CUSP_INVERSE_STATE_STEPS = 0,     // control steps computed
  CUSP_INVERSE_STATE_FAILURES,      // steps whose LCP failed (the actuators then hold u = 0)
  CUSP_INVERSE_STATE_CONTACTS,      // contacts in the controller's model this step
  CUSP_INVERSE_STATE_NORMAL_FORCE,  // N, predicted total normal force of those contacts
  CUSP_INVERSE_STATE_TRACK_ERROR,   // m, largest |target - effector|
  CUSP_INVERSE_STATE_SPEED_ERROR,   // m/s, predicted |Je v+ - v_des| (0 if the target is met)
  CUSP_INVERSE_STATE_STATUS,        // cuspLcpStatus of the last solve
  CUSP_INVERSE_STATE_LAST_FAILED,   // 1 if the last computed step failed (counted at advance)
  CUSP_INVERSE_STATE_ROUNDS,        // block Gauss-Seidel rounds the last step took
  CUSP_INVERSE_NSTATE
} cuspInverseStateSlot;

// the `contact` and `sticking` choices, by position
typedef enum cuspInverseContact_ { CUSP_INVERSE_CONTACT_CUSP = 0, CUSP_INVERSE_CONTACT_IGNORE }
    cuspInverseContact;
typedef enum cuspInverseSticking_ {
  CUSP_INVERSE_STICK_MODES = 0,  // the contacts' last modes held
  CUSP_INVERSE_STICK_OFF,        // no sticking QP: the Gauss-Seidel alone
  CUSP_INVERSE_STICK_ALL         // every touching contact held sticking
} cuspInverseSticking;

typedef struct cuspInverse_ {
  int nact;
  int* actuators;      // (nact) actuator ids
  mjtNum* lo;          // (nact) N (or N m), force range
  mjtNum* hi;          // (nact)
  int neff;
  int* effectors;      // (neff) site ids
  int* targets;        // (ntarget = neff) body ids
  int ntarget;
  mjtNum* weights;     // (nweight = neff, all 1 when none are given) tracking weights
  int nweight;
  int* objects;        // (nobject) body ids of the objects the robot handles
  int nobject;
  int contact;         // cuspInverseContact: rows of the cusp.contact instance's contacts, or none
  int contact_instance;// plugin instance index of cusp.contact, -1 if none
  mjtNum bandwidth;    // 1/s
  mjtNum max_speed;    // m/s
  mjtNum horizon;      // s
  mjtNum effort;       // eps, relative to the largest diagonal of Ae^T Ae
  int iterations;      // block Gauss-Seidel rounds per step
  int sticking;        // cuspInverseSticking: first the QP with the contacts' modes held (the
                       // last, or all sticking), or not
  mjtNum cone_margin;  // fraction of mu held back in that QP's friction cones
  mjtNum grip;         // N, least total normal force of the held robot-object contacts in that QP
  int tree;            // the robot's kinematic tree (the one its actuators act on)
  int ntree;
  int* trees;          // (ntree) modelled kinematic trees: the robot's, then the objects'
  int ndof;
  int* dofs;           // (ndof) ascending: every dof of the modelled trees
  cuspDynamics dyn;    // equality-condensed dynamics of those dofs (buffers sized at init)
} cuspInverse;

extern const cuspKey cusp_inverse_keys[];

cuspInverse* cusp_inverse_create(const mjModel* m, int instance, char* err, int err_sz);
void cusp_inverse_free(void* inverse);

// 1 if kinematic tree `tree` is in the controller's model (the robot or an object), else 0
int cusp_inverse_models_tree(const cuspInverse* inv, int tree);

// Actuator forces u (nact) of one control step at d (positions and velocities computed); fills
// the report slots in state (CUSP_INVERSE_NSTATE, may be NULL). Scratch from d's arena.
cuspLcpStatus cusp_inverse_solve(mjtNum* u, mjtNum* state, cuspInverse* inv, const mjModel* m,
                                 mjData* d);

void cusp_inverse_register(void);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_INVERSE_H_
