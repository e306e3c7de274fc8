// cusp-sim: run a scene headless with cusp contact (or its stock twin) and print a JSON summary.
//
//   cusp-sim SCENE.xml [--seconds T] [--timestep H] [--stock] [--csv FILE] [--solver NAME]
//                      [--set KEY=VALUE]...
//
// The scene starts from its first keyframe if it has one (initial velocities, e.g. a spinning disk).
// CSV: one row per step, the state after the step: time, kinetic_J, potential_J,
// max_penetration_m, ncontact, nstick, nslide, nbreak, solver_iterations, solver_status,
// normal_force_N (total normal force of the registered contacts: cusp's impulses / h, or
// mj_contactForce's normal components in stock mode), then <body>_x,_y,_z,_qw,_qx,_qy,_qz for
// every body with a free joint, then, in cusp mode only, the patch observables of every
// registered rigid body (config `bodies` order):
// <body>_Ln,_Lt,_Lo,_Lr,_s,_rho_t,_rho_r,_ecp_x,_ecp_y,_ecp_z,_mode (units in patch.h; the body's
// surface patch with the largest normal impulse; all 0 without one). The contact columns describe
// the step that produced the row's state. In stock mode ncontact and max_penetration_m come from
// MuJoCo's contacts that involve a registered geom; nstick/nslide/nbreak are 0 there (MuJoCo has
// no contact modes) and solver_iterations is MuJoCo's own.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mujoco/mujoco.h>

#include "config.h"
#include "contacts_api.h"
#include "instance.h"
#include "patch.h"
#include "stock_twin.h"

static void usage(FILE* out) {
  fprintf(out,
          "usage: cusp-sim SCENE.xml [--seconds T] [--timestep H] [--stock] [--csv FILE]\n"
          "                [--solver NAME] [--set KEY=VALUE]...\n"
          "  --seconds T     simulated time in s (default 2)\n"
          "  --timestep H    override the scene's timestep in s\n"
          "  --stock         run the stock twin: cusp.contact removed, registered geoms collide\n"
          "  --csv FILE      write one row per step\n"
          "  --solver NAME   cusp backend (same as --set solver=NAME)\n"
          "  --set KEY=VALUE override a cusp.contact config key (see mjcf/README.md)\n"
          "       cusp-sim --config-reference   prints the config keys as a Markdown table\n");
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// warnings MuJoCo counts when it resets the data after an instability
static int unstable_warnings(const mjData* d) {
  return d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number +
         d->warning[mjWARN_BADQACC].number;
}

static int parse_positive(double* out, const char* text) {
  char* end;
  double v = strtod(text, &end);
  if (end == text || *end || !isfinite(v) || v <= 0) return -1;
  *out = v;
  return 0;
}

typedef struct Options_ {
  const char* scene;
  double seconds;
  double timestep;  // <= 0: the scene's
  int stock;
  const char* csv;
  const char* keys[64];
  const char* values[64];
  int nset;
} Options;

static int parse_args(Options* o, int argc, char** argv) {
  static char split[64][1024];
  memset(o, 0, sizeof(*o));
  o->seconds = 2;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    int has_value = i + 1 < argc;
    if (!strcmp(a, "--stock")) {
      o->stock = 1;
    } else if (!strcmp(a, "--seconds") && has_value) {
      if (parse_positive(&o->seconds, argv[++i])) return -1;
    } else if (!strcmp(a, "--timestep") && has_value) {
      if (parse_positive(&o->timestep, argv[++i])) return -1;
    } else if (!strcmp(a, "--csv") && has_value) {
      o->csv = argv[++i];
    } else if ((!strcmp(a, "--solver") || !strcmp(a, "--set")) && has_value && o->nset < 64) {
      const char* arg = argv[++i];
      if (!strcmp(a, "--solver")) {
        o->keys[o->nset] = "solver";
        o->values[o->nset++] = arg;
        continue;
      }
      const char* eq = strchr(arg, '=');
      if (!eq || eq == arg || strlen(arg) >= sizeof(split[0])) return -1;
      snprintf(split[o->nset], sizeof(split[0]), "%s", arg);
      split[o->nset][eq - arg] = 0;
      o->keys[o->nset] = split[o->nset];
      o->values[o->nset] = split[o->nset] + (eq - arg) + 1;
      o->nset++;
    } else if (a[0] != '-' && !o->scene) {
      o->scene = a;
    } else {
      return -1;
    }
  }
  return o->scene ? 0 : -1;
}

