// Plugin sensors: `<sensor><plugin instance="..." [objtype= objname=]/>`
// reads the last step's contact results of a cusp.contact instance into d->sensordata. Every
// cusp sensor has CUSP_SENSOR_DIM = 14 values (MuJoCo's compiler asks for the dimension before it
// has resolved the sensor's object, so it cannot depend on it); shorter records are zero-padded.
//   no object            14: the instance's counters, same order as d->plugin_state
//                        (cuspStateSlot: ncontact, nkept, nstick, nslide, nbreak, iterations,
//                        status, max penetration m, solver failures, steps, rcond before, after,
//                        reduced islands, reduction fallbacks)
//   objtype="geom"       5: a registered contact disk: normal impulse Ln (N s, summed over
//                        the disk's contacts), friction impulse magnitude |Lf| (N s), saturation
//                        |Lf| / (mu Ln) (0 without load), mode (0 break, 1 stick, 2 slide: slide
//                        if any of its contacts slides, stick if any carries load), contacts
//   objtype="body"       11: a registered patch body: Ln, Lt, Lo, Lr (N s, N m s), s, rho_t,
//                        rho_r, ECP x y z (m), mode — the per-body slots of d->plugin_state
// Values are written after every step (advance) and again when MuJoCo evaluates sensors, so
// after mj_step they belong to the step just taken, like d->plugin_state.
#ifndef CUSP_PLUGIN_SENSORS_H_
#define CUSP_PLUGIN_SENSORS_H_

#include <mujoco/mujoco.h>

#include "instance.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CUSP_SENSOR_DIM = 14, CUSP_SENSOR_DISK_DIM = 5 };

// Write the sensors of this instance from its published state and last contacts.
void cusp_sensor_fill(const mjModel* m, mjData* d, int instance, const cuspInstance* inst);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_SENSORS_H_
