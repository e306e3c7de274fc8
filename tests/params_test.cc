// Contact parameter tables (plugin/config/params.c): the disk-disk touch rule, counted along the
// kinematic tree, on a hand-built tree whose answers are counted by hand below.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cstring>
#include <string>

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

}  // namespace
