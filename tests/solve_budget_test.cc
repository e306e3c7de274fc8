// The work budget of one solver run (plugin/solver/lcp.h): no configuration in range
// can make a step run for long. tolerance = 1e-16 with max_iterations = 1e6 once spent 1e6 Newton
// steps in one step of a pushed box (over 120 s for 100 steps of a scene); now each run stops at
// its budget, the step is counted as failed, and the simulation goes on. Counts, not wall time,
// are asserted.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scene_test_util.h"

extern "C" {
#include "config/config.h"
#include "instance.h"
#include "solver/lcp.h"
}

namespace {

TEST(SolveBudget, CapRules) {
  // the budget binds at every size: no floor of iterations below which it is ignored
  int binds = -1;
  mjtNum big = cusp_solve_iteration_cost(CUSP_ITER_NEWTON, 1000, 0);  // > the default budget
  EXPECT_GT(big, CUSP_SOLVE_WORK_BUDGET);
  EXPECT_EQ(cusp_solve_iteration_cap(&binds, 200, 0, CUSP_ITER_NEWTON, 1000, 0), 0);
  EXPECT_EQ(binds, 1);
  EXPECT_EQ(cusp_solve_iteration_cap(nullptr, 50, 0, CUSP_ITER_NEWTON, 10, 0), 50);
  // small problems get budget / cost iterations
  mjtNum cost = cusp_solve_iteration_cost(CUSP_ITER_NEWTON, 10, 0);
  EXPECT_DOUBLE_EQ(cost, 1000.0 / 3 + 800 + 4096);
  EXPECT_EQ(cusp_solve_iteration_cap(&binds, 1000000, 0, CUSP_ITER_NEWTON, 10, 0),
            (int)std::floor(CUSP_SOLVE_WORK_BUDGET / cost));
  EXPECT_EQ(binds, 1);
  EXPECT_EQ(cusp_solve_iteration_cap(&binds, 1000, 0, CUSP_ITER_NEWTON, 10, 0), 1000);
  EXPECT_EQ(binds, 0);
  // an explicit budget, none, and Lemke below the 200 + 4 n pivots it used to be granted
  EXPECT_EQ(cusp_solve_iteration_cap(nullptr, 1000000, 1e9, CUSP_ITER_PGS_SWEEP, 100, 0),
            (int)std::floor(1e9 / (100.0 * 100 + 64)));
  EXPECT_EQ(cusp_solve_iteration_cap(nullptr, 1000000, -1, CUSP_ITER_PGS_SWEEP, 100, 0), 1000000);
  EXPECT_EQ(cusp_solve_iteration_cap(nullptr, 1000000, 0, CUSP_ITER_LEMKE_PIVOT, 600, 0),
            (int)std::floor(CUSP_SOLVE_WORK_BUDGET / (2.0 * 600 * 600 + 64)));
  EXPECT_GT(cusp_solve_iteration_cost(CUSP_ITER_PGS_SWEEP, 60, 10),
            cusp_solve_iteration_cost(CUSP_ITER_PGS_SWEEP, 60, 1));
}

// A problem whose one iteration costs more than the budget: every backend stops at once with
// "work budget reached" (Lemke: after the pivots the budget pays for), the chain tries each and
// reports the failure, and nothing runs for long. Counts, not time, are asserted.
TEST(SolveBudget, LargeProblemsAreCutBelowTheOldFloors) {
  const int n = 700;
  std::vector<mjtNum> M(n * n), q(n), z(n), w(n);
  for (int i = 0; i < n; i++) {  // a diagonally dominant P-matrix: every backend could solve it
    for (int j = 0; j < n; j++) M[i + j * n] = (i == j) ? n : 1.0 / (1 + i + j);
    q[i] = -1.0 - (i % 7);
  }
  cuspLcpProblem p = {n, M.data(), n, q.data(), nullptr, nullptr};
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.max_iter = 1000000;
  struct Case {
    const char* name;
    cuspIterationKind kind;
  } cases[] = {{"fbnewton", CUSP_ITER_NEWTON}, {"ncpsmooth", CUSP_ITER_NEWTON},
               {"lemke", CUSP_ITER_LEMKE_PIVOT}};
  for (const Case& c : cases) {
    const cuspLcpBackend* b = cusp_lcp_backend_find(c.name);
    std::vector<char> work(b->worksize(n));
    std::fill(z.begin(), z.end(), 0.0);
    cuspLcpInfo info;
    b->solve(z.data(), w.data(), &info, &p, &opt, work.data(), work.size());
    int cap = cusp_solve_iteration_cap(nullptr, opt.max_iter, 0, c.kind, n, 0);
    EXPECT_LT(cap, 200) << c.name;  // below the old floor
    EXPECT_LE(info.iterations, cap) << c.name;
    EXPECT_EQ(info.status, CUSP_LCP_MAX_ITER) << c.name;
    EXPECT_STREQ(info.message, "work budget reached") << c.name;
  }
  // the same problem with the budget lifted is solved: the cut was the budget's
  opt.work_budget = -1;
  std::vector<char> work(cusp_lcp_fbnewton_worksize(n));
  std::fill(z.begin(), z.end(), 0.0);
  cuspLcpInfo info;
  EXPECT_EQ(cusp_lcp_fbnewton(z.data(), w.data(), &info, &p, &opt, work.data(), work.size()),
            CUSP_LCP_SOLVED);
}

// The chain stops at the first backend that succeeds: its iterations are that backend's alone.
TEST(SolveBudget, ChainStopsAtTheFirstSuccess) {
  const int n = 20;
  std::vector<mjtNum> M(n * n), q(n), z(n, 0.0), w(n);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) M[i + j * n] = (i == j) ? 4.0 : 1.0 / (2 + i + j);
    q[i] = (i % 3) ? -1.0 : 0.5;
  }
  cuspLcpProblem p = {n, M.data(), n, q.data(), nullptr, nullptr};
  cuspLcpOptions opt = cusp_lcp_default_options();
  std::vector<char> work(cusp_lcp_chain_worksize(n));
  cuspLcpInfo chain, alone;
  ASSERT_EQ(cusp_lcp_chain(z.data(), w.data(), &chain, &p, &opt, work.data(), work.size()),
            CUSP_LCP_SOLVED);
  std::fill(z.begin(), z.end(), 0.0);
  ASSERT_EQ(cusp_lcp_fbnewton(z.data(), w.data(), &alone, &p, &opt, work.data(), work.size()),
            CUSP_LCP_SOLVED);
  EXPECT_STREQ(chain.backend, "fbnewton");
  EXPECT_EQ(chain.iterations, alone.iterations);
}

