// Contact parameter tables (plugin/config/params.c): the disk-disk touch rule, counted along the
// kinematic tree, on a hand-built tree whose answers are counted by hand below; the pair table
// (condim, friction, torsion of every pair a registered geom makes) against MuJoCo's own contacts
// (mj_collision's mj_contactParam, an independent computation) and the limit surface of a body.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scene_test_util.h"

extern "C" {
#include "config/config.h"
#include "config/params.h"
}

namespace {

// world - mount (no disk) - a0 - a1 (two disks) - frame (no disk) - a2 - a3
//               mount - b0                      (a branch beside a0)
// world - r0                                    (another robot)
const char* kTree = R"(
<mujoco><worldbody>
  <body name="mount">
    <body name="a0"><joint type="hinge"/><geom name="a0" type="cylinder" size="0.03 0.005"
        contype="0" conaffinity="0"/>
      <body name="a1" pos="0 0 0.02"><joint type="hinge"/>
        <geom name="a1" type="cylinder" size="0.03 0.005" contype="0" conaffinity="0"/>
        <geom name="a1b" type="cylinder" size="0.03 0.005" pos="0 0 0.001" contype="0"
              conaffinity="0"/>
        <body name="frame" pos="0 0 0.02"><joint type="hinge"/>
          <geom type="sphere" size="0.001" contype="0" conaffinity="0"/>
          <body name="a2" pos="0 0 0.02"><joint type="hinge"/>
            <geom name="a2" type="cylinder" size="0.03 0.005" contype="0" conaffinity="0"/>
            <body name="a3" pos="0 0 0.02"><joint type="hinge"/>
              <geom name="a3" type="cylinder" size="0.03 0.005" contype="0" conaffinity="0"/>
            </body>
          </body>
        </body>
      </body>
    </body>
    <body name="b0" pos="0.1 0 0"><joint type="hinge"/>
      <geom name="b0" type="cylinder" size="0.03 0.005" contype="0" conaffinity="0"/></body>
  </body>
  <body name="r0" pos="1 0 0"><freejoint/>
    <geom name="r0" type="cylinder" size="0.03 0.005" contype="0" conaffinity="0"/></body>
</worldbody></mujoco>)";

class DiskTouchRule : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    m_ = cusp_test::CompileXml(kTree, &err);
    ASSERT_NE(m_, nullptr) << err;
    const char* names[] = {"a0", "a1", "a1b", "a2", "a3", "b0", "r0"};
    for (int i = 0; i < 7; i++) disks_[i] = mj_name2id(m_, mjOBJ_GEOM, names[i]);
  }
  void TearDown() override {
    cusp_params_free(&p_);
    mj_deleteModel(m_);
  }
  void Init(int neighbours) {
    cusp_params_free(&p_);
    cuspConfig cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.disk_geoms = disks_;
    cfg.ndisk = 7;
    cfg.self_contact_neighbours = neighbours;
    ASSERT_EQ(cusp_params_init(&p_, &cfg, m_), 0);
  }
  int Body(const char* name) { return mj_name2id(m_, mjOBJ_BODY, name); }
  int Geom(const char* name) { return mj_name2id(m_, mjOBJ_GEOM, name); }
  int Apart(const char* a, const char* b) { return cusp_disks_apart(&p_, m_, Body(a), Body(b)); }
  int Touch(const char* a, const char* b) { return cusp_touches(&p_, m_, Geom(a), Geom(b)); }
  mjModel* m_ = nullptr;
  cuspParams p_ = {};
  int disks_[7];
};

TEST_F(DiskTouchRule, DisksApartCountDiskBodiesAlongTheTree) {
  Init(1);
  EXPECT_EQ(Apart("a0", "a1"), 1);  // parent and child
  EXPECT_EQ(Apart("a1", "a0"), 1);  // symmetric
  EXPECT_EQ(Apart("a0", "a2"), 2);  // the frame between carries no disk
  EXPECT_EQ(Apart("a1", "a3"), 2);
  EXPECT_EQ(Apart("a0", "b0"), 1);  // siblings under a mount without a disk
  EXPECT_EQ(Apart("a3", "b0"), 4);  // a3 a2 a1 a0 | b0: down one branch, up the other
  EXPECT_EQ(Apart("a1", "a1"), 0);
  EXPECT_EQ(Apart("a0", "r0"), -1);  // another robot
}

