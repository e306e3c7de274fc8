// Patch contact for registered rigid bodies (docs/architecture.md): an equivalent contact
// point (ECP) carrying the resultant normal impulse, non-penetration at every vertex of the patch,
// and one friction wrench (Lt, Lo, Lr) at the ECP chosen by maximum dissipation on the ellipsoidal
// limit surface (Lt/et)^2 + (Lo/eo)^2 + (Lr/er)^2 <= (mu Ln)^2 (Unicomp 26-30).
//
// Formulation (velocity level, one mixed complementarity problem per step, solved by the
// semismooth FB Newton solver of plugin/solver/mcp.h):
//   unknowns per patch   lambda_k >= 0 (k < nvert, N s): normal impulse at vertex k;
//                        y = (Lt/et, Lo/eo, Lr/er) free (N s): scaled friction wrench;
//                        (no multiplier: max dissipation is written as a projection);
//   resultant            Ln = sum lambda_k, ECP c = sum lambda_k v_k / Ln (a convex combination of
//                        the patch vertices, hence inside the patch: the centre of pressure);
//   non-penetration      0 <= lambda_k  _|_  vn_k(dv) + rhs_k >= 0 at every vertex, where
//                        vn_k(dv) is the normal velocity change and rhs_k the gap term below;
//   maximum dissipation  with u = (vt, vo, wn) the sliding velocity at the ECP and the spin about n
//                        after the correction, u~ = (et vt, eo vo, er wn):
//                          y = P(y - r u~), P the projection onto the ball |y| <= mu Ln,
//                        r = 1/mean(W_nn) (kg); equivalent to Unicomp (27-30): u~ = -s' y with
//                        s' >= 0 _|_ mu Ln - |y| >= 0, i.e. u = -s' L_x / e_x^2 (the KKT of
//                        max -L.u on the ellipsoid): stick inside, slide on the boundary.
//   gap term             gap g* measured at q*; start-of-step gap g0 = g* - h vn*_k:
//                          -pushout_slop <= g0 <= CUSP_SLIP_SPEED h: rhs = vn*_k (held at rest)
//                          g0 >= 0: rhs = g* / h (the vertex may close the gap, never cross it)
//                          g0 <  0: rhs = vn*_k - min(gap_alpha |g0| / h, pushout_speed),
//                                   or rhs = vn*_k (depth held) where the bodies' joints give
//                                   the vertex no normal motion of its own (a drawer on its
//                                   slide, a lever jammed by friction: step/patch_solve.c)
// Point contacts (a geom of a registered body against a sphere tool, or any non-patch pair) are the
// same model with one vertex and no torsion (a circular cone, et = eo = 1).
#ifndef CUSP_PLUGIN_PATCH_H_
#define CUSP_PLUGIN_PATCH_H_

#include <stddef.h>

#include <mujoco/mujoco.h>

#include "config/config.h"
#include "config/params.h"
#include "collide/contact.h"
#include "collide/broadphase.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CUSP_PATCH_MAXVERT 32   // vertices per patch (non-penetration rows); more are thinned
                                // to an evenly spread subset with the deepest (patch_detect.c)

typedef enum cuspPatchKind_ {
  CUSP_PATCH_SURFACE = 0,  // support feature of a body on a plane or a box face: ECP + torsion
  CUSP_PATCH_POINT         // point contact: one vertex, circular cone, no torsion
} cuspPatchKind;

typedef struct cuspPatch_ {
  int kind;                 // cuspPatchKind
  int torsion;              // 1: torsional friction row (patches with >= 2 vertices)
  int body[2];              // body[0]: the registered body; body[1]: the support (0: world)
  int geom[2];              // geom[0]: a geom of body[0] in the patch; geom[1]: the support geom
  int source;               // index into the caller's point contacts, -1 if detected here
  int island;               // contact island this step (island.h), -1: nothing movable
  mjtNum frame[9];          // rows t, o, n; n (unit) points from the support towards body[0]
  mjtNum origin[3];         // m, reference point c0 of the rows (mean of the vertices)
  int nvert;
  mjtNum vert[3 * CUSP_PATCH_MAXVERT];  // m, vertices (on the surface of body[0]), world
  mjtNum gap[CUSP_PATCH_MAXVERT];       // m, signed gap of each vertex at q* (< 0: penetration)
  mjtNum e[3];              // limit surface et, eo (-), er (m)
  mjtNum mu;                // friction coefficient
  mjtNum k;                 // kg, scale r of its friction map: 1 / mean Delassus diagonal of
                            // its normal rows (each patch its own: bodies of unequal mass)
  // results of the step
  mjtNum lambda[CUSP_PATCH_MAXVERT];    // N s, vertex normal impulses
  mjtNum Ln;                // N s, resultant normal impulse
  mjtNum L[3];              // N s, N s, N m s: Lt, Lo, Lr at the ECP
  mjtNum sigma;             // m/s, slip speed |u~| at the ECP after the correction
  mjtNum ecp[3];            // m, equivalent contact point (world)
  mjtNum s;                 // saturation sum (L_x/e_x)^2 / (mu Ln)^2 (Unicomp 48)
  mjtNum rho_t, rho_r;      // tangential and torsional saturations (Unicomp 49)
  int mode;                 // cuspContactMode
} cuspPatch;

// This step's patches and rigid point contacts of one mjData, with the detector's scratch
// (allocated at init, grown only when a step finds more patches than ever before).
typedef struct cuspPatchSet_ {
  int npatch;
  int cap;                  // capacity of patch
  cuspPatch* patch;         // (cap) this step's patches
  void* scratch;            // detector scratch (cusp_patch_detect_worksize)
  int points;               // largest point count of a body's geoms
  int regions;              // largest geom count of a body
} cuspPatchSet;

int cusp_patch_set_init(cuspPatchSet* s, const mjModel* m);
void cusp_patch_set_free(cuspPatchSet* s);
// grow to hold n patches (the only allocation after init); 0, or -1 out of memory
int cusp_patch_set_reserve(cuspPatchSet* s, int n);

// ---- detection (patch_detect.c) ----

// Detect this step's patches and rigid point contacts of the registered bodies of cfg at the
// kinematics currently in d (q*), for the broad phase's body candidates: a registered body against
// an environment geom (planes and box faces give patches; other geoms give point contacts) or
// against another registered body. Fills s->patch, s->npatch; returns npatch, or -1 if out of memory.
int cusp_patch_detect(cuspPatchSet* s, const cuspConfig* cfg, const cuspParams* params,
                      const cuspBroadphase* bp, const mjModel* m, mjData* d);

// Sizes of the detector's scratch for model m: the largest number of candidate points of one
// body (its geoms' support samples and mesh vertices) and the largest geom count of one body; and
// its bytes. Nothing is dropped: every candidate of every geom fits.
void cusp_patch_detect_sizes(int* points, int* regions, const mjModel* m);
size_t cusp_patch_detect_worksize(int points, int regions);

// Append a point contact (one vertex, no torsion) made from a cuspContact of another detector.
int cusp_patch_add_point(cuspPatchSet* s, const cuspContact* c, int source);
// The same into p (not appended): source is the contact's index in the caller's list.
void cusp_patch_point(cuspPatch* p, const cuspContact* c, int source);

// Mean distance from the centroid of the region of np points pts (2D, (np x 2)) with np >= 1: the
// area mean over their convex hull if it has area, else the length mean over the segment, else 0.
// centroid (2) gets the region's centroid. Used for the default er.
mjtNum cusp_patch_mean_distance(mjtNum centroid[2], const mjtNum* pts, int np);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_PATCH_H_
