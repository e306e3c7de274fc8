// Ordinary scenes that once killed the process or kicked a body: registered boxes side by side,
// beside a static corner, corner to corner and piled (an empty clipped polygon divided by zero);
// many cylinders and a 200-sided mesh can on a slightly smaller box face (the clipped feature
// outgrew its stack buffers); a disk tool welded to a mocap body, every degree of freedom held by
// equalities (a stale velocity correction was added to qvel). Each runs under ASan + UBSan in CI.
// Expected: no signal, a finite state, resting bodies at rest where the geometry puts them, and
// no energy gain without actuation beyond the stated bound.
#include <cmath>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "scene_test_util.h"

extern "C" {
#include "instance.h"
}

namespace {

const double kG = 9.81;

class SceneRegression : public cusp_test::SceneTest {
 protected:
  void Load(const std::string& xml) {
    SceneTest::Load(xml);
    mj_forward(m_, d_);
  }
  mjtNum Energy() const { return d_->energy[0] + d_->energy[1]; }
  // Steps n times and returns the largest rise of the total energy (J) over the energy before
  // the step, across all steps (energies of the state after each step, from the next forward).
  mjtNum Step(int n) {
    mjtNum worst = 0;
    for (int i = 0; i < n; i++) {
      mjtNum before = Energy();
      mj_step(m_, d_);
      mj_forward(m_, d_);
      worst = std::fmax(worst, Energy() - before);
      if (!Finite()) break;
    }
    return worst;
  }
  mjtNum BodyZ(const char* name) const {
    int b = mj_name2id(m_, mjOBJ_BODY, name);
    return d_->xpos[3 * b + 2];
  }
  mjtNum MaxSpeed() const {
    mjtNum v = 0;
    for (int i = 0; i < m_->nv; i++) v = std::fmax(v, std::fabs(d_->qvel[i]));
    return v;
  }
};

// A scene with a floor, optional static geoms, and free boxes of half size 5 cm (0.5 kg each)
// registered for patch contact. boxes: "<body ...>" elements; h = 1e-3 s, Euler.
std::string Boxes(const std::string& bodies, const std::string& names,
                  const std::string& statics = "") {
  return R"(
<mujoco>
  <option timestep="1e-3" integrator="Euler"><flag energy="enable"/></option>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value=")" + names + R"("/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>)" + statics + bodies + R"(
  </worldbody>
</mujoco>)";
}

std::string Box(const char* name, double x, double y, double z, double yaw_deg = 0) {
  char s[512];
  std::snprintf(s, sizeof(s), R"(
    <body name="%s" pos="%.9g %.9g %.9g" euler="0 0 %g"><freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="0.5" contype="0" conaffinity="0"/></body>)",
                name, x, y, z, yaw_deg);
  return s;
}

// Boxes resting on the floor side by side 5 mm apart: each face clips the other's candidates to
// nothing. Both stay at rest at z = 0.05 m (penetration tolerance 1e-6 m), no energy gain
// (tolerance 1e-9 J: round-off of a resting state).
TEST_F(SceneRegression, TwoBoxesSideBySideFiveMillimetresApart) {
  Load(Boxes(Box("a", 0, 0, 0.05) + Box("b", 0.105, 0, 0.05), "a b"));
  mjtNum gain = Step(1000);
  ASSERT_TRUE(Finite());
  EXPECT_NEAR(BodyZ("a"), 0.05, 1e-6);
  EXPECT_NEAR(BodyZ("b"), 0.05, 1e-6);
  EXPECT_LT(MaxSpeed(), 1e-6);
  EXPECT_LE(gain, 1e-9);
  EXPECT_EQ(State()[CUSP_STATE_SOLVER_FAILURES], 0);
}

// Two boxes corner to corner (each turned 45 deg about z, corners 2 mm apart).
TEST_F(SceneRegression, TwoBoxesCornerToCorner) {
  double diag = 0.05 * std::sqrt(2.0);
  Load(Boxes(Box("a", 0, 0, 0.05, 45) + Box("b", 2 * diag + 0.002, 0, 0.05, 45), "a b"));
  mjtNum gain = Step(1000);
  ASSERT_TRUE(Finite());
  EXPECT_NEAR(BodyZ("a"), 0.05, 1e-6);
  EXPECT_NEAR(BodyZ("b"), 0.05, 1e-6);
  EXPECT_LE(gain, 1e-9);
}

// A box dropped from 10 cm beside the corner of a static 20 cm block (3 mm clear of both faces):
// it falls past the corner to the floor. Energy may only fall (tolerance 1e-6 J per step).
TEST_F(SceneRegression, BoxDroppedBesideAStaticCorner) {
  Load(Boxes(Box("a", 0.153, 0.153, 0.15), "a",
             R"(<geom name="block" type="box" size="0.1 0.1 0.1" pos="0 0 0.1"/>)"));
  mjtNum gain = Step(1500);
  ASSERT_TRUE(Finite());
  EXPECT_NEAR(BodyZ("a"), 0.05, 1e-4);
  EXPECT_LE(gain, 1e-6);
}

