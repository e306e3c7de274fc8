// Cost of cusp.avoid's projection on the 7-joint, 20-sphere arm (mjcf/avoid_arm7.xml) along the
// scripted target path of tests/python/test_control_plugins.py: each step, after mj_forward, one
// extra call of the control step (cusp_avoid_increment: tracking increment, distances, rows,
// conditioned LCP) is timed alone; then mj_step runs as usual. The whole step is also timed
// against a stock twin (the same arm with MuJoCo <position> servos, no avoidance) in the same run.
// Prints one JSON object.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mujoco/mujoco.h>

#include "control/avoid.h"
#include "control/control_registry.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static const double kPath[6][3] = {{0.55, -0.2, 0.35}, {0.55, 0.45, 0.35}, {0.3, 0.45, 0.5},
                                   {0.35, -0.35, 0.3}, {0.6, -0.3, 0.1},   {0.55, -0.2, 0.35}};
static const double kLeg = 1.5;  // s per leg

static void target_at(double* x, double t) {
  int k = (int)(t / kLeg);
  if (k > 4) k = 4;
  double s = t / kLeg - k;
  if (s > 1) s = 1;
  for (int i = 0; i < 3; i++) x[i] = kPath[k][i] + (kPath[k + 1][i] - kPath[k][i]) * s;
}

static char* read_file(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* s = (char*)malloc(n + 1);
  if (fread(s, 1, n, f) != (size_t)n) n = 0;
  s[n] = 0;
  fclose(f);
  return s;
}

// the stock twin's text: no <extension>, each plugin actuator a <position> servo (same kp, kv)
static char* stock_twin(const char* xml) {
  char* out = (char*)calloc(strlen(xml) * 2 + 1, 1);
  const char* a = strstr(xml, "<extension>");
  const char* b = strstr(xml, "</extension>");
  strncat(out, xml, a - xml);
  const char* rest = b + strlen("</extension>");
  const char* p;
  while ((p = strstr(rest, "<plugin name=\""))) {
    strncat(out, rest, p - rest);
    const char* j = strstr(p, "joint=\"");
    char joint[64];
    sscanf(j + 7, "%63[^\"]", joint);
    char line[160];
    snprintf(line, sizeof(line), "<position joint=\"%s\" kp=\"2000\" kv=\"20\"/>", joint);
    strcat(out, line);
    rest = strstr(p, "/>") + 2;
  }
  strcat(out, rest);
  return out;
}

static double time_steps(const mjModel* m, mjData* d, int steps, int set_ctrl_to_qpos) {
  double t0 = now();
  for (int i = 0; i < steps; i++) {
    double x[3];
    target_at(x, i * m->opt.timestep);
    mju_copy3(d->mocap_pos, x);
    if (set_ctrl_to_qpos) {
      for (int k = 0; k < m->nu; k++) d->ctrl[k] = d->qpos[k];
    }
    mj_step(m, d);
  }
  return (now() - t0) / steps;
}

int main(int argc, char** argv) {
  const char* lib = argc > 1 ? argv[1] : "build/libcusp.so";
  const char* scene = argc > 2 ? argv[2] : "mjcf/avoid_arm7.xml";
  mj_loadPluginLibrary(lib);
  char err[1024] = "";
  mjModel* m = mj_loadXML(scene, NULL, err, sizeof(err));
  if (!m) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  mjData* d = mj_makeData(m);
  const cuspAvoid* a = (const cuspAvoid*)cusp_control_registry_find(d, 0);
  int steps = (int)lround(5 * kLeg / m->opt.timestep);
  double* us = (double*)malloc(steps * sizeof(double));
  double* us_solved = (double*)malloc(steps * sizeof(double));
  int nsolved = 0, maxrows = 0;
  long rowsum = 0;
  mjtNum qref[64], dq[64];
  for (int i = 0; i < steps; i++) {
    double x[3];
    target_at(x, i * m->opt.timestep);
    mju_copy3(d->mocap_pos, x);
    mj_forward(m, d);
    for (int j = 0; j < a->nact; j++) qref[j] = d->act[m->actuator_actadr[a->actuators[j]]];
    cuspAvoidReport rep;
    // a call takes microseconds: the fastest of 10 timed calls, so that a preemption of this
    // process by the other sessions on the machine does not count as the controller's cost
    double best = INFINITY;
    for (int r = 0; r < 10; r++) {
      double t0 = now();
      cusp_avoid_increment(dq, &rep, a, m, d, qref);
      double t = now() - t0;
      if (t < best) best = t;
    }
    us[i] = 1e6 * best;
    if (rep.active > 0) us_solved[nsolved++] = us[i];
    rowsum += rep.rows;
    if (rep.rows > maxrows) maxrows = rep.rows;
    mj_step(m, d);
  }
  qsort(us, steps, sizeof(double), cmp);
  qsort(us_solved, nsolved, sizeof(double), cmp);
  double mean = 0;
  for (int i = 0; i < steps; i++) mean += us[i] / steps;

  // whole steps: the plugin arm, and its stock twin (same arm, MuJoCo position servos)
  mj_resetData(m, d);
  double step_cusp = 1e6 * time_steps(m, d, steps, 0);
  char* xml = read_file(scene);
  char* twin = stock_twin(xml);
  mjSpec* spec = mj_parseXMLString(twin, NULL, err, sizeof(err));
  mjModel* ms = spec ? mj_compile(spec, NULL) : NULL;
  if (!ms) {
    fprintf(stderr, "stock twin: %s\n", err);
    return 1;
  }
  mjData* ds = mj_makeData(ms);
  double step_stock = 1e6 * time_steps(ms, ds, steps, 1);

  printf("{\"scene\": \"%s\", \"joints\": %d, \"spheres\": %d, \"obstacles\": %d, \"steps\": %d,\n"
         " \"projection_us\": {\"mean\": %.2f, \"median\": %.2f, \"p99\": %.2f, \"max\": %.2f},\n"
         " \"projection_us_with_active_rows\": {\"steps\": %d, \"median\": %.2f, \"p99\": %.2f, "
         "\"max\": %.2f},\n"
         " \"rows\": {\"mean\": %.2f, \"max\": %d},\n"
         " \"step_us\": {\"cusp_avoid\": %.2f, \"stock_position_servos\": %.2f, "
         "\"ratio\": %.2f}}\n",
         scene, a->nact, a->nsphere, a->nobstacle, steps, mean, us[steps / 2],
         us[(int)(0.99 * (steps - 1))], us[steps - 1], nsolved,
         nsolved ? us_solved[nsolved / 2] : 0, nsolved ? us_solved[(int)(0.99 * (nsolved - 1))] : 0,
         nsolved ? us_solved[nsolved - 1] : 0, (double)rowsum / steps, maxrows, step_cusp,
         step_stock, step_cusp / step_stock);
  free(us);
  free(us_solved);
  free(xml);
  free(twin);
  mj_deleteData(ds);
  mj_deleteModel(ms);
  mj_deleteSpec(spec);
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
