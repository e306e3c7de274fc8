// cusp.contact plugin configuration: the MJCF <config key= value=> contract.
// Every key is listed once in cusp_config_keys (config.c) with unit, default, range and the field
// of cuspConfig it sets; the same table (keys.h) drives parsing, validation and the documentation
// in mjcf/README.md.
#ifndef CUSP_PLUGIN_CONFIG_H_
#define CUSP_PLUGIN_CONFIG_H_

#include <mujoco/mujoco.h>

#include "config/keys.h"
#include "config/reduction_basis.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const cuspKey cusp_config_keys[];  // terminated by {NULL}

// per-body limit-surface override (Unicomp 26-30): et, eo (dimensionless), er (m); <= 0: default
typedef struct cuspLimitSurfaceOverride_ {
  int body;           // body id
  mjtNum e[3];        // et, eo, er
} cuspLimitSurfaceOverride;

// Parsed, validated configuration of one plugin instance. Lists are owned (free with
// cusp_config_free).
typedef struct cuspConfig_ {
  int* disk_geoms;        // soft contact disks (cylinder geoms)          (ndisk)
  int ndisk;
  int* environment_geoms; // geoms the disks/bodies touch; empty: all others (nenv)
  int nenv;
  int* visual_geoms;      // geoms of registered bodies that touch nothing (drawn only) (nvisual)
  int nvisual;
  int* patch_bodies;      // rigid bodies with patch contact               (npatch_body)
  int npatch_body;
  int* object_geomadr;    // (npatch_body + 1) registered body i owns object_geom[adr[i], adr[i+1])
  int* object_geom;       // the geoms of each registered body and of the bodies welded to it
                          // (no joint between them: m->body_weldid), by id, visual_geoms left
                          // out: the body's solid shape                      (object_geomadr[n])
  cuspLimitSurfaceOverride* limit_surface;                              // (nlimit_surface)
  int nlimit_surface;
  int self_contact_neighbours;  // disks of one tree touch beyond this many disks apart; -1 never
  mjtNum friction;        // friction coefficient override; < 0: from the geoms (max of pair)
  int friction_directions;// r, polyhedral cone directions per contact
  int solver;             // index into the backend choices (cusp_config_solver_name)
  mjtNum tolerance;       // solver residual tolerance (natural map, impulse units)
  int max_iterations;
  mjtNum step_work_budget; // work units of a step's disk-island backend runs together
  int fallback;           // a failed backend (not the chain) is followed by the chain
  int finish;             // backends that stop short: one active-set solve from their answer
  int warm_start;
  int line_search_memory; // a rigid island's non-monotone line search: iterates remembered
  int solve_by_bodies;    // a large rigid island's proximal Newton steps through its bodies
  int rank_selection;     // conditioning stage 1
  mjtNum eps_rank;
  int ruiz;               // conditioning stage 2
  int ruiz_passes;
  int tikhonov;           // conditioning stage 3
  mjtNum eps_w;
  mjtNum gap_alpha;       // normal rhs += (gap_alpha / h) * gap
  mjtNum pushout_speed;   // m/s, cap on the recovery speed gap_alpha * depth / h
  mjtNum pushout_slop;    // m, depth a rigid patch's vertex keeps without push-out (held)
  mjtNum margin;          // m, speculative contact distance
  mjtNum break_impulse;   // N*s, normal impulse at or below which a contact counts as "break"
  int visualize;
  mjtNum force_scale;     // m per N of normal force for drawn normals
  cuspReductionBasis reduction;  // contact-space basis (`reduction_basis`); k = 0: none
  mjtNum reduction_tolerance;    // m, a reduced solve leaving more penetration falls back
} cuspConfig;

// Returns the config value (override, MJCF, or default) as text.
const char* cusp_config_value(const mjModel* m, int instance, const cuspKey* key);

// Parse and validate instance's config. On error returns -1 and writes a message naming the key
// and the value into err (err_sz bytes); on success returns 0 and fills cfg.
int cusp_config_parse(cuspConfig* cfg, const mjModel* m, int instance, char* err, int err_sz);
void cusp_config_free(cuspConfig* cfg);
// dst := a deep copy of src (its own lists); 0, or -1 (out of memory, dst empty)
int cusp_config_copy(cuspConfig* dst, const cuspConfig* src);

// Position of geom g in cfg->disk_geoms, of body b in cfg->patch_bodies; -1 if not registered.
int cusp_config_disk_index(const cuspConfig* cfg, int g);
int cusp_config_patch_body_index(const cuspConfig* cfg, int b);

// The geoms of registered body i (index in cfg->patch_bodies) and of the bodies welded to it: one
// rigid object, its hull set. Returns their count; *geoms gets the first.
static inline int cusp_config_object_geoms(const int** geoms, const cuspConfig* cfg, int i) {
  *geoms = cfg->object_geom + cfg->object_geomadr[i];
  return cfg->object_geomadr[i + 1] - cfg->object_geomadr[i];
}

// name of the solver choice (index as stored in cuspConfig.solver)
const char* cusp_config_solver_name(int solver);

// Process-wide overrides, for tools (cusp-sim --set, Python): applied to instances of
// cusp.contact initialised after the call, before the MJCF value. The key is checked at once;
// returns -1 with a message for an unknown key. Values are validated at init like MJCF values.
int cusp_config_override_set(const char* key, const char* value, char* err, int err_sz);
void cusp_config_override_clear(void);

// "cusp.contact: unknown config key 'KEY'; valid keys: disks, environment, ..." (every key of
// the table, in its order): the one line for a key cusp.contact does not have.
void cusp_config_unknown_key(char* out, int out_sz, const char* key);

// 0 if every sensor of this instance names a registered disk or patch body (or nothing);
// else -1 and a message naming the sensor and its object.
int cusp_sensor_validate(const mjModel* m, int instance, const cuspConfig* cfg, char* msg,
                         int msg_sz);

// Number of registered patch bodies of instance (from the config text; usable before init).
int cusp_patch_nbody(const mjModel* m, int instance);

#ifdef __cplusplus
}
#endif
#endif  // CUSP_PLUGIN_CONFIG_H_
