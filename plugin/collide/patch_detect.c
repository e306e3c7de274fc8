// Patch detection for registered rigid bodies: the support feature of a body's geoms
// against a plane or a box face within margin, as a polygon in the surface plane with the gap at
// its vertices; point contacts (MuJoCo's collision functions) for every other pair.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collide/detect.h"
#include "config/params.h"
#include "collide/patch.h"

#define CUSP_NRIM 8             // rim samples per cylinder cap
// cos, sin of the rim samples' angles 2 pi i / CUSP_NRIM (the eighths of a turn)
#define CUSP_RIM_R 0.70710678118654752440
static const mjtNum kRim[CUSP_NRIM][2] = {{1, 0},           {CUSP_RIM_R, CUSP_RIM_R},
                                          {0, 1},           {-CUSP_RIM_R, CUSP_RIM_R},
                                          {-1, 0},          {-CUSP_RIM_R, -CUSP_RIM_R},
                                          {0, -1},          {CUSP_RIM_R, -CUSP_RIM_R}};
_Static_assert(CUSP_NRIM == 8, "kRim holds the eighths of a turn");
#define CUSP_SAME_POINT 1e-9     // m, candidates this close along the surface are one point
#define CUSP_FEATURE_TOL 2e-4   // m, points this close to the deepest one form the support feature

//---------------------------------- small geometry ------------------------------------------------

#define CUSP_MAXPOLY 8  // edges of a mesh face that can support a patch (more: point contacts)

typedef struct Surface_ {
  mjtNum c[3];      // m, a point of the surface plane (face centre)
  mjtNum t[3], o[3], n[3];  // unit, right-handed, n outward (towards the body)
  mjtNum half[2];   // m, half extents along t, o (finite faces)
  int finite;       // 1: box face, clip to half (or to poly); 0: plane
  int npoly;        // > 0: a mesh face, the convex polygon poly (counter-clockwise about n)
  mjtNum poly[2 * CUSP_MAXPOLY];  // m, its vertices (t, o) relative to c
  int geom, body;
} Surface;

typedef struct Cand_ {
  mjtNum x[2];      // m, coordinates along t, o relative to the surface point c
  mjtNum gap;       // m, height of the body point above the surface
  int geom;         // body geom that owns the point
  int line;         // 1: an end of the straight bottom line of a cylinder's side or a capsule
} Cand;

// Per-step scratch of the patch detector, carved from cuspPatchSet.scratch: sized at init by
// the largest registered-body point count P (geom_point_count summed over a body's geoms) and
// geom count R, so that no candidate, feature point or region is ever dropped.
typedef struct Scratch_ {
  int cap, nreg;       // P, R
  mjtNum* pts;         // (3 P) points of one geom
  Cand* cand;          // (P) candidates within margin
  Cand* tmp;           // (P + 1) hull scratch
  Cand* fc;            // (P + K) one geom's feature, clipped (K = CUSP_MAXPOLY edges at most)
  Cand* c1;            // (P + K) clip scratch
  Cand* c2;            // (P + K)
  Cand* clip;          // (2 P + K R + K) vertices: hull clipped, plus feature points
  mjtNum* feat;        // (2 (P + K R)) feature points (t, o)
  mjtNum* feat_gap;    // (P + K R)
  const mjtNum** regions;  // (R)
  int* counts;         // (R)
  void* region;        // (R) Region records (defined below)
  int* face;           // (R) box face each geom of an object takes (body_vs_env), -1: none
  int* subset;         // (R) the geoms of an object on one face
} Scratch;

// A registered body and the geoms it owns: its own and those of the bodies welded to it (one rigid
// object; config.h cusp_config_object_geoms). Its geoms never touch each other.
typedef struct Object_ {
  int body;            // the registered body (the one with the joints)
  const int* geom;     // (ngeom) its geoms
  int ngeom;
} Object;

static Object object_of(const cuspConfig* cfg, int i) {
  Object o;
  o.body = cfg->patch_bodies[i];
  o.ngeom = cusp_config_object_geoms(&o.geom, cfg, i);
  return o;
}

static void axis_of(mjtNum a[3], const mjtNum* xmat, int k) {
  a[0] = xmat[k];
  a[1] = xmat[3 + k];
  a[2] = xmat[6 + k];
}

// Points of geom g that may touch a surface with outward normal n (towards the body): the support
// points in direction -n and, for flat-bottomed geoms, the polygon vertices. Returns count (<= max).
static int geom_points(mjtNum* pts, int max, const mjModel* m, const mjData* d, int g,
                       const mjtNum n[3]) {
  const mjtNum* c = d->geom_xpos + 3 * g;
  const mjtNum* R = d->geom_xmat + 9 * g;
  const mjtNum* s = m->geom_size + 3 * g;
  mjtNum ax[3][3];
  for (int k = 0; k < 3; k++) axis_of(ax[k], R, k);
  int np = 0;
  switch (m->geom_type[g]) {
    case mjGEOM_BOX:
      for (int i = 0; i < 8 && np < max; i++, np++) {
        for (int j = 0; j < 3; j++) {
          pts[3 * np + j] = c[j] + ((i & 1) ? s[0] : -s[0]) * ax[0][j] +
                            ((i & 2) ? s[1] : -s[1]) * ax[1][j] +
                            ((i & 4) ? s[2] : -s[2]) * ax[2][j];
        }
      }
      break;
    case mjGEOM_CYLINDER: {
      // rim samples of both caps + the exact support point of each rim in direction -n
      mjtNum na = mju_dot3(n, ax[2]);
      mjtNum w[3];  // in-cap direction of -n
      for (int j = 0; j < 3; j++) w[j] = -n[j] + na * ax[2][j];
      mjtNum wn = mju_normalize3(w);
      for (int cap = -1; cap <= 1; cap += 2) {
        for (int i = 0; i < CUSP_NRIM && np < max; i++, np++) {
          for (int j = 0; j < 3; j++) {
            pts[3 * np + j] = c[j] + cap * s[1] * ax[2][j] +
                              s[0] * (kRim[i][0] * ax[0][j] + kRim[i][1] * ax[1][j]);
          }
        }
        if (wn > 1e-6 && np < max) {
          for (int j = 0; j < 3; j++) pts[3 * np + j] = c[j] + cap * s[1] * ax[2][j] + s[0] * w[j];
          np++;
        }
      }
      break;
    }
    case mjGEOM_CAPSULE:
      for (int cap = -1; cap <= 1 && np < max; cap += 2, np++) {
        for (int j = 0; j < 3; j++) pts[3 * np + j] = c[j] + cap * s[1] * ax[2][j] - s[0] * n[j];
      }
      break;
    case mjGEOM_SPHERE:
      for (int j = 0; j < 3; j++) pts[j] = c[j] - s[0] * n[j];
      np = 1;
      break;
    case mjGEOM_ELLIPSOID: {
      // support point in direction -n: x = R S^2 l / |S l|, l = R^T (-n)
      mjtNum l[3], q[3] = {0, 0, 0}, norm = 0;
      for (int k = 0; k < 3; k++) l[k] = -mju_dot3(ax[k], n);
      for (int k = 0; k < 3; k++) norm += s[k] * s[k] * l[k] * l[k];
      norm = sqrt(norm);
      if (norm < mjMINVAL) norm = mjMINVAL;
      for (int k = 0; k < 3; k++) {
        for (int j = 0; j < 3; j++) q[j] += ax[k][j] * s[k] * s[k] * l[k] / norm;
      }
      for (int j = 0; j < 3; j++) pts[j] = c[j] + q[j];
      np = 1;
      break;
    }
    case mjGEOM_MESH: {
      int mesh = m->geom_dataid[g];
      if (mesh < 0) break;
      const float* v = m->mesh_vert + 3 * m->mesh_vertadr[mesh];
      int nvert = m->mesh_vertnum[mesh];
      // every vertex (the caller's buffer holds mesh_vertnum; callers filter by margin), in
      // vertex order (deterministic)
      for (int i = 0; i < nvert && np < max; i++) {
        for (int j = 0; j < 3; j++) {
          pts[3 * np + j] = c[j] + v[3 * i] * ax[0][j] + v[3 * i + 1] * ax[1][j] +
                            v[3 * i + 2] * ax[2][j];
        }
        np++;
      }
      break;
    }
    default:
      break;
  }
  return np;
}

