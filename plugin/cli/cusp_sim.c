// cusp-sim: run a scene headless with cusp contact (or its stock twin) and print a JSON summary.
//
//   cusp-sim SCENE.xml [--seconds T] [--timestep H] [--stock] [--csv FILE] [--solver NAME]
//                      [--set KEY=VALUE]...
//
// The run itself (stepping, rows, summary) is cusp_sim_run (sim_loop.c, in libcusp.so), the loop
// that Python's cusp.run and python -m cusp run (which adds --control) use as well. A wrong
// argument is one line naming it and its value (exit 2); --help prints the usage.
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

#include <mujoco/mujoco.h>

#include "config/config.h"
#include "cli/sim_loop.h"
#include "cli/stock_twin.h"

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
          "  --control MODULE:FUNCTION  a Python controller: python -m cusp run (same arguments)\n"
          "       cusp-sim --config-reference   prints the config keys as a Markdown table\n");
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

// Returns 0, or -1 with a one-line message naming the argument and its value in msg.
static int parse_args(Options* o, char* msg, int msg_sz, int argc, char** argv) {
  static char split[64][1024];
  memset(o, 0, sizeof(*o));
  o->seconds = 2;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    int takes_value = !strcmp(a, "--seconds") || !strcmp(a, "--timestep") ||
                      !strcmp(a, "--csv") || !strcmp(a, "--solver") || !strcmp(a, "--set") ||
                      !strcmp(a, "--control");
    if (takes_value && i + 1 >= argc) {
      snprintf(msg, msg_sz, "%s needs a value", a);
      return -1;
    }
    if (!strcmp(a, "--stock")) {
      o->stock = 1;
    } else if (!strcmp(a, "--seconds") || !strcmp(a, "--timestep")) {
      const char* v = argv[++i];
      if (parse_positive(!strcmp(a, "--seconds") ? &o->seconds : &o->timestep, v)) {
        snprintf(msg, msg_sz, "%s '%s': expected a positive number of seconds", a, v);
        return -1;
      }
    } else if (!strcmp(a, "--csv")) {
      o->csv = argv[++i];
    } else if (!strcmp(a, "--control")) {
      snprintf(msg, msg_sz, "--control '%s': a Python controller runs in Python; use "
               "python -m cusp run (same arguments), or cusp-sim from pip install", argv[++i]);
      return -1;
    } else if (!strcmp(a, "--solver") || !strcmp(a, "--set")) {
      const char* arg = argv[++i];
      if (o->nset >= 64) {
        snprintf(msg, msg_sz, "%s '%s': at most 64 overrides", a, arg);
        return -1;
      }
      if (!strcmp(a, "--solver")) {
        o->keys[o->nset] = "solver";
        o->values[o->nset++] = arg;
        continue;
      }
      const char* eq = strchr(arg, '=');
      if (!eq || eq == arg || strlen(arg) >= sizeof(split[0])) {
        snprintf(msg, msg_sz, "--set '%s': expected KEY=VALUE (a cusp.contact config key)", arg);
        return -1;
      }
      snprintf(split[o->nset], sizeof(split[0]), "%s", arg);
      split[o->nset][eq - arg] = 0;
      o->keys[o->nset] = split[o->nset];
      o->values[o->nset] = split[o->nset] + (eq - arg) + 1;
      o->nset++;
    } else if (a[0] != '-' && !o->scene) {
      o->scene = a;
    } else if (a[0] == '-') {
      snprintf(msg, msg_sz, "unknown option '%s'", a);
      return -1;
    } else {
      snprintf(msg, msg_sz, "one scene only, got '%s' and '%s'", o->scene, a);
      return -1;
    }
  }
  if (!o->scene) {
    snprintf(msg, msg_sz, "no scene given");
    return -1;
  }
  return 0;
}

// MuJoCo's messages as cusp-sim's one-line ones on stderr (MuJoCo's default handler prints a
// "WARNING: " block with a blank line and appends it to MUJOCO_LOG.TXT in the working directory)
static void log_line(const mjLogMessage* msg) {
  if (msg->level == mjLOG_ERROR) {
    fprintf(stderr, "cusp-sim: %s\n", msg->subject);
    exit(1);
  }
  if (msg->level == mjLOG_WARNING) fprintf(stderr, "cusp-sim: warning: %s\n", msg->subject);
}

int main(int argc, char** argv) {
  mju_setLogHandler(log_line);
  if (argc == 2 && !strcmp(argv[1], "--config-reference")) {
    // the plugin's key table as Markdown (the source of mjcf/README.md's table)
    static char table[32768];
    cusp_keys_markdown(table, sizeof(table), cusp_config_keys);
    fputs(table, stdout);
    return 0;
  }
  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    usage(stdout);
    return 0;
  }
  Options o;
  char err[2048];
  if (parse_args(&o, err, sizeof(err), argc, argv)) {
    fprintf(stderr, "cusp-sim: %s (cusp-sim --help for usage)\n", err);
    return 2;
  }
  FILE* scene_file = fopen(o.scene, "rb");
  if (!scene_file) {
    fprintf(stderr, "cusp-sim: cannot open scene '%s'\n", o.scene);
    return 1;
  }
  fclose(scene_file);
  mjSpec* spec = mj_parseXML(o.scene, NULL, err, sizeof(err));
  if (!spec) {
    char line[2048];
    cusp_error_line(line, sizeof(line), err);
    fprintf(stderr, "cusp-sim: cannot load %s: %s\n", o.scene, line);
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
    cusp_error_line(err, sizeof(err), mjs_getError(spec));
    fprintf(stderr, "cusp-sim: %s: %s\n", o.scene, err);
    return 1;
  }
  char* registered = (char*)calloc(original->ngeom + 1, 1);
  if (cusp_sim_registered_geoms(registered, original)) {
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
      cusp_error_line(err, sizeof(err), mjs_getError(spec));
      fprintf(stderr, "cusp-sim: stock twin of %s does not compile: %s\n", o.scene, err);
      return 1;
    }
  }
  cusp_sim_prepare_model(m, o.timestep);
  mjData* d = mj_makeData(m);
  if (!d) {
    fprintf(stderr, "cusp-sim: cannot make data for %s\n", o.scene);
    return 1;
  }
  static char json[4096];
  int status = cusp_sim_run(json, sizeof(json), err, sizeof(err), m, d, registered, o.stock,
                            o.scene, o.seconds, o.csv, NULL, NULL);
  if (status) {
    fprintf(stderr, "cusp-sim: %s\n", err);
  } else {
    printf("%s\n", json);
    if (cusp_sim_failure_line(err, sizeof(err))) fprintf(stderr, "cusp-sim: %s\n", err);
  }
  free(registered);
  mj_deleteData(d);
  mj_deleteModel(m);
  mj_deleteSpec(spec);
  return status ? 1 : 0;
}
