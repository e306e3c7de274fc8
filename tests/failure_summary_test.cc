// Failed contact solves are summarised once: at the end of a run (cusp_sim_run, then
// cusp_sim_failure_line, what cusp-sim and cusp.run print), or, for an mjData nobody ran that
// way, as one warning when it is freed (the plugin's destroy callback). The first failure also
// warns once when it happens. Solves are made to fail with max_iterations = 1 at a tolerance no
// solver reaches in one iteration, without the fallback chain and the finish.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cstdio>
#include <string>
#include <vector>

#include "scene_test_util.h"

extern "C" {
#include "cli/sim_loop.h"
#include "instance.h"
#include "state.h"
}

namespace {

// a box dropped 1 mm onto a plane: in contact from the first steps on
std::string Scene(bool failing) {
  std::string solve = failing ? R"(<config key="max_iterations" value="1"/>
    <config key="tolerance" value="1e-16"/><config key="fallback" value="false"/>
    <config key="finish" value="false"/>)"
                              : "";
  return R"(
<mujoco>
  <option timestep="1e-3"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="box"/>)" +
         solve + R"(
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="box" pos="0 0 0.051">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>)";
}

class FailureSummary : public cusp_test::SceneTest {
 protected:
  mjModel* Compile(bool failing) {
    std::string err;
    mjModel* m = cusp_test::CompileXml(Scene(failing), &err);
    EXPECT_NE(m, nullptr) << err;
    return m;
  }
};

TEST_F(FailureSummary, FreedDataWarnsOnceWithCountFirstAndWorst) {
  mjModel* m = Compile(true);
  ASSERT_NE(m, nullptr);
  mjData* d = mj_makeData(m);
  const int nstep = 200;
  for (int i = 0; i < nstep; i++) mj_step(m, d);
  const mjtNum* s = d->plugin_state + m->plugin_stateadr[0];
  const double failures = s[CUSP_STATE_SOLVER_FAILURES];
  ASSERT_GT(failures, 0) << "no solve failed: the test would show nothing";
  EXPECT_EQ(WarningsWith("contact solve failed at t = "), 1);  // the first one, when it happened
  EXPECT_EQ(WarningsWith("failed contact solve"), 0);          // no summary before the end
  mj_deleteData(d);
  ASSERT_EQ(WarningsWith("failed contact solve"), 1);
  char first[64];
  std::snprintf(first, sizeof(first), "%.0f failed contact solves in %d steps", failures, nstep);
  std::string summary;
  for (const std::string& w : Warnings()) {
    if (w.find("failed contact solve") != std::string::npos) summary = w;
  }
  EXPECT_EQ(summary.find(std::string("cusp.contact: ") + first + " (solver_failures); the first "
                         "at t = "),
            0u)
      << summary;
  EXPECT_NE(summary.find(" s (max_iter), the worst max_iter (summary at mj_deleteData)"),
            std::string::npos)
      << summary;
  mj_deleteModel(m);
}

TEST_F(FailureSummary, RunReportsThemAndTheFreedDataSaysNothingMore) {
  mjModel* m = Compile(true);
  ASSERT_NE(m, nullptr);
  cusp_sim_prepare_model(m, 0);
  mjData* d = mj_makeData(m);
  std::vector<char> registered(m->ngeom + 1, 0);
  ASSERT_EQ(cusp_sim_registered_geoms(registered.data(), m), 0);
  char json[4096], err[1024], line[1024];
  ASSERT_EQ(cusp_sim_run(json, sizeof(json), err, sizeof(err), m, d, registered.data(), 0,
                         "box", 0.2, nullptr, nullptr, nullptr),
            0)
      << err;
  ASSERT_GT(cusp_sim_failure_line(line, sizeof(line)), 0);
  const mjtNum* s = d->plugin_state + m->plugin_stateadr[0];
  char head[128];
  std::snprintf(head, sizeof(head), "cusp.contact: %.0f failed contact solves in 200 steps",
                s[CUSP_STATE_SOLVER_FAILURES]);
  EXPECT_EQ(std::string(line).find(head), 0u) << line;
  EXPECT_NE(std::string(json).find("\"worst_failure_status\": \"max_iter\""), std::string::npos)
      << json;
  mj_deleteData(d);
  EXPECT_EQ(WarningsWith("failed contact solve"), 0);  // reported by the run: not again
  mj_deleteModel(m);
}

TEST_F(FailureSummary, NoFailureNoSummary) {
  mjModel* m = Compile(false);
  ASSERT_NE(m, nullptr);
  mjData* d = mj_makeData(m);
  for (int i = 0; i < 200; i++) mj_step(m, d);
  EXPECT_EQ(d->plugin_state[m->plugin_stateadr[0] + CUSP_STATE_SOLVER_FAILURES], 0);
  mj_deleteData(d);
  EXPECT_TRUE(Warnings().empty()) << Warnings()[0];
  // a run without failures: an empty summary line
  cusp_sim_prepare_model(m, 0);
  d = mj_makeData(m);
  std::vector<char> registered(m->ngeom + 1, 0);
  char json[4096], err[1024], line[256] = "x";
  ASSERT_EQ(cusp_sim_run(json, sizeof(json), err, sizeof(err), m, d, registered.data(), 0, "box",
                         0.1, nullptr, nullptr, nullptr),
            0)
      << err;
  EXPECT_EQ(cusp_sim_failure_line(line, sizeof(line)), 0);
  EXPECT_STREQ(line, "");
  EXPECT_NE(std::string(json).find("\"first_failure_s\": null"), std::string::npos) << json;
  mj_deleteData(d);
  mj_deleteModel(m);
}

}  // namespace
