// Detection of registered disks (cylinder geoms) against environment geoms at the current
// kinematics: closed forms where they are exact (disk-plane, disk-sphere), MuJoCo's signed
// distance query (mj_geomDistance) otherwise (boxes, capsules, cylinders, ellipsoids, convex
// meshes), so that pairs up to `margin` apart are found with their positive gap; overlapping,
// libccd MPR with the disk's support inflated by the margin, replaced by the query's depth and
// direction where they disagree beyond its tolerance. A disk on a box face or a cylinder's end
// rests on its rim points over the face, and the query's contact joins them where they miss the
// disk's nearest point. Against a box, a disk separated from it by more than the margin along a
// box axis, or lying beyond one face within that face's extents, is decided in closed form with
// what the query's route gives (cusp_detect_disk_by_query).
#ifndef CUSP_PLUGIN_DETECT_H_
#define CUSP_PLUGIN_DETECT_H_

#include <mujoco/mujoco.h>

#include "collide/contact.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUSP_MAX_DISK_POINTS 5  // contacts one disk-geom pair can produce

// Disk geom `disk` against geom `other`. Fills up to CUSP_MAX_DISK_POINTS contacts c[] (geoms,
// bodies, sub, gap, pos, frame; not mu) whose signed distance is <= margin; returns their count.
int cusp_detect_disk(cuspContact* c, const mjModel* m, const mjData* d, int disk, int other,
                     mjtNum margin);

// The same without the closed forms for boxes (the distance query decides every box pair): the
// reference the closed forms reproduce (tests).
int cusp_detect_disk_by_query(cuspContact* c, const mjModel* m, const mjData* d, int disk,
                              int other, mjtNum margin);

// Right-handed frame with the given unit normal as its third row: rows t, o, n (deterministic).
void cusp_contact_frame(mjtNum frame[9], const mjtNum normal[3]);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_DETECT_H_
