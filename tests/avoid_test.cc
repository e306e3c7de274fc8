// cusp.avoid (plugin/control/avoid.c, plugin/collide/point_distance.c): the obstacle distances against MuJoCo's
// own distance query, and one control step's increment against the separation rows it must keep.
#include <cmath>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "scene_test_util.h"

extern "C" {
#include "control/avoid.h"
#include "control/control_registry.h"
#include "control/inverse.h"
#include "collide/point_distance.h"
}

namespace {

// one small probe sphere (a mocap body, so it can be put anywhere) and one obstacle of each type
const char* kProbeScene = R"(
<mujoco>
  <worldbody>
    <geom name="plane" type="plane" size="1 1 0.1" pos="0 0 -0.3" euler="10 5 0"/>
    <geom name="sphere" type="sphere" size="0.1" pos="0.4 0 0"/>
    <geom name="capsule" type="capsule" size="0.05 0.2" pos="-0.4 0 0" euler="30 40 0"/>
    <geom name="box" type="box" size="0.1 0.2 0.05" pos="0 0.5 0" euler="0 20 70"/>
    <geom name="cylinder" type="cylinder" size="0.08 0.15" pos="0 -0.5 0" euler="60 0 20"/>
    <body name="probe" mocap="true">
      <geom name="probe" type="sphere" size="0.01" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>)";

// the probe scene's model and data (m_, d_), freed after each test
class PointDistance : public cusp_test::SceneTest {};

TEST_F(PointDistance, AgreesWithMujocoGeomDistanceOutside) {
  Load(kProbeScene);
  const mjModel* m = m_;
  mjData* d = d_;
  int probe = mj_name2id(m, mjOBJ_GEOM, "probe");
  const mjtNum r = 0.01;
  unsigned seed = 7;
  auto uniform = [&seed]() {
    seed = seed * 1103515245u + 12345u;
    return ((seed >> 8) & 0xffff) / 65535.0 * 2 - 1;
  };
  int checked = 0;
  for (int g = 0; g < m->ngeom; g++) {
    if (g == probe) continue;
    ASSERT_TRUE(cusp_point_distance_supported(m->geom_type[g]));
    for (int k = 0; k < 200; k++) {
      // probe centres around the obstacle, 0.02 - 0.3 m away from its centre's neighbourhood
      for (int i = 0; i < 3; i++) d->mocap_pos[i] = m->geom_pos[3 * g + i] + 0.35 * uniform();
      mj_forward(m, d);
      mjtNum normal[3], closest[3], fromto[6];
      const mjtNum* centre = d->geom_xpos + 3 * probe;
      mjtNum ours = cusp_point_geom_distance(normal, closest, m, d, g, centre) - r;
      mjtNum theirs = mj_geomDistance(m, d, probe, g, 1.0, fromto);
      if (theirs <= 1e-3 || theirs >= 1.0) continue;  // separated pairs: MuJoCo's query is exact
      // MuJoCo's convex pairs (capsule-box, cylinder) iterate: agree to 1e-6 m
      EXPECT_NEAR(ours, theirs, 1e-6) << mj_id2name(m, mjOBJ_GEOM, g) << " sample " << k;
      EXPECT_NEAR(mju_norm3(normal), 1, 1e-12);
      // the closest point is MuJoCo's nearest point on the obstacle
      mjtNum gap[3] = {closest[0] - fromto[3], closest[1] - fromto[4], closest[2] - fromto[5]};
      if (m->geom_type[g] != mjGEOM_PLANE) {
        EXPECT_LT(mju_norm3(gap), 1e-4);
      }
      checked++;
    }
  }
  EXPECT_GT(checked, 500);
}

TEST_F(PointDistance, InsideIsNegativeDepth) {
  Load(kProbeScene);
  const mjModel* m = m_;
  mjData* d = d_;
  mj_forward(m, d);
  mjtNum n[3], c[3];
  int box = mj_name2id(m, mjOBJ_GEOM, "box"), sphere = mj_name2id(m, mjOBJ_GEOM, "sphere");
  // the centre of a box lies its smallest half size deep; a sphere's its radius
  EXPECT_NEAR(cusp_point_geom_distance(n, c, m, d, box, d->geom_xpos + 3 * box), -0.05, 1e-12);
  mjtNum p[3] = {0.43, 0, 0};
  EXPECT_NEAR(cusp_point_geom_distance(n, c, m, d, sphere, p), -0.07, 1e-12);
  EXPECT_NEAR(n[0], 1, 1e-12);
}