static int patch_capable(int type) {
  return type == mjGEOM_BOX || type == mjGEOM_CYLINDER || type == mjGEOM_CAPSULE ||
         type == mjGEOM_SPHERE || type == mjGEOM_ELLIPSOID || type == mjGEOM_MESH;
}

// number of points geom_points can return for geom g (its buffer size)
static int geom_point_count(const mjModel* m, int g) {
  switch (m->geom_type[g]) {
    case mjGEOM_BOX: return 8;
    case mjGEOM_CYLINDER: return 2 * (CUSP_NRIM + 1);
    case mjGEOM_CAPSULE: return 2;
    case mjGEOM_SPHERE:
    case mjGEOM_ELLIPSOID: return 1;
    case mjGEOM_MESH: return m->geom_dataid[g] >= 0 ? m->mesh_vertnum[m->geom_dataid[g]] : 0;
    default: return 0;
  }
}

// smallest gap of np points above surface S
static mjtNum points_min_gap(const mjtNum* pts, int np, const Surface* S) {
  mjtNum best = INFINITY;
  for (int i = 0; i < np; i++) {
    mjtNum r[3];
    mju_sub3(r, pts + 3 * i, S->c);
    mjtNum gap = mju_dot3(r, S->n);
    if (gap < best) best = gap;
  }
  return best;
}

// smallest gap of object o's geoms above surface S (support function along -n); pts: scratch of
// 3 x (the largest geom_point_count of its geoms)
static mjtNum body_min_gap(mjtNum* pts, const mjModel* m, const mjData* d, const Object* o,
                           const Surface* S) {
  mjtNum best = INFINITY;
  for (int k = 0; k < o->ngeom; k++) {
    int g = o->geom[k];
    if (!patch_capable(m->geom_type[g])) continue;
    int np = geom_points(pts, geom_point_count(m, g), m, d, g, S->n);
    mjtNum gap = points_min_gap(pts, np, S);
    if (gap < best) best = gap;
  }
  return best;
}

static void plane_surface(Surface* S, const mjData* d, int g) {
  const mjtNum* R = d->geom_xmat + 9 * g;
  axis_of(S->t, R, 0);
  axis_of(S->o, R, 1);
  axis_of(S->n, R, 2);
  mju_copy3(S->c, d->geom_xpos + 3 * g);
  S->finite = 0;
  S->npoly = 0;
  S->half[0] = S->half[1] = INFINITY;
  S->geom = g;
}

static void box_face(Surface* S, const mjModel* m, const mjData* d, int g, int face) {
  const mjtNum* R = d->geom_xmat + 9 * g;
  const mjtNum* s = m->geom_size + 3 * g;
  int a = face / 2;
  mjtNum sign = (face & 1) ? -1 : 1;
  int a1 = (a + 1) % 3, a2 = (a + 2) % 3;
  mjtNum ax[3];
  axis_of(ax, R, a);
  for (int j = 0; j < 3; j++) {
    S->n[j] = sign * ax[j];
    S->c[j] = d->geom_xpos[3 * g + j] + sign * s[a] * ax[j];
  }
  if (sign > 0) {
    axis_of(S->t, R, a1);
    axis_of(S->o, R, a2);
    S->half[0] = s[a1];
    S->half[1] = s[a2];
  } else {
    axis_of(S->t, R, a2);
    axis_of(S->o, R, a1);
    S->half[0] = s[a2];
    S->half[1] = s[a1];
  }
  S->finite = 1;
  S->npoly = 0;
  S->geom = g;
}

// the face of box g that separates it best from object o (largest minimum gap); returns that gap,
// and the face's index (box_face) in *face if not NULL
// The face of box g that separates object o best (largest smallest gap of o's points above it)
// into S, its index into *face; returns its gap. Returns at the first face whose gap reaches
// `enough` (then S and *face are that face's): a caller that needs no more than to know that
// some face separates by the margin stops there.
static mjtNum best_box_face(Surface* S, int* face, mjtNum* pts, const mjModel* m, const mjData* d,
                            int g, const Object* o, mjtNum enough) {
  mjtNum best = -INFINITY;
  Surface T;
  // an object of one box or mesh geom: its points do not depend on the face (geom_points), so
  // they are formed once for the six faces (the same gaps, a sixth of the work)
  int np = -1;
  if (o->ngeom == 1 && (m->geom_type[o->geom[0]] == mjGEOM_BOX ||
                        m->geom_type[o->geom[0]] == mjGEOM_MESH)) {
    mjtNum zero[3] = {0, 0, 1};
    np = geom_points(pts, geom_point_count(m, o->geom[0]), m, d, o->geom[0], zero);
  }
  for (int f = 0; f < 6; f++) {
    box_face(&T, m, d, g, f);
    mjtNum gap = np < 0 ? body_min_gap(pts, m, d, o, &T) : points_min_gap(pts, np, &T);
    if (gap > best) {
      best = gap;
      *S = T;
      if (face) *face = f;
    }
    if (best >= enough) break;
  }
  return best;
}

//---------------------------------- 2D polygons ---------------------------------------------------

