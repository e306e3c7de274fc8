// Contact parameters, resolved once at init into tables, one function per fact (MuJoCo's
// mj_contactParam is the model): every detector and the driver ask here, so disks and patches
// cannot disagree about what touches what or with which friction.
#ifndef CUSP_PLUGIN_PARAMS_H_
#define CUSP_PLUGIN_PARAMS_H_

#include <mujoco/mujoco.h>

#include "config/config.h"

#ifdef __cplusplus
extern "C" {
#endif

// The contact parameters of one pair of geoms, as cusp's contact rows use them.
typedef struct cuspPairParams_ {
  mjtNum mu;       // sliding friction coefficient (-); 0: frictionless
  mjtNum torsion;  // m, torsional friction of a point contact (torque about the normal per unit
                   // normal force); 0: no torsion row
  int condim;      // the pair's condim (MuJoCo's rule)
} cuspPairParams;

typedef struct cuspParams_ {
  int* disk_of_geom;       // (ngeom) index in cfg->disk_geoms, -1: not a disk
  int* patch_of_body;      // (nbody) index in cfg->patch_bodies, -1: not registered
  int* object_of_geom;     // (ngeom) index in cfg->patch_bodies of the registered body that owns
                           // the geom (its own, or of a body welded to it), -1: none
  int filterparent;        // MuJoCo's parent filter is on (no <flag filterparent="disable"/>)
  unsigned char* obstacle; // (ngeom) 1: a registered geom of another body may touch this geom
  int* body_depth;         // (nbody) bodies from the world to this body (world: 0)
  int* disk_depth;         // (nbody) bodies carrying a registered disk on the path world..body
  unsigned char* disk_body;// (nbody) 1: the body carries a registered disk
  int self_contact_neighbours;  // config key: disks of one robot touch beyond this many apart
  unsigned char* eq_compliant;  // (neq) 1: an equality acting on a registered patch body (a weld or
                                // connect to a mocap body, the world or another body; a joint
                                // equality of its joints) or tying any body to a mocap body: its
                                // rows stay MuJoCo's soft constraint in the contact correction
                                // (assemble/dynamics.h), not a hard tie
  // The parameters of every pair a registered geom makes (cusp_pair), by the two geoms' classes:
  // geoms of equal priority, condim and friction (bitwise) are one class, their pairs have equal
  // parameters. Classes holding a registered geom come first: they are the rows. Size: npair_row x
  // npair_class x 24 bytes, at most (registered geoms) x ngeom x 24 bytes (every geom its own
  // class); the shipped scenes have at most 2 rows of at most 3 columns (144 bytes), where a
  // registered geom x ngeom table would take up to 91 kB (two_arms_press.xml: 44 x 86).
  int* pair_class;              // (ngeom) the geom's class
  int npair_row;                // classes with a registered geom
  int npair_class;              // all classes
  cuspPairParams* pair;         // (npair_row x npair_class)
  mjtNum* limit_surface;        // (3 npatch_body) et, eo, er of each registered body from the
                                // `limit_surface` key; 0: the default (cusp_limit_surface)
} cuspParams;

int cusp_params_init(cuspParams* p, const cuspConfig* cfg, const mjModel* m);
void cusp_params_free(cuspParams* p);

// How many disks apart the disk bodies body_a and body_b are along the kinematic tree: the disk
// bodies on the tree path from body_a to body_b, counting body_b and not body_a (a disk and its
// child disk: 1; the same body: 0). -1 when only the world joins them (different robots, or a
// static disk). Bodies without a registered disk (a mount, an intermediate frame) are not counted.
int cusp_disks_apart(const cuspParams* p, const mjModel* m, int body_a, int body_b);

// Whether registered disk geoms d1 and d2 touch each other: always when they belong to different
// robots (cusp_disks_apart -1), never when on one body, and within one robot when they are more
// than `self_contact_neighbours` disks apart along it (-1: never within one robot). Near
// neighbours along a soft body overlap by construction when it bends (the discretisation of a
// continuous body, not a contact).
static inline int cusp_disks_touch(const cuspParams* p, const mjModel* m, int d1, int d2) {
  int b1 = m->geom_bodyid[d1], b2 = m->geom_bodyid[d2];
  if (b1 == b2) return 0;
  int apart = cusp_disks_apart(p, m, b1, b2);
  if (apart < 0) return 1;
  return p->self_contact_neighbours >= 0 && apart > p->self_contact_neighbours;
}

// MuJoCo's body-pair filter (mj_collision's filterBodyPair, and <contact><exclude>): whether
// geoms of bodies b1 and b2 never touch. Bodies welded together (no joint between them,
// m->body_weldid) are one rigid body; a body and its parent's weld do not touch unless the model
// disables the parent filter (<flag filterparent="disable"/>), the world excepted; excluded body
// pairs never touch.
int cusp_bodies_filtered(const cuspParams* p, const mjModel* m, int b1, int b2);

// The one touch rule for registered geoms (a disk, or a geom of a patch body): whether `self` may
// touch geom `other`. Never a geom of its own body; a registered disk `other` only when `self` is a
// disk too, by the self-contact rule (cusp_disks_touch; the pair is detected from the disk of the
// lower index, so a patch body meets disks through the disks' side); always a geom of a
// registered patch body (contype 0 as registered, yet solid); otherwise the configured environment
// list, or, when it is empty, every geom MuJoCo could collide (contype or conaffinity nonzero): a
// purely visual geom is never an obstacle. A pair with a geom of a registered body (its own geoms
// and those welded to it) also obeys MuJoCo's body-pair filter (cusp_bodies_filtered).
static inline int cusp_touches(const cuspParams* p, const mjModel* m, int self, int other) {
  if (p->disk_of_geom[other] >= 0) {
    return p->disk_of_geom[self] >= 0 && cusp_disks_touch(p, m, self, other);
  }
  int b1 = m->geom_bodyid[self], b2 = m->geom_bodyid[other];
  if (!p->obstacle[other] || b1 == b2) return 0;
  if (p->object_of_geom[self] < 0 && p->object_of_geom[other] < 0) return 1;
  return !cusp_bodies_filtered(p, m, b1, b2);
}

// The parameters of the pair of geoms g1, g2 (either order; at least one a registered geom: a
// disk or a geom of a registered body), resolved at init (cusp_params_init) as follows.
// condim: MuJoCo's (mj_contactParam, engine_collision_driver.c): the geom of higher `priority`
// gives it alone, on equal priority the larger of the two. mu: 0 when condim is 1 (frictionless:
// the `friction` key gives no friction to what the model declares frictionless), else the
// `friction` config key when set (>= 0), else the pair's sliding friction, combined as condim is
// (the higher priority's alone, else the larger). `solmix` weighs only solref and solimp (the soft
// contact's stiffness), which hard contact has no use for: it never changes the friction.
// torsion: as MuJoCo's elliptic cone, the pair's torsional coefficient (combined the same way)
// when condim is 4 or more and mu > 0, else 0. Patches (a body's support feature on a plane or a
// box face) carry torsion from their limit surface instead (er from the patch's area, Unicomp)
// with condim 3 or 4; disk contacts have none.
static inline const cuspPairParams* cusp_pair(const cuspParams* p, int g1, int g2) {
  int c1 = p->pair_class[g1], c2 = p->pair_class[g2];
  if (c1 >= p->npair_row) {  // rows: the classes of registered geoms
    int c = c1;
    c1 = c2;
    c2 = c;
  }
  return p->pair + (size_t)c1 * p->npair_class + c2;
}
static inline int cusp_pair_condim(const cuspParams* p, int g1, int g2) {
  return cusp_pair(p, g1, g2)->condim;
}
static inline mjtNum cusp_pair_friction(const cuspParams* p, int g1, int g2) {
  return cusp_pair(p, g1, g2)->mu;
}
static inline mjtNum cusp_pair_torsion(const cuspParams* p, int g1, int g2) {
  return cusp_pair(p, g1, g2)->torsion;
}

#define CUSP_ER_MIN 1e-3  // m, smallest er: a corner or edge-end touching has a small but finite
                          // area; smaller er makes the torsion row ill-conditioned

// Limit surface (Unicomp 26-30) of a patch of registered body `body`: et, eo (-) and er (m). The
// `limit_surface` key's values of the body where it gives them (> 0), else the default
// (1, 1, er_default), er at least CUSP_ER_MIN.
static inline void cusp_limit_surface(mjtNum e[3], const cuspParams* p, int body,
                                      mjtNum er_default) {
  const mjtNum* key = p->limit_surface + 3 * p->patch_of_body[body];
  e[0] = key[0] > 0 ? key[0] : 1;
  e[1] = key[1] > 0 ? key[1] : 1;
  e[2] = key[2] > 0 ? key[2] : er_default > CUSP_ER_MIN ? er_default : CUSP_ER_MIN;
}

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_PARAMS_H_