class AvoidStep : public cusp_test::SceneTest {};

// At a pose where the arm's links sweep into the pole, the increment keeps every linearised
// separation row (recomputed here from the rows' definition), and the LCP's multipliers are
// complementary: a row that binds has zero slack.
TEST_F(AvoidStep, IncrementKeepsEveryRow) {
  LoadFile("avoid_arm7.xml");
  const mjModel* m = m_;
  mjData* d = d_;
  const cuspAvoid* a = (const cuspAvoid*)cusp_control_registry_find(d, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->nact, 7);
  ASSERT_EQ(a->nsphere, 20);
  // sweep towards a target behind the pole until rows are active
  d->mocap_pos[0] = 0.55;
  d->mocap_pos[1] = 0.45;
  d->mocap_pos[2] = 0.35;
  const mjtNum* state = d->plugin_state + m->plugin_stateadr[0];
  int steps = 0;
  while (state[CUSP_AVOID_STATE_ACTIVE] == 0 && steps < 3000) {
    mj_step(m, d);
    steps++;
  }
  ASSERT_GT(state[CUSP_AVOID_STATE_ACTIVE], 0) << "no active row in 3 s";
  mj_forward(m, d);
  mjtNum qref[7], dq[7];
  for (int j = 0; j < 7; j++) qref[j] = d->act[m->actuator_actadr[a->actuators[j]]];
  cuspAvoidReport rep;
  ASSERT_EQ(cusp_avoid_increment(dq, &rep, a, m, d, qref), CUSP_LCP_SOLVED);
  EXPECT_GT(rep.active, 0);
  // recompute every row: n^T J_s dq >= -min(k h, 1) (dist - clearance) (static obstacles)
  mjtNum close = mju_min(a->gain * m->opt.timestep, 1);
  mjtNum jac[3 * 64];
  ASSERT_LE(m->nv, 64);
  int rows = 0;
  for (int s = 0; s < a->nsphere; s++) {
    int site = a->spheres[s];
    for (int o = 0; o < a->nobstacle; o++) {
      mjtNum n[3], c[3];
      mjtNum dist = cusp_point_geom_distance(n, c, m, d, a->obstacles[o], d->site_xpos + 3 * site) -
                    m->site_size[3 * site];
      if (dist - a->clearance > a->influence) continue;
      rows++;
      mj_jacSite(m, d, jac, nullptr, site);
      mjtNum move = 0;  // n^T J_s dq
      for (int j = 0; j < 7; j++) {
        int v = a->dofs[j];
        move += (n[0] * jac[v] + n[1] * jac[m->nv + v] + n[2] * jac[2 * m->nv + v]) * dq[j];
      }
      // tolerance 1e-9 m: the solve's residual (1e-12) times the Ruiz scalings, plus Tikhonov
      EXPECT_GE(move, -close * (dist - a->clearance) - 1e-9) << "sphere " << s << " obstacle " << o;
    }
  }
  EXPECT_EQ(rows, rep.rows);
}

// the key tables in mjcf/README.md are the ones the plugins parse (unit, default, range, meaning)
TEST(ControlConfig, KeyTablesAreDocumentedVerbatim) {
  std::string text = cusp_test::SourceText("mjcf/README.md");
  ASSERT_FALSE(text.empty());
  static char table[16384];
  const cuspKey* tables[2] = {cusp_avoid_keys, cusp_inverse_keys};
  for (const cuspKey* keys : tables) {
    int len = cusp_keys_markdown(table, sizeof(table), keys);
    ASSERT_LT(len, (int)sizeof(table));
    EXPECT_NE(text.find(table), std::string::npos)
        << "mjcf/README.md lacks the current key table:\n" << table;
  }
}

}  // namespace
