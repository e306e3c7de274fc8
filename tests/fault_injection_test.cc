// Fault injection: bad numbers in qvel, qpos, ctrl and geom sizes, deep initial penetration, a
// timestep 100x too large, degenerate geoms, and every backend forced to fail. Expected in every
// case: no crash, the plugin (or MuJoCo, for what it checks itself) reports the fault (status,
// failure counter, one warning per instance), MuJoCo's state stays finite, and the energy does
// not grow beyond the stated bound.
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "scene_test_util.h"

extern "C" {
#include "instance.h"
#include "solver/lcp.h"
}

namespace {

// A 1 kg puck (disk radius 0.05 m, half-thickness 0.01 m) on a plane, a motor pushing it along
// x, and a 0.5 kg box the disk can hit (environment: floor and box).
std::string Puck(double h, double z, const std::string& extra_config = "",
                 const std::string& extra_disk = "") {
  char xml[4096];
  std::snprintf(xml, sizeof(xml), R"(
<mujoco>
  <option timestep="%g" integrator="Euler"><flag energy="enable"/></option>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="disks" value="puck%s"/><config key="environment" value="floor box"/>
    <config key="friction" value="0.5"/>%s
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="b" pos="0 0 %.12g">
      <freejoint name="free"/>
      <geom name="puck" type="cylinder" size="0.05 0.01" mass="1" contype="0" conaffinity="0"/>
      %s
    </body>
    <body name="crate" pos="0.5 0 0.05"><freejoint/>
      <geom name="box" type="box" size="0.05 0.05 0.05" mass="0.5"/></body>
  </worldbody>
  <actuator><motor joint="free" gear="1 0 0 0 0 0"/></actuator>
</mujoco>)",
                h, extra_disk.empty() ? "" : " puck2", extra_config.c_str(), z,
                extra_disk.c_str());
  return xml;
}

class Fault : public cusp_test::SceneTest {
 protected:
  static int CuspWarnings() { return WarningsWith("cusp.contact"); }
  // qpos, qvel and the plugin state finite
  bool Finite() const {
    for (int i = 0; i < m_->npluginstate; i++) if (!std::isfinite(d_->plugin_state[i])) return false;
    return SceneTest::Finite();
  }
  mjtNum Energy() const { return d_->energy[0] + d_->energy[1]; }
  // steps n times; returns the largest total energy seen (J) and, if asked, the largest upward
  // speed of the first free body (qvel[2], m/s, from 0)
  mjtNum Step(int n, mjtNum* vz_max = nullptr) {
    mjtNum emax = -INFINITY;
    for (int i = 0; i < n; i++) {
      mj_step(m_, d_);
      emax = std::fmax(emax, Energy());
      if (vz_max) *vz_max = std::fmax(*vz_max, d_->qvel[2]);
    }
    return emax;
  }
};

const double kRest = 0.01;  // puck centre height resting flat on the floor, m

//---------------------------------- bad numbers in the state --------------------------------------

// MuJoCo checks qpos/qvel/qacc itself at the start of mj_step: it resets mjData and warns; the
// plugin's reset callback clears its state with it.
TEST_F(Fault, NanInfHugeQvelIsResetByMuJoCoWithWarning) {
  const mjtNum bad[] = {NAN, INFINITY, -INFINITY, 1e300};
  for (mjtNum v : bad) {
    for (int dof : {0, 2, 5}) {
      Load(Puck(1e-3, kRest));
      Step(100);
      d_->qvel[dof] = v;
      Step(1);
      EXPECT_GT(d_->warning[mjWARN_BADQVEL].number, 0) << v << " dof " << dof;
      EXPECT_TRUE(Finite()) << v << " dof " << dof;
      Step(200);
      EXPECT_TRUE(Finite());
      EXPECT_GT(d_->qpos[2], kRest - 1e-3);  // still resting on the floor after the reset
      Unload();
    }
  }
}

