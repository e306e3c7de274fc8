// lcp_bench: each cusp LCP backend next to its Siconos Numerics counterpart (lemke <-> Siconos
// LEMKE, pgs <-> PGS, fbnewton <-> NEWTON_FB_FBLSA) on the shared Siconos files and on synthetic
// contact LCPs of 12..600 unknowns (CUSP eqs 10-13, conditioned as the plugin does: Ruiz +
// Tikhonov; and frictionless ones, on which PGS can run at all). Same tolerance 1e-10 for both.
// Prints one JSON line per (problem, backend) on stdout and, with --md FILE, a markdown table;
// a second table puts the smoothed-NCP Newton (ncpsmooth) beside FB Newton on the same problems.
//   lcp_bench [--md FILE] [--quick]
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solver/condition.h"
#include "solver/lapack_shim.h"
#include "solver/lcp.h"
#include "solver/lcp_file.h"
#include "solver/lcp_synth.h"

#ifdef CUSP_HAVE_SICONOS
#include "LCP_Solvers.h"
#include "LinearComplementarityProblem.h"
#include "NonSmoothDrivers.h"
#include "NumericsMatrix.h"
#include "NumericsVerbose.h"
#include "SolverOptions.h"
#include "lcp_cst.h"
#endif

double cusp_now(void);  // from the solver library

typedef struct {
  int ok;            // ran
  int solved;        // residual <= 1e-10 (checked by cusp_lcp_residual for both libraries)
  int iterations;
  double residual;   // natural residual, same measure for both
  double seconds;    // median
} Outcome;

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

// A timing sample is one solve, or a batch of solves (each from z = 0) when one solve is close to
// the clock's resolution (measured: 0.24 us steps here): batch = enough solves to fill 50 us.
#define CUSP_BENCH_SAMPLE_S 5e-5

static int batch_for(double one_solve_seconds) {
  if (one_solve_seconds >= CUSP_BENCH_SAMPLE_S) return 1;
  double b = CUSP_BENCH_SAMPLE_S / (one_solve_seconds > 1e-8 ? one_solve_seconds : 1e-8);
  return b > 10000 ? 10000 : (int)b + 1;
}

// median over reps samples of the seconds of one solve(ctx) (each call one solve from z = 0)
static double median_solve_seconds(void (*solve)(void*), void* ctx, int reps) {
  double t0 = cusp_now();
  solve(ctx);
  int batch = batch_for(cusp_now() - t0);
  double* t = calloc((size_t)reps, sizeof(double));
  for (int k = 0; k < reps; k++) {
    t0 = cusp_now();
    for (int i = 0; i < batch; i++) solve(ctx);
    t[k] = (cusp_now() - t0) / batch;
  }
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  double median = t[reps / 2];
  free(t);
  return median;
}

static int reps_for(int n, int quick) {
  int r = n <= 50 ? 51 : (n <= 200 ? 11 : 5);
  return quick ? (r > 5 ? 5 : r) : r;
}

typedef struct {
  const cuspLcpBackend* backend;
  const cuspLcpProblem* p;
  cuspLcpOptions opt;
  cuspLcpInfo info;
  double *z, *w;
  void* work;
  size_t bytes;
} CuspSolve;

static void cusp_solve_once(void* ctx) {
  CuspSolve* c = (CuspSolve*)ctx;
  memset(c->z, 0, sizeof(double) * (size_t)c->p->n);
  c->backend->solve(c->z, c->w, &c->info, c->p, &c->opt, c->work, c->bytes);
}

static Outcome run_cusp(const char* name, const cuspLcpProblem* p, int reps) {
  Outcome o = {0};
  CuspSolve c = {.backend = cusp_lcp_backend_find(name), .p = p, .opt = cusp_lcp_default_options()};
  c.bytes = c.backend->worksize(p->n);
  c.work = malloc(c.bytes);
  c.z = calloc((size_t)p->n, sizeof(double));
  c.w = calloc((size_t)p->n, sizeof(double));
  c.opt.tol = 1e-10;
  if (!strcmp(name, "pgs")) c.opt.max_iter = 100000;
  o.seconds = median_solve_seconds(cusp_solve_once, &c, reps);
  o.ok = c.info.status != CUSP_LCP_BAD_INPUT;
  o.iterations = c.info.iterations;
  cusp_lcp_residual(c.w, &c.info, c.z, p);
  o.residual = c.info.residual;
  o.solved = c.info.residual <= 1e-10;
  free(c.work);
  free(c.z);
  free(c.w);
  return o;
}

#ifdef CUSP_HAVE_SICONOS
typedef struct {
  LinearComplementarityProblem* lcp;
  double *z, *w;
  SolverOptions* so;
} SiconosSolve;

