// The cusp-sim run loop (sim_loop.h): compiled into libcusp.so for Python and used by cusp-sim.
#include "cli/sim_loop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "publish/contacts_api.h"
#include "instance.h"
#include "collide/patch.h"
#include "cli/stock_twin.h"
#include "solver/lcp.h"

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

int cusp_sim_registered_geoms(char* mask, const mjModel* m) {
  int instance = cusp_find_instance(m);
  if (instance < 0) return 0;
  cuspConfig cfg;
  char err[1024];
  if (cusp_config_parse(&cfg, m, instance, err, sizeof(err))) return -1;
  for (int i = 0; i < cfg.ndisk; i++) mask[cfg.disk_geoms[i]] = 1;
  for (int i = 0; i < cfg.npatch_body; i++) {
    const int* geoms;  // the body's geoms and those welded to it
    int ng = cusp_config_object_geoms(&geoms, &cfg, i);
    for (int k = 0; k < ng; k++) mask[geoms[k]] = 1;
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

void cusp_sim_prepare_model(mjModel* m, double timestep) {
  if (timestep > 0) m->opt.timestep = timestep;
  m->opt.enableflags |= mjENBL_ENERGY;
}

// the failed solves of the last cusp_sim_run of this thread (cusp_sim_failure_line)
static _Thread_local cuspFailureLog run_log;

// what a run records beside the rows: the bodies whose poses and patch observables it writes
typedef struct RunBodies_ {
  int npatch_body;
  int* patch_body;   // (npatch_body) registered rigid bodies: their CUSP_PATCH_NSLOT observables
  int nfree;
  int* free_body;    // (nfree) bodies with a free joint: their qpos x y z qw qx qy qz
  int* free_qpos;    // (nfree) qpos address of each
} RunBodies;

static void run_bodies_free(RunBodies* b) {
  free(b->patch_body);
  free(b->free_qpos);
  free(b->free_body);
}

// the run's bodies (instance: the cusp.contact instance, -1 for none); -1 with a message in err
// when its config does not parse
static int run_bodies(RunBodies* b, char* err, int err_sz, const mjModel* m, int instance,
                      const char* scene) {
  memset(b, 0, sizeof(*b));
  if (instance >= 0) {
    cuspConfig cfg;
    if (cusp_config_parse(&cfg, m, instance, err, err_sz)) {
      char msg[1024];
      snprintf(msg, sizeof(msg), "%s", err);
      snprintf(err, err_sz, "bad cusp.contact config in %s: %s", scene, msg);
      return -1;
    }
    b->npatch_body = cfg.npatch_body;
    b->patch_body = (int*)calloc(b->npatch_body + 1, sizeof(int));
    for (int i = 0; i < b->npatch_body; i++) b->patch_body[i] = cfg.patch_bodies[i];
    cusp_config_free(&cfg);
  }
  b->free_qpos = (int*)calloc(m->nbody + 1, sizeof(int));
  b->free_body = (int*)calloc(m->nbody + 1, sizeof(int));
  for (int i = 1; i < m->nbody; i++) {
    if (m->body_jntnum[i] >= 1 && m->jnt_type[m->body_jntadr[i]] == mjJNT_FREE) {
      b->free_body[b->nfree] = i;
      b->free_qpos[b->nfree++] = m->jnt_qposadr[m->body_jntadr[i]];
    }
  }
  return 0;
}

// the CSV's header: the row's columns, then per free body its pose, per patch body its slots
static void csv_header(FILE* csv, const mjModel* m, const RunBodies* b) {
  fprintf(csv,
          "time,kinetic_J,potential_J,max_penetration_m,ncontact,nstick,nslide,nbreak,"
          "solver_iterations,solver_status,normal_force_N");
  static const char* suffix[7] = {"x", "y", "z", "qw", "qx", "qy", "qz"};
  for (int i = 0; i < b->nfree; i++) {
    const char* name = mj_id2name(m, mjOBJ_BODY, b->free_body[i]);
    for (int k = 0; k < 7; k++) {
      if (name)
        fprintf(csv, ",%s_%s", name, suffix[k]);
      else
        fprintf(csv, ",body%d_%s", b->free_body[i], suffix[k]);
    }
  }
  for (int i = 0; i < b->npatch_body; i++) {
    const char* name = mj_id2name(m, mjOBJ_BODY, b->patch_body[i]);
    for (int k = 0; k < CUSP_PATCH_NSLOT; k++) {
      if (name)
        fprintf(csv, ",%s_%s", name, cusp_patch_slot_names[k]);
      else
        fprintf(csv, ",body%d_%s", b->patch_body[i], cusp_patch_slot_names[k]);
    }
  }
  fprintf(csv, "\n");
}

// one CSV row: the step's row, the free bodies' poses (7 each), the patch slots
static void csv_row(FILE* csv, const Row* r, const mjtNum* pose, int npose, const mjtNum* patch,
                    int npatch_slot) {
  fprintf(csv, "%.9g,%.17g,%.17g,%.9g,%d,%d,%d,%d,%d,%d,%.9g", r->time, r->kinetic, r->potential,
          r->penetration, r->ncontact, r->nstick, r->nslide, r->nbreak, r->iterations, r->status,
          r->normal_force);
  for (int i = 0; i < npose; i++) fprintf(csv, ",%.17g", pose[i]);
  for (int i = 0; i < npatch_slot; i++) fprintf(csv, ",%.17g", patch[i]);
  fprintf(csv, "\n");
}

// what the summary reports of the stepping
typedef struct RunStats_ {
  long nstep;                 // steps taken
  double wall;                // s, wall-clock time in mj_step
  double max_penetration;     // m
  int contacts_max;
  double energy_initial, energy_last;                   // J
  double energy_max_increase, energy_max_step_increase; // J
  int diverged;               // MuJoCo reset the data after an instability
  double diverged_at;         // s, the time of the step that diverged
  int stopped;                // the hook stopped the run
} RunStats;

// Steps d nstep times (hook, then mj_step), writing a CSV row per step (csv may be NULL). A row
// is filled after its step's state is known and written once the next step's energies are (MuJoCo
// computes a state's energy in the following step). MuJoCo resets the data and goes on after an
// instability (bad qpos, qvel or qacc: a warning is counted and time restarts): that run has
// failed, so it stops there.
static void step_run(RunStats* st, FILE* csv, const mjModel* m, mjData* d, const RunBodies* b,
                     const char* registered, int instance, int stock, long nstep,
                     cuspSimHook hook, void* hook_arg) {
  memset(st, 0, sizeof(*st));
  Row pending;
  mjtNum* pending_pose = (mjtNum*)calloc(7 * b->nfree + 1, sizeof(mjtNum));
  int npatch_slot = CUSP_PATCH_NSLOT * b->npatch_body;
  mjtNum* pending_patch = (mjtNum*)calloc(npatch_slot + 1, sizeof(mjtNum));
  for (long k = 0; k <= nstep; k++) {
    if (k < nstep) {
      if (hook && hook(hook_arg)) {  // the caller's controller, before the step
        st->stopped = 1;
        nstep = k;
        break;
      }
      int warnings = unstable_warnings(d);
      double t_before = d->time;
      double t0 = now_seconds();
      mj_step(m, d);
      st->wall += now_seconds() - t0;
      if (unstable_warnings(d) > warnings || d->time < t_before) {
        st->diverged = 1;
        st->diverged_at = t_before;
        nstep = k;
        break;
      }
    } else {
      mj_forward(m, d);  // energies of the final state
    }
    // d->energy now holds the energy of the state before this step: complete the pending row
    double energy = d->energy[0] + d->energy[1];
    if (k == 0) {
      st->energy_initial = energy;
    } else {
      pending.potential = d->energy[0];
      pending.kinetic = d->energy[1];
      if (energy - st->energy_initial > st->energy_max_increase)
        st->energy_max_increase = energy - st->energy_initial;
      if (energy - st->energy_last > st->energy_max_step_increase) {
        st->energy_max_step_increase = energy - st->energy_last;
      }
      if (csv) csv_row(csv, &pending, pending_pose, 7 * b->nfree, pending_patch, npatch_slot);
    }
    st->energy_last = energy;
    if (k == nstep) break;
    fill_row(&pending, m, d, registered, instance, stock);
    for (int i = 0; i < b->nfree; i++) {
      memcpy(pending_pose + 7 * i, d->qpos + b->free_qpos[i], 7 * sizeof(mjtNum));
    }
    if (npatch_slot) {
      memcpy(pending_patch, d->plugin_state + m->plugin_stateadr[instance] + CUSP_NSTATE,
             npatch_slot * sizeof(mjtNum));
    }
    if (pending.penetration > st->max_penetration) st->max_penetration = pending.penetration;
    if (pending.ncontact > st->contacts_max) st->contacts_max = pending.ncontact;
  }
  st->nstep = nstep;
  free(pending_pose);
  free(pending_patch);
}

// the failed solves of d's cusp.contact instance since d was made (the run's: d is fresh) as the
// summary's fields (JSON values, "null" when none); they move to run_log, summarised by the caller
// with cusp_sim_failure_line, so d does not warn about them again when it is freed
static double take_failures(char first_time[32], char first_status[32], char worst_status[32],
                            const mjModel* m, mjData* d, int instance) {
  snprintf(first_time, 32, "null");
  snprintf(first_status, 32, "null");
  snprintf(worst_status, 32, "null");
  if (instance < 0) return 0;
  double failures = d->plugin_state[m->plugin_stateadr[instance] + CUSP_STATE_SOLVER_FAILURES];
  cuspInstance* inst = cusp_instance_find(d, instance);
  if (inst && inst->unreported.failures > 0) {
    snprintf(first_time, 32, "%.9g", inst->unreported.first_time);
    snprintf(first_status, 32, "\"%s\"",
             cusp_lcp_status_string((cuspLcpStatus)inst->unreported.first_status));
    snprintf(worst_status, 32, "\"%s\"",
             cusp_lcp_status_string((cuspLcpStatus)inst->unreported.worst_status));
  }
  if (inst) {
    run_log = inst->unreported;
    memset(&inst->unreported, 0, sizeof(inst->unreported));
  }
  return failures;
}

int cusp_sim_run(char* json, int json_sz, char* err, int err_sz, const mjModel* m, mjData* d,
                 const char* registered, int stock, const char* scene, double seconds,
                 const char* csv_path, cuspSimHook hook, void* hook_arg) {
  memset(&run_log, 0, sizeof(run_log));
  if (m->nkey > 0) mj_resetDataKeyframe(m, d, 0);  // initial state (e.g. velocities) of the scene
  int instance = stock ? -1 : cusp_find_instance(m);
  RunBodies b;
  if (run_bodies(&b, err, err_sz, m, instance, scene)) return -1;
  FILE* csv = NULL;
  if (csv_path) {
    csv = fopen(csv_path, "w");
    if (!csv) {
      snprintf(err, err_sz, "cannot write %s", csv_path);
      run_bodies_free(&b);
      return -1;
    }
    csv_header(csv, m, &b);
  }
  RunStats st;
  step_run(&st, csv, m, d, &b, registered, instance, stock, lround(seconds / m->opt.timestep),
           hook, hook_arg);
  if (csv) fclose(csv);
  run_bodies_free(&b);

  char first_failure_s[32], first_status[32], worst_status[32];
  double failures = take_failures(first_failure_s, first_status, worst_status, m, d, instance);
  char diverged_at_s[32] = "null";
  if (st.diverged) snprintf(diverged_at_s, sizeof(diverged_at_s), "%.9g", st.diverged_at);
  snprintf(json, json_sz,
           "{\"scene\": \"%s\", \"mode\": \"%s\", \"steps\": %ld, \"sim_seconds\": %.9g, "
           "\"wall_seconds\": %.6g, \"us_per_step\": %.6g, \"max_penetration_m\": %.9g, "
           "\"contacts_max\": %d, \"solver_failures\": %.0f, \"first_failure_s\": %s, "
           "\"first_failure_status\": %s, \"worst_failure_status\": %s, \"energy_initial_J\": %.12g, "
           "\"energy_final_J\": %.12g, \"energy_max_increase_J\": %.12g, "
           "\"energy_max_step_increase_J\": %.12g, \"diverged\": %s, \"diverged_at_s\": %s, "
           "\"timestep\": %.9g, \"mujoco\": \"%s\"}",
           scene, stock ? "stock" : "cusp", st.nstep, st.diverged ? st.diverged_at : d->time,
           st.wall, st.nstep ? 1e6 * st.wall / st.nstep : 0.0, st.max_penetration,
           st.contacts_max, failures, first_failure_s, first_status, worst_status,
           st.energy_initial, st.energy_last, st.energy_max_increase, st.energy_max_step_increase,
           st.diverged ? "true" : "false", diverged_at_s, m->opt.timestep, mj_versionString());
  if (st.stopped) {
    snprintf(err, err_sz, "stopped by the step hook at t = %.9g s", d->time);
    return -2;
  }
  return 0;
}

int cusp_sim_failure_line(char* out, int out_sz) {
  return cusp_failure_line(out, out_sz, run_log.failures, run_log.steps, run_log.first_time,
                           run_log.first_status, run_log.worst_status);
}

// does line[0, len) hold needle?
static int line_has(const char* line, size_t len, const char* needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= len; i++) {
    if (!strncmp(line + i, needle, n)) return 1;
  }
  return 0;
}

void cusp_error_line(char* out, int out_sz, const char* message) {
  if (out_sz <= 0) return;
  out[0] = 0;
  if (!message) return;
  // a plugin's own reason (any line but MuJoCo's generic init failure) makes that one redundant
  int has_reason = 0;
  for (const char* p = message; *p;) {
    const char* end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len && !line_has(p, len, "plugin->init failed")) {
      has_reason = 1;
    }
    p += len + (end ? 1 : 0);
  }
  int used = 0, nkept = 0;
  int kept_at[64], kept_len[64];  // the lines kept so far: offsets and lengths in out
  for (const char* p = message; *p;) {
    const char* end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char* line = p;
    p += len + (end ? 1 : 0);
    while (len && (line[len - 1] == ' ' || line[len - 1] == '\r')) len--;
    if (!len) continue;
    if (has_reason && line_has(line, len, "plugin->init failed")) {
      continue;
    }
    // each line once
    int seen = 0;
    for (int i = 0; i < nkept && !seen; i++) {
      seen = (size_t)kept_len[i] == len && !strncmp(out + kept_at[i], line, len);
    }
    if (seen) continue;
    int w = snprintf(out + used, out_sz - used, "%s%.*s", used ? "; " : "", (int)len, line);
    if (w < 0 || used + w >= out_sz) return;
    if (nkept < 64) {
      kept_at[nkept] = used + (used ? 2 : 0);
      kept_len[nkept++] = (int)len;
    }
    used += w;
  }
  // MuJoCo refuses a <config key> the plugin did not declare: say which keys there are
  if (strstr(out, "unrecognized attribute 'plugin:") && strstr(out, "for plugin cusp.contact")) {
    char keys[2048];
    cusp_config_unknown_key(keys, sizeof(keys), "");
    const char* list = strstr(keys, "valid keys: ");
    if (list) snprintf(out + used, out_sz - used, "; valid cusp.contact config %s", list + 6);
  }
}
