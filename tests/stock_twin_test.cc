// --stock really removes the plugin and turns collisions on: inspect the compiled twin.
#include <string>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

extern "C" {
#include "cli/stock_twin.h"
}

namespace {

TEST(StockTwin, RemovesPluginAndEnablesRegisteredGeoms) {
  mj_loadPluginLibrary(CUSP_PLUGIN_PATH);
  std::string path = std::string(CUSP_SOURCE_DIR) + "/mjcf/disk_drop.xml";
  char err[1024];
  mjSpec* spec = mj_parseXML(path.c_str(), nullptr, err, sizeof(err));
  ASSERT_NE(spec, nullptr) << err;
  mjModel* original = mj_compile(spec, nullptr);
  ASSERT_NE(original, nullptr);
  EXPECT_EQ(original->nplugin, 1);
  int a = mj_name2id(original, mjOBJ_GEOM, "disk_a");
  int rod = mj_name2id(original, mjOBJ_GEOM, "rod");
  EXPECT_EQ(original->geom_contype[a], 0);

  ASSERT_EQ(cusp_stock_twin(spec, err, sizeof(err)), 2) << err;
  mjModel* twin = mj_compile(spec, nullptr);
  ASSERT_NE(twin, nullptr) << mjs_getError(spec);
  EXPECT_EQ(twin->nplugin, 0);
  EXPECT_EQ(cusp_find_instance(twin), -1);
  EXPECT_EQ(twin->ngeom, original->ngeom);
  for (const char* name : {"disk_a", "disk_b"}) {
    int g = mj_name2id(twin, mjOBJ_GEOM, name);
    EXPECT_EQ(twin->geom_contype[g], 1) << name;
    EXPECT_EQ(twin->geom_conaffinity[g], 1) << name;
  }
  EXPECT_EQ(twin->geom_contype[rod], 0);  // not registered: left alone

  // and the twin collides: dropped, the disks come to rest on the floor
  mjData* d = mj_makeData(twin);
  for (int i = 0; i < 1000; i++) mj_step(twin, d);
  EXPECT_GT(d->ncon, 0);
  EXPECT_NEAR(d->qpos[2], 0.005, 0.002);  // disks lie flat: centre at half thickness
  mj_deleteData(d);
  mj_deleteModel(twin);
  mj_deleteModel(original);
  mj_deleteSpec(spec);
}

}  // namespace