TEST_F(DiskTouchRule, NeighboursSetWhichDisksOfOneRobotTouch) {
  Init(1);
  EXPECT_FALSE(Touch("a0", "a1"));   // 1 apart: neighbours
  EXPECT_TRUE(Touch("a0", "a2"));    // 2 apart
  EXPECT_FALSE(Touch("a1", "a1b"));  // one body
  EXPECT_TRUE(Touch("a0", "r0"));    // other robot
  Init(3);
  EXPECT_FALSE(Touch("a1", "a3"));
  EXPECT_TRUE(Touch("a3", "b0"));  // 4 apart
  Init(-1);                        // self-contact off
  EXPECT_FALSE(Touch("a3", "b0"));
  EXPECT_TRUE(Touch("r0", "a3"));  // robots still touch each other
}

TEST_F(DiskTouchRule, OnlyADiskTouchesADisk) {
  Init(0);
  int sphere = -1;
  for (int g = 0; g < m_->ngeom; g++) {
    if (m_->geom_type[g] == mjGEOM_SPHERE) sphere = g;
  }
  ASSERT_GE(sphere, 0);
  // a non-registered geom does not touch a disk by this rule (the disk's side detects the pair)
  EXPECT_FALSE(cusp_touches(&p_, m_, sphere, Geom("a0")));
}

// Spheres of five free bodies at one place over a floor, every geom collided by MuJoCo (contype
// and conaffinity 1), so that mj_forward makes a contact for every pair, each with the condim and
// friction MuJoCo combines for it: equal priorities (the larger of each), priorities (the higher
// alone), solmix (no part in the friction), condim 1, 3, 4 and 6, and a registered disk. The
// friction triples differ in every coefficient so that a wrong pick shows.
const char* kPairs = R"(
<mujoco><worldbody>
  <geom name="floor" type="plane" size="1 1 0.1" friction="0.6 0.004 0.0002" solmix="0.01"/>
  <geom name="wall" type="box" size="0.05 0.05 0.05" pos="0 0 0.05" friction="0.35 0.05 0.001"
        priority="1" condim="4"/>
  <body name="a" pos="0 0 0.05"><freejoint/>
    <geom name="a" type="sphere" size="0.06" friction="0.3 0.01 0.001" condim="4"/></body>
  <body name="b" pos="0 0 0.05"><freejoint/>
    <geom name="b" type="sphere" size="0.06" friction="0.5 0.02 0.003" condim="1"
          priority="1"/></body>
  <body name="c" pos="0 0 0.05"><freejoint/>
    <geom name="c" type="sphere" size="0.06" friction="0.8 0.003 0.0001" solmix="100"/></body>
  <body name="d" pos="0 0 0.05"><freejoint/>
    <geom name="d" type="sphere" size="0.06" friction="0.2 0.03 0.004" condim="4"
          priority="2"/>
    <geom name="d2" type="sphere" size="0.05" pos="0 0 -0.01" friction="0.7 0.001 0.002"
          condim="3"/></body>
  <body name="e" pos="0 0 0.05"><freejoint/>
    <geom name="e" type="sphere" size="0.06" friction="0.4 0.02 0.01" condim="6"/></body>
  <body name="arm" pos="0 0 0.05"><freejoint/>
    <geom name="disk" type="cylinder" size="0.06 0.005" euler="90 0 0"
          friction="0.45 0.015 0.002" condim="4"/></body>
</worldbody></mujoco>)";

