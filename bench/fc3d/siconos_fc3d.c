// Siconos Numerics' FC3D solvers on one problem file: the peer solvers of cusp-fc3d (bench/fc3d).
//   siconos-fc3d [--tol 1e-8] [--solver nsgs|nsn_ac|nsn_fb|admm|all] [--max-iter N] [--print-r]
//                FILE.dat
// One JSON line per solver on stdout:
//   {"file", "solver", "success", "info", "iterations", "error", "seconds"[, "r": [...]]}
// success: Siconos' own verdict (driver info 0, its error <= tol); error: its fc3d_compute_error
// measure; seconds: wall time of fc3d_driver alone (the problem read beforehand). Built only by
// bench/fc3d/build.sh (needs libsiconos-numerics-dev), never by CMake/ctest.
#include <siconos/numerics/FrictionContactProblem.h>
#include <siconos/numerics/Friction_cst.h>
#include <siconos/numerics/NonSmoothDrivers.h>
#include <siconos/numerics/NumericsMatrix.h>
#include <siconos/numerics/NumericsVerbose.h>
#include <siconos/numerics/SolverOptions.h>
#include <siconos/numerics/fc3d_compute_error.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  const char* name;
  int id;
  int max_iter;  // generous: a solver is judged on reaching the tolerance, not on a budget
} Solver;

static const Solver kSolvers[] = {
    {"nsgs", SICONOS_FRICTION_3D_NSGS, 100000},
    {"nsn_ac", SICONOS_FRICTION_3D_NSN_AC, 1000},
    {"nsn_fb", SICONOS_FRICTION_3D_NSN_FB, 1000},
    {"admm", SICONOS_FRICTION_3D_ADMM, 100000},
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void usage(FILE* f) {
  fprintf(f, "usage: siconos-fc3d [--tol T] [--solver nsgs|nsn_ac|nsn_fb|admm|all] "
             "[--max-iter N] [--print-r] FILE.dat\n");
}

int main(int argc, char** argv) {
  double tol = 1e-8;
  const char* which = "all";
  const char* path = NULL;
  int max_iter = 0, print_r = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--tol") && i + 1 < argc) {
      tol = strtod(argv[++i], NULL);
    } else if (!strcmp(argv[i], "--solver") && i + 1 < argc) {
      which = argv[++i];
    } else if (!strcmp(argv[i], "--max-iter") && i + 1 < argc) {
      max_iter = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--print-r")) {
      print_r = 1;
    } else if (argv[i][0] == '-' || path) {
      usage(stderr);
      return 2;
    } else {
      path = argv[i];
    }
  }
  if (!path || !(tol > 0)) {
    usage(stderr);
    return 2;
  }
  FILE* f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "siconos-fc3d: cannot open %s\n", path);
    return 2;
  }
  fclose(f);
  numerics_set_verbose(0);
  FrictionContactProblem* problem = frictionContact_new_from_filename(path);
  if (!problem || problem->dimension != 3) {
    fprintf(stderr, "siconos-fc3d: %s: not a 3D friction contact problem\n", path);
    return 2;
  }
  int n = 3 * problem->numberOfContacts;
  double* r = calloc(n, sizeof(double));
  double* u = calloc(n, sizeof(double));
  const char* base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  int ran = 0;
  for (size_t s = 0; s < sizeof(kSolvers) / sizeof(kSolvers[0]); s++) {
    if (strcmp(which, "all") && strcmp(which, kSolvers[s].name)) continue;
    ran++;
    SolverOptions* options = solver_options_create(kSolvers[s].id);
    options->dparam[SICONOS_DPARAM_TOL] = tol;
    options->iparam[SICONOS_IPARAM_MAX_ITER] = max_iter > 0 ? max_iter : kSolvers[s].max_iter;
    memset(r, 0, n * sizeof(double));
    memset(u, 0, n * sizeof(double));
    double t0 = now();
    int info = fc3d_driver(problem, r, u, options);
    double seconds = now() - t0;
    int iterations = options->iparam[SICONOS_IPARAM_ITER_DONE];
    // Siconos' own measure at the returned r, recomputed (the solver's dparam may be stale)
    double error = INFINITY;
    double norm_q = 0;
    for (int i = 0; i < n; i++) norm_q += problem->q[i] * problem->q[i];
    norm_q = sqrt(norm_q);
    fc3d_compute_error(problem, r, u, tol, options, norm_q, &error);
    int finite = 1;
    for (int i = 0; i < n; i++) finite &= isfinite(r[i]);
    int success = info == 0 && finite && error <= tol;
    printf("{\"file\": \"%s\", \"solver\": \"%s\", \"success\": %s, \"info\": %d, "
           "\"iterations\": %d, \"error\": %.6e, \"seconds\": %.6e",
           base, kSolvers[s].name, success ? "true" : "false", info, iterations,
           isfinite(error) ? error : -1.0, seconds);
    if (print_r) {
      printf(", \"r\": [");
      for (int i = 0; i < n; i++) printf("%s%.17g", i ? ", " : "", isfinite(r[i]) ? r[i] : 0.0);
      printf("]");
    }
    printf("}\n");
    fflush(stdout);
    solver_options_delete(options);
  }
  free(r);
  free(u);
  frictionContactProblem_free(problem);
  if (!ran) {
    fprintf(stderr, "siconos-fc3d: unknown solver '%s'\n", which);
    return 2;
  }
  return 0;
}
