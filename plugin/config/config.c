// cusp.contact configuration: key table, parsing, validation, overrides.
#include "config/config.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/params.h"  // cusp_touches: the pipeline's rule of what registered geoms touch

#define CUSP_SOLVER_CHOICES "chain|fbnewton|lemke|pgs|ncpsmooth"

// what each key sets: a field of cuspConfig; a list (empty: none) and its count, then a check; a
// key its reader parses (empty: none)
#define AT(member) 0, CUSP_FIELD(cuspConfig, member), NULL
#define LIST(member, n, check) 1, CUSP_LIST(cuspConfig, member, n), check
#define READ(reader) 1, CUSP_NO_FIELD, reader

// what the list keys ask beyond existing names, and the readers (defined with the checks below)
static int check_disks(void* cfg, const mjModel* m, int instance, const cuspKey* key,
                       const char* value, char* err, int err_sz);
static int check_bodies(void* cfg, const mjModel* m, int instance, const cuspKey* key,
                        const char* value, char* err, int err_sz);
static int read_limit_surface(void* cfg, const mjModel* m, int instance, const cuspKey* key,
                              const char* value, char* err, int err_sz);
static int read_reduction_basis(void* cfg, const mjModel* m, int instance, const cuspKey* key,
                                const char* value, char* err, int err_sz);

