// Ownership of the per-mjData instance (plugin/instance.h): d->plugin_data is a raw
// pointer that copies of an mjData carry as bytes. mj_copyData gives the copy its own instance with
// the source's history (both then step bitwise alike); a plugin_data overwritten with another
// mjData's pointer (what Python's unpickling does) or with garbage is repaired, never read, never
// freed. Under ASan a read through or a free of a foreign pointer is a failure.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "scene_test_util.h"

extern "C" {
#include "instance.h"
}

namespace {

// two disks on a carrier resting on a floor, and a registered box: both paths warm-started
const char* kXml = R"(
<mujoco>
  <option timestep="1e-3" integrator="implicitfast"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="disks" value="disk_a disk_b"/>
    <config key="bodies" value="box"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="carrier" pos="0 0 0.032">
      <freejoint/>
      <geom type="capsule" fromto="-0.1 0 0 0.1 0 0" size="0.01" mass="0.2" contype="0"
            conaffinity="0"/>
      <geom name="disk_a" type="cylinder" pos="-0.1 0 0" size="0.03 0.005" mass="0.1"
            contype="0" conaffinity="0" euler="90 0 0"/>
      <geom name="disk_b" type="cylinder" pos="0.1 0 0" size="0.03 0.005" mass="0.1"
            contype="0" conaffinity="0" euler="90 0 0"/>
    </body>
    <body name="box" pos="0.4 0 0.05">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="0.5" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>)";

class Instance : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { mj_loadPluginLibrary(CUSP_PLUGIN_PATH); }
  void SetUp() override {
    std::string err;
    m_ = cusp_test::CompileXml(kXml, &err);
    ASSERT_NE(m_, nullptr) << err;
    base_ = cusp_instance_count();
    d_ = mj_makeData(m_);
    ASSERT_NE(d_, nullptr);
    for (int i = 0; i < 300; i++) mj_step(m_, d_);  // settled, in contact, warm-started
    ASSERT_GT(d_->plugin_state[m_->plugin_stateadr[0] + CUSP_STATE_NCONTACT], 0);
  }
  void TearDown() override {
    if (d_) mj_deleteData(d_);
    if (m_) mj_deleteModel(m_);
    EXPECT_EQ(cusp_instance_count(), base_);  // nothing leaked, nothing freed twice
  }
  std::vector<mjtNum> State(const mjData* d) const {
    std::vector<mjtNum> s(d->qpos, d->qpos + m_->nq);
    s.insert(s.end(), d->qvel, d->qvel + m_->nv);
    s.insert(s.end(), d->plugin_state, d->plugin_state + m_->npluginstate);
    return s;
  }
  mjModel* m_ = nullptr;
  mjData* d_ = nullptr;
  int base_ = 0;
};

TEST_F(Instance, CopyDataOwnsItsInstanceAndStepsBitwiseAlike) {
  mjData* c = mj_copyData(nullptr, m_, d_);
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->plugin_data[0], d_->plugin_data[0]);
  EXPECT_EQ(cusp_instance_count(), base_ + 2);
  for (int i = 0; i < 200; i++) {
    mj_step(m_, d_);
    mj_step(m_, c);
    ASSERT_EQ(State(d_), State(c)) << "step " << i;
  }
  mj_deleteData(c);
}

TEST_F(Instance, CopyDataIntoAnExistingDataKeepsItsOwnInstance) {
  mjData* c = mj_makeData(m_);
  mj_step(m_, c);
  uintptr_t own = c->plugin_data[0];
  mj_copyData(c, m_, d_);
  EXPECT_EQ(c->plugin_data[0], own);
  for (int i = 0; i < 100; i++) {
    mj_step(m_, d_);
    mj_step(m_, c);
  }
  EXPECT_EQ(State(d_), State(c));
  mj_deleteData(c);
}

// What Python's unpickling does: a fresh mjData, then every array, plugin_data included, written
// over from the bytes of another mjData.
TEST_F(Instance, PluginDataOfAnotherDataIsRepairedNotShared) {
  mjData* c = mj_makeData(m_);
  mj_copyData(c, m_, d_);
  std::memcpy(c->plugin_data, d_->plugin_data, sizeof(uintptr_t) * m_->nplugin);
  mj_step(m_, c);  // steps with its own instance
  EXPECT_NE(c->plugin_data[0], d_->plugin_data[0]);
  std::memcpy(c->plugin_data, d_->plugin_data, sizeof(uintptr_t) * m_->nplugin);
  mj_resetData(m_, c);  // the reset callback must not reset d_'s instance
  mj_deleteData(c);     // nor destroy it
  for (int i = 0; i < 10; i++) mj_step(m_, d_);
  EXPECT_GT(d_->plugin_state[m_->plugin_stateadr[0] + CUSP_STATE_STEPS], 300);
}

// A pointer from another process: never dereferenced (ASan would report it), repaired at the
// first callback, and the data steps like a copy that starts cold.
TEST_F(Instance, ForeignPointerIsNeverRead) {
  mjData* c = mj_makeData(m_);
  mj_copyData(c, m_, d_);
  uintptr_t garbage = (uintptr_t)0x5eadbeef0;
  c->plugin_data[0] = garbage;
  mjvScene scn;
  mjv_defaultScene(&scn);
  mjv_makeScene(m_, &scn, 100);
  mjvOption opt;
  mjv_defaultOption(&opt);
  mjvCamera cam;
  mjv_defaultCamera(&cam);
  mjv_updateScene(m_, c, &opt, nullptr, &cam, mjCAT_ALL, &scn);  // visualize
  EXPECT_NE(c->plugin_data[0], garbage);
  c->plugin_data[0] = garbage;
  mj_forward(m_, c);  // compute (sensors)
  c->plugin_data[0] = garbage;
  for (int i = 0; i < 50; i++) mj_step(m_, c);
  for (int i = 0; i < m_->nq; i++) EXPECT_TRUE(std::isfinite(c->qpos[i]));
  c->plugin_data[0] = garbage;
  mj_resetData(m_, c);
  c->plugin_data[0] = garbage;
  mjv_freeScene(&scn);
  mj_deleteData(c);
}

// an mjData whose instance was never made (or was destroyed) gets one built from the model
TEST_F(Instance, MissingInstanceIsRebuilt) {
  mjData* c = mj_makeData(m_);
  uintptr_t before = c->plugin_data[0];
  cusp_instance_destroy(c, 0);
  EXPECT_EQ(c->plugin_data[0], 0u);
  EXPECT_EQ(cusp_instance_find(c, 0), nullptr);
  mj_step(m_, c);
  EXPECT_NE(cusp_instance_find(c, 0), nullptr);
  EXPECT_EQ(c->plugin_data[0], (uintptr_t)cusp_instance_find(c, 0));
  (void)before;
  mj_deleteData(c);
}

}  // namespace