TEST_F(Fault, NanQposIsResetByMuJoCoWithWarning) {
  Load(Puck(1e-3, kRest));
  Step(100);
  d_->qpos[3] = NAN;  // quaternion
  Step(1);
  EXPECT_GT(d_->warning[mjWARN_BADQPOS].number, 0);
  Step(100);
  EXPECT_TRUE(Finite());
}

// NaN/inf in ctrl: MuJoCo zeroes ctrl and warns; the step continues with the motor off.
TEST_F(Fault, NanInfCtrlIsZeroedByMuJoCoWithWarning) {
  for (mjtNum v : {(mjtNum)NAN, (mjtNum)INFINITY, (mjtNum)-INFINITY}) {
    Load(Puck(1e-3, kRest));
    Step(100);
    d_->ctrl[0] = v;
    Step(10);
    EXPECT_GT(d_->warning[mjWARN_BADCTRL].number, 0) << v;
    EXPECT_TRUE(Finite()) << v;
    EXPECT_LT(std::fabs(d_->qvel[0]), 1e-3) << v;  // no push, the puck sticks
    Unload();
  }
}

// The plugin's own guard: a registered geom's size turned non-finite or zero at run time (as a
// domain-randomisation loop might) skips the contact step with status bad_input, counts it, and
// warns once naming the geom. Restoring the size resumes contact.
TEST_F(Fault, BadRegisteredGeomSizeIsRefusedWithOneWarning) {
  struct Case {
    const char* geom;
    int k;
    mjtNum v;
  };
  const Case cases[] = {{"puck", 0, NAN}, {"puck", 1, INFINITY}, {"puck", 0, 0},
                        {"puck", 1, -0.01}, {"box", 2, NAN},      {"box", 0, -INFINITY}};
  for (const Case& c : cases) {
    Load(Puck(1e-3, kRest));
    Step(100);
    int g = mj_name2id(m_, mjOBJ_GEOM, c.geom);
    mjtNum saved = m_->geom_size[3 * g + c.k];
    m_->geom_size[3 * g + c.k] = c.v;
    mjtNum failures0 = State()[CUSP_STATE_SOLVER_FAILURES];
    Step(20);
    SCOPED_TRACE(std::string(c.geom) + " size[" + std::to_string(c.k) + "] = " +
                 std::to_string(c.v));
    EXPECT_EQ(State()[CUSP_STATE_STATUS], CUSP_LCP_BAD_INPUT);
    if (d_->warning[mjWARN_BADQACC].number == 0) {
      EXPECT_EQ(State()[CUSP_STATE_SOLVER_FAILURES], failures0 + 20);
    } else {
      // the box is also collided by MuJoCo, whose NaN contact resets mjData (and the plugin's
      // counters) every step: the refusal is still reported
      EXPECT_GE(State()[CUSP_STATE_SOLVER_FAILURES], 1);
    }
    ASSERT_EQ(CuspWarnings(), 1);
    for (const std::string& w : Warnings()) {
      if (w.find("cusp.contact") == std::string::npos) continue;
      EXPECT_NE(w.find(std::string("'") + c.geom + "'"), std::string::npos) << w;
    }
    // the plugin adds no NaN; MuJoCo's own collision of a NaN box makes its state non-finite,
    // which it reports (bad qacc) and resets at the next step
    if (d_->warning[mjWARN_BADQACC].number == 0) {
      EXPECT_TRUE(Finite());
    }
    m_->geom_size[3 * g + c.k] = saved;
    Step(300);
    EXPECT_EQ(State()[CUSP_STATE_STATUS], CUSP_LCP_SOLVED);
    EXPECT_GT(State()[CUSP_STATE_NCONTACT], 0);
    EXPECT_TRUE(Finite());
    EXPECT_EQ(CuspWarnings(), 1);  // one warning per instance
    Unload();
    Warnings().clear();
  }
}

//---------------------------------- hard scenes ----------------------------------------------------

