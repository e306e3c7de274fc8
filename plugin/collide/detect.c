// Disk detection: closed forms (plane, sphere) and libccd MPR with a margin-inflated support.
#include "collide/detect.h"

#include <math.h>
#include <string.h>

#include <ccd/ccd.h>
#include <ccd/vec3.h>

//---------------------------------- frames and helpers ---------------------------------------------

void cusp_contact_frame(mjtNum frame[9], const mjtNum normal[3]) {
  mjtNum n[3] = {normal[0], normal[1], normal[2]};
  mju_normalize3(n);
  // t: the world axis least aligned with n, made orthogonal to it
  mjtNum axis[3] = {0, 0, 0};
  int least = 0;
  for (int i = 1; i < 3; i++) {
    if (fabs(n[i]) < fabs(n[least])) least = i;
  }
  axis[least] = 1;
  mjtNum t[3], o[3];
  mju_addScl3(t, axis, n, -mju_dot3(axis, n));
  mju_normalize3(t);
  mju_cross(o, n, t);
  mju_copy3(frame, t);
  mju_copy3(frame + 3, o);
  mju_copy3(frame + 6, n);
}

static void geom_axis(mjtNum axis[3], const mjData* d, int g, int k) {
  const mjtNum* R = d->geom_xmat + 9 * g;  // row-major; column k is local axis k
  axis[0] = R[k];
  axis[1] = R[3 + k];
  axis[2] = R[6 + k];
}

// support point of a cylinder (centre c, unit axis a, radius r, half-height hz) in direction u
static void cylinder_support(mjtNum s[3], const mjtNum c[3], const mjtNum a[3], mjtNum r,
                             mjtNum hz, const mjtNum u[3]) {
  mjtNum ua = mju_dot3(u, a);
  mjtNum perp[3];
  mju_addScl3(perp, u, a, -ua);
  mjtNum np = mju_norm3(perp);
  mju_addScl3(s, c, a, ua >= 0 ? hz : -hz);
  // a face seen head-on has no unique support point: take the face centre (deterministic)
  if (np > 1e-9 * mju_norm3(u)) mju_addToScl3(s, perp, r / np);
}

// a contact of the pair (disk, other) with the given frame (rows t, o, n)
static void fill_framed(cuspContact* c, const mjModel* m, int disk, int other, mjtNum gap,
                        const mjtNum pos[3], const mjtNum frame[9]) {
  c->geom[0] = disk;
  c->geom[1] = other;
  c->body[0] = m->geom_bodyid[disk];
  c->body[1] = m->geom_bodyid[other];
  c->sub = 0;
  c->gap = gap;
  mju_copy3(c->pos, pos);
  mju_copy(c->frame, frame, 9);
}

static void fill(cuspContact* c, const mjModel* m, int disk, int other, mjtNum gap,
                 const mjtNum pos[3], const mjtNum normal[3]) {
  mjtNum frame[9];
  cusp_contact_frame(frame, normal);
  fill_framed(c, m, disk, other, gap, pos, frame);
}

//---------------------------------- closed forms ---------------------------------------------------

// A disk against a plane touches with its lowest rim point; lying (nearly) flat it rests on its
// face, which one point cannot carry: the lowest rim point and the two rim points at +-120 deg
// on the same face enter whenever they are within the margin (sub 0..2), and so does the lowest
// rim point of the other face (sub 3: standing on its rim the disk touches along a segment).
// The plane: point p0, unit normal n (towards the disk). A finite face (half > 0) also keeps only
// the rim points whose projection lies on the face: |(s - p0).tx| <= half[0], |(s - p0).ty| <=
// half[1], with tx, ty the face's in-plane axes.
typedef struct FlatSurface_ {
  mjtNum p0[3], n[3];      // m, unit
  mjtNum tx[3], ty[3];     // unit in-plane axes (finite faces)
  mjtNum half[2];          // m, half extents along tx, ty; <= 0: infinite plane
  mjtNum radius;           // m, > 0: a round face of this radius about p0 (half unused)
} FlatSurface;

