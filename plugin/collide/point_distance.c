// Point-to-primitive signed distances in the geom's frame, mapped back to the world.
#include "collide/point_distance.h"

#include <math.h>

int cusp_point_distance_supported(int type) {
  return type == mjGEOM_PLANE || type == mjGEOM_SPHERE || type == mjGEOM_CAPSULE ||
         type == mjGEOM_BOX || type == mjGEOM_CYLINDER;
}

// distance from local point x to local point c, normal (x - c)/|x - c|; fallback normal if they
// coincide
static mjtNum away_from(mjtNum n[3], const mjtNum x[3], const mjtNum c[3],
                        const mjtNum fallback[3]) {
  mjtNum v[3] = {x[0] - c[0], x[1] - c[1], x[2] - c[2]};
  mjtNum len = mju_norm3(v);
  if (len > mjMINVAL) {
    mju_scl3(n, v, 1 / len);
  } else {
    mju_copy3(n, fallback);
  }
  return len;
}

mjtNum cusp_point_geom_distance(mjtNum normal[3], mjtNum closest[3], const mjModel* m,
                                const mjData* d, int g, const mjtNum p[3]) {
  const mjtNum* pos = d->geom_xpos + 3 * g;
  const mjtNum* mat = d->geom_xmat + 9 * g;  // row-major, columns are the geom's axes
  const mjtNum* size = m->geom_size + 3 * g;
  mjtNum rel[3], x[3];  // x: p in the geom frame
  mju_sub3(rel, p, pos);
  mju_mulMatTVec3(x, mat, rel);
  static const mjtNum up[3] = {0, 0, 1};
  mjtNum n[3], c[3], dist;
  switch (m->geom_type[g]) {
    case mjGEOM_PLANE:  // the infinite plane z = 0 of the geom frame
      mju_copy3(n, up);
      c[0] = x[0];
      c[1] = x[1];
      c[2] = 0;
      dist = x[2];
      break;
    case mjGEOM_SPHERE: {
      mjtNum o[3] = {0, 0, 0};
      dist = away_from(n, x, o, up) - size[0];
      mju_scl3(c, n, size[0]);
      break;
    }
    case mjGEOM_CAPSULE: {  // segment z in [-size1, size1], radius size0
      mjtNum axis[3] = {0, 0, mju_clip(x[2], -size[1], size[1])};
      dist = away_from(n, x, axis, up) - size[0];
      mju_addScl3(c, axis, n, size[0]);
      break;
    }
    case mjGEOM_BOX: {
      mjtNum clamp[3];
      int inside = 1;
      for (int i = 0; i < 3; i++) {
        clamp[i] = mju_clip(x[i], -size[i], size[i]);
        if (clamp[i] != x[i]) inside = 0;
      }
      if (!inside) {
        dist = away_from(n, x, clamp, up);
        mju_copy3(c, clamp);
      } else {  // the nearest face
        int best = 0;
        mjtNum depth = size[0] - fabs(x[0]);
        for (int i = 1; i < 3; i++) {
          if (size[i] - fabs(x[i]) < depth) {
            depth = size[i] - fabs(x[i]);
            best = i;
          }
        }
        mju_zero3(n);
        n[best] = x[best] >= 0 ? 1 : -1;
        mju_copy3(c, x);
        c[best] = n[best] * size[best];
        dist = -depth;
      }
      break;
    }
    case mjGEOM_CYLINDER: {  // radius size0, half height size1, axis z
      mjtNum rho = mju_sqrt(x[0] * x[0] + x[1] * x[1]);
      mjtNum radial[2] = {1, 0};
      if (rho > mjMINVAL) {
        radial[0] = x[0] / rho;
        radial[1] = x[1] / rho;
      }
      mjtNum out_r = rho - size[0], out_z = fabs(x[2]) - size[1];
      if (out_r <= 0 && out_z <= 0) {  // inside: the nearer of side and cap
        if (out_r > out_z) {
          n[0] = radial[0];
          n[1] = radial[1];
          n[2] = 0;
          c[0] = radial[0] * size[0];
          c[1] = radial[1] * size[0];
          c[2] = x[2];
          dist = out_r;
        } else {
          n[0] = n[1] = 0;
          n[2] = x[2] >= 0 ? 1 : -1;
          c[0] = x[0];
          c[1] = x[1];
          c[2] = n[2] * size[1];
          dist = out_z;
        }
      } else {
        mjtNum r = mju_min(rho, size[0]);
        c[0] = radial[0] * r;
        c[1] = radial[1] * r;
        c[2] = mju_clip(x[2], -size[1], size[1]);
        dist = away_from(n, x, c, up);
      }
      break;
    }
    default:  // refused at load (cusp_point_distance_supported)
      mju_copy3(n, up);
      mju_copy3(c, x);
      dist = mjMAXVAL;
  }
  mju_mulMatVec3(normal, mat, n);
  mju_mulMatVec3(closest, mat, c);
  mju_addTo3(closest, pos);
  return dist;
}