static mjtNum cross2(const mjtNum* o, const mjtNum* a, const mjtNum* b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

static int cand_less(const Cand* a, const Cand* b) {
  return a->x[0] < b->x[0] || (a->x[0] == b->x[0] && a->x[1] < b->x[1]);
}

// convex hull (counter-clockwise, collinear points dropped) of n candidates, in place; returns count
static int hull2(Cand* c, int n, Cand* tmp) {
  // points at the same (t, o) within CUSP_SAME_POINT (the two rims of a body thinner than the
  // margin, equal up to the round-off of a tilt) are one point of the outline: keep the one nearest
  // the surface, whatever order they came in. Sorting alone does not make such twins neighbours.
  int u = 0;
  for (int i = 0; i < n; i++) {
    int twin = -1;
    for (int j = 0; j < u && twin < 0; j++) {
      if (fabs(c[i].x[0] - c[j].x[0]) <= CUSP_SAME_POINT &&
          fabs(c[i].x[1] - c[j].x[1]) <= CUSP_SAME_POINT) {
        twin = j;
      }
    }
    if (twin < 0) c[u++] = c[i];
    else if (c[i].gap < c[twin].gap) c[twin] = c[i];
  }
  n = u;
  if (n < 3) return n;
  // insertion sort: n is small and the order must be deterministic
  for (int i = 1; i < n; i++) {
    Cand key = c[i];
    int j = i - 1;
    while (j >= 0 && cand_less(&key, &c[j])) {
      c[j + 1] = c[j];
      j--;
    }
    c[j + 1] = key;
  }
  int k = 0;
  const mjtNum eps = 1e-12;
  for (int i = 0; i < n; i++) {
    while (k >= 2 && cross2(tmp[k - 2].x, tmp[k - 1].x, c[i].x) <= eps) k--;
    tmp[k++] = c[i];
  }
  for (int i = n - 2, lo = k + 1; i >= 0; i--) {
    while (k >= lo && cross2(tmp[k - 2].x, tmp[k - 1].x, c[i].x) <= eps) k--;
    tmp[k++] = c[i];
  }
  k--;  // last point repeats the first
  if (k < 1) k = 1;
  memcpy(c, tmp, k * sizeof(Cand));
  return k;
}

// clip a convex polygon (or segment, point) against e . x <= lim (e unit, in the t, o plane); gap
// interpolated linearly
static int clip_dir(Cand* out, const Cand* in, int n, const mjtNum e[2], mjtNum lim) {
  if (n <= 0) return 0;
  if (n == 1) {
    if (e[0] * in[0].x[0] + e[1] * in[0].x[1] <= lim) {
      out[0] = in[0];
      return 1;
    }
    return 0;
  }
  int k = 0, closed = n >= 3;
  int nedge = closed ? n : 1;
  for (int i = 0; i < nedge; i++) {
    const Cand* a = in + i;
    const Cand* b = in + (i + 1) % n;
    mjtNum da = e[0] * a->x[0] + e[1] * a->x[1] - lim, db = e[0] * b->x[0] + e[1] * b->x[1] - lim;
    if (da <= 0) out[k++] = *a;
    if ((da < 0 && db > 0) || (da > 0 && db < 0)) {
      mjtNum f = da / (da - db);
      Cand q = *a;
      for (int j = 0; j < 2; j++) q.x[j] = a->x[j] + f * (b->x[j] - a->x[j]);
      q.gap = a->gap + f * (b->gap - a->gap);
      out[k++] = q;
    }
    if (!closed && db <= 0) out[k++] = *b;
  }
  return k;
}

// clip against x[axis] * sgn <= lim

static int clip_half(Cand* out, const Cand* in, int n, int axis, mjtNum sgn, mjtNum lim) {
  const mjtNum e[2] = {axis == 0 ? sgn : 0, axis == 1 ? sgn : 0};
  return clip_dir(out, in, n, e, lim);
}


// the n points in a clipped to the finite face S (its rectangle, or its polygon), b scratch of the
// same size; the result in a, its count returned
static int clip_to_face(const Surface* S, Cand* a, Cand* b, int n) {
  if (!S->npoly) {
    int k = clip_half(b, a, n, 0, 1, S->half[0]);
    k = clip_half(a, b, k, 0, -1, S->half[0]);
    k = clip_half(b, a, k, 1, 1, S->half[1]);
    return clip_half(a, b, k, 1, -1, S->half[1]);
  }
  Cand *from = a, *to = b;
  for (int i = 0; i < S->npoly && n > 0; i++) {
    const mjtNum* p = S->poly + 2 * i;
    const mjtNum* q = S->poly + 2 * ((i + 1) % S->npoly);
    mjtNum e[2] = {q[1] - p[1], p[0] - q[0]};  // outward normal of a counter-clockwise edge
    mjtNum len = hypot(e[0], e[1]);
    if (len < mjMINVAL) continue;
    e[0] /= len;
    e[1] /= len;
    n = clip_dir(to, from, n, e, e[0] * p[0] + e[1] * p[1]);
    Cand* swap = from;
    from = to;
    to = swap;
  }
  if (from != a) memcpy(a, from, (size_t)(n > 0 ? n : 0) * sizeof(Cand));
  return n;
}

//---------------------------------- mesh faces ----------------------------------------------------

#define CUSP_MESH_MAXTRI 64  // hull triangles of a mesh whose faces can support patches (more:
                             // point contacts; the face search is quadratic in them)

// the hull triangles of mesh geom g (vertex indices into the mesh, 3 per triangle): the convex
// hull MuJoCo collides (its graph), else the mesh's own faces; returns their count
static int mesh_triangles(const int** tri, const mjModel* m, int g) {
  int mesh = m->geom_dataid[g];
  if (mesh < 0) return 0;
  int adr = m->mesh_graphadr[mesh];
  if (adr >= 0) {
    const int* graph = m->mesh_graph + adr;
    int nv = graph[0], nf = graph[1];
    *tri = graph + 2 + 2 * nv + (nv + 3 * nf);  // face_globalid, after vert and edge data
    return nf;
  }
  *tri = m->mesh_face + 3 * m->mesh_faceadr[mesh];
  return m->mesh_facenum[mesh];
}

// world position of vertex v of mesh geom g
static void mesh_vertex(mjtNum x[3], const mjModel* m, const mjData* d, int g, int v) {
  const float* p = m->mesh_vert + 3 * (m->mesh_vertadr[m->geom_dataid[g]] + v);
  mjtNum local[3] = {p[0], p[1], p[2]};
  mju_mulMatVec3(x, d->geom_xmat + 9 * g, local);
  mju_addTo3(x, d->geom_xpos + 3 * g);
}

// the plane of triangle tri of mesh geom g: outward unit normal n (away from the geom's centre,
// inside the hull) and a point c on it; 0 if degenerate
static int triangle_plane(mjtNum n[3], mjtNum c[3], const mjModel* m, const mjData* d, int g,
                          const int* tri) {
  mjtNum v[3][3], e1[3], e2[3];
  for (int k = 0; k < 3; k++) mesh_vertex(v[k], m, d, g, tri[k]);
  mju_sub3(e1, v[1], v[0]);
  mju_sub3(e2, v[2], v[0]);
  mju_cross(n, e1, e2);
  if (mju_normalize3(n) < mjMINVAL) return 0;
  mjtNum r[3];
  mju_sub3(r, v[0], d->geom_xpos + 3 * g);
  if (mju_dot3(r, n) < 0) mju_scl3(n, n, -1);
  mju_copy3(c, v[0]);
  return 1;
}

static int same_plane(const mjtNum n1[3], const mjtNum c1[3], const mjtNum n2[3],
                      const mjtNum c2[3], mjtNum size) {
  mjtNum r[3];
  mju_sub3(r, c2, c1);
  return mju_dot3(n1, n2) > 1 - 1e-9 && fabs(mju_dot3(r, n1)) <= 1e-9 * size;
}

// The face of mesh geom g's hull that separates it best from object o (largest minimum gap of the
// object's points over the face plane) as a finite Surface: the convex polygon of the hull
// triangles in that plane. Returns the gap, or -INFINITY when the mesh has no usable face (no
// hull, more than CUSP_MESH_MAXTRI triangles, or a face of more than CUSP_MAXPOLY vertices).
static mjtNum best_mesh_face(Surface* S, mjtNum* pts, const mjModel* m, const mjData* d, int g,
                             const Object* o) {
  const int* tri;
  int nt = mesh_triangles(&tri, m, g);
  if (nt <= 0 || nt > CUSP_MESH_MAXTRI) return -INFINITY;
  mjtNum size = m->geom_rbound[g] > 0 ? m->geom_rbound[g] : 1;
  mjtNum best = -INFINITY, bn[3] = {0, 0, 0}, bc[3] = {0, 0, 0};
  // every triangle's plane once (world frame): normal, point, usable
  mjtNum pn[3 * CUSP_MESH_MAXTRI], pc[3 * CUSP_MESH_MAXTRI];
  int ok[CUSP_MESH_MAXTRI];
  for (int k = 0; k < nt; k++) ok[k] = triangle_plane(pn + 3 * k, pc + 3 * k, m, d, g, tri + 3 * k);
  Surface T;
  memset(&T, 0, sizeof(T));
  for (int k = 0; k < nt; k++) {
    const mjtNum *n = pn + 3 * k, *c = pc + 3 * k;
    if (!ok[k]) continue;
    int seen = 0;  // a plane already measured through an earlier triangle
    for (int j = 0; j < k && !seen; j++) {
      seen = ok[j] && same_plane(pn + 3 * j, pc + 3 * j, n, c, size);
    }
    if (seen) continue;
    mju_copy3(T.n, n);
    mju_copy3(T.c, c);
    mjtNum gap = body_min_gap(pts, m, d, o, &T);
    if (gap > best) {
      best = gap;
      mju_copy3(bn, n);
      mju_copy3(bc, c);
    }
  }
  if (best == -INFINITY) return best;
  // the face polygon: every hull vertex in the best plane, their convex outline
  Cand v[3 * CUSP_MAXPOLY], tmp[3 * CUSP_MAXPOLY + 1];
  int nv = 0;
  mjtNum plane[9];  // t, o: a basis of the face's plane
  cusp_contact_frame(plane, bn);
  const mjtNum* t = plane;
  const mjtNum* ob = plane + 3;
  for (int k = 0; k < nt; k++) {
    if (!ok[k] || !same_plane(bn, bc, pn + 3 * k, pc + 3 * k, size)) continue;
    for (int i = 0; i < 3; i++) {
      if (nv == 3 * CUSP_MAXPOLY) return -INFINITY;  // a face of many triangles: not a pad
      mjtNum x[3], r[3];
      mesh_vertex(x, m, d, g, tri[3 * k + i]);
      mju_sub3(r, x, bc);
      v[nv].x[0] = mju_dot3(r, t);
      v[nv].x[1] = mju_dot3(r, ob);
      v[nv].gap = 0;
      v[nv].geom = g;
      nv++;
    }
  }
  int np = hull2(v, nv, tmp);
  if (np < 3 || np > CUSP_MAXPOLY) return -INFINITY;
  mjtNum mean[2] = {0, 0};
  for (int i = 0; i < np; i++) {
    mean[0] += v[i].x[0] / np;
    mean[1] += v[i].x[1] / np;
  }
  for (int j = 0; j < 3; j++) {
    S->c[j] = bc[j] + mean[0] * t[j] + mean[1] * ob[j];
    S->n[j] = bn[j];
    S->t[j] = t[j];
    S->o[j] = ob[j];
  }
  for (int i = 0; i < np; i++) {
    S->poly[2 * i] = v[i].x[0] - mean[0];
    S->poly[2 * i + 1] = v[i].x[1] - mean[1];
  }
  S->npoly = np;
  S->finite = 1;
  S->half[0] = S->half[1] = INFINITY;
  S->geom = g;
  return best;
}

//---------------------------------- mean distance (default er) -----------------------------------

// integral of |x - C| ds along the segment a -> b
static mjtNum seg_int(const mjtNum* a, const mjtNum* b, const mjtNum* C) {
  mjtNum u[2] = {b[0] - a[0], b[1] - a[1]};
  mjtNum len = hypot(u[0], u[1]);
  if (len < 1e-15) return 0;
  u[0] /= len;
  u[1] /= len;
  mjtNum r[2] = {a[0] - C[0], a[1] - C[1]};
  mjtNum s0 = r[0] * u[0] + r[1] * u[1], s1 = s0 + len;
  mjtNum h = fabs(u[0] * r[1] - u[1] * r[0]);
  mjtNum G1, G0;
  if (h < 1e-15) {
    G1 = 0.5 * s1 * fabs(s1);
    G0 = 0.5 * s0 * fabs(s0);
  } else {
    G1 = 0.5 * (s1 * hypot(s1, h) + h * h * asinh(s1 / h));
    G0 = 0.5 * (s0 * hypot(s0, h) + h * h * asinh(s0 / h));
  }
  return G1 - G0;
}

// a region's measure (area, length, or 1 for a point), first moment (2) and, for a given C,
// integral of |x - C| over it
typedef struct Region_ {
  int dim;             // 2 area, 1 segment, 0 point
  int seg[2];          // for a segment: its two end points (the farthest pair)
  mjtNum measure, moment[2];
} Region;

static void region_measure(Region* r, const mjtNum* p, int n) {
  memset(r, 0, sizeof(*r));
  mjtNum area = 0, mx = 0, my = 0;
  for (int i = 0; i < n && n >= 3; i++) {
    const mjtNum* a = p + 2 * i;
    const mjtNum* b = p + 2 * ((i + 1) % n);
    mjtNum cr = a[0] * b[1] - a[1] * b[0];
    area += 0.5 * cr;
    mx += cr * (a[0] + b[0]) / 6;
    my += cr * (a[1] + b[1]) / 6;
  }
  if (n >= 3 && fabs(area) > 1e-12) {
    r->dim = 2;
    r->measure = fabs(area);
    r->moment[0] = area > 0 ? mx : -mx;
    r->moment[1] = area > 0 ? my : -my;
    return;
  }
  // segment: the two points farthest apart
  mjtNum best = 0;
  int ia = 0, ib = 0;
  for (int i = 0; i < n; i++) {
    for (int j = i + 1; j < n; j++) {
      mjtNum dd = hypot(p[2 * i] - p[2 * j], p[2 * i + 1] - p[2 * j + 1]);
      if (dd > best) { best = dd; ia = i; ib = j; }
    }
  }
  if (best > 1e-9) {
    r->dim = 1;
    r->seg[0] = ia;
    r->seg[1] = ib;
    r->measure = best;
    r->moment[0] = best * 0.5 * (p[2 * ia] + p[2 * ib]);
    r->moment[1] = best * 0.5 * (p[2 * ia + 1] + p[2 * ib + 1]);
    return;
  }
  r->dim = 0;
  r->measure = 1;
  r->moment[0] = p[0];
  r->moment[1] = p[1];
}

static mjtNum region_absint(const Region* r, const mjtNum* p, int n, const mjtNum* C) {
  if (r->dim == 2) {
    // fan from C: each edge's triangle (C, a, b) contributes cross/3 * (1/|b-a|) int_seg |x-C|
    mjtNum sum = 0, area = 0;
    for (int i = 0; i < n; i++) {
      const mjtNum* a = p + 2 * i;
      const mjtNum* b = p + 2 * ((i + 1) % n);
      mjtNum len = hypot(b[0] - a[0], b[1] - a[1]);
      mjtNum cr = cross2(C, a, b);
      area += cr;
      if (len > 1e-15) sum += cr / 3 * seg_int(a, b, C) / len;
    }
    return area >= 0 ? sum : -sum;
  }
  if (r->dim == 1) return seg_int(p + 2 * r->seg[0], p + 2 * r->seg[1], C);
  return hypot(p[0] - C[0], p[1] - C[1]);
}

// er over several regions (one per geom): the highest dimension present wins (feet of a table:
// their areas; the two balls of a dumbbell: points)
static mjtNum multi_mean_distance(mjtNum centroid[2], Region* r, const mjtNum* const* regions,
                                  const int* counts, int nregion) {
  int dim = -1;
  for (int i = 0; i < nregion; i++) {
    region_measure(r + i, regions[i], counts[i]);
    if (r[i].dim > dim) dim = r[i].dim;
  }
  mjtNum meas = 0, mom[2] = {0, 0};
  for (int i = 0; i < nregion; i++) {
    if (r[i].dim != dim) continue;
    meas += r[i].measure;
    mom[0] += r[i].moment[0];
    mom[1] += r[i].moment[1];
  }
  if (meas <= 0) {
    centroid[0] = centroid[1] = 0;
    return 0;
  }
  centroid[0] = mom[0] / meas;
  centroid[1] = mom[1] / meas;
  mjtNum sum = 0;
  for (int i = 0; i < nregion; i++) {
    if (r[i].dim == dim) sum += region_absint(r + i, regions[i], counts[i], centroid);
  }
  return sum / meas;
}

mjtNum cusp_patch_mean_distance(mjtNum centroid[2], const mjtNum* pts, int np) {
  // a tool's query, not the step: plain allocation, any np
  Cand* c = (Cand*)malloc((size_t)(np + 1) * sizeof(Cand));
  Cand* tmp = (Cand*)malloc((size_t)(2 * np + 2) * sizeof(Cand));
  mjtNum* p = (mjtNum*)malloc((size_t)(2 * np + 2) * sizeof(mjtNum));
  mjtNum result = NAN;
  if (c && tmp && p) {
    for (int i = 0; i < np; i++) {
      c[i].x[0] = pts[2 * i];
      c[i].x[1] = pts[2 * i + 1];
      c[i].gap = 0;
      c[i].geom = 0;
      c[i].line = 0;
    }
    int nh = hull2(c, np, tmp);
    for (int i = 0; i < nh; i++) {
      p[2 * i] = c[i].x[0];
      p[2 * i + 1] = c[i].x[1];
    }
    const mjtNum* regions[1] = {p};
    Region r[1];
    result = multi_mean_distance(centroid, r, regions, &nh, 1);
  }
  free(c);
  free(tmp);
  free(p);
  return result;
}

//---------------------------------- the set of this step's patches -----------------------------------

int cusp_patch_set_init(cuspPatchSet* s, const mjModel* m) {
  memset(s, 0, sizeof(*s));
  cusp_patch_detect_sizes(&s->points, &s->regions, m);
  s->scratch = malloc(cusp_patch_detect_worksize(s->points, s->regions));
  if (!s->scratch) return -1;
  return cusp_patch_set_reserve(s, 8);
}

void cusp_patch_set_free(cuspPatchSet* s) {
  free(s->patch);
  free(s->scratch);
  memset(s, 0, sizeof(*s));
}

int cusp_patch_set_reserve(cuspPatchSet* s, int n) {
  if (n <= s->cap) return 0;
  void* a = realloc(s->patch, (size_t)n * sizeof(cuspPatch));
  if (!a) return -1;
  s->patch = (cuspPatch*)a;
  s->cap = n;
  return 0;
}

//---------------------------------- patches --------------------------------------------------------

static cuspPatch* new_patch(cuspPatchSet* w) {
  if (w->npatch >= w->cap) {
    if (cusp_patch_set_reserve(w, 2 * w->cap + 4)) return NULL;
  }
  cuspPatch* p = w->patch + w->npatch++;
  memset(p, 0, sizeof(*p));
  p->source = -1;
  return p;
}

// the scratch of P points and R regions carved from base (NULL: only the size); returns bytes
static size_t scratch_layout(Scratch* s, void* base, int P, int R) {
  size_t off = 0;
#define CUSP_CARVE(field, type, count)                                   \
  do {                                                                   \
    if (base) s->field = (type*)((char*)base + off);                     \
    off += ((sizeof(type) * (size_t)(count) + 15) / 16) * 16;            \
  } while (0)
  CUSP_CARVE(pts, mjtNum, 3 * P);
  CUSP_CARVE(cand, Cand, P);
  CUSP_CARVE(tmp, Cand, P + 1);
  CUSP_CARVE(fc, Cand, P + CUSP_MAXPOLY);
  CUSP_CARVE(c1, Cand, P + CUSP_MAXPOLY);
  CUSP_CARVE(c2, Cand, P + CUSP_MAXPOLY);
  CUSP_CARVE(clip, Cand, 2 * P + CUSP_MAXPOLY * R + CUSP_MAXPOLY);
  CUSP_CARVE(feat, mjtNum, 2 * (P + CUSP_MAXPOLY * R));
  CUSP_CARVE(feat_gap, mjtNum, P + CUSP_MAXPOLY * R);
  CUSP_CARVE(regions, const mjtNum*, R);
  CUSP_CARVE(counts, int, R);
  CUSP_CARVE(region, Region, R);
  CUSP_CARVE(face, int, R);
  CUSP_CARVE(subset, int, R);
#undef CUSP_CARVE
  if (base) {
    s->cap = P;
    s->nreg = R;
  }
  return off;
}

void cusp_patch_detect_sizes(int* points, int* regions, const mjModel* m) {
  // per rigid object: the geoms of a body and of the bodies welded to it (body_weldid)
  int P = 24, R = 1;
  int* count = (int*)calloc(2 * ((size_t)m->nbody + 1), sizeof(int));  // points, geoms per weld
  if (count) {
    for (int g = 0; g < m->ngeom; g++) {
      int weld = m->body_weldid[m->geom_bodyid[g]];
      count[2 * weld] += geom_point_count(m, g);
      count[2 * weld + 1]++;
    }
    for (int b = 0; b < m->nbody; b++) {
      if (count[2 * b] > P) P = count[2 * b];
      if (count[2 * b + 1] > R) R = count[2 * b + 1];
    }
  } else {
    // out of memory: the whole model bounds every object
    P = 24;
    for (int g = 0; g < m->ngeom; g++) P += geom_point_count(m, g);
    R = m->ngeom > 1 ? m->ngeom : 1;
  }
  free(count);
  *points = P;
  *regions = R;
}

size_t cusp_patch_detect_worksize(int points, int regions) {
  Scratch s;
  return scratch_layout(&s, NULL, points, regions);
}

// The candidate points of object o's geoms on surface S within margin: (t, o) on the surface and
// gap (m) of each into cand. Returns their number; *first_geom: the geom of the first, *gmin: the
// least gap (m).
static int surface_candidates(Cand* cand, int* first_geom, mjtNum* gmin, Scratch* sc,
                              const cuspConfig* cfg, const mjModel* m, const mjData* d,
                              const Object* o, const Surface* S) {
  int nc = 0;
  *first_geom = -1;
  *gmin = INFINITY;
  for (int j = 0; j < o->ngeom; j++) {
    int g = o->geom[j];
    if (!patch_capable(m->geom_type[g])) continue;
    int np = geom_points(sc->pts, geom_point_count(m, g), m, d, g, S->n);
    for (int i = 0; i < np; i++) {
      mjtNum r[3];
      mju_sub3(r, sc->pts + 3 * i, S->c);
      mjtNum gap = mju_dot3(r, S->n);
      if (gap >= cfg->margin) continue;
      Cand* c = cand + nc++;
      c->x[0] = mju_dot3(r, S->t);
      c->x[1] = mju_dot3(r, S->o);
      c->gap = gap;
      c->geom = g;
      // the support point of each rim (geom_points: after the rim's samples), a capsule's two
      c->line = m->geom_type[g] == mjGEOM_CAPSULE ||
                (m->geom_type[g] == mjGEOM_CYLINDER && np == 2 * (CUSP_NRIM + 1) &&
                 i % (CUSP_NRIM + 1) == CUSP_NRIM);
      if (*first_geom < 0) *first_geom = g;
      if (gap < *gmin) *gmin = gap;
    }
  }
  return nc;
}

// the support feature of a patch (for er): per geom, its candidates within CUSP_FEATURE_TOL of
// the deepest, as a hull (a region), in sc's feat, feat_gap, regions, counts
typedef struct Feature_ {
  int nregion;     // regions (one per touching geom)
  int nfeat;       // points over all regions
  int full_cap;    // a single cylinder cap flat on the surface (its geom, else -1): er = 2R/3
  mjtNum mu_sum;   // sum over the feature points of their geom's friction with S
  int mu_count;
} Feature;

// The support feature of the candidates cand (nc, least gap gmin): every region may grow by 4
// points when clipped to a finite face. The patch's friction is the mean over the feature points
// of their geom's friction with S (the load shared evenly over the touching feature, as the limit
// surface assumes: sum mu_i N_i over N); one geom, or geoms of one friction, give theirs exactly.
static void support_feature(Feature* f, Scratch* sc, const Cand* cand, int nc, mjtNum gmin,
                            const cuspParams* params, const mjModel* m, const Object* o,
                            const Surface* S) {
  mjtNum *feat = sc->feat, *feat_gap = sc->feat_gap;
  f->nregion = f->nfeat = 0;
  f->full_cap = -1;
  f->mu_sum = 0;
  f->mu_count = 0;
  for (int j = 0; j < o->ngeom; j++) {
    int g = o->geom[j];
    Cand* fc = sc->fc;
    int nf = 0;
    for (int i = 0; i < nc; i++) {
      if (cand[i].geom == g && cand[i].gap <= gmin + CUSP_FEATURE_TOL) fc[nf++] = cand[i];
    }
    if (!nf) continue;
    if (m->geom_type[g] == mjGEOM_CYLINDER && nf >= CUSP_NRIM) f->full_cap = g;
    int nh = hull2(fc, nf, sc->tmp);
    if (S->finite) {
      nh = clip_to_face(S, fc, sc->c1, nh);  // the feature inside the face only
      if (!nh) continue;
    }
    sc->regions[f->nregion] = feat + 2 * f->nfeat;
    sc->counts[f->nregion++] = nh;
    f->mu_sum += nh * cusp_pair_friction(params, g, S->geom);
    f->mu_count += nh;
    for (int i = 0; i < nh; i++, f->nfeat++) {
      feat[2 * f->nfeat] = fc[i].x[0];
      feat[2 * f->nfeat + 1] = fc[i].x[1];
      feat_gap[f->nfeat] = fc[i].gap;
    }
  }
  if (f->nregion > 1) f->full_cap = -1;
}

// The patch's vertices into sc->clip: the hull of the candidates (clipped to a finite face) plus
// the feature points, at most CUSP_PATCH_MAXVERT. Returns their number (0: none on the face).
static int patch_outline(Scratch* sc, Cand* cand, int nc, const Feature* f, int first_geom,
                         const Surface* S) {
  Cand* clip = sc->clip;
  const mjtNum *feat = sc->feat, *feat_gap = sc->feat_gap;
  int nh = hull2(cand, nc, sc->tmp);  // cand becomes its hull
  int nv = nh;
  memcpy(clip, cand, nh * sizeof(Cand));
  if (S->finite) nv = clip_to_face(S, clip, sc->c1, nv);
  if (!nv) return 0;
  // feature points not already vertices (a rounded bottom touches inside the hull; a point on a
  // hull edge was dropped as collinear), each with its own gap: on a tilted body the feature spans
  // up to CUSP_FEATURE_TOL, and giving every such point the deepest gap pushed them out of the
  // surface (a spurious separating impulse, energy gain at landings)
  for (int i = 0; i < f->nfeat; i++) {
    int dup = 0;
    for (int j = 0; j < nv && !dup; j++) {
      dup = fabs(clip[j].x[0] - feat[2 * i]) < 1e-9 && fabs(clip[j].x[1] - feat[2 * i + 1]) < 1e-9;
    }
    if (!dup) {
      clip[nv].x[0] = feat[2 * i];
      clip[nv].x[1] = feat[2 * i + 1];
      clip[nv].gap = feat_gap[i];
      clip[nv].geom = first_geom;
      clip[nv].line = 0;
      nv++;
    }
  }
  if (nv > CUSP_PATCH_MAXVERT) {
    // More vertices than a patch has rows: keep CUSP_PATCH_MAXVERT of them evenly spread along
    // the hull (deterministic; the outline becomes a polygon of chords, for a 200-sided can
    // within r (1 - cos(pi / 32)) = 0.5% of its radius), always including the deepest vertex.
    int deepest = 0;
    for (int i = 1; i < nv; i++) {
      if (clip[i].gap < clip[deepest].gap) deepest = i;
    }
    Cand keep[CUSP_PATCH_MAXVERT];
    int has_deepest = 0;
    for (int i = 0; i < CUSP_PATCH_MAXVERT; i++) {
      int k = (int)((long)i * nv / CUSP_PATCH_MAXVERT);
      keep[i] = clip[k];
      has_deepest |= k == deepest;
    }
    if (!has_deepest) keep[CUSP_PATCH_MAXVERT - 1] = clip[deepest];
    memcpy(clip, keep, sizeof(keep));
    nv = CUSP_PATCH_MAXVERT;
  }
  return nv;
}

// Patch p of body b on S from its nv vertices (sc->clip) and support feature f: frame, vertices
// and gaps, the rows' reference point, friction, torsion and the limit surface.
static void fill_surface_patch(cuspPatch* p, Scratch* sc, int nv, const Feature* f,
                               int first_geom, const cuspParams* params, const mjModel* m, int b,
                               const Surface* S) {
  const Cand* clip = sc->clip;
  p->kind = CUSP_PATCH_SURFACE;
  p->body[0] = b;
  p->body[1] = S->body;
  p->geom[0] = first_geom;
  p->geom[1] = S->geom;
  for (int j = 0; j < 3; j++) {
    p->frame[j] = S->t[j];
    p->frame[3 + j] = S->o[j];
    p->frame[6 + j] = S->n[j];
  }
  p->nvert = nv;
  // one vertex: a point, the ECP is fixed: torsional friction only as a point contact's, with
  // condim >= 4 (cusp_pair_torsion)
  mjtNum point_torsion = nv == 1 ? cusp_pair_torsion(params, first_geom, S->geom) : 0;
  p->torsion = nv >= 2 || point_torsion > 0;
  mjtNum mean[3] = {0, 0, 0};
  for (int i = 0; i < nv; i++) {
    for (int j = 0; j < 3; j++) {
      p->vert[3 * i + j] = S->c[j] + clip[i].x[0] * S->t[j] + clip[i].x[1] * S->o[j] +
                           clip[i].gap * S->n[j];
      mean[j] += p->vert[3 * i + j] / nv;
    }
    p->gap[i] = clip[i].gap;
  }
  // the rows' reference point: the vertices' mean along the surface, at the height of the deepest
  // vertex (the touching level). The mean height includes rim samples up to `margin` above the
  // surface; friction rows taken there read the rolling of a body as slip (a cylinder on its side
  // rolled 3% slow with a 10 mm margin)
  mjtNum gmin_v = INFINITY, gmean = 0;
  for (int i = 0; i < nv; i++) {
    gmin_v = fmin(gmin_v, clip[i].gap);
    gmean += clip[i].gap / nv;
  }
  for (int j = 0; j < 3; j++) p->origin[j] = mean[j] - (gmean - gmin_v) * S->n[j];
  mjtNum centroid[2], er;
  if (f->full_cap >= 0) {
    er = 2.0 / 3.0 * m->geom_size[3 * f->full_cap];
  } else {
    er = multi_mean_distance(centroid, (Region*)sc->region, sc->regions, sc->counts, f->nregion);
  }
  p->mu = f->mu_count ? f->mu_sum / f->mu_count : cusp_pair_friction(params, first_geom, S->geom);
  if (point_torsion > 0) er = point_torsion / p->mu;  // MuJoCo's elliptic cone (point_contacts)
  cusp_limit_surface(p->e, params, b, er);
}

#define CUSP_CROSSING (-2)  // source of a line-crossing point (line_crossings)
#define CUSP_CROSSING_NEAR 1e-3  // m, a MuJoCo point contact this close (along the surface) and
#define CUSP_CROSSING_GAP 1e-6   // m, reading no more than this above the crossing's gap holds it

// Where a cylinder's or a capsule's straight bottom line (the support points of its two ends, both
// within the margin) crosses the edges of the finite face S while its deepest points lie beside
// the face: a point contact at each crossing, along the face's normal, with the line's height
// there (exact: the line lies on the surface). MuJoCo's point contacts of the pair, which the
// caller adds, may hold one feature of such a pair only: a cylinder lying across a box's corner
// kept one of the two crossings for a step and sank 78 um into the box at the other. Returns the
// number added, -1 out of memory.
static int line_crossings(cuspPatchSet* w, Scratch* sc, const cuspConfig* cfg,
                          const cuspParams* params, const Object* o, const Surface* S, int nc) {
  int added = 0;
  for (int j = 0; j < o->ngeom; j++) {
    int g = o->geom[j], n = 0;
    Cand* seg = sc->fc;
    for (int i = 0; i < nc && n < 2; i++) {
      if (sc->cand[i].geom == g && sc->cand[i].line) seg[n++] = sc->cand[i];
    }
    if (n < 2) continue;
    n = clip_to_face(S, seg, sc->c1, 2);
    for (int i = 0; i < n; i++) {
      if (seg[i].gap >= cfg->margin) continue;
      cuspContact c;
      memset(&c, 0, sizeof(c));
      c.geom[0] = g;
      c.geom[1] = S->geom;
      c.body[0] = o->body;
      c.body[1] = S->body;
      c.gap = seg[i].gap;
      for (int k = 0; k < 3; k++) {
        c.pos[k] = S->c[k] + seg[i].x[0] * S->t[k] + seg[i].x[1] * S->o[k] + seg[i].gap * S->n[k];
      }
      cusp_contact_frame(c.frame, S->n);
      c.mu = cusp_pair_friction(params, g, S->geom);
      if (cusp_patch_add_point(w, &c, CUSP_CROSSING)) return -1;
      added++;
    }
  }
  return added;
}

// Build the patch of object o on surface S from its geoms' points within margin. Returns 1 if a
// patch was added, 0 if nothing is within margin, -1 out of memory.
static int surface_patch(cuspPatchSet* w, const cuspConfig* cfg, const cuspParams* params,
                         const mjModel* m, const mjData* d, const Object* o, const Surface* S) {
  Scratch sc;
  scratch_layout(&sc, w->scratch, w->points, w->regions);
  int first_geom;
  mjtNum gmin;  // m
  int nc = surface_candidates(sc.cand, &first_geom, &gmin, &sc, cfg, m, d, o, S);
  if (!nc) return 0;
  Feature f;
  support_feature(&f, &sc, sc.cand, nc, gmin, params, m, o, S);
  if (S->finite && !f.nregion) {  // the body is beside the face, not on it
    return line_crossings(w, &sc, cfg, params, o, S, nc) < 0 ? -1 : 0;
  }
  int nv = patch_outline(&sc, sc.cand, nc, &f, first_geom, S);
  if (!nv) return 0;
  cuspPatch* p = new_patch(w);
  if (!p) return -1;
  fill_surface_patch(p, &sc, nv, &f, first_geom, params, m, o->body, S);
  return 1;
}

int cusp_patch_add_point(cuspPatchSet* w, const cuspContact* c, int source) {
  cuspPatch* p = new_patch(w);
  if (!p) return -1;
  cusp_patch_point(p, c, source);
  return 0;
}

void cusp_patch_point(cuspPatch* p, const cuspContact* c, int source) {
  memset(p, 0, sizeof(*p));
  p->kind = CUSP_PATCH_POINT;
  p->body[0] = c->body[0];
  p->body[1] = c->body[1];
  p->geom[0] = c->geom[0];
  p->geom[1] = c->geom[1];
  p->source = source;
  mju_copy(p->frame, c->frame, 9);
  p->nvert = 1;
  mju_copy3(p->vert, c->pos);
  mju_copy3(p->origin, c->pos);
  p->gap[0] = c->gap;
  p->e[0] = p->e[1] = 1;
  p->e[2] = 0;
  p->mu = c->mu;
}

// The general convex pairs (MuJoCo's mjc_Convex: cylinders, ellipsoids, meshes) checked against
// MuJoCo's signed distance (GJK while apart, exact; its penetration solver while overlapping).
// The collision function's contacts can read millimetres of depth along a wrong normal at edges:
// a cylinder's rim 2.2 mm above a box's top edge read -0.9 mm along the box's side normal; 1 mm
// into the box, -0.9 mm along the side normal where the depth is along (0, -0.32, -0.95); pushed
// sideways, it fell into the box. They are kept if each lies along the distance's normal (within
// 1 deg apart, 5 deg overlapping) and no deeper than it (1 um); otherwise the distance's own
// contact replaces them. A pair apart by the margin or more has none (the distance comes first:
// the collision function fn is not called for it). Returns the number of contacts in con
// (MuJoCo's conventions: normal from g1 to g2, pos midway).
static int checked_convex(mjPreContact* con, mjfCollision fn, const mjModel* m, mjData* d, int g1,
                          int g2, mjtNum margin) {
  mjtNum fromto[6];
  mjtNum dist = mj_geomDistance(m, d, g1, g2, margin, fromto);
  if (dist >= margin) return 0;  // apart: the collision function is not called
  int n = fn(m, d, con, g1, g2, margin);
  // fromto runs from g1's surface to g2's: along the normal while apart, against it overlapping
  mjtNum dir[3] = {fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2]};
  if (!(mju_normalize3(dir) > 0.5 * fabs(dist)) || dist == 0) return n;  // no usable direction
  if (dist < 0) mju_scl3(dir, dir, -1);
  mjtNum cos_tol = cos((dist > 0 ? 1 : 5) * mjPI / 180);
  int agree = n > 0;
  for (int i = 0; i < n && agree; i++) {
    mjtNum nrm[3];
    mju_copy3(nrm, con[i].normal);
    agree = mju_normalize3(nrm) > 0 && mju_dot3(nrm, dir) >= cos_tol && con[i].dist >= dist - 1e-6;
  }
  if (agree) return n;
  memset(con, 0, sizeof(*con));
  con[0].dist = dist;
  mju_copy3(con[0].normal, dir);
  for (int k = 0; k < 3; k++) con[0].pos[k] = 0.5 * (fromto[k] + fromto[3 + k]);
  return 1;
}