// whether the point at diff = s - p0 projects onto the surface's face
static int on_face(const FlatSurface* S, const mjtNum diff[3]) {
  if (S->radius > 0) {
    mjtNum in[3];
    mju_addScl3(in, diff, S->n, -mju_dot3(diff, S->n));
    return mju_norm3(in) <= S->radius * (1 + 1e-9);  // a rim on an equal rim counts as on it
  }
  return S->half[0] <= 0 || (fabs(mju_dot3(diff, S->tx)) <= S->half[0] &&
                             fabs(mju_dot3(diff, S->ty)) <= S->half[1]);
}

static int disk_flat(cuspContact* c, const mjModel* m, const mjData* d, int disk, int other,
                     const FlatSurface* S, mjtNum margin) {
  const mjtNum* n = S->n;
  mjtNum a[3];
  geom_axis(a, d, disk, 2);
  const mjtNum* centre = d->geom_xpos + 3 * disk;
  mjtNum r = m->geom_size[3 * disk], hz = m->geom_size[3 * disk + 1];
  // lower face centre, and the in-face direction pointing most down the plane normal
  mjtNum an = mju_dot3(a, n), face[3], down[3];
  mju_addScl3(face, centre, a, an >= 0 ? -hz : hz);
  mju_addScl3(down, n, a, -an);
  mju_scl3(down, down, -1);
  if (mju_normalize3(down) < 1e-9) {
    mjtNum frame[9];
    cusp_contact_frame(frame, a);
    mju_copy3(down, frame);  // flat: any rim direction, deterministic
  }
  mjtNum side[3];
  mju_cross(side, a, down);
  // cos, sin of 2 pi k / 3 (the double nearest each: what libm returns for the rounded angle)
  static const mjtNum rim[3][2] = {{1, 0},
                                   {-0x1.ffffffffffffcp-2, 0x1.bb67ae8584cabp-1},
                                   {-0x1.0000000000004p-1, -0x1.bb67ae8584ca8p-1}};
  int count = 0;
  mjtNum frame[9];  // every rim point's frame: that of n (formed at the first)
  for (int k = 0; k < 3; k++) {
    mjtNum s[3], diff[3];
    mju_addScl3(s, face, down, r * rim[k][0]);
    mju_addToScl3(s, side, r * rim[k][1]);
    mju_sub3(diff, s, S->p0);
    mjtNum gap = mju_dot3(diff, n);
    if (gap > margin) continue;
    if (!on_face(S, diff)) continue;  // beyond the face's edge
    mjtNum pos[3];
    mju_addScl3(pos, s, n, -0.5 * gap);  // midway between the disk and the plane
    if (!count) cusp_contact_frame(frame, n);
    fill_framed(c + count, m, disk, other, gap, pos, frame);
    c[count].sub = k;
    count++;
  }
  // the lowest rim point of the other face: a disk standing on its rim touches along a segment
  // of length 2 hz, which one end cannot carry (a box resting on an arm's disk rocked about the
  // other end, flipping every step)
  {
    mjtNum s[3], diff[3];
    mju_addScl3(s, centre, a, an >= 0 ? hz : -hz);
    mju_addToScl3(s, down, r);
    mju_sub3(diff, s, S->p0);
    mjtNum gap = mju_dot3(diff, n);
    int inside = on_face(S, diff);
    if (gap <= margin && inside) {
      mjtNum pos[3];
      mju_addScl3(pos, s, n, -0.5 * gap);
      if (!count) cusp_contact_frame(frame, n);
      fill_framed(c + count, m, disk, other, gap, pos, frame);
      c[count].sub = 3;
      count++;
    }
  }
  return count;
}

