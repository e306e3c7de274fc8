// The controllers' shared plugin piece (control/control_plugin.h), through a controller of the
// test's own registered beside cusp.avoid and cusp.inverse: its keys are its attributes, each
// mjData owns one object (built at init, rebuilt for a byte copy, freed with the mjData), reset
// zeroes its state, advance counts the steps and the failed ones, and the first failure of each
// object warns once.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "control/control_plugin.h"
}

#include "scene_test_util.h"

namespace {

enum { SLOT_STARTED = 0, SLOT_STEPS, SLOT_FAILURES, SLOT_STATUS, SLOT_LAST_FAILED, NSLOT };

struct Probe {
  mjtNum force;  // N, what compute writes
  int fail;      // 1: every step fails
};

int g_live = 0;  // Probe objects alive

const cuspKey kProbeKeys[] = {
  {"force", CUSP_KEY_REAL, "2", -10, 10, nullptr, "N", "actuator force", 0,
   CUSP_FIELD(Probe, force), nullptr},
  {"fail", CUSP_KEY_BOOL, "false", 0, 0, nullptr, "-", "every step fails", 0,
   CUSP_FIELD(Probe, fail), nullptr},
  {nullptr, CUSP_KEY_REAL, nullptr, 0, 0, nullptr, nullptr, nullptr, 0, CUSP_NO_FIELD, nullptr},
};

void* ProbeCreate(const mjModel* m, int instance, char* err, int err_sz) {
  Probe* p = static_cast<Probe*>(std::calloc(1, sizeof(Probe)));
  cuspKeyTable table = {"test.probe", kProbeKeys, nullptr};
  if (cusp_keys_parse(p, &table, m, instance, err, err_sz)) {
    std::free(p);
    return nullptr;
  }
  g_live++;
  return p;
}

void ProbeFree(void* object) {
  g_live--;
  std::free(object);
}

void ProbeCompute(void* object, const mjModel* m, mjData* d, int instance) {
  const Probe* p = static_cast<const Probe*>(object);
  d->actuator_force[0] = p->force;
  mjtNum* state = d->plugin_state + m->plugin_stateadr[instance];
  state[SLOT_STATUS] = p->fail ? 3 : 0;
  state[SLOT_LAST_FAILED] = p->fail;
}

const cuspControlPlugin kProbe = {
  "test.probe", kProbeKeys, NSLOT, ProbeCreate, ProbeFree,
  SLOT_STARTED, SLOT_STEPS, SLOT_FAILURES, SLOT_STATUS, SLOT_LAST_FAILED,
  "probe LCP", "nothing held", ProbeCompute, nullptr,
};

std::string Scene(const char* fail) {
  return std::string(R"(<mujoco>
  <extension><plugin plugin="test.probe"><instance name="probe">
    <config key="fail" value=")") + fail + R"("/>
  </instance></plugin></extension>
  <worldbody><body><joint name="slide" type="slide"/><geom size="0.1" mass="1"/></body></worldbody>
  <actuator><plugin name="push" joint="slide" instance="probe"/></actuator>
</mujoco>)";
}

class ControlPlugin : public cusp_test::SceneTest {
 protected:
  static void SetUpTestSuite() {
    SceneTest::SetUpTestSuite();
    cusp_control_plugin_register(&kProbe);
  }
};

TEST_F(ControlPlugin, DeclaresItsKeysAndOwnsOneObjectPerData) {
  int slot = -1;
  const mjpPlugin* plugin = mjp_getPlugin("test.probe", &slot);
  ASSERT_NE(plugin, nullptr);
  ASSERT_EQ(plugin->nattribute, 2);
  EXPECT_STREQ(plugin->attributes[0], "force");
  EXPECT_STREQ(plugin->attributes[1], "fail");
  EXPECT_EQ(plugin->capabilityflags, mjPLUGIN_ACTUATOR);

  std::string err;
  mjModel* m = cusp_test::CompileXml(Scene("false"), &err);
  ASSERT_NE(m, nullptr) << err;
  EXPECT_EQ(m->npluginstate, NSLOT);
  int live = g_live;
  mjData* d = mj_makeData(m);
  EXPECT_EQ(g_live, live + 1);
  const Probe* p = static_cast<const Probe*>(cusp_control_registry_find(d, 0));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->force, 2);  // the key's default
  for (int i = 0; i < 5; i++) mj_step(m, d);
  const mjtNum* state = d->plugin_state;
  EXPECT_EQ(state[SLOT_STARTED], 1);
  EXPECT_EQ(state[SLOT_STEPS], 5);
  EXPECT_EQ(state[SLOT_FAILURES], 0);
  EXPECT_EQ(d->actuator_force[0], 2);
  EXPECT_TRUE(Warnings().empty());

  // a byte copy of mjData (no init ran for it) gets an object of its own at its first callback
  mjData* copy = mj_makeData(m);
  EXPECT_EQ(g_live, live + 2);
  cusp_control_registry_remove(copy, 0);  // as if init had not run
  EXPECT_EQ(g_live, live + 1);
  copy->plugin_data[0] = d->plugin_data[0];  // what a pickle carries
  mj_step(m, copy);
  EXPECT_EQ(g_live, live + 2);
  EXPECT_NE(cusp_control_registry_find(copy, 0), cusp_control_registry_find(d, 0));
  EXPECT_EQ(copy->plugin_data[0], (uintptr_t)cusp_control_registry_find(copy, 0));

  mj_resetData(m, d);  // reset zeroes every slot
  for (int s = 0; s < NSLOT; s++) EXPECT_EQ(d->plugin_state[s], 0) << "slot " << s;
  mj_deleteData(copy);
  mj_deleteData(d);
  EXPECT_EQ(g_live, live);
  mj_deleteModel(m);
}

TEST_F(ControlPlugin, FailedStepsAreCountedAndWarnOncePerObject) {
  std::string err;
  mjModel* m = cusp_test::CompileXml(Scene("true"), &err);
  ASSERT_NE(m, nullptr) << err;
  mjData* d = mj_makeData(m);
  for (int i = 0; i < 4; i++) mj_step(m, d);
  EXPECT_EQ(d->plugin_state[SLOT_STEPS], 4);
  EXPECT_EQ(d->plugin_state[SLOT_FAILURES], 4);
  ASSERT_EQ(Warnings().size(), 1u);
  EXPECT_NE(Warnings()[0].find("test.probe: probe LCP failed at t = "),
            std::string::npos) << Warnings()[0];
  EXPECT_NE(Warnings()[0].find("); nothing held; counted in the failures slot, further failures "
                               "of this instance are not reported"),
            std::string::npos) << Warnings()[0];
  mjData* other = mj_makeData(m);  // another object: its own one warning
  mj_step(m, other);
  mj_step(m, other);
  EXPECT_EQ(Warnings().size(), 2u);
  mj_deleteData(other);
  mj_deleteData(d);
  mj_deleteModel(m);
}

TEST_F(ControlPlugin, BadValueFailsTheLoadWithTheKeysMessage) {
  mjModel* m = Compile(Scene("maybe"));
  EXPECT_EQ(m, nullptr);
  if (m) mj_deleteModel(m);
  std::string all = error_ + "\n" + WarningText();
  EXPECT_NE(all.find("test.probe: config key 'fail' has value 'maybe': expected true or false; "
                     "write one of them"),
            std::string::npos) << all;
}

}  // namespace