// M := the n x n Hilbert matrix plus 1e-8 on its diagonal (SPD, badly conditioned), q := -1
void Hilbert(std::vector<mjtNum>& M, std::vector<mjtNum>& q, int n) {
  M.assign((size_t)n * n, 0);
  q.assign(n, -1.0);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) M[i + j * n] = 1.0 / (1 + i + j);
    M[i + i * n] += 1e-8;
  }
}

// A PGS run asked for an unreachable tolerance with a huge sweep limit stops at its budget.
TEST(SolveBudget, PgsStopsAtTheBudgetAndSaysSo) {
  const int n = 40;
  // free variables and a badly conditioned SPD matrix: Gauss-Seidel on a Hilbert system, which
  // converges, but very slowly
  std::vector<mjtNum> M, q, z(n), w(n), lo(n, -INFINITY), hi(n, INFINITY);
  Hilbert(M, q, n);
  cuspLcpProblem p = {n, M.data(), n, q.data(), lo.data(), hi.data()};
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.tol = 1e-300;
  opt.max_iter = 1000000;
  std::vector<char> work(cusp_lcp_pgs_worksize(n));
  cuspLcpInfo info;
  cuspLcpStatus st = cusp_lcp_pgs(z.data(), w.data(), &info, &p, &opt, work.data(), work.size());
  EXPECT_EQ(st, CUSP_LCP_MAX_ITER);
  EXPECT_STREQ(info.message, "work budget reached");
  EXPECT_EQ(info.iterations,
            cusp_solve_iteration_cap(nullptr, 1000000, 0, CUSP_ITER_PGS_SWEEP, n, 1));
  for (int i = 0; i < n; i++) EXPECT_TRUE(std::isfinite(z[i]));
  // with the budget lifted the same run goes on (the cut was the budget's, not max_iter's)
  opt.max_iter = info.iterations + 10;
  opt.work_budget = -1;
  cusp_lcp_pgs(z.data(), w.data(), &info, &p, &opt, work.data(), work.size());
  EXPECT_EQ(info.iterations, opt.max_iter);
  EXPECT_STREQ(info.message, "sweep limit reached");
}