static int disk_plane(cuspContact* c, const mjModel* m, const mjData* d, int disk, int plane,
                      mjtNum margin) {
  FlatSurface S;
  memset(&S, 0, sizeof(S));
  geom_axis(S.n, d, plane, 2);
  mju_copy3(S.p0, d->geom_xpos + 3 * plane);
  return disk_flat(c, m, d, disk, plane, &S, margin);
}

static int disk_sphere(cuspContact* c, const mjModel* m, const mjData* d, int disk, int sphere,
                       mjtNum margin) {
  const mjtNum* cd = d->geom_xpos + 3 * disk;
  const mjtNum* cs = d->geom_xpos + 3 * sphere;
  mjtNum r = m->geom_size[3 * disk], hz = m->geom_size[3 * disk + 1];
  mjtNum rs = m->geom_size[3 * sphere];
  mjtNum a[3], rel[3], radial[3];
  geom_axis(a, d, disk, 2);
  mju_sub3(rel, cs, cd);
  mjtNum axial = mju_dot3(rel, a);
  mju_addScl3(radial, rel, a, -axial);
  mjtNum rho = mju_norm3(radial);
  mjtNum radial_dir[3];
  if (rho > 1e-12) {
    mju_scl3(radial_dir, radial, 1 / rho);
  } else {
    mjtNum frame[9];
    cusp_contact_frame(frame, a);
    mju_copy3(radial_dir, frame);
  }
  mjtNum closest[3], normal[3], gap;
  if (fabs(axial) <= hz && rho <= r) {
    // sphere centre inside the disk: leave through the nearest face or the rim
    mjtNum depth_face = hz - fabs(axial), depth_rim = r - rho;
    if (depth_face <= depth_rim) {
      mju_scl3(normal, a, axial >= 0 ? -1 : 1);  // from sphere towards the disk
      mju_addScl3(closest, cs, a, axial >= 0 ? depth_face : -depth_face);
      gap = -depth_face - rs;
    } else {
      mju_scl3(normal, radial_dir, -1);
      mju_addScl3(closest, cs, radial_dir, depth_rim);
      gap = -depth_rim - rs;
    }
  } else {
    mjtNum ax = axial > hz ? hz : (axial < -hz ? -hz : axial);
    mjtNum rr = rho < r ? rho : r;
    mju_addScl3(closest, cd, a, ax);
    mju_addToScl3(closest, radial_dir, rr);
    mju_sub3(normal, closest, cs);
    mjtNum dist = mju_normalize3(normal);
    gap = dist - rs;
  }
  if (gap > margin) return 0;
  mjtNum pos[3];
  mju_addScl3(pos, closest, normal, -0.5 * gap);
  fill(c, m, disk, sphere, gap, pos, normal);
  return 1;
}

//---------------------------------- libccd MPR -----------------------------------------------------

// cos of the largest angle between the MPR normal and a box face normal for a face contact
// (~8 deg: MPR's normal of a face contact matches the face to its tolerance; an edge contact of a
// tilted disk is further off)
#define CUSP_FACE_COS 0.99

// m, the distance query's own tolerance: a face rule's rim points further from the geom than the
// distance by more than this miss the disk's nearest point (beyond the face: a rim reaching over
// an edge or a corner), and an MPR depth further from the distance's than this is not taken
#define CUSP_DISTANCE_TOL 1e-6

typedef struct CcdGeom_ {
  const mjModel* m;
  const mjData* d;
  int geom;
  mjtNum inflate;  // m, added to the support in every direction
} CcdGeom;