// Deep initial penetration: the puck (1 kg) starts 4 cm below its resting height (2 cm thick, so
// fully sunk). The gap term asks for gap_alpha * depth / h = 0.2 * 0.04 / 1e-3 = 8 m/s; the push-out
// speed is capped at pushout_speed (default 0.1 m/s), so the puck rises at that speed and the
// energy gained is bounded by the lift m g depth plus the capped kinetic energy m v_cap^2 / 2
// (0.392 + 0.005 J; before the cap: +32 J, the puck launched). Tolerance 1e-3 J: the crate's
// stock contact settling only lowers the energy.
TEST_F(Fault, DeepInitialPenetrationRecoversWithoutBlowUp) {
  const double depth = 0.04, v_cap = 0.1, mass = 1.0;
  Load(Puck(1e-3, kRest - depth));
  mj_forward(m_, d_);
  mjtNum e0 = Energy(), vz_max = 0;
  mjtNum emax = Step(2000, &vz_max);
  EXPECT_TRUE(Finite());
  EXPECT_NEAR(d_->qpos[2], kRest, 2e-3);  // out and resting again
  std::printf("deep penetration 4 cm: energy start %.4g J, max %.4g J, end %.4g J, vz max %.6g\n",
              e0, emax, Energy(), vz_max);
  EXPECT_LE(vz_max, v_cap + 1e-9);
  EXPECT_GT(vz_max, 0.5 * v_cap);  // it is pushed out at about the cap, not crawling
  EXPECT_LT(emax - e0, mass * 9.81 * depth + 0.5 * mass * v_cap * v_cap + 1e-3);
}

// The same cap on the patch path: a 0.8 kg box (4 cm tall, patch contact) starting 2 cm into the
// floor rises at most at pushout_speed and gains at most m g d + m v_cap^2 / 2 (tolerance 1e-6 J).
TEST_F(Fault, DeepInitialPenetrationOfAPatchBoxIsCapped) {
  const double depth = 0.02, v_cap = 0.1, mass = 0.8, rest = 0.02;
  char xml[2048];
  std::snprintf(xml, sizeof(xml), R"(
<mujoco>
  <option timestep="1e-3"><flag energy="enable"/></option>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="block"/><config key="friction" value="0.5"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 .1"/>
    <body name="block" pos="0 0 %g"><freejoint/>
      <geom type="box" size="0.05 0.04 0.02" mass="%g" contype="0" conaffinity="0"/></body>
  </worldbody>
</mujoco>)", rest - depth, mass);
  Load(xml);
  mj_forward(m_, d_);
  mjtNum e0 = Energy(), vz_max = 0;
  mjtNum emax = Step(1000, &vz_max);
  std::printf("patch box 2 cm deep: energy gain %.4g J (bound %.4g J), vz max %.6g m/s\n",
              emax - e0, mass * 9.81 * depth + 0.5 * mass * v_cap * v_cap, vz_max);
  EXPECT_TRUE(Finite());
  EXPECT_NEAR(d_->qpos[2], rest, 1e-3);
  EXPECT_LE(vz_max, v_cap + 1e-9);
  EXPECT_LT(emax - e0, mass * 9.81 * depth + 0.5 * mass * v_cap * v_cap + 1e-6);
}

// The cap is a config key: a larger pushout_speed recovers faster and the rising speed follows it.
TEST_F(Fault, PushoutSpeedKeyBoundsTheRecoverySpeed) {
  Load(Puck(1e-3, kRest - 0.04, "<config key=\"pushout_speed\" value=\"0.5\"/>"));
  mjtNum vz_max = 0;
  Step(500, &vz_max);
  EXPECT_TRUE(Finite());
  EXPECT_LE(vz_max, 0.5 + 1e-9);
  EXPECT_GT(vz_max, 0.25);
}

// Timestep 100x too large for the puck (h = 0.1 s): no blow-up (energy never above its start).
TEST_F(Fault, TimestepHundredTimesTooLargePuck) {
  Load(Puck(0.1, kRest + 0.02));
  mj_forward(m_, d_);
  mjtNum e0 = Energy();
  mjtNum emax = Step(100);
  EXPECT_TRUE(Finite());
  EXPECT_LE(emax, e0 + 1e-9);
  EXPECT_NEAR(d_->qpos[2], kRest, 0.01);
}

