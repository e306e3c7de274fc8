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
  CUSP_MODE_STICK,      // loaded and not slipping (slip <= CUSP_SLIP_SPEED)
  CUSP_MODE_SLIDE       // loaded and slipping (slip > CUSP_SLIP_SPEED; patches: at the ECP)
} cuspContactMode;

// m/s, tangential slip speed after the correction above which a loaded disk contact slides.
// A converged solve leaves round-off and solver residual (tolerance 1e-10 on the conditioned
// problem) at a sticking contact: a resting puck shows <= 3.5e-10 m/s (level and tan(alpha) = 0.3,
// where one of its three statically indeterminate contacts is saturated, |friction| = mu fn, and
// still sticks: saturation alone is no slide test). Real slides are mm/s and up
// (scenario A before the ramp: 2.5-12 mm/s, the arm creeping down the 45 deg incline as its
// sections stretch, tau = D/K = 0.47 s; a puck on tan(alpha) > mu: g (sin a - mu cos a) t).
// 1 um/s lies decades from both; it is also 1e-6 of the scenes' ~1 m/s impact speeds.
#define CUSP_SLIP_SPEED 1e-6

typedef struct cuspContact_ {
  int geom[2];        // geom[0]: registered geom; geom[1]: the geom it touches
  int body[2];        // their bodies (body[1] may be 0, the world)
  int sub;            // which point of this geom pair (identity for warm starts)
  int island;         // contact island this step (island.h), -1: touches nothing movable
  mjtNum gap;         // m, signed distance at q* (< 0: penetration)
  mjtNum pos[3];      // m, contact point (midway between the surfaces)
  mjtNum frame[9];    // rows t, o, n; n (unit) points from geom[1] towards geom[0]
  mjtNum mu;          // friction coefficient
  // results of the step
  mjtNum impulse_n;   // N s, normal impulse
  mjtNum impulse_t[2];// N s, friction impulse along t, o
  int mode;           // cuspContactMode
  mjtNum slip;        // m/s, tangential speed of geom[0] relative to geom[1] after the correction
} cuspContact;

// m/s, recovery speed of a penetration depth (m) > 0 over a step h (s): gap_alpha depth / h, at
// most pushout_speed (an uncapped push-out of a deep start launches the body: 4 cm at h = 1e-3,
// 8 m/s)
static inline mjtNum cusp_pushout(mjtNum depth, mjtNum h, mjtNum gap_alpha,
                                  mjtNum pushout_speed) {
  mjtNum push = gap_alpha * depth / h;
  return push < pushout_speed ? push : pushout_speed;
}

// Start-of-step gap g0 (m) of a contact whose gap at q* is g (m) and whose free normal velocity
// is vn (m/s, end of step), step h (s)
static inline mjtNum cusp_start_gap(mjtNum g, mjtNum vn, mjtNum h) { return g - h * vn; }

// m, half width of the band of start-of-step gaps a rigid patch's vertex is held in at rest:
// what the rest speed CUSP_SLIP_SPEED moves in one step h (s) (2 nm at h = 2 ms)
static inline mjtNum cusp_rest_gap(mjtNum h) { return CUSP_SLIP_SPEED * h; }

// Normal right-hand side (m/s) of a contact whose free normal velocity is vn (m/s, end of step)
// and gap g (m, at q*), step h (s), by its start-of-step gap g0:
// - at rest, -rest_depth <= g0 <= rest_gap (m; for the vertices of rigid patches cusp_rest_gap(h)
//   and the config's pushout_slop, 0 and 0 for the rest): held where it is, vn (its gap at the
//   end of the step no smaller than g0). Faces come to rest with their vertices either side of
//   g0 = 0 by round-off; with the rules below meeting at 0, such a face's targets change slope
//   there and are not those of a rigid motion (by ~4e-7 m/s at h = 2 ms), where its island's solve
//   stalled. A push-out of a few nanometres (a sphere wedged between a wall and a box in a pile,
//   3.8e-9 m deep) asks sticking contacts to slip by 1e-7 m/s, where the solve stalled too;
// - open, g0 >= 0: speculative, it may close exactly: g / h;
// - penetrating, g0 < 0: pushed out at cusp_pushout(-g0).
static inline mjtNum cusp_normal_rhs(mjtNum vn, mjtNum g, mjtNum h, mjtNum gap_alpha,
                                     mjtNum pushout_speed, mjtNum rest_gap, mjtNum rest_depth) {
  mjtNum g0 = cusp_start_gap(g, vn, h);
  if ((rest_gap > 0 || rest_depth > 0) && g0 <= rest_gap && g0 >= -rest_depth) return vn;
  if (g0 >= 0) return g / h;
  return vn - cusp_pushout(-g0, h, gap_alpha, pushout_speed);
}

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_CONTACT_H_