static void local_support(mjtNum s[3], const mjModel* m, int g, const mjtNum u[3]) {
  const mjtNum* size = m->geom_size + 3 * g;
  switch (m->geom_type[g]) {
    case mjGEOM_SPHERE: {
      mjtNum un[3] = {u[0], u[1], u[2]};
      mju_normalize3(un);
      mju_scl3(s, un, size[0]);
      return;
    }
    case mjGEOM_CAPSULE: {
      mjtNum un[3] = {u[0], u[1], u[2]};
      mju_normalize3(un);
      mju_scl3(s, un, size[0]);
      s[2] += u[2] >= 0 ? size[1] : -size[1];
      return;
    }
    case mjGEOM_ELLIPSOID: {
      // support of x^T A^-2 x <= 1: A^2 u / |A u|
      mjtNum au[3] = {size[0] * u[0], size[1] * u[1], size[2] * u[2]};
      mjtNum nrm = mju_norm3(au);
      for (int i = 0; i < 3; i++) s[i] = nrm > 0 ? size[i] * au[i] / nrm : 0;
      return;
    }
    case mjGEOM_CYLINDER: {
      const mjtNum c[3] = {0, 0, 0}, a[3] = {0, 0, 1};
      cylinder_support(s, c, a, size[0], size[1], u);
      return;
    }
    case mjGEOM_BOX:
      for (int i = 0; i < 3; i++) s[i] = u[i] >= 0 ? size[i] : -size[i];
      return;
    case mjGEOM_MESH: {
      int mesh = m->geom_dataid[g];
      const float* vert = m->mesh_vert + 3 * m->mesh_vertadr[mesh];
      int nvert = m->mesh_vertnum[mesh];
      mjtNum best = -mjMAXVAL;
      for (int i = 0; i < nvert; i++) {
        mjtNum dot = u[0] * vert[3 * i] + u[1] * vert[3 * i + 1] + u[2] * vert[3 * i + 2];
        if (dot > best) {
          best = dot;
          s[0] = vert[3 * i];
          s[1] = vert[3 * i + 1];
          s[2] = vert[3 * i + 2];
        }
      }
      return;
    }
    default:
      s[0] = s[1] = s[2] = 0;
  }
}

static void ccd_support(const void* obj, const ccd_vec3_t* dir, ccd_vec3_t* out) {
  const CcdGeom* o = (const CcdGeom*)obj;
  const mjtNum* R = o->d->geom_xmat + 9 * o->geom;
  mjtNum u[3] = {dir->v[0], dir->v[1], dir->v[2]}, ul[3], sl[3], s[3];
  mju_mulMatTVec3(ul, R, u);  // direction in the geom frame
  local_support(sl, o->m, o->geom, ul);
  mju_mulMatVec3(s, R, sl);
  mju_addTo3(s, o->d->geom_xpos + 3 * o->geom);
  if (o->inflate > 0) {
    mjtNum un[3] = {u[0], u[1], u[2]};
    mju_normalize3(un);
    mju_addToScl3(s, un, o->inflate);
  }
  for (int i = 0; i < 3; i++) out->v[i] = s[i];
}

static void ccd_center(const void* obj, ccd_vec3_t* center) {
  const CcdGeom* o = (const CcdGeom*)obj;
  for (int i = 0; i < 3; i++) center->v[i] = o->d->geom_xpos[3 * o->geom + i];
}

static int disk_convex_finish(cuspContact* c, const mjModel* m, const mjData* d, int disk,
                              int other, mjtNum margin, mjtNum gap, const mjtNum n[3],
                              const mjtNum p[3]);

// the rim contacts of a disk on face (axis, sign) of box `other` (disk_flat on that face)
static int disk_box_face(cuspContact* c, const mjModel* m, const mjData* d, int disk, int other,
                         int axis, mjtNum sign, mjtNum margin) {
  FlatSurface S;
  memset(&S, 0, sizeof(S));  // radius 0: a rectangular face
  const mjtNum* size = m->geom_size + 3 * other;
  geom_axis(S.n, d, other, axis);
  mju_scl3(S.n, S.n, sign);
  mju_addScl3(S.p0, d->geom_xpos + 3 * other, S.n, size[axis]);
  geom_axis(S.tx, d, other, (axis + 1) % 3);
  geom_axis(S.ty, d, other, (axis + 2) % 3);
  S.half[0] = size[(axis + 1) % 3];
  S.half[1] = size[(axis + 2) % 3];
  return disk_flat(c, m, d, disk, other, &S, margin);
}

