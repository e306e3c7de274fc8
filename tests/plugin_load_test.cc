// The plugin registers, loads from C, refuses bad configuration with the key and the value, and
// steps deterministically.
#include <cstdio>
#include <cstring>
#include <string>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "scene_test_util.h"

extern "C" {
#include "config/config.h"
#include "instance.h"
}

namespace {

class PluginLoad : public cusp_test::SceneTest {};

std::string Scene(const std::string& config, const std::string& disk_flags = "contype=\"0\" conaffinity=\"0\"") {
  return "<mujoco><extension><plugin plugin=\"cusp.contact\"><instance name=\"c\">" + config +
         "</instance></plugin></extension><worldbody><geom name=\"floor\" type=\"plane\" "
         "size=\"1 1 .1\"/><body name=\"b\" pos=\"0 0 .2\"><freejoint/><geom name=\"d\" "
         "type=\"cylinder\" size=\".05 .01\" " + disk_flags + "/></body></worldbody></mujoco>";
}

TEST_F(PluginLoad, RegistersCuspContact) {
  int slot = -1;
  const mjpPlugin* p = mjp_getPlugin("cusp.contact", &slot);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(slot, 0);
  EXPECT_EQ(p->nattribute, cusp_key_count(cusp_config_keys));
  ASSERT_NE(p->advance, nullptr);
}

TEST_F(PluginLoad, ValidSceneCompilesAndSteps) {
  mjModel* m = Compile(Scene("<config key=\"disks\" value=\"d\"/><config key=\"margin\" value=\"0.01\"/>"));
  ASSERT_NE(m, nullptr) << error_;
  EXPECT_EQ(m->nplugin, 1);
  mjData* d = mj_makeData(m);
  ASSERT_NE(d, nullptr);
  for (int i = 0; i < 10; i++) mj_step(m, d);
  EXPECT_EQ(d->plugin_state[m->plugin_stateadr[0] + CUSP_STATE_STEPS], 10);
  mj_deleteData(d);
  mj_deleteModel(m);
}

struct BadCase {
  const char* config;
  const char* expect1;
  const char* expect2;
};

TEST_F(PluginLoad, BadConfigFailsNamingKeyAndValue) {
  const BadCase cases[] = {
      // unknown key: MuJoCo's compiler rejects it before the plugin sees it, naming the key
      {"<config key=\"bogus_key\" value=\"42\"/>", "bogus_key", "cusp.contact"},
      {"<config key=\"margin\" value=\"abc\"/>", "'margin'", "'abc'"},
      {"<config key=\"margin\" value=\"0.01x\"/>", "'margin'", "'0.01x'"},
      {"<config key=\"margin\" value=\"5\"/>", "'margin'", "out of range"},
      {"<config key=\"friction_directions\" value=\"2\"/>", "'friction_directions'", "'2'"},
      {"<config key=\"friction_directions\" value=\"8.5\"/>", "'friction_directions'", "'8.5'"},
      {"<config key=\"solver\" value=\"simplex\"/>", "'solver'", "'simplex'"},
      {"<config key=\"warm_start\" value=\"maybe\"/>", "'warm_start'", "'maybe'"},
      {"<config key=\"disks\" value=\"d nope\"/>", "'disks'", "no geom named 'nope'"},
      {"<config key=\"environment\" value=\"flor\"/>", "'environment'", "'flor'"},
      {"<config key=\"bodies\" value=\"ghost\"/>", "'bodies'", "no body named 'ghost'"},
      {"<config key=\"limit_surface\" value=\"b:1,1\"/>", "'limit_surface'", "'b:1,1'"},
      {"<config key=\"tolerance\" value=\"nan\"/>", "'tolerance'", "'nan'"},
      {"<config key=\"friction\" value=\"-0.5\"/>", "'friction'", "-0.5"},
  };
  for (const BadCase& c : cases) {
    mjModel* m = Compile(Scene(c.config));
    EXPECT_EQ(m, nullptr) << c.config;
    if (m) mj_deleteModel(m);
    std::string all = error_ + WarningText();
    EXPECT_NE(all.find(c.expect1), std::string::npos) << c.config << " -> " << all;
    EXPECT_NE(all.find(c.expect2), std::string::npos) << c.config << " -> " << all;
  }
}

TEST_F(PluginLoad, RefusesRegisteredGeomThatMuJoCoAlsoCollides) {
  mjModel* m = Compile(Scene("<config key=\"disks\" value=\"d\"/>", ""));
  EXPECT_EQ(m, nullptr);
  std::string all = error_ + WarningText();
  EXPECT_NE(all.find("contype=1"), std::string::npos) << all;
  EXPECT_NE(all.find("'disks'"), std::string::npos) << all;
}

TEST_F(PluginLoad, RefusesNonCylinderDisk) {
  std::string xml = Scene("<config key=\"disks\" value=\"floor\"/>");
  mjModel* m = Compile(xml);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE((error_ + WarningText()).find("not a cylinder"), std::string::npos);
}

TEST_F(PluginLoad, OverrideIsValidatedLikeMjcf) {
  char err[512];
  EXPECT_EQ(cusp_config_override_set("no_such_key", "1", err, sizeof(err)), -1);
  EXPECT_NE(std::string(err).find("no_such_key"), std::string::npos);
  ASSERT_EQ(cusp_config_override_set("margin", "-3", err, sizeof(err)), 0);
  mjModel* m = Compile(Scene("<config key=\"disks\" value=\"d\"/>"));
  EXPECT_EQ(m, nullptr);
  EXPECT_NE((error_ + WarningText()).find("'-3'"), std::string::npos);
  cusp_config_override_clear();
}

TEST_F(PluginLoad, VersionMismatchNamesBothVersions) {
  char msg[512];
  EXPECT_EQ(cusp_check_version(mjVERSION_HEADER, mjVERSION_HEADER, msg, sizeof(msg)), 0);
  EXPECT_EQ(cusp_check_version(3017000, 4000000, msg, sizeof(msg)), -1);
  EXPECT_NE(std::string(msg).find("3017000"), std::string::npos);
  EXPECT_NE(std::string(msg).find("4000000"), std::string::npos);
  // the library we run against is the one we built with
  EXPECT_EQ(mj_version(), mjVERSION_HEADER);
}

TEST_F(PluginLoad, DeterministicTrajectory) {
  std::string path = std::string(CUSP_SOURCE_DIR) + "/mjcf/disk_drop.xml";
  char err[1024];
  mjtNum* qpos[2];
  int nq = 0;
  for (int run = 0; run < 2; run++) {
    mjModel* m = mj_loadXML(path.c_str(), nullptr, err, sizeof(err));
    ASSERT_NE(m, nullptr) << err;
    mjData* d = mj_makeData(m);
    d->qvel[3] = 0.7;  // a spin, so rotations matter
    for (int i = 0; i < 500; i++) mj_step(m, d);
    nq = m->nq;
    qpos[run] = new mjtNum[nq];
    std::memcpy(qpos[run], d->qpos, nq * sizeof(mjtNum));
    mj_deleteData(d);
    mj_deleteModel(m);
  }
  EXPECT_EQ(std::memcmp(qpos[0], qpos[1], nq * sizeof(mjtNum)), 0);
  delete[] qpos[0];
  delete[] qpos[1];
}

TEST_F(PluginLoad, ConfigTableIsDocumented) {
  // every key appears in mjcf/README.md with its default
  std::string text = cusp_test::SourceText("mjcf/README.md");
  ASSERT_FALSE(text.empty());
  for (const cuspKey* k = cusp_config_keys; k->key; k++) {
    std::string row = std::string("| `") + k->key + "` |";
    size_t at = text.find(row);
    ASSERT_NE(at, std::string::npos) << k->key << " missing from mjcf/README.md";
    std::string line = text.substr(at, text.find('\n', at) - at);
    if (k->default_value[0]) {
      EXPECT_NE(line.find(std::string("`") + k->default_value + "`"), std::string::npos)
          << k->key;
    }
  }
}

}  // namespace
