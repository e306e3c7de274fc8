// cusp.avoid: whole-body obstacle avoidance as an actuator plugin (Unicomp 37-47).
//
// Every control step (one MuJoCo step) the plugin
//   1. takes a nominal joint increment that tracks a tool site towards a target body (damped
//      least squares on the tool's position error, an impedance rate `track_gain` capped at
//      `max_speed`);
//   2. for every pair (robot sphere, obstacle geom) closer than clearance + influence, writes
//      the one-step separation row  n^T J_s dq >= -min(k h, 1) (dist - clearance) + h n^T v_o
//      (n: unit normal from the obstacle, J_s: the sphere centre's Jacobian on the controlled
//      joints, v_o: the obstacle's velocity at its closest point);
//   3. corrects the increment in the rows' span, dq = dq_nom + H^T eta, eta >= 0, from the LCP
//      0 <= eta _|_ H H^T eta + H dq_nom - rhs >= 0, conditioned and solved by the solver core
//      (condition.h: a frictionless contact LCP with unit inertia);
//   4. drives its joints as position servos towards q + dq: force = kp (q + dq - q) - kv qdot.
// The servo reference is the actuators' activation (actdim = 1 each, MuJoCo integrates it), so
// the controller's whole state is part of mjData's state: copies, resets and rollouts behave.
// Robot spheres are sphere sites (centre and radius from the site); obstacles are geoms of type
// plane, sphere, capsule, box or cylinder.
#ifndef CUSP_PLUGIN_AVOID_H_
#define CUSP_PLUGIN_AVOID_H_

#include <mujoco/mujoco.h>

#include "config/keys.h"
#include "solver/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

// published state of a cusp.avoid instance (d->plugin_state + m->plugin_stateadr[instance])
typedef enum cuspAvoidStateSlot_ {
  CUSP_AVOID_STATE_STARTED = 0,  // 0 until the first step: the reference is then q itself
  CUSP_AVOID_STATE_STEPS,        // control steps taken
  CUSP_AVOID_STATE_FAILURES,     // steps whose LCP failed (the reference then holds q)
  CUSP_AVOID_STATE_ROWS,         // separation rows in the last step's LCP
  CUSP_AVOID_STATE_ACTIVE,       // rows with eta > 0 in the last step
  CUSP_AVOID_STATE_MIN_DISTANCE, // m, smallest sphere-obstacle distance the controller measured
  CUSP_AVOID_STATE_TRACK_ERROR,  // m, |target - tool| at the last step
  CUSP_AVOID_STATE_STATUS,       // cuspLcpStatus of the last step's solve (0 solved or trivial)
  CUSP_AVOID_STATE_LAST_FAILED,  // 1 if the last computed step failed (counted at advance)
  CUSP_AVOID_NSTATE
} cuspAvoidStateSlot;

// Parsed configuration and the controlled joints of one instance (read-only during a step).
typedef struct cuspAvoid_ {
  int nact;            // actuators of this instance
  int* actuators;      // (nact) actuator ids
  int* dofs;           // (nact) dof of each actuator's joint
  int* qposadr;        // (nact) qpos address of each actuator's joint
  int nsphere;
  int* spheres;        // (nsphere) sphere site ids
  int nobstacle;
  int* obstacles;      // (nobstacle) geom ids
  int tool;            // site id
  int target;          // body id
  mjtNum clearance;    // m
  mjtNum influence;    // m, pairs farther than clearance + influence give no row
  mjtNum gain;         // 1/s, k of the separation rows
  mjtNum track_gain;   // 1/s
  mjtNum max_speed;    // m/s
  mjtNum damping;      // m, damped least squares
  mjtNum kp;           // N m/rad or N/m
  mjtNum kv;           // N m s/rad or N s/m
  mjtNum eps_rank;     // conditioning stage 1 tolerance
  mjtNum regularization;  // conditioning stage 3 (Tikhonov) shift
  int solver;          // position in the `solver` choices
  int backend;         // cuspLcpBackendId of that choice
} cuspAvoid;

// What one increment did (also published in the state).
typedef struct cuspAvoidReport_ {
  int rows, active;
  int dropped;          // rows the rank selection dropped
  mjtNum min_distance;  // m (mjMAXVAL if no obstacle)
  mjtNum track_error;   // m
  cuspLcpStatus status;
  int iterations;
} cuspAvoidReport;

extern const cuspKey cusp_avoid_keys[];  // terminated by {NULL}

// Build an instance from the model's config; NULL with a one-line message in err on a bad value.
cuspAvoid* cusp_avoid_create(const mjModel* m, int instance, char* err, int err_sz);
void cusp_avoid_free(void* avoid);

// The joint increment of one control step at d's current kinematics (positions and velocities
// computed): dq (nact) is the new servo reference minus the current joint positions; qref (nact)
// the current reference. Scratch comes from d's arena. Returns the LCP status (solved, or the
// failure, in which case dq holds the reference still: dq = 0).
cuspLcpStatus cusp_avoid_increment(mjtNum* dq, cuspAvoidReport* report, const cuspAvoid* a,
                                   const mjModel* m, mjData* d, const mjtNum* qref);

// Register the cusp.avoid plugin with MuJoCo (called by libcusp.so's initialiser).
void cusp_avoid_register(void);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_AVOID_H_