// Scenario A at h = 1e-2 (100x its 1e-4): the stiff PCC arm is unstable under Euler at that
// step; whatever MuJoCo's integrator does, the plugin must not crash and MuJoCo's state must stay
// finite (MuJoCo itself resets on a diverging qacc/qvel, with a warning).
TEST_F(Fault, TimestepHundredTimesTooLargeScenarioA) {
  LoadFile("scenario_a_45_3.xml");
  m_->opt.timestep *= 100;
  for (int i = 0; i < 200; i++) {
    mj_step(m_, d_);
    ASSERT_TRUE(Finite()) << "step " << i;
  }
  int resets = d_->warning[mjWARN_BADQACC].number + d_->warning[mjWARN_BADQVEL].number +
               d_->warning[mjWARN_BADQPOS].number;
  std::printf("scenario A at h = 1e-2: %d MuJoCo resets, %g cusp failures\n", resets,
              State()[CUSP_STATE_SOLVER_FAILURES]);
  EXPECT_LE(CuspWarnings(), 1);
}

// Two coincident disks on one body: duplicate contacts, a singular Delassus matrix. With every
// combination of the conditioning stages the puck rests (weight carried, no blow-up).
TEST_F(Fault, CoincidentDisksEveryConditioningCombination) {
  const char* disk2 =
      R"(<geom name="puck2" type="cylinder" size="0.05 0.01" mass="0.001" contype="0" conaffinity="0"/>)";
  for (int mask = 0; mask < 8; mask++) {
    std::string cfg = std::string("<config key=\"rank_selection\" value=\"") +
                      (mask & 1 ? "true" : "false") + "\"/><config key=\"ruiz\" value=\"" +
                      (mask & 2 ? "true" : "false") + "\"/><config key=\"tikhonov\" value=\"" +
                      (mask & 4 ? "true" : "false") + "\"/>";
    Load(Puck(1e-3, kRest + 0.01, cfg, disk2));
    mj_forward(m_, d_);
    mjtNum e0 = Energy();
    mjtNum emax = Step(1000);
    SCOPED_TRACE("conditioning mask " + std::to_string(mask));
    EXPECT_TRUE(Finite());
    EXPECT_LE(emax, e0 + 1e-6);
    EXPECT_NEAR(d_->qpos[2], kRest, 2e-3);
    Unload();
  }
}

// A registered disk of zero size, compiled that way: MuJoCo's compiler refuses it, or the guard
// refuses every step; never a crash.
TEST_F(Fault, ZeroSizeDiskFromMjcf) {
  std::string xml = Puck(1e-3, kRest);
  xml.replace(xml.find("size=\"0.05 0.01\""), 16, "size=\"0 0\"");
  m_ = Compile(xml);
  if (!m_) {
    EXPECT_FALSE(error_.empty());
    return;
  }
  d_ = mj_makeData(m_);
  Step(10);
  EXPECT_TRUE(Finite());
  EXPECT_EQ(State()[CUSP_STATE_STATUS], CUSP_LCP_BAD_INPUT);
  EXPECT_EQ(CuspWarnings(), 1);
}

//---------------------------------- every backend forced to fail ----------------------------------