// Every backend and the MCP solver on the same unreachable tolerance: none runs past its cap.
TEST(SolveBudget, EveryBackendStaysWithinItsCap) {
  const int n = 30;
  std::vector<mjtNum> M(n * n), q(n), z(n), w(n), lo(n, -INFINITY), hi(n, INFINITY);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) M[i + j * n] = 1.0 / (1 + i + j);
    M[i + i * n] += 1e-8;
    q[i] = -1.0;
  }
  struct Case {
    const char* name;
    cuspIterationKind kind;
    bool free_bounds;  // Lemke takes standard bounds only
  } cases[] = {{"fbnewton", CUSP_ITER_NEWTON, true},
               {"ncpsmooth", CUSP_ITER_NEWTON, true},
               {"pgs", CUSP_ITER_PGS_SWEEP, true},
               {"lemke", CUSP_ITER_LEMKE_PIVOT, false}};
  for (const Case& c : cases) {
    const cuspLcpBackend* b = cusp_lcp_backend_find(c.name);
    ASSERT_NE(b, nullptr) << c.name;
    cuspLcpProblem p = {n,
                        M.data(),
                        n,
                        q.data(),
                        c.free_bounds ? lo.data() : nullptr,
                        c.free_bounds ? hi.data() : nullptr};
    cuspLcpOptions opt = cusp_lcp_default_options();
    opt.tol = 1e-300;
    opt.max_iter = 1000000;
    std::vector<char> work(b->worksize(n));
    cuspLcpInfo info;
    b->solve(z.data(), w.data(), &info, &p, &opt, work.data(), work.size());
    EXPECT_LE(info.iterations, cusp_solve_iteration_cap(nullptr, 1000000, 0, c.kind, n, 0))
        << c.name;
    if (info.status == CUSP_LCP_MAX_ITER) {
      EXPECT_STREQ(info.message, "work budget reached") << c.name;
    }
    if (std::getenv("CUSP_VERBOSE")) {
      std::printf("%s: status %d, %d iterations, %s\n", c.name, (int)info.status, info.iterations,
                  info.message);
    }
  }
}