// A disk and a box separated along a box axis, in closed form. Along box axis k (unit a_k) the
// disk (centre at c_k from the box centre, unit axis nd, radius R, half-thickness hz) spans
// c_k +- e_k, e_k = hz |a_k.nd| + R sqrt(1 - (a_k.nd)^2), and sep_k = |c_k| - e_k - size_k bounds
// the distance from below. Returns 0 when some sep_k exceeds the margin (no contact: what the
// distance query would find), *face = 1 and the face's axis and side when the disk lies beyond
// one face and within its other two extents (then the distance is sep_k exactly, the nearest
// points lie on that face and their direction is its normal: the distance query's route to
// disk_box_face), else *face = 0 (the query decides). slack (m) keeps both decisions clear of the
// query's own tolerance.
static int disk_box_separation(int* face, int* axis, mjtNum* sign, const mjModel* m,
                               const mjData* d, int disk, int box, mjtNum margin, mjtNum slack) {
  const mjtNum* size = m->geom_size + 3 * box;
  mjtNum R = m->geom_size[3 * disk], hz = m->geom_size[3 * disk + 1];
  mjtNum nd[3], rel[3], cpos[3], ext[3], sep[3];
  geom_axis(nd, d, disk, 2);
  mju_sub3(rel, d->geom_xpos + 3 * disk, d->geom_xpos + 3 * box);
  int best = 0;
  for (int k = 0; k < 3; k++) {
    mjtNum ak[3];
    geom_axis(ak, d, box, k);
    mjtNum cosk = mju_dot3(ak, nd);
    cpos[k] = mju_dot3(ak, rel);
    ext[k] = hz * fabs(cosk) + R * sqrt(fmax(0, 1 - cosk * cosk));
    sep[k] = fabs(cpos[k]) - ext[k] - size[k];
    if (sep[k] > sep[best]) best = k;
  }
  *face = 0;
  if (sep[best] >= margin + slack) return 0;
  if (sep[best] <= slack || sep[best] >= margin - slack) return 1;
  for (int j = 0; j < 3; j++) {
    if (j != best && fabs(cpos[j]) + ext[j] > size[j]) return 1;
  }
  *face = 1;
  *axis = best;
  *sign = cpos[best] >= 0 ? 1 : -1;
  return 1;
}