// point contacts between geom gb of registered body b and geom gs of body bs (MuJoCo's collision
// functions); b, bs: the bodies whose motion the rows carry (gb may sit on a body welded to b)
static int point_contacts(cuspPatchSet* w, const cuspConfig* cfg, const cuspParams* params,
                          const mjModel* m, mjData* d, int b, int gb, int bs, int gs) {
  int t1 = m->geom_type[gb], t2 = m->geom_type[gs];
  int g1 = gb, g2 = gs, swapped = 0;
  if (t1 > t2) {
    g1 = gs;
    g2 = gb;
    swapped = 1;
  }
  mjfCollision fn = mjCOLLISIONFUNC[m->geom_type[g1]][m->geom_type[g2]];
  if (!fn) return 0;
  mjtNum rb = m->geom_rbound[gb], rs = m->geom_rbound[gs];
  if (rb > 0 && rs > 0 &&
      mju_dist3(d->geom_xpos + 3 * gb, d->geom_xpos + 3 * gs) > rb + rs + cfg->margin) {
    return 0;
  }
  mjPreContact con[mjMAXCONPAIR];
  int n = fn == mjCOLLISIONFUNC[mjGEOM_ELLIPSOID][mjGEOM_ELLIPSOID]  // mjc_Convex
              ? checked_convex(con, fn, m, d, g1, g2, cfg->margin)
              : fn(m, d, con, g1, g2, cfg->margin);
  for (int i = 0; i < n; i++) {
    cuspContact c;
    memset(&c, 0, sizeof(c));
    c.geom[0] = gb;
    c.geom[1] = gs;
    c.body[0] = b;
    c.body[1] = bs;
    c.gap = con[i].dist;
    mju_copy3(c.pos, con[i].pos);
    // MuJoCo's normal points from g1 to g2; ours from the support (gs) to the body (gb)
    mjtNum nrm[3];
    mju_copy3(nrm, con[i].normal);
    if (!swapped) mju_scl3(nrm, nrm, -1);
    mju_normalize3(nrm);
    cusp_contact_frame(c.frame, nrm);
    c.mu = cusp_pair_friction(params, gb, gs);
    if (cusp_patch_add_point(w, &c, -1)) return -1;
    // condim >= 4: a torsion row, er = torsion / mu, so that the limit surface
    // (Lr / er)^2 <= (mu Ln)^2 is MuJoCo's elliptic cone |Lr| <= torsion Ln (er >= CUSP_ER_MIN)
    mjtNum torsion = cusp_pair_torsion(params, gb, gs);
    if (torsion > 0) {
      cuspPatch* p = w->patch + w->npatch - 1;
      p->torsion = 1;
      p->e[2] = fmax(torsion / c.mu, CUSP_ER_MIN);
    }
  }
  return n;
}