static void siconos_solve_once(void* ctx) {
  SiconosSolve* c = (SiconosSolve*)ctx;
  memset(c->z, 0, sizeof(double) * (size_t)c->lcp->size);
  memset(c->w, 0, sizeof(double) * (size_t)c->lcp->size);
  linearComplementarity_driver(c->lcp, c->z, c->w, c->so);
}

static Outcome run_siconos(int solver_id, const cuspLcpProblem* p, int reps) {
  Outcome o = {0};
  int n = p->n;
  double* M = malloc(sizeof(double) * (size_t)n * n);  // Siconos takes ownership
  for (int j = 0; j < n; j++) memcpy(M + (size_t)j * n, p->M + (size_t)j * p->ldm, sizeof(double) * n);
  double* q = malloc(sizeof(double) * (size_t)n);
  memcpy(q, p->q, sizeof(double) * n);
  LinearComplementarityProblem* lcp = newLCP();
  lcp->size = n;
  lcp->M = NM_create_from_data(NM_DENSE, n, n, M);
  lcp->q = q;
  SiconosSolve c = {lcp, calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double)),
                    solver_options_create(solver_id)};
  c.so->dparam[SICONOS_DPARAM_TOL] = 1e-10;
  if (solver_id == SICONOS_LCP_PGS) c.so->iparam[SICONOS_IPARAM_MAX_ITER] = 100000;
  o.seconds = median_solve_seconds(siconos_solve_once, &c, reps);
  int iters = c.so->iparam[SICONOS_IPARAM_ITER_DONE];
  solver_options_delete(c.so);
  cuspLcpInfo info;
  double* wr = calloc((size_t)n, sizeof(double));  // cusp's w = M z + q for Siconos' z
  cusp_lcp_residual(wr, &info, c.z, p);
  o.ok = 1;
  o.iterations = iters;
  o.residual = info.residual;
  o.solved = info.residual <= 1e-10;
  free(wr);
  free(c.z);
  free(c.w);
  freeLinearComplementarityProblem(lcp);
  return o;
}
#endif

static FILE* g_md = NULL;

enum { kMaxNcpRows = 64 };
typedef struct {
  char problem[64];
  int n;
  Outcome ncp, fb;
} NcpRow;
static NcpRow g_ncp[kMaxNcpRows];
static int g_nncp = 0;

static void report(const char* problem, int n, const char* backend, Outcome a, Outcome s,
                   int have_s) {
  printf("{\"problem\": \"%s\", \"n\": %d, \"backend\": \"%s\", \"cusp_seconds\": %.6e, "
         "\"cusp_iterations\": %d, \"cusp_residual\": %.3e, \"cusp_solved\": %d",
         problem, n, backend, a.seconds, a.iterations, a.residual, a.solved);
  if (have_s) {
    printf(", \"siconos_seconds\": %.6e, \"siconos_iterations\": %d, \"siconos_residual\": %.3e, "
           "\"siconos_solved\": %d",
           s.seconds, s.iterations, s.residual, s.solved);
    if (s.seconds > 0) printf(", \"ratio\": %.3f", a.seconds / s.seconds);
  }
  printf("}\n");
  fflush(stdout);
  if (g_md) {
    fprintf(g_md, "| %s | %d | %s | %.3g | %d | %.1e%s |", problem, n, backend, a.seconds * 1e3,
            a.iterations, a.residual, a.solved ? "" : " (not solved)");
    if (have_s) {
      fprintf(g_md, " %.3g | %d | %.1e%s | %.2f |\n", s.seconds * 1e3, s.iterations, s.residual,
              s.solved ? "" : " (not solved)", s.seconds > 0 ? a.seconds / s.seconds : NAN);
    } else {
      fprintf(g_md, " - | - | - | - |\n");
    }
  }
}

static void compare(const char* problem, const cuspLcpProblem* p, int reps, int skip_pgs) {
  const char* ours[3] = {"lemke", "pgs", "fbnewton"};
#ifdef CUSP_HAVE_SICONOS
  int theirs[3] = {SICONOS_LCP_LEMKE, SICONOS_LCP_PGS, SICONOS_LCP_NEWTON_FB_FBLSA};
#endif
  for (int k = 0; k < 3; k++) {
    if (k == 1 && skip_pgs) continue;
    Outcome a = run_cusp(ours[k], p, reps);
    Outcome s = {0};
    int have = 0;
#ifdef CUSP_HAVE_SICONOS
    s = run_siconos(theirs[k], p, reps);
    have = 1;
#endif
    report(problem, p->n, ours[k], a, s, have);
  }
  Outcome c = run_cusp("chain", p, reps);
  report(problem, p->n, "chain", c, c, 0);
  // the smoothed-NCP Newton beside FB Newton (cusp's own semismooth Newton)
  if (g_nncp < kMaxNcpRows) {
    NcpRow* row = &g_ncp[g_nncp++];
    snprintf(row->problem, sizeof(row->problem), "%s", problem);
    row->n = p->n;
    row->ncp = run_cusp("ncpsmooth", p, reps);
    row->fb = run_cusp("fbnewton", p, reps);
    printf("{\"problem\": \"%s\", \"n\": %d, \"backend\": \"ncpsmooth\", \"cusp_seconds\": %.6e, "
           "\"cusp_iterations\": %d, \"cusp_residual\": %.3e, \"cusp_solved\": %d, "
           "\"fbnewton_seconds\": %.6e, \"ratio_to_fbnewton\": %.3f}\n",
           problem, p->n, row->ncp.seconds, row->ncp.iterations, row->ncp.residual, row->ncp.solved,
           row->fb.seconds, row->fb.seconds > 0 ? row->ncp.seconds / row->fb.seconds : NAN);
    fflush(stdout);
  }
}