// Runs through the backend table that share a pool (a step's solves) spend at most what it holds
// together: each run is cut at what is left and takes its work off; an empty pool leaves a run no
// iteration. The work a run reports is its iterations at the cost of one.
TEST(SolveBudget, RunsSharingAPoolSpendAtMostItsUnits) {
  const int n = 30;
  // free Hilbert plus 1e-8: no backend reaches tolerance 1e-300
  std::vector<mjtNum> M, q, z(n), w(n), lo(n, -INFINITY), hi(n, INFINITY);
  Hilbert(M, q, n);
  // free bounds: the chain's Lemke refuses them at once (no work), FB Newton and PGS run
  cuspLcpProblem p = {n, M.data(), n, q.data(), lo.data(), hi.data()};
  cuspLcpOptions opt = cusp_lcp_default_options();
  opt.tol = 1e-300;
  opt.max_iter = 1000000;
  const cuspLcpBackend* chain = cusp_lcp_backend(CUSP_LCP_CHAIN);
  std::vector<char> work(chain->worksize(n));
  // alone, one run of each member: the chain spends about two default budgets
  cuspLcpInfo info;
  std::fill(z.begin(), z.end(), 0.0);
  chain->solve(z.data(), w.data(), &info, &p, &opt, work.data(), work.size());
  EXPECT_GT(info.work, 1.9 * CUSP_SOLVE_WORK_BUDGET);
  EXPECT_LE(info.work, 2 * CUSP_SOLVE_WORK_BUDGET);
  // the same chain on a pool of 1.5 default runs, twice
  mjtNum pool = 1.5 * CUSP_SOLVE_WORK_BUDGET;
  opt.work_pool = &pool;
  for (int k = 0; k < 2; k++) {
    mjtNum before = pool;
    std::fill(z.begin(), z.end(), 0.0);
    cuspLcpStatus st = chain->solve(z.data(), w.data(), &info, &p, &opt, work.data(), work.size());
    EXPECT_NE(st, CUSP_LCP_SOLVED);
    EXPECT_LE(info.work, std::max(before, 0.0)) << k;
    EXPECT_DOUBLE_EQ(pool, before - info.work) << k;
    EXPECT_GE(pool, 0.0) << k;
    for (int i = 0; i < n; i++) EXPECT_TRUE(std::isfinite(z[i]));
  }
  // nearly all of it was spent (each run stops within one iteration of what is left)
  EXPECT_LT(pool, cusp_solve_iteration_cost(CUSP_ITER_NEWTON, n, 0) +
                      cusp_solve_iteration_cost(CUSP_ITER_LEMKE_PIVOT, n, 0) +
                      cusp_solve_iteration_cost(CUSP_ITER_PGS_SWEEP, n, 1));
  // an empty pool: every member checks its start only
  pool = 0;
  std::fill(z.begin(), z.end(), 0.0);
  EXPECT_EQ(chain->solve(z.data(), w.data(), &info, &p, &opt, work.data(), work.size()),
            CUSP_LCP_MAX_ITER);
  EXPECT_EQ(info.iterations, 0);
  EXPECT_EQ(info.work, 0.0);
  EXPECT_EQ(pool, 0.0);
  // a single backend through the table: its work is its iterations at the cost model
  pool = 1e6;
  std::fill(z.begin(), z.end(), 0.0);
  cusp_lcp_backend(CUSP_LCP_PGS)->solve(z.data(), w.data(), &info, &p, &opt, work.data(),
                                         work.size());
  EXPECT_EQ(info.iterations, (int)std::floor(1e6 / cusp_solve_iteration_cost(CUSP_ITER_PGS_SWEEP,
                                                                               n, 1)));
  EXPECT_DOUBLE_EQ(info.work,
                   info.iterations * cusp_solve_iteration_cost(CUSP_ITER_PGS_SWEEP, n, 1));
  EXPECT_DOUBLE_EQ(pool, 1e6 - info.work);
}

class SceneBudget : public cusp_test::SceneTest {
 protected:
  void Set(const char* key, const char* value) {
    char err[256];
    ASSERT_EQ(cusp_config_override_set(key, value, err, sizeof(err)), 0) << err;
  }
  // steps n times; returns the number of steps whose status was not solved, and the largest
  // iteration count of one step
  void Run(int n, int* failed_steps, int* max_iterations) {
    const mjtNum* s = d_->plugin_state + m_->plugin_stateadr[0];
    *failed_steps = *max_iterations = 0;
    for (int i = 0; i < n; i++) {
      mj_step(m_, d_);
      if (s[CUSP_STATE_STATUS] != 0) ++*failed_steps;
      *max_iterations = std::max(*max_iterations, (int)s[CUSP_STATE_ITERATIONS]);
      for (int k = 0; k < m_->nv; k++) ASSERT_TRUE(std::isfinite(d_->qvel[k])) << "step " << i;
    }
    EXPECT_EQ(s[CUSP_STATE_STEPS], n);
  }
};