class PairTable : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    m_ = cusp_test::CompileXml(kPairs, &err);
    ASSERT_NE(m_, nullptr) << err;
    d_ = mj_makeData(m_);
    disk_ = mj_name2id(m_, mjOBJ_GEOM, "disk");
    const char* bodies[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++) bodies_[i] = mj_name2id(m_, mjOBJ_BODY, bodies[i]);
    adr_[0] = 0;
    for (int i = 0; i < 5; i++) {
      adr_[i + 1] = adr_[i];
      for (int g = 0; g < m_->ngeom; g++) {
        if (m_->geom_bodyid[g] == bodies_[i]) geoms_[adr_[i + 1]++] = g;
      }
    }
  }
  void TearDown() override {
    cusp_params_free(&p_);
    mj_deleteData(d_);
    mj_deleteModel(m_);
  }
  // the tables for disk `disk` and bodies a..e, the `friction` key `friction` (< 0: unset),
  // `limit_surface` entries `ls`
  void Init(mjtNum friction, std::vector<cuspLimitSurfaceOverride> ls = {}) {
    cusp_params_free(&p_);
    cuspConfig cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.disk_geoms = &disk_;
    cfg.ndisk = 1;
    cfg.patch_bodies = bodies_;
    cfg.npatch_body = 5;
    cfg.object_geomadr = adr_;
    cfg.object_geom = geoms_;
    cfg.friction = friction;
    cfg.self_contact_neighbours = -1;
    cfg.limit_surface = ls.data();
    cfg.nlimit_surface = (int)ls.size();
    ASSERT_EQ(cusp_params_init(&p_, &cfg, m_), 0);
  }
  // every registered pair of MuJoCo's contacts checked against the table (either order); the
  // number of distinct geom pairs checked
  int CheckAgainstMujoco(mjtNum friction) {
    mj_forward(m_, d_);
    std::set<std::pair<int, int>> pairs;
    for (int i = 0; i < d_->ncon; i++) {
      const mjContact& c = d_->contact[i];
      int g1 = c.geom[0], g2 = c.geom[1];
      bool registered = p_.disk_of_geom[g1] >= 0 || p_.object_of_geom[g1] >= 0 ||
                        p_.disk_of_geom[g2] >= 0 || p_.object_of_geom[g2] >= 0;
      if (!registered) continue;
      pairs.insert({std::min(g1, g2), std::max(g1, g2)});
      // MuJoCo's contact: dim, friction (slide, slide, spin, roll, roll); cusp's rule on it
      mjtNum mu = c.dim == 1 ? 0 : friction >= 0 ? friction : c.friction[0];
      mjtNum torsion = c.dim >= 4 && mu > 0 ? c.friction[2] : 0;
      std::string what = std::string(mj_id2name(m_, mjOBJ_GEOM, g1)) + "-" +
                         mj_id2name(m_, mjOBJ_GEOM, g2);
      for (int k = 0; k < 2; k++) {
        int s = k ? g2 : g1, o = k ? g1 : g2;
        // bitwise: both pick one geom's coefficient, neither computes
        EXPECT_EQ(cusp_pair_condim(&p_, s, o), c.dim) << what;
        EXPECT_EQ(cusp_pair_friction(&p_, s, o), mu) << what;
        EXPECT_EQ(cusp_pair_torsion(&p_, s, o), torsion) << what;
      }
    }
    return (int)pairs.size();
  }
  mjModel* m_ = nullptr;
  mjData* d_ = nullptr;
  cuspParams p_ = {};
  int disk_ = -1, bodies_[5], adr_[6], geoms_[8];
};

// 7 registered geoms (a, b, c, d, d2, e, disk) pair with each other (21 pairs but d-d2, one
// body: 20) and with the floor and the wall (14): 34 pairs
const int kRegisteredPairs = 34;

TEST_F(PairTable, IsMujocosCombinationOfEveryPair) {
  Init(-1);
  EXPECT_EQ(CheckAgainstMujoco(-1), kRegisteredPairs);
  // classes: every registered geom differs (7 rows), floor and wall 2 more columns
  EXPECT_EQ(p_.npair_row, 7);
  EXPECT_EQ(p_.npair_class, 9);
}

