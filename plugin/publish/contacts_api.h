// A small C API that copies the last step's contact results of one cusp.contact instance out of
// an mjData, for tools that do not link against the plugin's internals (Python: cusp.contacts(),
// through ctypes). One record per contact:
//   disk contacts (cuspContact)                kind CUSP_RECORD_DISK
//   patches the patch detector found itself    kind CUSP_RECORD_PATCH (surface: ECP + torsion)
//                                              or CUSP_RECORD_POINT (rigid point contact)
// Disk contacts that took part in a patch solve are reported once, as disk records (their
// impulses are written back by the patch step).
#ifndef CUSP_PLUGIN_CONTACTS_API_H_
#define CUSP_PLUGIN_CONTACTS_API_H_

#include <mujoco/mujoco.h>

#include "collide/contact.h"
#include "config/config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cuspRecordKind_ {
  CUSP_RECORD_DISK = 0,
  CUSP_RECORD_PATCH,
  CUSP_RECORD_POINT
} cuspRecordKind;

// Number of contact records of plugin instance `instance` in d after the last step; -1 if the
// instance index is out of range, is not a cusp.contact instance, or has no per-mjData state.
int cusp_contacts_count(const mjModel* m, const mjData* d, int instance);

// Copy at most `capacity` records; every output array may be NULL (not written). Per record i:
//   pos[3i..]      m       contact point (disk, point) or ECP (patch), world
//   frame[9i..]    -       rows t, o, n; n (unit) points from geom[1] towards geom[0]
//   impulse[4i..]  N s     normal, along t, along o; N m s torsion about n (0 unless patch)
//   gap[i]         m       signed gap at q* (< 0: penetration); patches: the smallest vertex gap
//   mode[i]                cuspContactMode (0 break, 1 stick, 2 slide)
//   kind[i]                cuspRecordKind
//   geom[2i..], body[2i..] the registered geom/body first, the one it touches second
// Returns the number of records written, or -1 as cusp_contacts_count.
int cusp_contacts_copy(const mjModel* m, const mjData* d, int instance, int capacity,
                       double* pos, double* frame, double* impulse, double* gap, int* mode,
                       int* kind, int* geom, int* body);

// N, sum of the normal impulses of every record divided by the time step (the total normal
// contact force the instance applied in the last step); 0 if the instance is not found.
double cusp_contacts_normal_force(const mjModel* m, const mjData* d, int instance);

// Wall time (s) the instance spent solving its disk islands' contact problems (the reduced try
// when `reduction_basis` is set, and the full conditioned LCP) since reset; 0 if `instance` is not
// a cusp.contact instance. Profiling only (bench/reduction): not part of the published state.
double cusp_contacts_solve_seconds(const mjModel* m, const mjData* d, int instance);

// Work units (plugin/solver/lcp.h, "Work budget") the backend runs of the instance's disk-island
// solves spent in the last step, together bounded by the config key `step_work_budget`; 0 if
// `instance` is not a cusp.contact instance. Not part of the published state.
double cusp_contacts_solve_work(const mjModel* m, const mjData* d, int instance);

//---------------------------------- for the library's controllers (C) -----------------------------
// What the controllers (plugin/control) read of a cusp.contact instance, so that they never reach
// into its workspace. Each gives -1 (or NULL) as cusp_contacts_count when `instance` is not a
// cusp.contact instance of d.

// The last step's contacts as point contacts into out (NULL: count only; else at most
// `capacity`): the disk contacts and the rigid point contacts as they are, then each surface patch
// as one point per vertex (sub: the vertex) with the patch's frame, friction, mode and island and
// the vertex's position, gap and normal impulse. Returns their number.
int cusp_contacts_points(const mjModel* m, const mjData* d, int instance, cuspContact* out,
                         int capacity);

// The friction directions of the instance's contact rows: returns r (the `friction_directions`
// key); *cone gets (cos, sin) of each direction k in its contact frame, d_k = cos t + sin o (2 r).
int cusp_contacts_cone(const mjModel* m, const mjData* d, int instance, const mjtNum** cone);

// The instance's validated configuration (gap stabilisation, the solver's conditioning).
const cuspConfig* cusp_contacts_config(const mjModel* m, const mjData* d, int instance);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_CONTACTS_API_H_