const cuspKey cusp_config_keys[] = {
  {"disks", CUSP_KEY_GEOMS, "", 0, 0, NULL, "-",
   "soft contact disks: cylinder geoms with contype=conaffinity=0",
   LIST(disk_geoms, ndisk, check_disks)},
  {"environment", CUSP_KEY_GEOMS, "", 0, 0, NULL, "-",
   "geoms the registered disks and bodies touch; empty: every other geom",
   LIST(environment_geoms, nenv, NULL)},
  {"visual_geoms", CUSP_KEY_GEOMS, "", 0, 0, NULL, "-",
   "geoms of the registered bodies that touch nothing (visual meshes, markers): the bodies' other "
   "geoms are their solid shape", LIST(visual_geoms, nvisual, NULL)},
  {"bodies", CUSP_KEY_BODIES, "", 0, 0, NULL, "-",
   "rigid bodies with patch contact, moved by joints of their own (free, ball, hinge, slide); "
   "their geoms need contype=conaffinity=0", LIST(patch_bodies, npatch_body, check_bodies)},
  {"limit_surface", CUSP_KEY_BODY_PARAMS, "", 1e-6, 1e6, NULL, "-, -, m",
   "per-body limit surface 'body:et,eo,er; ...' of bodies in `bodies`; a value 0 keeps the patch "
   "default", READ(read_limit_surface)},
  {"self_contact_neighbours", CUSP_KEY_INT, "3", -1, 1000000, NULL, "disks",
   "disks of one robot (kinematic tree) touch when more than this many disks apart along it; "
   "-1: never; disks of different robots always touch; 0 is refused when a joint equality ties "
   "joints between adjacent disks (a constant-curvature section)", AT(self_contact_neighbours)},
  {"friction", CUSP_KEY_REAL, "-1", -1, 100, NULL, "-",
   "friction coefficient of every cusp contact with friction (condim 1 pairs stay frictionless); "
   "-1: the pair's geom friction as MuJoCo combines it (the higher priority, else the larger)",
   AT(friction)},
  {"friction_directions", CUSP_KEY_INT, "8", 4, 64, NULL, "-",
   "r, directions of the polyhedral friction cone (disk contacts)", AT(friction_directions)},
  {"solver", CUSP_KEY_CHOICE, "chain", 0, 0, CUSP_SOLVER_CHOICES, "-",
   "complementarity backend; chain = fbnewton, then lemke, then pgs", AT(solver)},
  {"tolerance", CUSP_KEY_REAL, "1e-10", 1e-16, 1e-2, NULL, "-",
   "solver residual tolerance on the conditioned problem", AT(tolerance)},
  {"max_iterations", CUSP_KEY_INT, "200", 1, 1000000, NULL, "-",
   "iteration limit per backend run (a rigid island of at most 24 unknowns: 5 times this many "
   "Newton steps); a run also stops when its work budget is spent (counted as a failed solve; "
   "plugin/solver/lcp.h)", AT(max_iterations)},
  {"step_work_budget", CUSP_KEY_REAL, "3e7", 0, 1e15, NULL, "-",
   "work units the backend runs of one step's disk-island solves may spend together (about "
   "0.5 ns of one core each: the default, three default runs, is about 15 ms); a solve left "
   "without budget fails and is counted (plugin/solver/lcp.h)", AT(step_work_budget)},
  {"fallback", CUSP_KEY_BOOL, "true", 0, 0, NULL, "-",
   "when the chosen backend fails a step, run the chain from the same start; keep the better answer",
   AT(fallback)},
  {"finish", CUSP_KEY_BOOL, "true", 0, 0, NULL, "-",
   "when the backends stop short of the tolerance, one active-set solve from their answer (the "
   "rows with positive impulse as equalities), then up to 5 active-set rounds with basic "
   "solutions, then Lemke with ties by basic values; a disk island still short is solved again "
   "with its push-out dropped (penetrating contacts held at their depth, the shallow ones "
   "first); a rigid island's solve that stops short: "
   "solved again with its push-out dropped (penetrating vertices held at their depth), and where "
   "every patch sticks the all-stick QP finish; an answer is kept only if it meets the "
   "tolerance", AT(finish)},
  {"warm_start", CUSP_KEY_BOOL, "true", 0, 0, NULL, "-",
   "start from the previous step's impulses matched by contact identity", AT(warm_start)},
  {"line_search_memory", CUSP_KEY_INT, "5", 1, 16, NULL, "-",
   "a rigid island's Newton line search accepts a step against the largest merit of this many "
   "last iterates (1: monotone, each step must lower the merit; more: non-monotone, so a step "
   "across a kink of the contact map, a vertex loaded from 0 or a patch between stick and slip, "
   "is not halved to nothing: random piles 1.8x faster with 5, bench/RESULTS.md)",
   AT(line_search_memory)},
  {"solve_by_bodies", CUSP_KEY_BOOL, "true", 0, 0, NULL, "-",
   "a rigid island of at least 25 unknowns (not a chain solved by band) takes its proximal "
   "Newton steps through its bodies: one small LU per patch and one of its dofs' capacitance "
   "matrix (Woodbury), instead of the dense LU of all its unknowns; false: the dense LU",
   AT(solve_by_bodies)},
  {"rank_selection", CUSP_KEY_BOOL, "true", 0, 0, NULL, "-",
   "conditioning stage 1: inertial rank selection (pivoted Cholesky of the whitened normal "
   "block; the pivoted QR when a contact is near the threshold)", AT(rank_selection)},
  {"eps_rank", CUSP_KEY_REAL, "1e-6", 1e-14, 0.5, NULL, "-",
   "stage 1 tolerance: drop contacts with |R_ii| <= eps_rank |R_11|", AT(eps_rank)},
  {"ruiz", CUSP_KEY_BOOL, "true", 0, 0, NULL, "-",
   "conditioning stage 2: Ruiz equilibration (skipped on an island whose normal and friction "
   "diagonal is already within a factor 32)", AT(ruiz)},
  {"ruiz_passes", CUSP_KEY_INT, "5", 1, 100, NULL, "-", "stage 2 row/column scaling passes",
   AT(ruiz_passes)},
  {"tikhonov", CUSP_KEY_BOOL, "true", 0, 0, NULL, "-",
   "conditioning stage 3: Tikhonov on the normal diagonals", AT(tikhonov)},
  {"eps_w", CUSP_KEY_REAL, "1e-9", 0, 1e-2, NULL, "-",
   "stage 3 regularisation added to the scaled normal diagonals", AT(eps_w)},
  {"gap_alpha", CUSP_KEY_REAL, "0.2", 0, 1, NULL, "-",
   "gap stabilisation: a start-of-step penetration is recovered at (gap_alpha/h) * depth (a "
   "rigid patch's vertex from pushout_slop deep to 1e-6 m/s * h open is held at its gap)",
   AT(gap_alpha)},
  {"pushout_speed", CUSP_KEY_REAL, "0.1", 1e-6, 1e3, NULL, "m/s",
   "cap on the penetration-recovery speed gap_alpha * depth / h", AT(pushout_speed)},
  {"pushout_slop", CUSP_KEY_REAL, "1e-7", 0, 1e-3, NULL, "m",
   "penetration a rigid patch's vertex keeps without push-out (held at its depth; deeper ones "
   "are pushed out of all of it): a push-out of nanometres asks sticking contacts to slip",
   AT(pushout_slop)},
  {"margin", CUSP_KEY_REAL, "0.005", 0, 1, NULL, "m",
   "speculative contact distance: pairs closer than this enter the problem", AT(margin)},
  {"break_impulse", CUSP_KEY_REAL, "1e-9", 0, 1e3, NULL, "N s",
   "a contact whose normal impulse is at most this is reported as 'break'", AT(break_impulse)},
  {"visualize", CUSP_KEY_BOOL, "true", 0, 0, NULL, "-",
   "draw contact points, normals and modes in the viewer", AT(visualize)},
  {"force_scale", CUSP_KEY_REAL, "0.01", 0, 100, NULL, "m/N",
   "length of a drawn normal per newton of normal force", AT(force_scale)},
  {"reduction_basis", CUSP_KEY_FILE, "", 0, 0, NULL, "-",
   "contact-space basis file (python -m cusp reduction basis); set: disk islands are solved "
   "for the basis coefficients first (frictionless, normals = basis x coefficients >= 0)",
   READ(read_reduction_basis)},
  {"reduction_tolerance", CUSP_KEY_REAL, "1e-5", 0, 1, NULL, "m",
   "a reduced solve leaving a contact penetrating more than this after the step falls back to "
   "the full problem", AT(reduction_tolerance)},
  {NULL, 0, NULL, 0, 0, NULL, NULL, NULL, 0, CUSP_NO_FIELD, NULL},
};