static int disk_convex(cuspContact* c, const mjModel* m, const mjData* d, int disk, int other,
                       mjtNum margin, int closed_forms) {
  // MuJoCo's own signed distance (GJK apart, its penetration solver overlapping): exact for
  // separated pairs, where MPR's depth on the margin-inflated shapes is not (a capsule 24.8 mm
  // away read 7 mm with a 0.1 m margin: the disk stopped short of it), and the least translation
  // overlapping, where MPR's depth along its portal is not (a disk rim 20 um into a box edge read
  // up to 10 mm)
  if (closed_forms && m->geom_type[other] == mjGEOM_BOX) {
    // the common cases without the query: far from the box, or beyond one face within its extents
    int face = 0, axis = 0;
    mjtNum sign = 1;
    if (!disk_box_separation(&face, &axis, &sign, m, d, disk, other, margin, 1e-3 * margin)) {
      return 0;
    }
    if (face) {
      int count = disk_box_face(c, m, d, disk, other, axis, sign, margin);
      if (count > 0) return count;
    }
  }
  mjtNum fromto[6];
  mjtNum dist = mj_geomDistance(m, (mjData*)d, disk, other, margin, fromto);
  if (dist >= margin) return 0;
  // fromto runs from the disk's surface to the other's: against the normal while apart, along it
  // overlapping (then its depth and direction are those of the least translation that separates
  // them, to the query's tolerance)
  mjtNum dn[3] = {fromto[0] - fromto[3], fromto[1] - fromto[4], fromto[2] - fromto[5]};
  mjtNum len = mju_normalize3(dn);
  mjtNum mid[3];
  for (int k = 0; k < 3; k++) mid[k] = 0.5 * (fromto[k] + fromto[3 + k]);
  if (dist > 0 && len > 1e-9) {
    return disk_convex_finish(c, m, d, disk, other, margin, dist, dn, mid);
  }
  // overlapping or touching: MPR on the margin-inflated shapes, checked against the distance
  // obj1 = the other geom, obj2 = the disk inflated by the margin: dir moves the disk out
  CcdGeom env = {m, d, other, 0}, dk = {m, d, disk, margin};
  ccd_t ccd;
  CCD_INIT(&ccd);
  ccd.support1 = ccd_support;
  ccd.support2 = ccd_support;
  ccd.center1 = ccd_center;
  ccd.center2 = ccd_center;
  ccd.max_iterations = 200;
  ccd.mpr_tolerance = 1e-10;
  ccd_real_t depth;
  ccd_vec3_t dir, pos;
  int found = ccdMPRPenetration(&env, &dk, &ccd, &depth, &dir, &pos) == 0;
  mjtNum gap = margin - depth, n[3] = {dir.v[0], dir.v[1], dir.v[2]};
  found = found && mju_normalize3(n) >= 0.5;  // else a degenerate direction: no usable contact
  // MPR measures its depth along its portal's normal: at an edge or a corner that can be
  // millimetres off the least translation, along another direction (a disk rim 20 um into a box
  // edge read up to 10 mm). Deeper than the query's tolerance, its depth and direction are the
  // query's where MPR's disagree (depth by that tolerance, direction by 5 deg); within it (the
  // query's direction of a near-zero depth is noise: a disk flat on a box face read 1.25e-8 m
  // deep along the face's inward normal) MPR's direction stays, with the query's depth where
  // MPR's is further off than that tolerance.
  if (dist < -CUSP_DISTANCE_TOL && len > -0.5 * dist) {
    mju_scl3(dn, dn, -1);
    if (!found || fabs(gap - dist) > CUSP_DISTANCE_TOL || mju_dot3(n, dn) < cos(5 * mjPI / 180)) {
      return disk_convex_finish(c, m, d, disk, other, margin, dist, dn, mid);
    }
  }
  if (!found) return 0;
  if (fabs(gap - dist) > CUSP_DISTANCE_TOL) gap = dist;
  if (gap > margin) return 0;
  mjtNum p[3] = {pos.v[0], pos.v[1], pos.v[2]};
  mju_addToScl3(p, n, 0.5 * margin);  // undo the inflation: midway between the real surfaces
  return disk_convex_finish(c, m, d, disk, other, margin, gap, n, p);
}

// The rim contacts c[0 .. count) of a face rule, and the contact at the distance found (gap along
// n, midpoint p) when the rim points all lie further than it (by CUSP_DISTANCE_TOL): the disk's
// nearest point is then no rim point over the face but beyond it (over an edge or a corner, or
// overlapping a side face), and the published gap is the distance's. Returns the new count.
static int with_nearest(cuspContact* c, int count, const mjModel* m, int disk, int other,
                        mjtNum gap, const mjtNum n[3], const mjtNum p[3]) {
  mjtNum least = c[0].gap;
  for (int k = 1; k < count; k++) least = fmin(least, c[k].gap);
  if (least <= gap + CUSP_DISTANCE_TOL) return count;
  fill(c + count, m, disk, other, gap, p, n);
  c[count].sub = CUSP_MAX_DISK_POINTS - 1;
  return count + 1;
}

