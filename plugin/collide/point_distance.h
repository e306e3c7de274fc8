// Signed distance from a point to a primitive geom at the current kinematics, with the unit
// normal (from the geom towards the point) and the geom's closest point: the obstacle query of
// the avoidance controller. Closed forms for plane, sphere, capsule, box and cylinder.
#ifndef CUSP_PLUGIN_POINT_DISTANCE_H_
#define CUSP_PLUGIN_POINT_DISTANCE_H_

#include <mujoco/mujoco.h>

#ifdef __cplusplus
extern "C" {
#endif

// 1 if geoms of MuJoCo type `type` (mjtGeom) are supported by cusp_point_geom_distance
int cusp_point_distance_supported(int type);

// Signed distance (m) from point p (3, world) to geom g (negative inside); normal (3): unit,
// world, pointing from the geom to p; closest (3): the point of the geom's surface nearest p.
mjtNum cusp_point_geom_distance(mjtNum normal[3], mjtNum closest[3], const mjModel* m,
                                const mjData* d, int g, const mjtNum p[3]);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_POINT_DISTANCE_H_