// second table: ncpsmooth vs fbnewton, written after the Siconos table
static void write_ncp_table(void) {
  if (!g_md) return;
  fprintf(g_md, "\n## Smoothed-NCP Newton (ncpsmooth) vs FB Newton\n\n"
          "Same problems, same tolerance (1e-10 natural residual), both cusp backends from z = 0, "
          "medians as above; ratio = ncpsmooth / fbnewton time.\n\n"
          "| problem | n | ncpsmooth ms | it | residual | fbnewton ms | it | residual | ratio |\n"
          "|---|---|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < g_nncp; k++) {
    const NcpRow* r = &g_ncp[k];
    fprintf(g_md, "| %s | %d | %.3g | %d | %.1e%s | %.3g | %d | %.1e%s | %.2f |\n", r->problem,
            r->n, r->ncp.seconds * 1e3, r->ncp.iterations, r->ncp.residual,
            r->ncp.solved ? "" : " (not solved)", r->fb.seconds * 1e3, r->fb.iterations,
            r->fb.residual, r->fb.solved ? "" : " (not solved)",
            r->fb.seconds > 0 ? r->ncp.seconds / r->fb.seconds : NAN);
  }
}

// contact LCP as the plugin hands it to a backend: assembled, Ruiz-scaled, Tikhonov on normals
static void contact_problem(double* A, double* b, int nv, int m, int r, uint64_t seed) {
  double* Meff = malloc(sizeof(double) * (size_t)nv * nv);
  double* Jn = malloc(sizeof(double) * (size_t)m * nv);
  double* Jt = malloc(sizeof(double) * ((size_t)m * r * nv + 1));
  double* mu = malloc(sizeof(double) * (size_t)m);
  double* bn = malloc(sizeof(double) * (size_t)m);
  double* bt = malloc(sizeof(double) * ((size_t)m * r + 1));
  cuspContactLcp c;
  cusp_synth_contact(&c, Meff, Jn, Jt, mu, bn, bt, nv, m, r, NULL, 0, seed);
  cusp_dpotrf(Meff, nv, nv);
  for (int j = 1; j < nv; j++) memset(Meff + (size_t)j * nv, 0, sizeof(double) * j);
  void* work = malloc(cusp_contact_assemble_worksize(nv, m, r));
  int s = r > 0 ? r + 2 : 1, N = m * s;
  cusp_contact_assemble(A, N, b, &c, Meff, NULL, m, work);
  double* dr = malloc(sizeof(double) * N);
  double* dc = malloc(sizeof(double) * N);
  double* rowsq = malloc(sizeof(double) * 2 * N);
  cusp_ruiz(A, b, dr, dc, N, N, 5, rowsq);
  free(rowsq);
  for (int a = 0; a < m; a++) A[a * s + (size_t)(a * s) * N] += 1e-10;
  free(dr);
  free(dc);
  free(work);
  free(Meff);
  free(Jn);
  free(Jt);
  free(mu);
  free(bn);
  free(bt);
}

int main(int argc, char** argv) {
  const char* md = NULL;
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--md") && i + 1 < argc) md = argv[++i];
    else if (!strcmp(argv[i], "--quick")) quick = 1;
  }
  // both libraries call the same LAPACK; a threaded OpenBLAS runs on one thread, as in the plugin
  int blas_single = cusp_blas_single_thread();
#ifdef CUSP_HAVE_SICONOS
  numerics_set_verbose(0);
  int have_siconos = 1;
#else
  int have_siconos = 0;
