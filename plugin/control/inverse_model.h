// cusp.inverse: the controller's model of one control step (inverse.h): the effector and contact
// rows in the reduced coordinates of the modelled dofs, their free velocities over the horizon and
// their couplings through Mh^-1 with the actuation and with each other. Built by
// cusp_inverse_model (inverse_model.c), solved by cusp_inverse_solve (inverse_solve.c).
#ifndef CUSP_PLUGIN_CONTROL_INVERSE_MODEL_H_
#define CUSP_PLUGIN_CONTROL_INVERSE_MODEL_H_

#include <mujoco/mujoco.h>

#include "collide/contact.h"
#include "config/config.h"
#include "control/inverse.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cuspInverseModel_ {
  int nu;                    // actuators
  int ne;                    // effector rows, 3 per effector
  int nr;                    // reduced dofs (dynamics.h)
  int ncontact;              // modelled contacts
  int r;                     // friction directions per contact (the contact instance's cone)
  int nc;                    // contact rows, ncontact (1 + r): per contact its normal, then r
  int nrow;                  // ne + nc: effector rows, then contact rows
  mjtNum H;                  // s, the horizon
  mjtNum track_error;        // m, the largest effector-target distance
  mjtNum range;              // N, the largest force range (tolerances are relative to it)
  const cuspConfig* ccfg;    // the contact instance's configuration (NULL: no contact rows)
  const mjtNum* cone;        // (2 r) friction directions d_k = cone[2k] t + cone[2k+1] o
  const cuspContact* contact;// (ncontact) the contacts that touch the model
  mjtNum* Mr;                // (nr x nr) Cholesky factor of Mh on the reduced coordinates
  mjtNum* Jr;                // (nrow + 1 x nr) reduced rows; the last: Mh^-1 of the free flow
  mjtNum* T;                 // (nrow + nu x nr) Mh^-1 of each reduced row, then of each actuator
  mjtNum* rowv;              // (nrow) free velocity of each row over the horizon
  mjtNum* vdes;              // (ne) desired effector velocities, weighted as their rows
  mjtNum* verr;              // (ne) rowv - vdes of the effector rows: the tracking error of the
                             //   free flow (no actuation, no impulse), m/s weighted
  mjtNum* Ae;                // (ne x nu) H Je Mh^-1 B
  mjtNum* Ce;                // (ne x nc + 1) Je Mh^-1 Jc^T
  mjtNum* G;                 // (nc + 1 x nu) H Jc Mh^-1 B
} cuspInverseModel;

// The model of the step at d (inv->dyn updated for d): arrays from d's arena (the caller's mark).
// Returns 0, or -1 if Mh is not positive definite.
int cusp_inverse_model(cuspInverseModel* im, cuspInverse* inv, const mjModel* m, mjData* d);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_CONTROL_INVERSE_MODEL_H_