// One iteration, a tolerance of 1e-16 and no active-set finish (key finish, which would solve the
// resting puck from one Newton step's answer): every backend fails (status max_iter or numerical),
// the failure counter counts every contact step, one warning per instance; the best iterate (of
// the backend or its fallback chain) is applied, so the puck still rests on the floor
// (penetration bounded) and no energy is gained.
TEST_F(Fault, EveryBackendForcedToFail) {
  for (const char* solver : {"chain", "fbnewton", "lemke", "pgs", "ncpsmooth"}) {
    std::string cfg = std::string("<config key=\"solver\" value=\"") + solver +
                      "\"/><config key=\"max_iterations\" value=\"1\"/>"
                      "<config key=\"tolerance\" value=\"1e-16\"/>"
                      "<config key=\"finish\" value=\"false\"/>"
                      "<config key=\"warm_start\" value=\"false\"/>";
    Load(Puck(1e-3, kRest + 0.005, cfg));
    mj_forward(m_, d_);
    mjtNum e0 = Energy();
    mjtNum emax = Step(1000);
    SCOPED_TRACE(solver);
    EXPECT_TRUE(Finite());
    EXPECT_GT(State()[CUSP_STATE_SOLVER_FAILURES], 500);
    EXPECT_NE(State()[CUSP_STATE_STATUS], CUSP_LCP_SOLVED);
    EXPECT_EQ(CuspWarnings(), 1);
    EXPECT_LE(emax, e0 + 1e-6);
    // the failed iterate of a backend is followed by the chain without that backend (key
    // fallback, default true), so even one Lemke pivot (zero impulses) does not drop the puck
    EXPECT_GT(d_->qpos[2], kRest - 0.01) << "fell through the floor";
    std::printf("%s forced to fail: %g failures in %g steps, z = %.5f m\n", solver,
                State()[CUSP_STATE_SOLVER_FAILURES], State()[CUSP_STATE_STEPS], d_->qpos[2]);
    Unload();
    Warnings().clear();
  }
}

// With fallback off, the failed backend's own iterate is applied: one Lemke pivot leaves zero
// impulses and the puck falls through the floor. This is what the key switches off (and what
// the ablation measures per backend), so a user who turns it off sees the raw backend (and the
// finish off: its active-set rounds solve the puck from any answer).
TEST_F(Fault, FallbackOffAppliesTheFailedIterate) {
  Load(Puck(1e-3, kRest + 0.005,
            "<config key=\"solver\" value=\"lemke\"/><config key=\"max_iterations\" value=\"1\"/>"
            "<config key=\"tolerance\" value=\"1e-16\"/><config key=\"warm_start\" value=\"false\"/>"
            "<config key=\"fallback\" value=\"false\"/><config key=\"finish\" value=\"false\"/>"));
  Step(1000);
  EXPECT_TRUE(Finite());
  EXPECT_GT(State()[CUSP_STATE_SOLVER_FAILURES], 500);
  EXPECT_LT(d_->qpos[2], kRest - 0.01);
}

// No false success in the plugin: PGS alone (fallback and finish off) at a reachable tolerance
// but cut at two sweeps, from cold starts. Every step whose solve did not reach the tolerance is published
// with its status and counted, step by step; the steps that count are most of the contact steps
// (two block sweeps do not settle the puck's three coupled contacts).
TEST_F(Fault, PgsStoppedBeforeConvergenceIsCountedEveryStep) {
  Load(Puck(1e-3, kRest + 0.002,
            "<config key=\"solver\" value=\"pgs\"/><config key=\"max_iterations\" value=\"2\"/>"
            "<config key=\"warm_start\" value=\"false\"/><config key=\"fallback\" value=\"false\"/>"
            "<config key=\"finish\" value=\"false\"/>"));
  int unsolved = 0, contact_steps = 0;
  for (int i = 0; i < 500; i++) {
    mjtNum before = State()[CUSP_STATE_SOLVER_FAILURES];
    mj_step(m_, d_);
    int failed = State()[CUSP_STATE_STATUS] != CUSP_LCP_SOLVED;
    unsolved += failed;
    contact_steps += State()[CUSP_STATE_NCONTACT] > 0;
    EXPECT_EQ(State()[CUSP_STATE_SOLVER_FAILURES] - before, failed) << "step " << i;
  }
  EXPECT_TRUE(Finite());
  EXPECT_GT(unsolved, contact_steps / 2);
  EXPECT_EQ(State()[CUSP_STATE_SOLVER_FAILURES], unsolved);
}