TEST_F(PairTable, FrictionKeyOverridesAllButFrictionlessPairs) {
  Init(0.45);
  EXPECT_EQ(CheckAgainstMujoco(0.45), kRegisteredPairs);
  // b has condim 1 and the highest priority but d's: frictionless with all but d
  int b = mj_name2id(m_, mjOBJ_GEOM, "b"), d = mj_name2id(m_, mjOBJ_GEOM, "d");
  EXPECT_EQ(cusp_pair_friction(&p_, b, disk_), 0);
  EXPECT_EQ(cusp_pair_friction(&p_, b, d), 0.45);
  EXPECT_EQ(cusp_pair_torsion(&p_, b, d), 0.03);  // d's condim 4 and torsion
}

TEST_F(PairTable, FrictionKeyZeroLeavesNoTorsion) {
  // torsion needs sliding friction (MuJoCo's elliptic cone scales both by the normal force)
  Init(0);
  EXPECT_EQ(CheckAgainstMujoco(0), kRegisteredPairs);
  int a = mj_name2id(m_, mjOBJ_GEOM, "a");
  EXPECT_EQ(cusp_pair_condim(&p_, a, disk_), 4);
  EXPECT_EQ(cusp_pair_torsion(&p_, a, disk_), 0);
}

TEST_F(PairTable, GeomsOfEqualParametersShareAClass) {
  // the same scene with c's friction and condim made a's: one row fewer, the same answers
  int a = mj_name2id(m_, mjOBJ_GEOM, "a"), c = mj_name2id(m_, mjOBJ_GEOM, "c");
  for (int k = 0; k < 3; k++) m_->geom_friction[3 * c + k] = m_->geom_friction[3 * a + k];
  m_->geom_condim[c] = m_->geom_condim[a];
  Init(-1);
  EXPECT_EQ(p_.npair_row, 6);
  EXPECT_EQ(p_.pair_class[a], p_.pair_class[c]);
  EXPECT_EQ(CheckAgainstMujoco(-1), kRegisteredPairs);
}

TEST_F(PairTable, LimitSurfaceIsTheKeysWhereItGivesOneElseTheDefault) {
  Init(-1, {{bodies_[1], {0.5, 0, 0.03}}, {bodies_[3], {0, 2, 0}}});
  mjtNum e[3];
  cusp_limit_surface(e, &p_, bodies_[1], 0.02);
  EXPECT_EQ(e[0], 0.5);
  EXPECT_EQ(e[1], 1);
  EXPECT_EQ(e[2], 0.03);
  cusp_limit_surface(e, &p_, bodies_[3], 0.02);
  EXPECT_EQ(e[0], 1);
  EXPECT_EQ(e[1], 2);
  EXPECT_EQ(e[2], 0.02);  // er from the patch
  cusp_limit_surface(e, &p_, bodies_[0], 1e-5);
  EXPECT_EQ(e[0], 1);
  EXPECT_EQ(e[1], 1);
  EXPECT_EQ(e[2], CUSP_ER_MIN);  // a corner's er raised to the least
}

// A registered geom of condim 6 (rolling friction, which cusp's rows do not have) that touches
// something is refused at load, naming the geom and the key
TEST(PairTableRefusal, Condim6IsRefusedNamingTheGeom) {
  mj_loadPluginLibrary(CUSP_PLUGIN_PATH);
  const char* xml = R"(
<mujoco>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="ball"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="ball" pos="0 0 0.05"><freejoint/>
      <geom name="ball" type="sphere" size="0.05" condim="6" contype="0" conaffinity="0"/></body>
  </worldbody>
</mujoco>)";
  std::string err;
  mjModel* m = cusp_test::CompileXml(xml, &err);
  if (m) mj_deleteModel(m);
  ASSERT_EQ(m, nullptr);
  EXPECT_NE(err.find("'bodies'"), std::string::npos) << err;
  EXPECT_NE(err.find("geom 'ball' has condim 6"), std::string::npos) << err;
  EXPECT_NE(err.find("set condim"), std::string::npos) << err;
}

}  // namespace
