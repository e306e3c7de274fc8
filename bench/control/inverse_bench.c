// Cost of cusp.inverse's control step on the seeds' arm (3 sections, 6 interior disks each;
// mjcf/inverse_lean.xml): the scene runs with its two effectors tracking their targets, and at
// each step, after mj_forward, one extra call of the control step (cusp_inverse_solve: dynamics
// over the horizon, effector and contact rows, the block Gauss-Seidel between the actuation box
// QP and the conditioned contact LCP) is timed alone, the fastest of 3 calls. Prints one JSON
// object.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mujoco/mujoco.h>

#include "control/control_registry.h"
#include "control/inverse.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  const char* lib = argc > 1 ? argv[1] : "build/libcusp.so";
  const char* scene = argc > 2 ? argv[2] : "mjcf/inverse_lean.xml";
  double seconds = argc > 3 ? atof(argv[3]) : 1.0;
  int every = argc > 4 ? atoi(argv[4]) : 10;  // time every k-th step (the others just step)
  mj_loadPluginLibrary(lib);
  char err[1024] = "";
  mjModel* m = mj_loadXML(scene, NULL, err, sizeof(err));
  if (!m) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  mjData* d = mj_makeData(m);
  int instance = -1;
  for (int i = 0; i < m->nplugin && instance < 0; i++) {
    if (cusp_control_registry_find(d, i)) instance = i;
  }
  cuspInverse* inv = (cuspInverse*)cusp_control_registry_find(d, instance);
  int steps = (int)lround(seconds / m->opt.timestep);
  int nsample = steps / every + 1, k = 0, with_contact = 0;
  double* us = (double*)malloc(nsample * sizeof(double));
  mjtNum u[64], state[CUSP_INVERSE_NSTATE];
  double step_total = 0;
  for (int i = 0; i < steps; i++) {
    if (i % every == 0) {
      mj_forward(m, d);
      double best = INFINITY;
      for (int r = 0; r < 3; r++) {
        double t0 = now();
        cusp_inverse_solve(u, state, inv, m, d);
        double t = now() - t0;
        if (t < best) best = t;
      }
      us[k++] = 1e6 * best;
      with_contact += state[CUSP_INVERSE_STATE_CONTACTS] > 0;
    }
    double t0 = now();
    mj_step(m, d);
    step_total += now() - t0;
  }
  qsort(us, k, sizeof(double), cmp);
  double mean = 0;
  for (int i = 0; i < k; i++) mean += us[i] / k;
  printf("{\"scene\": \"%s\", \"nv\": %d, \"actuators\": %d, \"effectors\": %d, \"samples\": %d, "
         "\"samples_with_contacts\": %d,\n \"control_step_us\": {\"mean\": %.1f, \"median\": %.1f, "
         "\"p99\": %.1f, \"max\": %.1f},\n \"mj_step_us_mean\": %.1f}\n",
         scene, (int)m->nv, inv->nact, inv->neff, k, with_contact, mean, us[k / 2],
         us[(int)(0.99 * (k - 1))], us[k - 1], 1e6 * step_total / steps);
  free(us);
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}