const char* cusp_config_solver_name(int solver) {
  static const char* names[] = {"chain", "fbnewton", "lemke", "pgs", "ncpsmooth"};
  return (solver >= 0 && solver < 5) ? names[solver] : "?";
}

//---------------------------------- overrides ------------------------------------------------------

#define CUSP_MAX_OVERRIDE 64
#define CUSP_OVERRIDE_LEN 1024

static pthread_mutex_t override_lock = PTHREAD_MUTEX_INITIALIZER;
static char override_key[CUSP_MAX_OVERRIDE][64];
static char override_value[CUSP_MAX_OVERRIDE][CUSP_OVERRIDE_LEN];
static int noverride = 0;

void cusp_config_unknown_key(char* out, int out_sz, const char* key) {
  int n = snprintf(out, out_sz, "cusp.contact: unknown config key '%s'; valid keys: ", key);
  for (const cuspKey* k = cusp_config_keys; k->key && n >= 0 && n < out_sz; k++) {
    int w = snprintf(out + n, out_sz - n, "%s%s", k == cusp_config_keys ? "" : ", ", k->key);
    if (w < 0) break;
    n += w;
  }
}

int cusp_config_override_set(const char* key, const char* value, char* err, int err_sz) {
  if (!key || !cusp_key_named(cusp_config_keys, key)) {
    cusp_config_unknown_key(err, err_sz, key ? key : "");
    return -1;
  }
  if (!value) {
    snprintf(err, err_sz, "cusp.contact: config key '%s' has no value", key);
    return -1;
  }
  if (strlen(value) >= CUSP_OVERRIDE_LEN) {
    snprintf(err, err_sz,
             "cusp.contact: config key '%s' has value '%.120s...' (%zu characters): an override "
             "holds at most %d (write longer values in the MJCF)",
             key, value, strlen(value), CUSP_OVERRIDE_LEN - 1);
    return -1;
  }
  pthread_mutex_lock(&override_lock);
  int slot = -1;
  for (int i = 0; i < noverride; i++) {
    if (!strcmp(override_key[i], key)) slot = i;
  }
  if (slot < 0 && noverride < CUSP_MAX_OVERRIDE) slot = noverride++;
  if (slot >= 0) {
    snprintf(override_key[slot], sizeof(override_key[slot]), "%s", key);
    snprintf(override_value[slot], CUSP_OVERRIDE_LEN, "%s", value);
  }
  pthread_mutex_unlock(&override_lock);
  return 0;
}

void cusp_config_override_clear(void) {
  pthread_mutex_lock(&override_lock);
  noverride = 0;
  pthread_mutex_unlock(&override_lock);
}

const char* cusp_config_value(const mjModel* m, int instance, const cuspKey* key) {
  const char* value = NULL;
  pthread_mutex_lock(&override_lock);
  for (int i = 0; i < noverride; i++) {
    if (!strcmp(override_key[i], key->key)) value = override_value[i];
  }
  pthread_mutex_unlock(&override_lock);
  if (!value) value = mj_getPluginConfig(m, instance, key->key);
  if (!value || !value[0]) value = key->default_value;
  return value;
}

//---------------------------------- parsing --------------------------------------------------------

static int fail(char* err, int err_sz, const char* key, const char* value, const char* why) {
  return cusp_key_fail(err, err_sz, "cusp.contact", key, value, why);
}

static int is_blank(const char* s) {
  while (*s && isspace((unsigned char)*s)) s++;
  return *s == 0;
}