// registered geoms of the scene (mask over geom ids), read from the compiled original
static int registered_geoms(char* mask, const mjModel* m) {
  int instance = cusp_find_instance(m);
  if (instance < 0) return 0;
  cuspConfig cfg;
  char err[1024];
  if (cusp_config_parse(&cfg, m, instance, err, sizeof(err))) return -1;
  for (int i = 0; i < cfg.ndisk; i++) mask[cfg.disk_geoms[i]] = 1;
  for (int i = 0; i < cfg.npatch_body; i++) {
    int b = cfg.patch_bodies[i];
    for (int g = m->body_geomadr[b]; g < m->body_geomadr[b] + m->body_geomnum[b]; g++) mask[g] = 1;
  }
  cusp_config_free(&cfg);
  return 0;
}

typedef struct Row_ {
  double time, kinetic, potential, penetration;
  double normal_force;  // N, total normal force of the registered contacts in the step
  int ncontact, nstick, nslide, nbreak, iterations, status;
} Row;

static void fill_row(Row* r, const mjModel* m, const mjData* d, const char* registered,
                     int instance, int stock) {
  memset(r, 0, sizeof(*r));
  r->time = d->time;
  if (!stock && instance >= 0) {
    const mjtNum* s = d->plugin_state + m->plugin_stateadr[instance];
    r->penetration = s[CUSP_STATE_MAX_PENETRATION];
    r->ncontact = (int)s[CUSP_STATE_NCONTACT];
    r->nstick = (int)s[CUSP_STATE_NSTICK];
    r->nslide = (int)s[CUSP_STATE_NSLIDE];
    r->nbreak = (int)s[CUSP_STATE_NBREAK];
    r->iterations = (int)s[CUSP_STATE_ITERATIONS];
    r->status = (int)s[CUSP_STATE_STATUS];
    r->normal_force = cusp_contacts_normal_force(m, d, instance);
  } else {
    for (int i = 0; i < d->ncon; i++) {
      const mjContact* c = d->contact + i;
      if (!(registered[c->geom[0]] || registered[c->geom[1]])) continue;
      r->ncontact++;
      if (-c->dist > r->penetration) r->penetration = -c->dist;
      if (c->efc_address >= 0) {
        mjtNum wrench[6];  // contact frame: normal force first
        mj_contactForce(m, d, i, wrench);
        r->normal_force += wrench[0];
      }
    }
    r->iterations = d->solver_niter[0];
  }
}