// the contact (or, flat on a box face or a cylinder's end, the rim contacts) of a disk at signed
// distance gap from geom other along unit normal n (from other towards the disk), midpoint p
static int disk_convex_finish(cuspContact* c, const mjModel* m, const mjData* d, int disk,
                              int other, mjtNum margin, mjtNum gap, const mjtNum n[3],
                              const mjtNum p[3]) {
  if (m->geom_type[other] == mjGEOM_BOX) {
    // Against a face of the box (the MPR normal within CUSP_FACE_COS of a face normal) the disk
    // may lie flat on it: one point cannot carry a face (the disk tilts into the box and gains
    // energy), so use the plane closed form on that face (up to three rim points on the face).
    // An edge or corner contact keeps the single MPR point; so does a face contact whose rim
    // points all lie beyond the face's edges.
    mjtNum best = -1;
    int axis = 0;
    mjtNum sign = 1;
    for (int k = 0; k < 3; k++) {
      mjtNum ax[3];
      geom_axis(ax, d, other, k);
      mjtNum dot = mju_dot3(ax, n);
      if (fabs(dot) > best) {
        best = fabs(dot);
        axis = k;
        sign = dot >= 0 ? 1 : -1;
      }
    }
    if (best >= CUSP_FACE_COS) {
      int count = disk_box_face(c, m, d, disk, other, axis, sign, margin);
      if (count > 0) return with_nearest(c, count, m, disk, other, gap, n, p);
    }
  }
  if (m->geom_type[other] == mjGEOM_CYLINDER) {
    // Against the flat end of a cylinder (another contact disk: two arms end on, a tip on a
    // base) the disk rests on that round face the same way: its rim points on the face
    mjtNum ax[3];
    geom_axis(ax, d, other, 2);
    mjtNum dot = mju_dot3(ax, n);
    if (fabs(dot) >= CUSP_FACE_COS) {
      FlatSurface S;
      memset(&S, 0, sizeof(S));
      mju_scl3(S.n, ax, dot >= 0 ? 1 : -1);
      mju_addScl3(S.p0, d->geom_xpos + 3 * other, S.n, m->geom_size[3 * other + 1]);
      S.radius = m->geom_size[3 * other];
      int count = disk_flat(c, m, d, disk, other, &S, margin);
      if (count > 0) return with_nearest(c, count, m, disk, other, gap, n, p);
    }
  }
  fill(c, m, disk, other, gap, p, n);
  return 1;
}

//---------------------------------- dispatch -------------------------------------------------------

static int detect_disk(cuspContact* c, const mjModel* m, const mjData* d, int disk, int other,
                       mjtNum margin, int closed_forms) {
  int type = m->geom_type[other];
  if (type == mjGEOM_PLANE) return disk_plane(c, m, d, disk, other, margin);
  // broad phase: bounding spheres
  mjtNum diff[3];
  mju_sub3(diff, d->geom_xpos + 3 * disk, d->geom_xpos + 3 * other);
  if (mju_norm3(diff) > m->geom_rbound[disk] + m->geom_rbound[other] + margin) return 0;
  if (type == mjGEOM_SPHERE) return disk_sphere(c, m, d, disk, other, margin);
  if (type == mjGEOM_BOX || type == mjGEOM_CAPSULE || type == mjGEOM_CYLINDER ||
      type == mjGEOM_ELLIPSOID || type == mjGEOM_MESH) {
    return disk_convex(c, m, d, disk, other, margin, closed_forms);
  }
  return 0;  // heightfields, SDFs: not supported as disk environment
}

int cusp_detect_disk(cuspContact* c, const mjModel* m, const mjData* d, int disk, int other,
                     mjtNum margin) {
  return detect_disk(c, m, d, disk, other, margin, 1);
}

int cusp_detect_disk_by_query(cuspContact* c, const mjModel* m, const mjData* d, int disk,
                              int other, mjtNum margin) {
  return detect_disk(c, m, d, disk, other, margin, 0);
}