// `limit_surface`, "body:et,eo,er; body:et,eo,er": any length; every body registered in `bodies`
// (parsed before), at most once; each value 0 (the patch default) or within [key->min, key->max]
static int read_limit_surface(void* obj, const mjModel* m, int instance, const cuspKey* key,
                              const char* value, char* err, int err_sz) {
  (void)instance;
  cuspConfig* cfg = (cuspConfig*)obj;
  int n = 0;
  for (const char* s = value; *s; s++) n += (*s == ':');
  cfg->limit_surface = n ? (cuspLimitSurfaceOverride*)calloc(n, sizeof(cuspLimitSurfaceOverride))
                         : NULL;
  cfg->nlimit_surface = 0;
  char* buf = (char*)malloc(strlen(value) + 1);
  if (!buf || (n && !cfg->limit_surface)) {
    free(buf);
    return fail(err, err_sz, key->key, value, "out of memory");
  }
  strcpy(buf, value);
  char why[512];
  int rc = 0;
  char* save = NULL;
  for (char* item = strtok_r(buf, ";", &save); item && !rc; item = strtok_r(NULL, ";", &save)) {
    if (is_blank(item)) continue;
    char* colon = strchr(item, ':');
    if (!colon) {
      snprintf(why, sizeof(why), "entry '%.200s': expected 'body:et,eo,er'; write each entry so, "
               "entries separated by ';'", item);
      rc = fail(err, err_sz, key->key, value, why);
      break;
    }
    *colon = 0;
    char name[256];
    if (sscanf(item, " %255s", name) != 1) {
      rc = fail(err, err_sz, key->key, value,
                "missing body name before ':'; write 'body:et,eo,er'");
      break;
    }
    int id = mj_name2id(m, mjOBJ_BODY, name);
    if (id < 0) {
      snprintf(why, sizeof(why), "no body named '%s' in the model; name a body of 'bodies'",
               name);
      rc = fail(err, err_sz, key->key, value, why);
      break;
    }
    if (cusp_config_patch_body_index(cfg, id) < 0) {
      snprintf(why, sizeof(why),
               "body '%s' is not registered in 'bodies' (a limit surface applies to patch bodies "
               "only); register it in 'bodies' or remove its entry", name);
      rc = fail(err, err_sz, key->key, value, why);
      break;
    }
    for (int i = 0; i < cfg->nlimit_surface; i++) {
      if (cfg->limit_surface[i].body == id) {
        snprintf(why, sizeof(why), "body '%s' is listed twice; list it once", name);
        rc = fail(err, err_sz, key->key, value, why);
      }
    }
    if (rc) break;
    double e[3];
    char tail;
    if (sscanf(colon + 1, " %lf , %lf , %lf %c", e, e + 1, e + 2, &tail) != 3 ||
        !isfinite(e[0]) || !isfinite(e[1]) || !isfinite(e[2])) {
      snprintf(why, sizeof(why), "body '%s': expected three numbers 'et,eo,er'", name);
      rc = fail(err, err_sz, key->key, value, why);
      break;
    }
    static const char* what[3] = {"et", "eo", "er"};
    for (int i = 0; i < 3 && !rc; i++) {
      if (e[i] != 0 && !(e[i] >= key->min && e[i] <= key->max)) {
        snprintf(why, sizeof(why), "body '%s': %s = %g out of range: 0 (the default) or [%g, %g]",
                 name, what[i], e[i], key->min, key->max);
        rc = fail(err, err_sz, key->key, value, why);
      }
    }
    if (rc) break;
    cuspLimitSurfaceOverride* o = &cfg->limit_surface[cfg->nlimit_surface++];
    o->body = id;
    for (int i = 0; i < 3; i++) o->e[i] = e[i];
  }
  free(buf);
  return rc;
}

// registered geoms must not also be collided by MuJoCo
static int check_not_collided(const mjModel* m, int geom, const char* key, const char* value,
                              char* err, int err_sz) {
  if (m->geom_contype[geom] || m->geom_conaffinity[geom]) {
    char why[320];
    snprintf(why, sizeof(why),
             "geom '%s' has contype=%d conaffinity=%d; registered geoms need 0 and 0 so MuJoCo "
             "does not collide them too: set contype=\"0\" conaffinity=\"0\" on it",
             mj_id2name(m, mjOBJ_GEOM, geom), m->geom_contype[geom], m->geom_conaffinity[geom]);
    return fail(err, err_sz, key, value, why);
  }
  return 0;
}

static const char* geom_name(const mjModel* m, int g) {
  const char* name = mj_id2name(m, mjOBJ_GEOM, g);
  return name ? name : "(unnamed)";
}

static const char* body_name(const mjModel* m, int b) {
  const char* name = mj_id2name(m, mjOBJ_BODY, b);
  return name ? name : "(unnamed)";
}

// A registered body moves by joints of its own, which MuJoCo integrates (free, ball, hinge, slide,
// or several): its contact rows are its point Jacobians, whatever the joints. Refused, with what
// to use instead: a mocap body (the user moves it, no dof takes an impulse), a body without a
// joint: welded to the world (static), or welded to a moving body (a part of that body).
static int check_patch_body(const mjModel* m, int b, const char* key, const char* value,
                            char* err, int err_sz) {
  char why[512];
  if (m->body_mocapid[b] >= 0) {
    snprintf(why, sizeof(why),
             "body '%s' is a mocap body (moved by the user, not integrated: no impulse can move "
             "it); remove it from '%s' and list its geoms in 'environment': they push the "
             "registered bodies", body_name(m, b), key);
    return fail(err, err_sz, key, value, why);
  }
  if (m->body_jntnum[b] > 0) return 0;
  int weld = m->body_weldid[b];
  if (weld == 0) {
    snprintf(why, sizeof(why),
             "body '%s' has no joint and is welded to the world (static: nothing moves it); "
             "remove it from '%s' and list its geoms in 'environment'", body_name(m, b), key);
  } else {
    snprintf(why, sizeof(why),
             "body '%s' has no joint: it is welded to body '%s' and moves with it; register '%s' "
             "instead (the geoms of the bodies welded to a registered body are its own)",
             body_name(m, b), body_name(m, weld), body_name(m, weld));
  }
  return fail(err, err_sz, key, value, why);
}

static int is_visual(const cuspConfig* cfg, int g) {
  for (int i = 0; i < cfg->nvisual; i++) {
    if (cfg->visual_geoms[i] == g) return 1;
  }
  return 0;
}

// 1 if geom g belongs to registered body b: b's own, or of a body welded to it, not visual
static int solid_geom_of(const cuspConfig* cfg, const mjModel* m, int g, int b) {
  return m->body_weldid[m->geom_bodyid[g]] == b && !is_visual(cfg, g);
}

