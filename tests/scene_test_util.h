// Shared by the plugin tests: compiling a scene, and the fixture that loads the plugin library,
// captures MuJoCo's warnings and owns one model and data per test.
#ifndef CUSP_TESTS_SCENE_TEST_UTIL_H_
#define CUSP_TESTS_SCENE_TEST_UTIL_H_

#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

extern "C" {
#include "cli/stock_twin.h"
#include "config/config.h"
}

namespace cusp_test {

// Compiles xml (its stock twin with `stock`); on failure returns nullptr and the parser's or
// compiler's message in *err.
inline mjModel* CompileXml(const std::string& xml, std::string* err, bool stock = false) {
  char buf[1024] = "";
  mjSpec* spec = mj_parseXMLString(xml.c_str(), nullptr, buf, sizeof(buf));
  if (!spec) {
    *err = buf;
    return nullptr;
  }
  if (stock && cusp_stock_twin(spec, buf, sizeof(buf)) < 0) {
    *err = buf;
    mj_deleteSpec(spec);
    return nullptr;
  }
  mjModel* m = mj_compile(spec, nullptr);
  if (!m) *err = mjs_getError(spec);
  mj_deleteSpec(spec);
  return m;
}

// The text of a file of the source tree (path from the repository root); "" if it cannot be read.
inline std::string SourceText(const std::string& path) {
  std::string text;
  FILE* f = std::fopen((std::string(CUSP_SOURCE_DIR) + "/" + path).c_str(), "r");
  if (!f) return text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

// A test with the plugin library loaded, MuJoCo's warnings captured, cusp.contact's process-wide
// overrides cleared before and after, and one model and data (m_, d_) freed after the test.
class SceneTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { mj_loadPluginLibrary(CUSP_PLUGIN_PATH); }
  // the warnings MuJoCo gave (mju_user_warning) since SetUp, one entry each
  static std::vector<std::string>& Warnings() {
    static std::vector<std::string> warnings;
    return warnings;
  }
  // one at a time: a plugin warns from the thread that steps (tests/threads_test.cc steps in two)
  static void CaptureWarning(const char* msg) {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    Warnings().push_back(msg);
  }
  void SetUp() override {
    Warnings().clear();
    mju_user_warning = CaptureWarning;
    cusp_config_override_clear();
  }
  void TearDown() override {
    mju_user_warning = nullptr;
    cusp_config_override_clear();
    Unload();
  }
  // m_ and d_ of a scene given as text, or of a file of mjcf/
  void Load(const std::string& xml) {
    std::string err;
    m_ = CompileXml(xml, &err);
    ASSERT_NE(m_, nullptr) << err;
    d_ = mj_makeData(m_);
    ASSERT_NE(d_, nullptr);
  }
  void LoadFile(const char* scene) {
    std::string path = std::string(CUSP_SOURCE_DIR) + "/mjcf/" + scene;
    char err[1024] = "";
    m_ = mj_loadXML(path.c_str(), nullptr, err, sizeof(err));
    ASSERT_NE(m_, nullptr) << err;
    d_ = mj_makeData(m_);
    ASSERT_NE(d_, nullptr);
  }
  // frees m_ and d_ (a test looping over cases starts each clean)
  void Unload() {
    if (d_) mj_deleteData(d_);
    if (m_) mj_deleteModel(m_);
    d_ = nullptr;
    m_ = nullptr;
  }
  // a scene that may be refused: its model, or nullptr with MuJoCo's error in error_ (the
  // warnings of the compile, the plugin's own line among them, in Warnings())
  mjModel* Compile(const std::string& xml) {
    error_.clear();
    Warnings().clear();
    return CompileXml(xml, &error_);
  }
  // the warnings as text, one line each
  static std::string WarningText() {
    std::string text;
    for (const std::string& w : Warnings()) text += w + "\n";
    return text;
  }
  // how many warnings hold `part`
  static int WarningsWith(const std::string& part) {
    int n = 0;
    for (const std::string& w : Warnings()) n += w.find(part) != std::string::npos;
    return n;
  }
  // the state slots of the model's first plugin instance
  const mjtNum* State() const { return d_->plugin_state + m_->plugin_stateadr[0]; }
  bool Finite() const {
    for (int i = 0; i < m_->nq; i++) if (!std::isfinite(d_->qpos[i])) return false;
    for (int i = 0; i < m_->nv; i++) if (!std::isfinite(d_->qvel[i])) return false;
    return true;
  }
  mjModel* m_ = nullptr;
  mjData* d_ = nullptr;
  std::string error_;
};

}  // namespace cusp_test

#endif  // CUSP_TESTS_SCENE_TEST_UTIL_H_
