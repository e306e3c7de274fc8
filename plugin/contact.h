// One contact between a registered geom (disk, or a geom of a patch body) and another geom, found
// at the free configuration q*: where, how far apart, which way, with what friction.
#ifndef CUSP_PLUGIN_CONTACT_H_
#define CUSP_PLUGIN_CONTACT_H_

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cuspContactMode_ {
  CUSP_MODE_BREAK = 0,  // normal impulse <= break_impulse
  CUSP_MODE_STICK,      // friction strictly inside its cone / limit surface
  CUSP_MODE_SLIDE       // friction on the cone / limit surface boundary
} cuspContactMode;

typedef struct cuspContact_ {
  int geom[2];        // geom[0]: registered geom; geom[1]: the geom it touches
  int body[2];        // their bodies (body[1] may be 0, the world)
  int sub;            // which point of this geom pair (identity for warm starts)
  mjtNum gap;         // m, signed distance at q* (< 0: penetration)
  mjtNum pos[3];      // m, contact point (midway between the surfaces)
  mjtNum frame[9];    // rows t, o, n; n (unit) points from geom[1] towards geom[0]
  mjtNum mu;          // friction coefficient
  // results of the step
  mjtNum impulse_n;   // N s, normal impulse
  mjtNum impulse_t[2];// N s, friction impulse along t, o
  int mode;           // cuspContactMode
} cuspContact;

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_CONTACT_H_