// A box wedged between two static walls 4 mm closer than its width (patch MCP): both faces ask
// to be pushed out and nothing can move them apart, so no step has a solution (the proximal solve
// reaches 1e-16 on the pushed-block scenes, which used to serve here). Without the finish, which
// would drop the push-out and solve it (held at its depth: test_grasp_stack's squeezed box), each
// step is cut by the budget (a warm-started run and its cold restart), counted, and the
// simulation goes on.
TEST_F(SceneBudget, PatchSceneWithoutSolutionFinishesWithFailuresCounted) {
  Set("tolerance", "1e-16");
  Set("max_iterations", "1000000");
  Set("finish", "false");
  std::string path = std::string(CUSP_BUILD_DIR) + "/solve_budget_wedge.xml";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(
      "<mujoco><option timestep=\"0.001\"/><extension><plugin plugin=\"cusp.contact\">"
      "<instance name=\"cusp\"><config key=\"bodies\" value=\"box\"/></instance></plugin>"
      "</extension><worldbody><geom type=\"plane\" size=\"1 1 0.1\"/>"
      "<geom type=\"box\" size=\"0.01 0.1 0.1\" pos=\"-0.058 0 0.1\"/>"
      "<geom type=\"box\" size=\"0.01 0.1 0.1\" pos=\"0.058 0 0.1\"/>"
      "<body name=\"box\" pos=\"0 0 0.05\"><freejoint/><geom type=\"box\" "
      "size=\"0.05 0.05 0.05\" mass=\"1\" contype=\"0\" conaffinity=\"0\"/></body>"
      "</worldbody></mujoco>",
      f);
  std::fclose(f);
  char err[1024] = "";
  m_ = mj_loadXML(path.c_str(), nullptr, err, sizeof(err));
  ASSERT_NE(m_, nullptr) << err;
  d_ = mj_makeData(m_);
  ASSERT_NE(d_, nullptr);
  int failed = 0, iters = 0;
  Run(100, &failed, &iters);
  const mjtNum* s = d_->plugin_state + m_->plugin_stateadr[0];
  EXPECT_GT(failed, 10);
  EXPECT_EQ(s[CUSP_STATE_SOLVER_FAILURES], failed);
  // two runs per step, each at most budget / (the cost of the smallest problem) iterations
  int most = (int)(CUSP_SOLVE_WORK_BUDGET / cusp_solve_iteration_cost(CUSP_ITER_NEWTON, 0, 0));
  EXPECT_LE(iters, 2 * most);
  EXPECT_GT(iters, 2 * 200);  // far beyond the default max_iterations: the budget cut, not it
}

// The disk LCP with PGS alone (no fallback, no finish: its active-set rounds meet even 1e-16 on
// this island): sweeps cut by the budget, failures counted.
TEST_F(SceneBudget, DiskPgsAtToleranceFloorFinishesWithFailuresCounted) {
  Set("tolerance", "1e-16");
  Set("max_iterations", "1000000");
  Set("solver", "pgs");
  Set("fallback", "false");
  Set("finish", "false");
  Set("warm_start", "false");  // a warm start's active-set step can meet even 1e-16 exactly
  LoadFile("disk_drop.xml");
  int failed = 0, iters = 0;
  Run(300, &failed, &iters);  // lands at about step 130
  const mjtNum* s = d_->plugin_state + m_->plugin_stateadr[0];
  EXPECT_GT(failed, 5);
  EXPECT_EQ(s[CUSP_STATE_SOLVER_FAILURES], failed);
  EXPECT_LE(iters,
            (int)(CUSP_SOLVE_WORK_BUDGET / cusp_solve_iteration_cost(CUSP_ITER_PGS_SWEEP, 0, 0)));
  EXPECT_GT(iters, 200);  // beyond the default max_iterations: the budget cut, not it
}

}  // namespace