// A pile: three boxes stacked with offsets (two on the floor 5 mm apart, one bridging them).
TEST_F(SceneRegression, PileOfThreeBoxes) {
  Load(Boxes(Box("a", 0, 0, 0.05) + Box("b", 0.105, 0, 0.05) + Box("c", 0.0525, 0, 0.1505),
             "a b c"));
  mjtNum gain = Step(1500);
  ASSERT_TRUE(Finite());
  EXPECT_NEAR(BodyZ("a"), 0.05, 1e-5);
  EXPECT_NEAR(BodyZ("b"), 0.05, 1e-5);
  EXPECT_NEAR(BodyZ("c"), 0.15, 1e-4);  // resting on both, up to the contacts' penetration
  EXPECT_LE(gain, 1e-6);
}

// One body of 16 cylinders (4 x 4, radius 1.2 cm) resting on a static box whose top face is
// slightly smaller than their footprint: the feature polygons are clipped by every face edge.
TEST_F(SceneRegression, SixteenCylindersOnASmallerBoxFace) {
  std::string geoms;
  for (int i = 0; i < 16; i++) {
    char s[256];
    std::snprintf(s, sizeof(s),
                  R"(<geom type="cylinder" size="0.012 0.01" pos="%g %g 0" mass="0.05"
                     contype="0" conaffinity="0"/>)",
                  -0.045 + 0.03 * (i % 4), -0.045 + 0.03 * (i / 4));
    geoms += s;
  }
  Load(Boxes(R"(<body name="tray" pos="0 0 0.111"><freejoint/>)" + geoms + "</body>", "tray",
             R"(<geom name="table" type="box" size="0.05 0.05 0.05" pos="0 0 0.05"/>)"));
  mjtNum gain = Step(1000);
  ASSERT_TRUE(Finite());
  EXPECT_NEAR(BodyZ("tray"), 0.11, 1e-4);  // cylinder half height 1 cm on the top at z = 0.1
  EXPECT_LE(gain, 1e-6);
}

// A convex 200-sided mesh can (radius 6 cm, height 4 cm) on a box face of half size 5.99 cm: each
// face edge cuts off exactly one vertex of the can's bottom (at 0, 90, 180, 270 deg), so every
// clip adds one point to a polygon that already fills the candidate buffer.
TEST_F(SceneRegression, TwoHundredSidedMeshCanOnASmallerBoxFace) {
  std::string vert;
  const int sides = 200;
  for (int cap = 0; cap < 2; cap++) {
    for (int i = 0; i < sides; i++) {
      char s[96];
      double a = 2 * M_PI * i / sides;
      std::snprintf(s, sizeof(s), "%.9g %.9g %g ", 0.06 * std::cos(a), 0.06 * std::sin(a),
                    cap ? 0.02 : -0.02);
      vert += s;
    }
  }
  std::string xml = R"(
<mujoco>
  <option timestep="1e-3" integrator="Euler"><flag energy="enable"/></option>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="can"/>
  </instance></plugin></extension>
  <asset><mesh name="can" vertex=")" + vert + R"("/></asset>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <geom name="table" type="box" size="0.0599 0.0599 0.05" pos="0 0 0.05"/>
    <body name="can" pos="0 0 0.121"><freejoint/>
      <geom type="mesh" mesh="can" mass="0.3" contype="0" conaffinity="0"/></body>
  </worldbody>
</mujoco>)";
  Load(xml);
  mjtNum gain = Step(1000);
  ASSERT_TRUE(Finite());
  EXPECT_NEAR(BodyZ("can"), 0.12, 1e-4);
  EXPECT_LE(gain, 1e-6);
}

// A disk tool on a body welded to a mocap body (the usual teleoperation set-up), lowered onto a
// table and moved along it: every degree of freedom is held by the weld, so the contact can
// change nothing and cusp must add nothing. The stock twin's weld alone moves the tool: the
// velocities stay those of the mocap path (<= 0.1 m/s here) and no step gains energy beyond the
// work of the weld (bounded here by m v dv = 0.2 kg x 0.1 m/s x 0.1 m/s = 2e-3 J).
TEST_F(SceneRegression, DiskToolWeldedToAMocapBodyGetsNoKick) {
  Load(R"(
<mujoco>
  <option timestep="1e-3" integrator="implicitfast"><flag energy="enable"/></option>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="disks" value="tip"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="target" mocap="true" pos="0 0 0.03"/>
    <body name="tool" pos="0 0 0.03"><freejoint/>
      <geom name="tip" type="cylinder" size="0.02 0.01" mass="0.2" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <equality><weld body1="tool" body2="target"/></equality>
</mujoco>)");
  int mocap = m_->body_mocapid[mj_name2id(m_, mjOBJ_BODY, "target")];
  mjtNum vmax = 0, gain = 0;
  for (int i = 0; i < 2000; i++) {
    double t = d_->time;
    // down 2.5 cm in 0.5 s (into the floor by 5 mm), then along x at 0.1 m/s
    d_->mocap_pos[3 * mocap + 2] = t < 0.5 ? 0.03 - 0.05 * t : 0.005;
    d_->mocap_pos[3 * mocap + 0] = t < 0.5 ? 0 : 0.1 * (t - 0.5);
    gain = std::fmax(gain, Step(1));
    vmax = std::fmax(vmax, MaxSpeed());
    ASSERT_TRUE(Finite());
  }
  std::printf("mocap tool: max speed %.4g m/s, largest one-step energy gain %.4g J\n", vmax, gain);
  EXPECT_LT(vmax, 0.3);
  EXPECT_LT(gain, 2e-3);
}

}  // namespace