// cfg->object_geomadr, object_geom: for every registered body, the geoms of the bodies welded to
// it (itself included) but the visual ones, in geom order; 0, or -1 out of memory
static int collect_object_geoms(cuspConfig* cfg, const mjModel* m) {
  int n = cfg->npatch_body, total = 0;
  cfg->object_geomadr = (int*)calloc((size_t)n + 1, sizeof(int));
  if (!cfg->object_geomadr) return -1;
  for (int i = 0; i < n; i++) {
    for (int g = 0; g < m->ngeom; g++) total += solid_geom_of(cfg, m, g, cfg->patch_bodies[i]);
  }
  cfg->object_geom = (int*)malloc(((size_t)total + 1) * sizeof(int));
  if (!cfg->object_geom) return -1;
  int k = 0;
  for (int i = 0; i < n; i++) {
    cfg->object_geomadr[i] = k;
    for (int g = 0; g < m->ngeom; g++) {
      if (solid_geom_of(cfg, m, g, cfg->patch_bodies[i])) cfg->object_geom[k++] = g;
    }
  }
  cfg->object_geomadr[n] = k;
  return 0;
}

// every visual geom belongs to a registered body (or one welded to it), and none leaves its body
// without a solid geom
static int check_visual_geoms(const cuspConfig* cfg, const mjModel* m, const char* value,
                              char* err, int err_sz) {
  char why[400];
  for (int i = 0; i < cfg->nvisual; i++) {
    int g = cfg->visual_geoms[i], owner = m->body_weldid[m->geom_bodyid[g]], found = 0;
    for (int j = 0; j < cfg->npatch_body; j++) found |= cfg->patch_bodies[j] == owner;
    if (!found) {
      snprintf(why, sizeof(why),
               "geom '%s' is not a geom of a body in 'bodies' (nor of a body welded to one): "
               "remove it from 'visual_geoms' (geoms of other bodies follow contype/conaffinity)",
               geom_name(m, g));
      return fail(err, err_sz, "visual_geoms", value, why);
    }
  }
  for (int j = 0; j < cfg->npatch_body; j++) {
    const int* geoms;
    if (cfg->nvisual && !cusp_config_object_geoms(&geoms, cfg, j)) {
      snprintf(why, sizeof(why),
               "every geom of body '%s' is listed, so it has no solid shape: keep at least one "
               "of its geoms out of 'visual_geoms'", body_name(m, cfg->patch_bodies[j]));
      return fail(err, err_sz, "visual_geoms", value, why);
    }
  }
  return 0;
}

// geom types no registered disk or body can be in contact with: detection has no routine for them
// (a disk would fall through a heightfield without a warning; a patch body on one went through
// MuJoCo's generic convex-heightfield points, 63 ms a step, most solves failing)
static const char* unsupported_environment(int type) {
  if (type == mjGEOM_HFIELD) return "a heightfield";
  if (type == mjGEOM_SDF) return "an SDF";
  return NULL;
}

// the first registered geom (a disk, or a geom of a registered body) that the pipeline's touch
// rule (cusp_touches, params.h) lets touch geom g; -1 if none
static int first_toucher(const cuspParams* p, const cuspConfig* cfg, const mjModel* m, int g) {
  for (int k = 0; k < cfg->ndisk; k++) {
    if (cusp_touches(p, m, cfg->disk_geoms[k], g)) return cfg->disk_geoms[k];
  }
  for (int k = 0; k < cfg->npatch_body; k++) {
    const int* geoms;
    int ng = cusp_config_object_geoms(&geoms, cfg, k);
    for (int j = 0; j < ng; j++) {
      if (cusp_touches(p, m, geoms[j], g)) return geoms[j];
    }
  }
  return -1;
}

