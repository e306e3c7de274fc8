// Shared by the plugin tests: a model and data compiled from MJCF text.
#ifndef CUSP_TESTS_SCENE_TEST_UTIL_H_
#define CUSP_TESTS_SCENE_TEST_UTIL_H_

#include <string>

#include <mujoco/mujoco.h>

namespace cusp_test {

// Compiles xml; on failure returns nullptr and the parser's or compiler's message in *err.
inline mjModel* CompileXml(const std::string& xml, std::string* err) {
  char buf[1024] = "";
  mjSpec* spec = mj_parseXMLString(xml.c_str(), nullptr, buf, sizeof(buf));
  if (!spec) {
    *err = buf;
    return nullptr;
  }
  mjModel* m = mj_compile(spec, nullptr);
  if (!m) *err = mjs_getError(spec);
  mj_deleteSpec(spec);
  return m;
}

}  // namespace cusp_test

#endif  // CUSP_TESTS_SCENE_TEST_UTIL_H_