// object o against environment geom g
static int body_vs_env(cuspPatchSet* w, const cuspConfig* cfg, const cuspParams* params,
                       const mjModel* m, mjData* d, const Object* o, int g) {
  int type = m->geom_type[g];
  Surface S;
  if (type == mjGEOM_PLANE) {
    plane_surface(&S, d, g);
    S.body = m->geom_bodyid[g];
    return surface_patch(w, cfg, params, m, d, o, &S) < 0 ? -1 : 0;
  }
  if (type == mjGEOM_BOX) {
    // Each geom of the object near the box (bounding spheres) takes the face that separates it
    // best; the geoms on one face make one patch. One face for the whole object put a drawer's
    // front plate, flush against the front of its cabinet's bottom board, on the board's top face
    // with the drawer (10 mm "deep": the plate hangs below the board's top, beside the face).
    Scratch sc;
    scratch_layout(&sc, w->scratch, w->points, w->regions);
    for (int k = 0; k < o->ngeom; k++) {
      int gb = o->geom[k];
      sc.face[k] = -1;
      if (mju_dist3(d->geom_xpos + 3 * gb, d->geom_xpos + 3 * g) >
          m->geom_rbound[gb] + m->geom_rbound[g] + cfg->margin) {
        continue;
      }
      Object one = {o->body, o->geom + k, 1};
      best_box_face(&S, sc.face + k, sc.pts, m, d, g, &one, INFINITY);
    }
    for (int k = 0; k < o->ngeom; k++) {
      int f = sc.face[k];
      if (f < 0) continue;
      Object sub = {o->body, sc.subset, 0};
      for (int j = k; j < o->ngeom; j++) {
        if (sc.face[j] != f) continue;
        sc.subset[sub.ngeom++] = o->geom[j];
        sc.face[j] = -1;  // taken
      }
      box_face(&S, m, d, g, f);
      S.body = m->geom_bodyid[g];
      int rc = surface_patch(w, cfg, params, m, d, &sub, &S);
      if (rc < 0) return -1;
      // No patch on the face: nothing of the geoms is over it within the margin, or only a part
      // of their surface between their vertices is (their deepest points lie beside the face): a
      // box pitched onto a beam narrower than its bottom, the beam's top edges across the bottom
      // face with no corner of either inside the other, sank 18 mm through it. MuJoCo's point
      // contacts of the pair find what no face holds (an edge on a face, an edge across an edge),
      // as between two registered bodies (body_vs_body).
      for (int j = 0; !rc && j < sub.ngeom; j++) {
        int bs = m->geom_bodyid[g];
        if (point_contacts(w, cfg, params, m, d, o->body, sub.geom[j], bs, g) < 0) return -1;
      }
    }
    return 0;
  }
  if (type == mjGEOM_MESH) {
    // a convex mesh (a gripper's pad): the object's patch on the hull face that separates them
    // best, as on a box face; point contacts where no face holds it
    Scratch sc;
    scratch_layout(&sc, w->scratch, w->points, w->regions);
    if (best_mesh_face(&S, sc.pts, m, d, g, o) > -INFINITY) {
      S.body = m->geom_bodyid[g];
      int rc = surface_patch(w, cfg, params, m, d, o, &S);
      if (rc < 0) return -1;
      if (rc > 0) return 0;
    }
  }
  for (int k = 0; k < o->ngeom; k++) {
    if (point_contacts(w, cfg, params, m, d, o->body, o->geom[k], m->geom_bodyid[g], g) < 0) {
      return -1;
    }
  }
  return 0;
}