// What the registered disks and bodies touch (by the pipeline's own rule, cusp_touches: the
// `environment` geoms, or with it empty every geom MuJoCo collides, plus the registered bodies;
// never the own body) may not be of a type detection has no routine for; and an `environment`
// entry must do something: not a disk (disks touch disks by the self-contact rule), not a geom of
// a registered body (those are obstacles to every other registered geom without being listed,
// never to their own body), not a geom that only its own body's registered geoms could touch.
static int check_environment_with(const cuspParams* p, const cuspConfig* cfg, const mjModel* m,
                                  const char* value, char* err, int err_sz) {
  char why[640];
  for (int g = 0; g < m->ngeom; g++) {
    const char* type = unsupported_environment(m->geom_type[g]);
    int s = type ? first_toucher(p, cfg, m, g) : -1;
    if (s < 0) continue;
    snprintf(why, sizeof(why),
             "%sgeom '%s' is %s, which registered geom '%s' would touch but cusp does not support "
             "as environment (nothing would hold it up)%s", cfg->nenv ? "" : "empty, so ",
             geom_name(m, g), type, geom_name(m, s),
             cfg->nenv ? "; remove it from 'environment'" : "; list the environment geoms "
             "without it");
    return fail(err, err_sz, "environment", value, why);
  }
  for (int i = 0; i < cfg->nenv; i++) {
    int g = cfg->environment_geoms[i], b = m->geom_bodyid[g];
    if (cusp_config_disk_index(cfg, g) >= 0) {
      snprintf(why, sizeof(why), "geom '%s' is a registered disk (disks touch other disks by "
               "`self_contact_neighbours`, not as environment); remove it from 'environment'",
               geom_name(m, g));
      return fail(err, err_sz, "environment", value, why);
    }
    if (p->object_of_geom[g] >= 0) {
      b = cfg->patch_bodies[p->object_of_geom[g]];
      snprintf(why, sizeof(why),
               "geom '%s' belongs to registered body '%s' (registered bodies are obstacles to "
               "every other registered disk and body without being listed, never to "
               "themselves); remove it from 'environment'",
               geom_name(m, g), body_name(m, b));
      return fail(err, err_sz, "environment", value, why);
    }
    if (first_toucher(p, cfg, m, g) < 0) {
      int disk = -1;
      for (int k = 0; k < cfg->ndisk && disk < 0; k++) {
        if (m->geom_bodyid[cfg->disk_geoms[k]] == b) disk = cfg->disk_geoms[k];
      }
      snprintf(why, sizeof(why),
               "geom '%s' is on body '%s'%s%s%s, and no other registered disk or body touches it: "
               "nothing touches its own body, so the entry does nothing; remove it from "
               "'environment'", geom_name(m, g),
               body_name(m, b), disk >= 0 ? " of registered disk '" : "",
               disk >= 0 ? geom_name(m, disk) : "", disk >= 0 ? "'" : "");
      return fail(err, err_sz, "environment", value, why);
    }
  }
  return 0;
}

static const cuspKey* key_named(const char* name) {
  return cusp_key_named(cusp_config_keys, name);
}

// A pair a registered geom makes whose condim (cusp_pair_condim, MuJoCo's rule) is 6: rolling
// friction, which cusp's contact rows do not have. Refused naming the geom that asks for it.
static int check_condim_with(const cuspParams* p, const cuspConfig* cfg, const mjModel* m,
                             int instance, char* err, int err_sz) {
  int nreg = cfg->ndisk + cfg->object_geomadr[cfg->npatch_body];
  for (int i = 0; i < nreg; i++) {
    int disk = i < cfg->ndisk;
    int s = disk ? cfg->disk_geoms[i] : cfg->object_geom[i - cfg->ndisk];
    for (int g = 0; g < m->ngeom; g++) {
      if (!cusp_touches(p, m, s, g) || cusp_pair_condim(p, s, g) != 6) continue;
      int six = m->geom_condim[s] == 6 ? s : g;
      const char* key = disk ? "disks" : "bodies";
      char why[640];
      snprintf(why, sizeof(why),
               "geom '%s' has condim 6 (rolling friction), which cusp's contact does not model "
               "(its pair with geom '%s' would have it); set condim=\"3\" or \"4\" on it",
               geom_name(m, six), geom_name(m, six == s ? g : s));
      return fail(err, err_sz, key, cusp_config_value(m, instance, key_named(key)), why);
    }
  }
  return 0;
}

// a joint equality that names joint j (its first or second joint), or -1
static int joint_equality(const mjModel* m, int j) {
  for (int e = 0; e < m->neq; e++) {
    if (m->eq_type[e] == mjEQ_JOINT && (m->eq_obj1id[e] == j || m->eq_obj2id[e] == j)) return e;
  }
  return -1;
}

// the registered disk geom on body b, or -1
static int disk_on_body(const cuspConfig* cfg, const mjModel* m, int b) {
  for (int k = 0; k < cfg->ndisk; k++) {
    if (m->geom_bodyid[cfg->disk_geoms[k]] == b) return cfg->disk_geoms[k];
  }
  return -1;
}

// `self_contact_neighbours` = 0 lets a disk touch the next disk along its robot. When a joint
// between the two is tied by a joint equality (a constant-curvature section: its joints bend
// together), the section bends evenly, every adjacent pair of it meets at once, and their contacts
// fight the equalities that MuJoCo's free step holds softly and the correction holds exactly: the
// solves fail and the arm diverges. Refused, naming the pair and the equality.
static int check_self_contact_with(const cuspParams* p, const cuspConfig* cfg, const mjModel* m,
                                   int instance, char* err, int err_sz) {
  if (cfg->self_contact_neighbours != 0) return 0;
  for (int b = 1; b < m->nbody; b++) {
    if (!p->disk_body[b]) continue;
    int tie = -1, c = b;
    // the joints from b up to the next disk body above it (bodies without a disk in between)
    do {
      for (int j = m->body_jntadr[c]; tie < 0 && j < m->body_jntadr[c] + m->body_jntnum[c]; j++) {
        tie = joint_equality(m, j);
      }
      c = m->body_parentid[c];
    } while (c > 0 && !p->disk_body[c]);
    if (tie < 0 || c <= 0) continue;
    const char* eq = mj_id2name(m, mjOBJ_EQUALITY, tie);
    char why[640];
    snprintf(why, sizeof(why),
             "adjacent disks '%s' and '%s' of one robot would touch, but joint equality '%s' "
             "ties the joints between them to the rest of their constant-curvature section, so "
             "a contact between them fights the equality (the section bends evenly and all its "
             "adjacent disks meet at once: the solves fail and the arm diverges); use 1 or more "
             "(default 3), or -1",
             geom_name(m, disk_on_body(cfg, m, c)), geom_name(m, disk_on_body(cfg, m, b)),
             eq ? eq : "(unnamed)");
    return fail(err, err_sz, "self_contact_neighbours",
                cusp_config_value(m, instance, key_named("self_contact_neighbours")), why);
  }
  return 0;
}