#endif
  if (md) {
    g_md = fopen(md, "w");
    if (!g_md) {
      fprintf(stderr, "lcp_bench: cannot write %s\n", md);
      return 2;
    }
    char model[256] = "unknown";
    FILE* ci = fopen("/proc/cpuinfo", "r");
    if (ci) {
      char line[512];
      while (fgets(line, sizeof(line), ci)) {
        if (!strncmp(line, "model name", 10)) {
          char* c = strchr(line, ':');
          if (c) {
            snprintf(model, sizeof(model), "%s", c + 2);
            model[strcspn(model, "\n")] = 0;
          }
          break;
        }
      }
      fclose(ci);
    }
    fprintf(g_md, "# LCP backends vs Siconos Numerics\n\n");
    fprintf(g_md, "Machine: %s, %ld online CPUs. Siconos Numerics: %s. Same BLAS/LAPACK for both "
            "(the system's libblas/liblapack; %s). Tolerance 1e-10 for both; `residual` is the "
            "natural-map residual max|min(z, Mz+q)| computed by cusp for both answers. Times are "
            "medians of repeated solves from z = 0 (a solve under 50 us is timed in a batch), in "
            "ms; ratio = cusp / Siconos (<= 1 means cusp is at least as fast).\n\n",
            model, sysconf(_SC_NPROCESSORS_ONLN),
            have_siconos ? "4.4 (Debian libsiconos-numerics-dev)" : "not found",
            blas_single ? "threaded OpenBLAS set to one thread" : "single-threaded BLAS");
    fprintf(g_md, "Counterparts: lemke <-> SICONOS_LCP_LEMKE, pgs <-> SICONOS_LCP_PGS, fbnewton <-> "
            "SICONOS_LCP_NEWTON_FB_FBLSA. `contact-rK-N`: friction LCP of [CUSP] eqs. (10)-(13) (docs/references.md) with K "
            "directions, Ruiz + Tikhonov applied; PGS cannot run on it (zero cone-slack diagonal) "
            "in either library. `frictionless-N`: normal rows only.\n\n");
    fprintf(g_md, "| problem | n | backend | cusp ms | cusp it | cusp residual | Siconos ms | "
            "Siconos it | Siconos residual | ratio |\n|---|---|---|---|---|---|---|---|---|---|\n");
  }
  // shared files
  const char* files[] = {"lcp_CPS_1.dat", "lcp_CPS_2.dat", "lcp_CPS_3.dat", "lcp_CPS_4.dat",
                         "lcp_CPS_4bis.dat", "lcp_CPS_5.dat", "lcp_Pang_isolated_sol.dat",
                         "lcp_Pang_isolated_sol_perturbed.dat", "lcp_deudeu.dat",
                         "lcp_enum_fails.dat", "lcp_exp_murty.dat", "lcp_inf_sol_perturbed.dat",
                         "lcp_ortiz.dat", "lcp_trivial.dat"};
  for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
    char path[1024], err[512];
    snprintf(path, sizeof(path), "%s/lcp/%s", CUSP_SHARED_DATA_DIR, files[f]);
    cuspLcpFileData d;
    if (cusp_lcp_file_read(&d, err, sizeof(err), path)) {
      fprintf(stderr, "lcp_bench: %s\n", err);
      continue;
    }
    cuspLcpProblem p = {d.n, d.M, d.n, d.q, NULL, NULL};
    // PGS on a zero diagonal: both refuse/fail; still run ours to show the status
    compare(files[f], &p, quick ? 5 : 101, 0);
    cusp_lcp_file_free(&d);
  }
  // synthetic contact LCPs: N = m * (r + 2) unknowns, nv = 2 m (1 + r) dofs (W_nn full rank)
  const int ms[] = {2, 4, 8, 16, 32, 50, 100};
  for (size_t k = 0; k < sizeof(ms) / sizeof(ms[0]); k++) {
    int m = ms[k], r = 4, s = r + 2, N = m * s;
    int nv = 2 * m * (1 + r) > 512 ? 512 : 2 * m * (1 + r);
    if (quick && N > 200) break;
    double* A = malloc(sizeof(double) * (size_t)N * N);
    double* b = malloc(sizeof(double) * (size_t)N);
    contact_problem(A, b, nv, m, r, 1000 + k);
    cuspLcpProblem p = {N, A, N, b, NULL, NULL};
    char name[64];
    snprintf(name, sizeof(name), "contact-r4-%d", N);
    compare(name, &p, reps_for(N, quick), 1);
    free(A);
    free(b);
  }
  const int ns[] = {12, 48, 150, 300, 600};
  for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
    int N = ns[k];
    if (quick && N > 200) break;
    int nv = N + 20 > 512 ? 512 : N + 20;
    if (N > nv) continue;
    double* A = malloc(sizeof(double) * (size_t)N * N);
    double* b = malloc(sizeof(double) * (size_t)N);
    contact_problem(A, b, nv, N, 0, 2000 + k);
    cuspLcpProblem p = {N, A, N, b, NULL, NULL};
    char name[64];
    snprintf(name, sizeof(name), "frictionless-%d", N);
    compare(name, &p, reps_for(N, quick), 0);
    free(A);
    free(b);
  }
  write_ncp_table();
  if (g_md) fclose(g_md);
  return 0;
}