// How well surface S (outward normal n, towards the body) works as a support against gravity:
// n . (-g/|g|) in [-1, 1]; 0 without gravity.
static mjtNum support_score(const mjModel* m, const Surface* S) {
  mjtNum g = mju_norm3(m->opt.gravity);
  return g > mjMINVAL ? -mju_dot3(S->n, m->opt.gravity) / g : 0;
}

// Two registered bodies a < b: exactly one representation of their interface, a patch of one body
// on a box face of the other (the face that separates them best), else point contacts. A face-to-
// face contact separates equally well from both sides (the two gaps differ by rounding only), so
// the side is chosen by a rule, not by rounding: among the faces whose gap is within
// CUSP_FEATURE_TOL of the best, the one whose normal points most against gravity (the upper body's
// patch on the lower body's top face, so the upper body's published Ln and ECP are its support);
// on equal scores (side by side, no gravity) the first found: body b on a's faces before a on b's
// faces, so the representation does not flip from step to step with rounding.
static int body_vs_body(cuspPatchSet* w, const cuspConfig* cfg, const cuspParams* params,
                        const mjModel* m, mjData* d, const Object* a, const Object* b) {
  Scratch sc;
  scratch_layout(&sc, w->scratch, w->points, w->regions);
  Surface best, S;
  mjtNum best_gap = -INFINITY, best_score = -INFINITY;
  const Object* best_object = NULL;
  const mjtNum enough = cfg->margin + (a->ngeom + b->ngeom + 1) * CUSP_FEATURE_TOL;
  for (int side = 0; side < 2; side++) {
    const Object* object = side ? a : b;
    const Object* support = side ? b : a;
    for (int k = 0; k < support->ngeom; k++) {
      int g = support->geom[k];
      if (m->geom_type[g] != mjGEOM_BOX) continue;
      int near = 0;
      for (int j = 0; j < object->ngeom; j++) {
        int gb = object->geom[j];
        if (mju_dist3(d->geom_xpos + 3 * gb, d->geom_xpos + 3 * g) <=
            m->geom_rbound[gb] + m->geom_rbound[g] + cfg->margin) {
          near = 1;
        }
      }
      if (!near) continue;
      // a face that separates them by the margin plus what the rule below may give up for a
      // better score (CUSP_FEATURE_TOL for each other face taken after it): no contact, whatever
      // the other faces (pairs of a stack two or more boxes apart, near by bounding spheres)
      mjtNum gap = best_box_face(&S, NULL, sc.pts, m, d, g, object, enough);
      if (gap >= enough) return 0;
      mjtNum score = support_score(m, &S);
      int better = gap > best_gap + CUSP_FEATURE_TOL ||
                   (gap >= best_gap - CUSP_FEATURE_TOL && score > best_score + 1e-9);
      if (better) {
        best_gap = gap;
        best_score = score;
        best = S;
        best.body = support->body;
        best_object = object;
      }
    }
  }
  if (best_object) {
    if (best_gap >= cfg->margin) return 0;
    int rc = surface_patch(w, cfg, params, m, d, best_object, &best);
    if (rc != 0) return rc < 0 ? -1 : 0;
  }
  // no box face between them (or off the face): point contacts of every geom pair
  for (int i = 0; i < a->ngeom; i++) {
    for (int j = 0; j < b->ngeom; j++) {
      if (point_contacts(w, cfg, params, m, d, a->body, a->geom[i], b->body, b->geom[j]) < 0) {
        return -1;
      }
    }
  }
  return 0;
}