static int check_environment(const cuspConfig* cfg, const mjModel* m, int instance,
                             const char* value, char* err, int err_sz) {
  if (!cfg->ndisk && !cfg->npatch_body) return 0;
  cuspParams p;
  if (cusp_params_init(&p, cfg, m)) {
    cusp_params_free(&p);
    return fail(err, err_sz, "environment", value, "out of memory");
  }
  int rc = check_environment_with(&p, cfg, m, value, err, err_sz);
  if (!rc) rc = check_condim_with(&p, cfg, m, instance, err, err_sz);
  if (!rc) rc = check_self_contact_with(&p, cfg, m, instance, err, err_sz);
  cusp_params_free(&p);
  return rc;
}

// One cusp.contact instance per model: each instance detects its own disks and bodies against
// the environment, so the registered geoms of two instances would pass through each other without
// a word (and share MuJoCo's step twice over). The second is refused, with what to do instead.
static int check_single_instance(const mjModel* m, int instance, char* err, int err_sz) {
  for (int j = 0; j < instance; j++) {
    if (m->plugin[j] != m->plugin[instance]) continue;
    const char* first = mj_id2name(m, mjOBJ_PLUGIN, j);
    const char* second = mj_id2name(m, mjOBJ_PLUGIN, instance);
    snprintf(err, err_sz,
             "cusp.contact: instance '%s' is a second cusp.contact instance (the first is '%s'): "
             "the disks and bodies of two instances would pass through each other; register "
             "them all in one instance", second ? second : "(unnamed)",
             first ? first : "(unnamed)");
    return -1;
  }
  return 0;
}

// `disks`: cylinders that MuJoCo does not collide
static int check_disks(void* obj, const mjModel* m, int instance, const cuspKey* key,
                       const char* value, char* err, int err_sz) {
  (void)instance;
  const cuspConfig* cfg = (const cuspConfig*)obj;
  int rc = 0;
  for (int i = 0; !rc && i < cfg->ndisk; i++) {
    int g = cfg->disk_geoms[i];
    if (m->geom_type[g] != mjGEOM_CYLINDER) {
      char why[320];
      snprintf(why, sizeof(why),
               "geom '%s' is not a cylinder; disks are cylinder geoms (register a body of "
               "another shape in 'bodies')", mj_id2name(m, mjOBJ_GEOM, g));
      rc = fail(err, err_sz, key->key, value, why);
    }
    if (!rc) rc = check_not_collided(m, g, key->key, value, err, err_sz);
  }
  return rc;
}

// `bodies`: bodies with joints of their own whose geoms (and those welded to them, but the
// `visual_geoms`, parsed before) MuJoCo does not collide
static int check_bodies(void* obj, const mjModel* m, int instance, const cuspKey* key,
                        const char* value, char* err, int err_sz) {
  cuspConfig* cfg = (cuspConfig*)obj;
  const char* k = key->key;
  int rc = 0;
  for (int i = 0; !rc && i < cfg->npatch_body; i++) {
    rc = check_patch_body(m, cfg->patch_bodies[i], k, value, err, err_sz);
  }
  if (!rc && collect_object_geoms(cfg, m)) rc = fail(err, err_sz, k, value, "out of memory");
  for (int i = 0; !rc && i < cfg->npatch_body; i++) {
    const int* geoms;
    int ng = cusp_config_object_geoms(&geoms, cfg, i);
    for (int j = 0; !rc && j < ng; j++) {
      rc = check_not_collided(m, geoms[j], k, value, err, err_sz);
    }
  }
  if (!rc) {
    const char* visual = cusp_config_value(m, instance, key_named("visual_geoms"));
    rc = check_visual_geoms(cfg, m, visual, err, err_sz);
  }
  return rc;
}

// `reduction_basis`: the basis file, if one is named
static int read_reduction_basis(void* obj, const mjModel* m, int instance, const cuspKey* key,
                                const char* value, char* err, int err_sz) {
  (void)instance;
  cuspConfig* cfg = (cuspConfig*)obj;
  if (!value[0]) return 0;
  char why[400];
  if (cusp_reduction_basis_load(&cfg->reduction, value, m, why, sizeof(why))) {
    return fail(err, err_sz, key->key, value, why);
  }
  return 0;
}

static const cuspKeyTable contact_keys = {"cusp.contact", cusp_config_keys, cusp_config_value};