// The published max_penetration is the geometry's: after every step it matches MuJoCo's own
// distance of the disk to the floor at the new configuration (mj_geomDistance, on a copy of the
// data) within 1e-6 m, whether the solve succeeded or failed and its correction was scaled down.
// Cases: the default pipeline dropping the tilted puck into the floor, and every step failing
// (one PGS sweep from cold starts at tolerance 1e-16 without fallback or finish, a 2 mm deep
// start).
TEST_F(Fault, MaxPenetrationIsTheGeometrysEvenWhenTheSolveFails) {
  struct Case {
    const char* config;
    double z;
    bool fails;
  } cases[] = {
      {"", kRest + 0.003, false},
      {"<config key=\"solver\" value=\"pgs\"/><config key=\"max_iterations\" value=\"1\"/>"
       "<config key=\"tolerance\" value=\"1e-16\"/><config key=\"warm_start\" value=\"false\"/>"
       "<config key=\"fallback\" value=\"false\"/><config key=\"finish\" value=\"false\"/>",
       kRest - 0.002, true}};
  for (const Case& c : cases) {
    Load(Puck(1e-3, c.z, c.config));
    mjData* copy = mj_makeData(m_);
    int puck = mj_name2id(m_, mjOBJ_GEOM, "puck"), floor = mj_name2id(m_, mjOBJ_GEOM, "floor");
    mjtNum worst = 0, deepest = 0;
    int failed_steps = 0;
    for (int i = 0; i < 400; i++) {
      mjtNum failures = State()[CUSP_STATE_SOLVER_FAILURES];
      mj_step(m_, d_);
      failed_steps += State()[CUSP_STATE_SOLVER_FAILURES] > failures;
      if (State()[CUSP_STATE_NCONTACT] == 0) continue;
      mj_copyData(copy, m_, d_);
      mj_kinematics(m_, copy);
      mjtNum dist = mj_geomDistance(m_, copy, puck, floor, 0.1, nullptr);
      mjtNum geometric = dist < 0 ? -dist : 0;
      worst = std::fmax(worst, std::fabs(State()[CUSP_STATE_MAX_PENETRATION] - geometric));
      deepest = std::fmax(deepest, State()[CUSP_STATE_MAX_PENETRATION]);
    }
    SCOPED_TRACE(c.config);
    EXPECT_TRUE(Finite());
    EXPECT_LE(worst, 1e-6);
    if (c.fails) {
      EXPECT_GT(failed_steps, 300);
    }
    std::printf("max_penetration vs mj_geomDistance: worst difference %.3g m, deepest %.3g m, "
                "%d failed steps\n", worst, deepest, failed_steps);
    mj_deleteData(copy);
    Unload();
  }
}

// The patch path (MCP, FB Newton) forced to fail the same way on the pushing scene (cold starts:
// from the last answer, the few Newton steps a small island gets meet even 1e-16 on most steps).
TEST_F(Fault, PatchSolverForcedToFail) {
  char err[512];
  ASSERT_EQ(cusp_config_override_set("max_iterations", "1", err, sizeof(err)), 0) << err;
  ASSERT_EQ(cusp_config_override_set("tolerance", "1e-16", err, sizeof(err)), 0) << err;
  ASSERT_EQ(cusp_config_override_set("finish", "false", err, sizeof(err)), 0) << err;
  ASSERT_EQ(cusp_config_override_set("warm_start", "false", err, sizeof(err)), 0) << err;
  LoadFile("push_slide.xml");
  cusp_config_override_clear();
  ASSERT_NE(d_, nullptr);
  mjtNum z0 = d_->qpos[2];
  int failed_steps = 0;  // steps whose published status is not "solved"
  for (int i = 0; i < 1000; i++) {
    mj_step(m_, d_);
    failed_steps += State()[CUSP_STATE_STATUS] != CUSP_LCP_SOLVED;
  }
  EXPECT_TRUE(Finite());
  EXPECT_GT(failed_steps, 100);  // one iteration at 1e-16 cannot solve most steps
  EXPECT_EQ(State()[CUSP_STATE_SOLVER_FAILURES], failed_steps);
  EXPECT_EQ(CuspWarnings(), 1);
  EXPECT_GT(d_->qpos[2], z0 - 0.01) << "block fell through the floor";
  std::printf("patch MCP forced to fail: %g failures in %g steps, z %.5f -> %.5f m\n",
              State()[CUSP_STATE_SOLVER_FAILURES], State()[CUSP_STATE_STEPS], z0, d_->qpos[2]);
}

}  // namespace