int main(int argc, char** argv) {
  if (argc == 2 && !strcmp(argv[1], "--config-reference")) {
    // the plugin's key table as Markdown (the source of mjcf/README.md's table)
    static char table[32768];
    cusp_config_markdown(table, sizeof(table));
    fputs(table, stdout);
    return 0;
  }
  Options o;
  if (parse_args(&o, argc, argv)) {
    usage(stderr);
    return 2;
  }
  char err[2048];
  mjSpec* spec = mj_parseXML(o.scene, NULL, err, sizeof(err));
  if (!spec) {
    fprintf(stderr, "cusp-sim: cannot load %s: %s\n", o.scene, err);
    return 1;
  }
  if (!o.stock) {
    for (int i = 0; i < o.nset; i++) {
      if (cusp_config_override_set(o.keys[i], o.values[i], err, sizeof(err))) {
        fprintf(stderr, "cusp-sim: %s\n", err);
        return 2;
      }
    }
  }
  mjModel* original = mj_compile(spec, NULL);
  if (!original) {
    fprintf(stderr, "cusp-sim: cannot compile %s: %s\n", o.scene, mjs_getError(spec));
    return 1;
  }
  char* registered = (char*)calloc(original->ngeom + 1, 1);
  if (registered_geoms(registered, original)) {
    fprintf(stderr, "cusp-sim: bad cusp.contact config in %s\n", o.scene);
    return 1;
  }
  mjModel* m = original;
  if (o.stock) {
    mj_deleteModel(original);
    if (cusp_stock_twin(spec, err, sizeof(err)) < 0) {
      fprintf(stderr, "cusp-sim: %s\n", err);
      return 1;
    }
    m = mj_compile(spec, NULL);
    if (!m) {
      fprintf(stderr, "cusp-sim: stock twin of %s does not compile: %s\n", o.scene,
              mjs_getError(spec));
      return 1;
    }
  }
  if (o.timestep > 0) m->opt.timestep = o.timestep;
  m->opt.enableflags |= mjENBL_ENERGY;
  mjData* d = mj_makeData(m);
  if (!d) {
    fprintf(stderr, "cusp-sim: cannot make data for %s\n", o.scene);
    return 1;
  }
  if (m->nkey > 0) mj_resetDataKeyframe(m, d, 0);  // initial state (e.g. velocities) of the scene
  int instance = o.stock ? -1 : cusp_find_instance(m);
  // registered rigid bodies: their CUSP_PATCH_NSLOT observables follow the counters in the state
  int npatch_body = 0;
  int* patch_body = NULL;
  if (instance >= 0) {
    cuspConfig cfg;
    if (cusp_config_parse(&cfg, m, instance, err, sizeof(err))) {
      fprintf(stderr, "cusp-sim: bad cusp.contact config in %s: %s\n", o.scene, err);
      return 1;
    }
    npatch_body = cfg.npatch_body;
    patch_body = (int*)calloc(npatch_body + 1, sizeof(int));
    for (int i = 0; i < npatch_body; i++) patch_body[i] = cfg.patch_bodies[i];
    cusp_config_free(&cfg);
  }

  // bodies with a free joint: their qpos is x y z qw qx qy qz
  int nfree = 0;
  int* free_qpos = (int*)calloc(m->nbody + 1, sizeof(int));
  int* free_body = (int*)calloc(m->nbody + 1, sizeof(int));
  for (int b = 1; b < m->nbody; b++) {
    if (m->body_jntnum[b] >= 1 && m->jnt_type[m->body_jntadr[b]] == mjJNT_FREE) {
      free_body[nfree] = b;
      free_qpos[nfree++] = m->jnt_qposadr[m->body_jntadr[b]];
    }
  }
  FILE* csv = NULL;
  if (o.csv) {
    csv = fopen(o.csv, "w");
    if (!csv) {
      fprintf(stderr, "cusp-sim: cannot write %s\n", o.csv);
      return 1;
    }
    fprintf(csv, "time,kinetic_J,potential_J,max_penetration_m,ncontact,nstick,nslide,nbreak,"
                 "solver_iterations,solver_status,normal_force_N");
    static const char* suffix[7] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
    for (int i = 0; i < nfree; i++) {
      const char* name = mj_id2name(m, mjOBJ_BODY, free_body[i]);
      for (int k = 0; k < 7; k++) {
        if (name) fprintf(csv, ",%s_%s", name, suffix[k]);
        else fprintf(csv, ",body%d_%s", free_body[i], suffix[k]);
      }
    }
    for (int i = 0; i < npatch_body; i++) {
      const char* name = mj_id2name(m, mjOBJ_BODY, patch_body[i]);
      for (int k = 0; k < CUSP_PATCH_NSLOT; k++) {
        if (name) fprintf(csv, ",%s_%s", name, cusp_patch_slot_names[k]);
        else fprintf(csv, ",body%d_%s", patch_body[i], cusp_patch_slot_names[k]);
      }
    }
    fprintf(csv, "\n");
  }

  long nstep = lround(o.seconds / m->opt.timestep);
  double wall = 0, max_penetration = 0, energy_initial = 0, energy_last = 0;
  double energy_max_increase = 0, energy_max_step_increase = 0;
  int contacts_max = 0;
  Row pending;
  mjtNum* pending_pose = (mjtNum*)calloc(7 * nfree + 1, sizeof(mjtNum));
  int npatch_slot = CUSP_PATCH_NSLOT * npatch_body;
  mjtNum* pending_patch = (mjtNum*)calloc(npatch_slot + 1, sizeof(mjtNum));
  // MuJoCo resets the data and goes on after an instability (bad qpos, qvel or qacc: a warning
  // is counted and time restarts): that run has failed, so stop there and report it
  int diverged = 0;
  double diverged_at = 0;
  for (long k = 0; k <= nstep; k++) {
    if (k < nstep) {
      int warnings = unstable_warnings(d);
      double t_before = d->time;
      double t0 = now_seconds();
      mj_step(m, d);
      wall += now_seconds() - t0;
      if (unstable_warnings(d) > warnings || d->time < t_before) {
        diverged = 1;
        diverged_at = t_before;
        nstep = k;
        break;
      }
    } else {
      mj_forward(m, d);  // energies of the final state
    }
    // d->energy now holds the energy of the state before this step: complete the pending row
    double energy = d->energy[0] + d->energy[1];
    if (k == 0) {
      energy_initial = energy;
    } else {
      pending.potential = d->energy[0];
      pending.kinetic = d->energy[1];
      if (energy - energy_initial > energy_max_increase) energy_max_increase = energy - energy_initial;
      if (energy - energy_last > energy_max_step_increase) {
        energy_max_step_increase = energy - energy_last;
      }
      if (csv) {
        fprintf(csv, "%.9g,%.17g,%.17g,%.9g,%d,%d,%d,%d,%d,%d,%.9g", pending.time,
                pending.kinetic, pending.potential, pending.penetration, pending.ncontact,
                pending.nstick, pending.nslide, pending.nbreak, pending.iterations, pending.status,
                pending.normal_force);
        for (int i = 0; i < 7 * nfree; i++) fprintf(csv, ",%.17g", pending_pose[i]);
        for (int i = 0; i < npatch_slot; i++) fprintf(csv, ",%.17g", pending_patch[i]);
        fprintf(csv, "\n");
      }
    }
    energy_last = energy;
    if (k == nstep) break;
    fill_row(&pending, m, d, registered, instance, o.stock);
    for (int i = 0; i < nfree; i++) {
      memcpy(pending_pose + 7 * i, d->qpos + free_qpos[i], 7 * sizeof(mjtNum));
    }
    if (npatch_slot) {
      memcpy(pending_patch, d->plugin_state + m->plugin_stateadr[instance] + CUSP_NSTATE,
             npatch_slot * sizeof(mjtNum));
    }
    if (pending.penetration > max_penetration) max_penetration = pending.penetration;
    if (pending.ncontact > contacts_max) contacts_max = pending.ncontact;
  }
  if (csv) fclose(csv);

  double failures = 0;
  if (instance >= 0) {
    failures = d->plugin_state[m->plugin_stateadr[instance] + CUSP_STATE_SOLVER_FAILURES];
  }
  char diverged_at_s[32] = "null";
  if (diverged) snprintf(diverged_at_s, sizeof(diverged_at_s), "%.9g", diverged_at);
  printf("{\"scene\": \"%s\", \"mode\": \"%s\", \"steps\": %ld, \"sim_seconds\": %.9g, "
         "\"wall_seconds\": %.6g, \"us_per_step\": %.6g, \"max_penetration_m\": %.9g, "
         "\"contacts_max\": %d, \"solver_failures\": %.0f, \"energy_initial_J\": %.12g, "
         "\"energy_final_J\": %.12g, \"energy_max_increase_J\": %.12g, "
         "\"energy_max_step_increase_J\": %.12g, \"diverged\": %s, \"diverged_at_s\": %s, "
         "\"timestep\": %.9g, \"mujoco\": \"%s\"}\n",
         o.scene, o.stock ? "stock" : "cusp", nstep, diverged ? diverged_at : d->time, wall,
         nstep ? 1e6 * wall / nstep : 0.0, max_penetration, contacts_max, failures,
         energy_initial, energy_last, energy_max_increase, energy_max_step_increase,
         diverged ? "true" : "false", diverged_at_s, m->opt.timestep, mj_versionString());
  free(pending_pose);
  free(pending_patch);
  free(patch_body);
  free(free_qpos);
  free(free_body);
  free(registered);
  mj_deleteData(d);
  mj_deleteModel(m);
  mj_deleteSpec(spec);
  return 0;
}