int cusp_config_parse(cuspConfig* cfg, const mjModel* m, int instance, char* err, int err_sz) {
  memset(cfg, 0, sizeof(*cfg));
  if (check_single_instance(m, instance, err, err_sz)) return -1;
  if (cusp_keys_parse(cfg, &contact_keys, m, instance, err, err_sz) ||
      check_environment(cfg, m, instance,
                        cusp_config_value(m, instance, key_named("environment")), err, err_sz)) {
    cusp_config_free(cfg);
    return -1;
  }
  if (cfg->friction < 0 && cfg->friction != -1) {
    char value[64];
    snprintf(value, sizeof(value), "%g", cfg->friction);
    fail(err, err_sz, "friction", value, "must be >= 0, or -1 for the geoms' friction");
    cusp_config_free(cfg);
    return -1;
  }
  return 0;
}

void cusp_config_free(cuspConfig* cfg) {
  free(cfg->disk_geoms);
  free(cfg->visual_geoms);
  free(cfg->environment_geoms);
  free(cfg->patch_bodies);
  free(cfg->object_geomadr);
  free(cfg->object_geom);
  free(cfg->limit_surface);
  cusp_reduction_basis_free(&cfg->reduction);
  memset(cfg, 0, sizeof(*cfg));
}

static int copy_array(void** dst, const void* src, int n, size_t size) {
  *dst = NULL;
  if (n <= 0) return 0;
  *dst = malloc((size_t)n * size);
  if (!*dst) return -1;
  memcpy(*dst, src, (size_t)n * size);
  return 0;
}

int cusp_config_copy(cuspConfig* dst, const cuspConfig* src) {
  *dst = *src;
  int rc = copy_array((void**)&dst->disk_geoms, src->disk_geoms, src->ndisk, sizeof(int));
  rc |= copy_array((void**)&dst->environment_geoms, src->environment_geoms, src->nenv,
                   sizeof(int));
  rc |= copy_array((void**)&dst->visual_geoms, src->visual_geoms, src->nvisual, sizeof(int));
  rc |= copy_array((void**)&dst->patch_bodies, src->patch_bodies, src->npatch_body, sizeof(int));
  rc |= copy_array((void**)&dst->object_geomadr, src->object_geomadr,
                   src->object_geomadr ? src->npatch_body + 1 : 0, sizeof(int));
  rc |= copy_array((void**)&dst->object_geom, src->object_geom,
                   src->object_geomadr ? src->object_geomadr[src->npatch_body] : 0, sizeof(int));
  rc |= copy_array((void**)&dst->limit_surface, src->limit_surface, src->nlimit_surface,
                   sizeof(cuspLimitSurfaceOverride));
  rc |= cusp_reduction_basis_copy(&dst->reduction, &src->reduction);
  if (rc) {
    cusp_config_free(dst);
    return -1;
  }
  return 0;
}

static int index_in(const int* list, int n, int id) {
  for (int i = 0; i < n; i++) {
    if (list[i] == id) return i;
  }
  return -1;
}

int cusp_config_disk_index(const cuspConfig* cfg, int g) {
  return index_in(cfg->disk_geoms, cfg->ndisk, g);
}

int cusp_config_patch_body_index(const cuspConfig* cfg, int b) {
  return index_in(cfg->patch_bodies, cfg->npatch_body, b);
}

int cusp_patch_nbody(const mjModel* m, int instance) {
  return cusp_key_words(cusp_config_value(m, instance, key_named("bodies")));
}

static const char* object_name(const mjModel* m, int objtype, int id) {
  const char* name = mj_id2name(m, objtype, id);
  return name ? name : "(unnamed)";
}

int cusp_sensor_validate(const mjModel* m, int instance, const cuspConfig* cfg, char* msg,
                         int msg_sz) {
  for (int i = 0; i < m->nsensor; i++) {
    if (m->sensor_type[i] != mjSENS_PLUGIN || m->sensor_plugin[i] != instance) continue;
    int type = m->sensor_objtype[i], id = m->sensor_objid[i];
    const char* sensor = mj_id2name(m, mjOBJ_SENSOR, i);
    if (type == mjOBJ_GEOM && cusp_config_disk_index(cfg, id) < 0) {
      snprintf(msg, msg_sz,
               "cusp.contact: sensor '%s': geom '%s' is not a registered contact disk (key "
               "'disks'); register it in 'disks' or name a disk",
               sensor ? sensor : "(unnamed)", object_name(m, mjOBJ_GEOM, id));
      return -1;
    }
    if ((type == mjOBJ_BODY || type == mjOBJ_XBODY) &&
        cusp_config_patch_body_index(cfg, id) < 0) {
      snprintf(msg, msg_sz,
               "cusp.contact: sensor '%s': body '%s' is not a registered patch body (key "
               "'bodies'); register it in 'bodies' or name a registered body",
               sensor ? sensor : "(unnamed)", object_name(m, mjOBJ_BODY, id));
      return -1;
    }
    if (type != mjOBJ_UNKNOWN && type != mjOBJ_GEOM && type != mjOBJ_BODY &&
        type != mjOBJ_XBODY) {
      snprintf(msg, msg_sz,
               "cusp.contact: sensor '%s': objtype must be geom (a disk), body (a patch body) "
               "or absent (the instance's counters)", sensor ? sensor : "(unnamed)");
      return -1;
    }
  }
  return 0;
}