// The line crossings among patches [start, npatch) that a MuJoCo point contact of the same pair
// already holds (within CUSP_CROSSING_NEAR, its gap no more than CUSP_CROSSING_GAP above the
// crossing's) are dropped: one row for one feature (two nearly equal rows of different normals
// make the island's problem degenerate for nothing: random piles failed 8 -> 28 solves of 72
// runs with every crossing kept).
static void drop_held_crossings(cuspPatchSet* w, int start) {
  int kept = start;
  for (int i = start; i < w->npatch; i++) {
    const cuspPatch* p = w->patch + i;
    int held = 0;
    for (int j = start; j < w->npatch && p->source == CUSP_CROSSING && !held; j++) {
      const cuspPatch* q = w->patch + j;
      held = q->kind == CUSP_PATCH_POINT && q->source != CUSP_CROSSING &&
             q->body[0] == p->body[0] && q->body[1] == p->body[1] &&
             mju_dist3(q->vert, p->vert) <= CUSP_CROSSING_NEAR &&
             q->gap[0] <= p->gap[0] + CUSP_CROSSING_GAP;
    }
    if (!held) w->patch[kept++] = *p;
  }
  for (int i = start; i < kept; i++) {
    if (w->patch[i].source == CUSP_CROSSING) w->patch[i].source = -1;
  }
  w->npatch = kept;
}

int cusp_patch_detect(cuspPatchSet* w, const cuspConfig* cfg, const cuspParams* params,
                      const cuspBroadphase* bp, const mjModel* m, mjData* d) {
  w->npatch = 0;
  for (int i = 0; i < bp->ncand; i++) {
    const cuspCandidate* c = bp->cand + i;
    if (c->kind != CUSP_BP_BODY) continue;
    Object o = object_of(cfg, c->index);
    int rc, start = w->npatch;
    if (c->other_kind == CUSP_BP_GEOM) {
      rc = body_vs_env(w, cfg, params, m, d, &o, c->other);
    } else {
      Object other = object_of(cfg, c->other);
      rc = body_vs_body(w, cfg, params, m, d, &o, &other);
    }
    if (rc) return -1;
    drop_held_crossings(w, start);
  }
  return w->npatch;
}
