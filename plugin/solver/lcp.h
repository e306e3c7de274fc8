// cusp complementarity solver core: linear complementarity problems (LCP) and box-constrained
// LCPs, solved by interchangeable backends chosen by name.
//
// Problem:  find z (n) with  w = M z + q,  lo <= z <= hi,  and for every i
//             z_i = lo_i  =>  w_i >= 0,   z_i = hi_i  =>  w_i <= 0,   lo_i < z_i < hi_i  =>  w_i = 0.
// With lo = 0, hi = +inf (pass NULL for both) this is the standard LCP 0 <= z _|_ M z + q >= 0.
//
// Memory: every solve works in caller-provided memory of at least *_worksize(n) bytes, aligned
// for mjtNum (malloc'd memory or an mjtNum array is fine); nothing is allocated inside a solve.
// The library calls no MuJoCo function: only the mjtNum typedef is taken from mujoco/mjtype.h.
#ifndef CUSP_SOLVER_LCP_H_
#define CUSP_SOLVER_LCP_H_

#include <stddef.h>

#include <mujoco/mjtype.h>

#ifdef __cplusplus
extern "C" {
#endif

//---------------------------------- problem / options / info -----------------------------------

// Dense LCP data; nothing is owned, nothing is modified by a solve.
typedef struct cuspLcpProblem_ {
  int n;              // number of unknowns (>= 0)
  const mjtNum* M;    // (ldm x n) column-major, M(i,j) = M[i + j*ldm]
  int ldm;            // leading dimension of M (>= max(1, n))
  const mjtNum* q;    // (n)
  const mjtNum* lo;   // (n) lower bounds (may be -INFINITY); NULL means all 0
  const mjtNum* hi;   // (n) upper bounds (may be +INFINITY); NULL means all +INFINITY
} cuspLcpProblem;

typedef enum cuspLcpStatus_ {
  CUSP_LCP_SOLVED = 0,       // residual <= tol
  CUSP_LCP_MAX_ITER,         // iteration / pivot limit reached before residual <= tol
  CUSP_LCP_NO_SOLUTION,      // ray termination (Lemke) or infeasibility detected
  CUSP_LCP_NUMERICAL,        // singular pivot, zero/negative diagonal (PGS), NaN, stalled Newton
  CUSP_LCP_BAD_INPUT,        // n < 0, ldm < n, bad bounds, workspace too small, unsupported bounds
  CUSP_LCP_NSTATUS
} cuspLcpStatus;

typedef struct cuspLcpOptions_ {
  mjtNum tol;           // success test: natural residual max_i |z_i - mid(lo,hi,z_i - w_i)| <= tol
  int max_iter;         // iterations (Newton steps, PGS sweeps, Lemke pivots); 0 = backend default
  int warm_start;       // nonzero: z passed in is the initial guess (FB Newton, PGS); else z0 = 0
  mjtNum pgs_omega;     // PGS/SOR relaxation in (0, 2); 1 = Gauss-Seidel
  mjtNum lemke_pivot_tol;  // Lemke: column entries <= this (relative) are not pivot candidates
  int lemke_value_ties; // Lemke's ratio test: 0 rows whose ratio is within 1e-12 (1 + |best|)
                        // of the best tie (default); 1 rows that the best ratio would leave
                        // below -1e-13 max|basic value| tie (a tolerance on the ratio is
                        // multiplied by the row's column entry: 2.6e-10 below zero at an entry
                        // of 260 on degenerate friction LCPs); neither rule solves every
                        // problem the other does
  mjtNum newton_lm_min; // FB Newton: smallest Levenberg-Marquardt damping (relative to ||H||^2)
  int chain[4];         // fallback chain: backend ids (cuspLcpBackendId), terminated by -1
  int block;            // PGS: > 1 sweeps over consecutive blocks of this size, each solved
                        // exactly (Lemke) with the others fixed; needed when diagonal entries
                        // are 0 (a contact's cone-slack row); <= CUSP_LCP_MAX_BLOCK
  mjtNum work_budget;   // work units one run may spend (see "Work budget"); 0 = the default
                        // CUSP_SOLVE_WORK_BUDGET, < 0 = none (max_iter alone)
  mjtNum* work_pool;    // NULL, or the units left to every run that shares it (a step's solves):
                        // a run through the backend table gets at most what is left and takes
                        // off what it spent (see "Work budget")
} cuspLcpOptions;

enum { CUSP_LCP_MAX_BLOCK = 66 };  // 2 + the largest friction_directions

typedef struct cuspLcpInfo_ {
  cuspLcpStatus status;
  const char* message;  // static string with the detail (e.g. "zero diagonal", "secondary ray")
  int index;            // offending row for messages about one row, else -1
  const char* backend;  // name of the backend that produced z (for the chain: the one that won)
  int iterations;       // Newton steps / PGS sweeps / Lemke pivots (chain: sum over backends)
  mjtNum work;          // work units spent by the run's iterations (chain: sum over backends)
  mjtNum residual;      // natural-map residual max_i |z_i - mid(lo_i, hi_i, z_i - w_i)|
  mjtNum siconos_error; // ||z - mid(lo,hi,z - w)||_2 / ||q||_2 (||q|| replaced by 1 if 0)
  mjtNum complementarity;  // max_i |z_i w_i| over variables with standard bounds
  mjtNum seconds;       // wall time of the solve
} cuspLcpInfo;

// Backend signature shared by every solver.
//   z    (n)  in: initial guess if options->warm_start; out: solution (best iterate on failure)
//   w    (n)  out: M z + q (may be NULL)
//   work      caller memory of at least worksize(n) bytes
// Returns info->status.
typedef cuspLcpStatus (*cuspLcpSolveFn)(mjtNum* z, mjtNum* w, cuspLcpInfo* info,
                                        const cuspLcpProblem* prob, const cuspLcpOptions* opt,
                                        void* work, size_t work_bytes);
typedef size_t (*cuspLcpWorksizeFn)(int n);

typedef enum cuspLcpBackendId_ {
  CUSP_LCP_LEMKE = 0,
  CUSP_LCP_PGS,
  CUSP_LCP_FBNEWTON,
  CUSP_LCP_CHAIN,
  CUSP_LCP_NCPSMOOTH,  // not a chain member: the chain holds the ids before CUSP_LCP_CHAIN
  CUSP_LCP_NBACKEND
} cuspLcpBackendId;

typedef struct cuspLcpBackend_ {
  const char* name;        // "lemke", "pgs", "fbnewton", "chain", "ncpsmooth"
  cuspLcpSolveFn solve;
  cuspLcpWorksizeFn worksize;
} cuspLcpBackend;

//---------------------------------- work budget --------------------------------------------------
// One run of a backend (and of the MCP solver, mcp.h) stops after max_iter iterations or when its
// work budget is spent, whichever comes first, so that no option in range can make a solve take
// long (tolerance 1e-16 with max_iter 1e6 once ran 1e6 Newton steps, 17 s, in one step of a pushed
// box). Work is counted in units of about one multiply-add, by a fixed cost per iteration (a model
// of what the iteration does, not a measurement; the constant term stands for callbacks and
// bookkeeping of small problems):
//   Newton step (fbnewton, ncpsmooth, MCP)  n^3 / 3 + 8 n^2 + 4096   (LU, Jacobian, line search)
//   PGS sweep                    n^2 + 64; block sweeps (block b) n^2 + 2 n b^2 + 64
//   Lemke pivot                  2 n^2 + 64               (basis-inverse update, entering column)
// A run may do floor(budget / cost) iterations and never more than max_iter; there is no floor
// below which the budget is ignored (a default floor of 200 iterations, Lemke 200 + 4 n pivots,
// once let a 400-unknown island spend 0.6 s in one step), so a problem whose single iteration
// costs more than the budget gets none: its start is checked, and it fails unless that solves it.
// A run stopped by the budget returns CUSP_LCP_MAX_ITER with the message "work budget reached";
// the plugin counts it as a failed solve like any other unsolved step. The chain (and the
// plugin's fallback) stops at the first run that succeeds, so a contact solve costs at most one
// budget per backend it tries and attempt it makes (condition.c: an equilibrated island unscaled,
// then scaled, an island stage 2 scales scaled, then unscaled; a failed stage-1 selection of the
// screen, once more with the QR's: at most 4 attempts, the second to fourth only after a
// failure). Measured on this machine a unit is about
// 0.5 ns of one core (Newton n = 100..400, Lemke n = 50..400): the default is about 5 ms a run.
// A rigid (patch) island gets at least 200 Newton steps of its own size (step/patch_solve.c), a
// controller's solve 200 Newton steps of its size (control/inverse.c).
// A pool (options.work_pool) bounds what several runs spend together: each run of a backend
// called through the table (cusp_lcp_backend: the chain's members, the plugin's solves) may spend
// at most what the pool holds and takes its work off it; an empty pool leaves a run no iteration
// (it checks its start only). The plugin gives the backend runs of one step's disk islands one
// pool, the config key `step_work_budget` (plugin/config/config.c).
#define CUSP_SOLVE_WORK_BUDGET 1e7

typedef enum cuspIterationKind_ {
  CUSP_ITER_NEWTON = 0,  // a semismooth Newton step
  CUSP_ITER_PGS_SWEEP,   // a projected Gauss-Seidel sweep
  CUSP_ITER_LEMKE_PIVOT  // a Lemke pivot
} cuspIterationKind;

// Work units of one iteration of `kind` on n unknowns (the model above); block: the PGS block size
// (<= 1: scalar sweeps; ignored by the other kinds).
mjtNum cusp_solve_iteration_cost(cuspIterationKind kind, int n, int block);

// Iterations a run may do: min(max_iter, floor(budget / cost)) (possibly 0); budget 0 means
// CUSP_SOLVE_WORK_BUDGET, < 0 no budget (max_iter). *budget_binds (may be NULL) := 1 if the
// budget, not max_iter, sets the result.
int cusp_solve_iteration_cap(int* budget_binds, int max_iter, mjtNum work_budget,
                             cuspIterationKind kind, int n, int block);

//---------------------------------- API ---------------------------------------------------------

// Defaults: tol 1e-10, max_iter 0 (backend default), no warm start, omega 1, pivot tol 1e-12,
// lm_min 1e-14, chain {fbnewton, lemke, pgs}.
cuspLcpOptions cusp_lcp_default_options(void);

// Backend table lookup by name; NULL if unknown. cusp_lcp_backend(id) indexes the table.
const cuspLcpBackend* cusp_lcp_backend_find(const char* name);
const cuspLcpBackend* cusp_lcp_backend(cuspLcpBackendId id);

// Convenience: find + solve. Unknown name -> CUSP_LCP_BAD_INPUT.
cuspLcpStatus cusp_lcp_solve_named(const char* name, mjtNum* z, mjtNum* w, cuspLcpInfo* info,
                                   const cuspLcpProblem* prob, const cuspLcpOptions* opt,
                                   void* work, size_t work_bytes);

// Individual backends (same contract as cuspLcpSolveFn).
size_t cusp_lcp_lemke_worksize(int n);
cuspLcpStatus cusp_lcp_lemke(mjtNum* z, mjtNum* w, cuspLcpInfo* info, const cuspLcpProblem* prob,
                             const cuspLcpOptions* opt, void* work, size_t work_bytes);
size_t cusp_lcp_pgs_worksize(int n);
cuspLcpStatus cusp_lcp_pgs(mjtNum* z, mjtNum* w, cuspLcpInfo* info, const cuspLcpProblem* prob,
                           const cuspLcpOptions* opt, void* work, size_t work_bytes);
size_t cusp_lcp_fbnewton_worksize(int n);
cuspLcpStatus cusp_lcp_fbnewton(mjtNum* z, mjtNum* w, cuspLcpInfo* info,
                                const cuspLcpProblem* prob, const cuspLcpOptions* opt, void* work,
                                size_t work_bytes);
size_t cusp_lcp_chain_worksize(int n);
cuspLcpStatus cusp_lcp_chain(mjtNum* z, mjtNum* w, cuspLcpInfo* info, const cuspLcpProblem* prob,
                             const cuspLcpOptions* opt, void* work, size_t work_bytes);
// Smoothing Newton (Chen-Harker-Kanzow-Smale smoothing driven to zero, Armijo line search).
size_t cusp_lcp_ncpsmooth_worksize(int n);
cuspLcpStatus cusp_lcp_ncpsmooth(mjtNum* z, mjtNum* w, cuspLcpInfo* info,
                                 const cuspLcpProblem* prob, const cuspLcpOptions* opt, void* work,
                                 size_t work_bytes);
// The finish of a problem a backend stopped short on (lcp_finish.c): z (n) in, the backend's
// answer; at most 5 active-set rounds from it (basic solutions of the active systems, which are
// singular on friction LCPs), then Lemke with lemke_value_ties (through the backend table: its
// pivots come from opt's work pool). Standard bounds only. Returns 1 (rounds) or 2 (Lemke) with
// z, w = M z + q and info (status solved, residuals, iterations and work added) of the answer
// that meets opt->tol; 0: z unchanged, w = M z + q, info as given but for the iterations and
// work spent. work: cusp_lcp_finish_worksize(n) bytes.
size_t cusp_lcp_finish_worksize(int n);
int cusp_lcp_finish(mjtNum* z, mjtNum* w, cuspLcpInfo* info, const cuspLcpProblem* prob,
                    const cuspLcpOptions* opt, void* work, size_t work_bytes);
// opt with `id` taken out of its chain (the others keep their order)
cuspLcpOptions cusp_lcp_chain_without(const cuspLcpOptions* opt, cuspLcpBackendId id);

// Residuals of a candidate z: fills w = M z + q (w (n), required) and info->residual,
// info->siconos_error, info->complementarity.
void cusp_lcp_residual(mjtNum* w, cuspLcpInfo* info, const mjtNum* z, const cuspLcpProblem* prob);

const char* cusp_lcp_status_string(cuspLcpStatus status);

// Wall clock in seconds (C11 timespec_get): the solvers' and the step's timers.
double cusp_now(void);

#ifdef __cplusplus
}
#endif

#endif  // CUSP_SOLVER_LCP_H_
