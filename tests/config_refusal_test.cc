// What cusp cannot do right is refused at load with one line naming the key, the value and the
// reason: a heightfield as environment of disks or patch bodies (listed, or reached
// through an empty `environment`), an environment entry that does nothing (a disk, a geom of a
// registered body, a geom only its own body's disk could touch), a `limit_surface` entry for a body
// not in `bodies`, listed twice or out of range (-1e300), and values of any length (no silent cut
// at 1023 characters).
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cstdio>
#include <string>
#include <utility>

#include "scene_test_util.h"

extern "C" {
#include "cli/sim_loop.h"
#include "config/config.h"
#include "instance.h"
}

namespace {

class ConfigRefusal : public cusp_test::SceneTest {
 protected:
  // the scene must be refused with a message holding every one of `parts`, on one line
  void ExpectRefused(const std::string& xml, std::initializer_list<std::string> parts) {
    mjModel* m = Compile(xml);
    EXPECT_EQ(m, nullptr) << xml;
    if (m) mj_deleteModel(m);
    // the plugin's own line (MuJoCo 4 appends the warnings of a failed compile to its error)
    std::string all = error_ + "\n" + WarningText();
    size_t at = all.find("cusp.contact:");
    ASSERT_NE(at, std::string::npos) << all;
    std::string line = all.substr(at, all.find('\n', at) - at);
    for (const std::string& p : parts)
      EXPECT_NE(line.find(p), std::string::npos) << p << " in " << line;
  }
};

// A scene with a heightfield terrain, a static box, a disk carrier (disk 'disk' and a rod 'rod' on
// body 'carrier') and a registered box 'block'. config: the <config> elements.
std::string Scene(const std::string& config, const std::string& terrain_flags = "") {
  return R"(
<mujoco>
  <asset><hfield name="terrain" nrow="8" ncol="8" size="1 1 0.1 0.1"/></asset>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">)" +
         config + R"(
  </instance></plugin></extension>
  <worldbody>
    <geom name="ground" type="hfield" hfield="terrain" )" +
         terrain_flags + R"(/>
    <geom name="floor" type="plane" size="2 2 0.1" pos="0 0 -0.5"/>
    <geom name="wall" type="box" size="0.1 1 0.3" pos="1.5 0 0"/>
    <body name="carrier" pos="0 0 0.3">
      <freejoint/>
      <geom name="rod" type="capsule" fromto="-0.1 0 0 0.1 0 0" size="0.01" contype="0"
            conaffinity="0"/>
      <geom name="disk" type="cylinder" size="0.03 0.005" contype="0" conaffinity="0"/>
    </body>
    <body name="block" pos="0.5 0 0.3">
      <freejoint/>
      <geom name="block_geom" type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/>
    </body>
    <body name="loose" pos="-0.5 0 0.3">
      <freejoint/>
      <geom name="loose_geom" type="sphere" size="0.05"/>
    </body>
  </worldbody>
</mujoco>)";
}

const char* kDisk = R"(<config key="disks" value="disk"/>)";
const char* kBody = R"(<config key="bodies" value="block"/>)";

TEST_F(ConfigRefusal, SupportedScenesLoad) {
  for (const std::string& config :
       {std::string(kDisk) + R"(<config key="environment" value="floor wall"/>)",
        std::string(kBody) + R"(<config key="environment" value="floor wall loose_geom"/>)",
        std::string(kDisk) + kBody + R"(<config key="environment" value="floor"/>)",
        // the carrier's rod: not for its own disk, but an obstacle the registered block touches
        std::string(kDisk) + kBody + R"(<config key="environment" value="floor rod"/>)"}) {
    mjModel* m = Compile(Scene(config));
    EXPECT_NE(m, nullptr) << config << ": " << error_ << WarningText();
    if (m) mj_deleteModel(m);
  }
  // an empty environment is fine when the heightfield is nothing cusp would touch (a visual geom
  // is never an obstacle)
  for (const char* config : {kDisk, kBody}) {
    mjModel* m = Compile(Scene(config, R"(contype="0" conaffinity="0")"));
    EXPECT_NE(m, nullptr) << config << ": " << error_ << WarningText();
    if (m) mj_deleteModel(m);
  }
}

TEST_F(ConfigRefusal, HeightfieldListedAsEnvironment) {
  ExpectRefused(Scene(std::string(kDisk) + R"(<config key="environment" value="floor ground"/>)"),
                {"'environment'", "'floor ground'", "'ground'", "heightfield"});
  ExpectRefused(Scene(std::string(kBody) + R"(<config key="environment" value="ground"/>)"),
                {"'environment'", "'ground'", "heightfield"});
}

TEST_F(ConfigRefusal, HeightfieldReachedThroughEmptyEnvironment) {
  ExpectRefused(Scene(kDisk), {"'environment'", "value ''", "'ground'", "heightfield"});
  ExpectRefused(Scene(kBody), {"'environment'", "value ''", "'ground'", "heightfield"});
}

TEST_F(ConfigRefusal, EnvironmentGeomOnTheDisksOwnBody) {
  ExpectRefused(Scene(std::string(kDisk) + R"(<config key="environment" value="floor rod"/>)"),
                {"'environment'", "'floor rod'", "'rod'", "'carrier'", "'disk'", "own body"});
  ExpectRefused(Scene(std::string(kDisk) + R"(<config key="environment" value="disk floor"/>)"),
                {"'environment'", "'disk floor'", "'disk'", "registered disk"});
}

TEST_F(ConfigRefusal, EnvironmentGeomOfARegisteredBody) {
  ExpectRefused(
      Scene(std::string(kBody) + R"(<config key="environment" value="floor block_geom"/>)"),
      {"'environment'", "'floor block_geom'", "'block_geom'", "registered body 'block'"});
}

// Bodies of every joint kind MuJoCo integrates: free, ball, hinge, slide and combinations (a ball
// on x/z slides and a hinge, as in planar task suites); `what` is the body's joints and geom.
std::string JointScene(const std::string& bodies) {
  return R"(
<mujoco>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value=")" + bodies + R"("/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="free" pos="0 0 0.3"><freejoint/>
      <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/></body>
    <body name="planar" pos="0.3 0 0.3">
      <joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 0 1"/>
      <joint type="hinge" axis="0 1 0"/>
      <geom type="sphere" size="0.05" contype="0" conaffinity="0"/></body>
    <body name="door" pos="0.6 0 0.3"><joint type="hinge" axis="0 0 1"/>
      <geom type="box" size="0.1 0.01 0.1" pos="0.1 0 0" contype="0" conaffinity="0"/>
      <body name="handle"><geom type="capsule" fromto="0.15 -0.03 0 0.15 -0.03 0.05" size="0.01"
            contype="0" conaffinity="0"/></body></body>
    <body name="drawer" pos="0.9 0 0.3"><joint type="slide" axis="1 0 0"/>
      <geom type="box" size="0.1 0.1 0.05" contype="0" conaffinity="0"/></body>
    <body name="knob" pos="1.2 0 0.3"><joint type="ball"/>
      <geom type="sphere" size="0.03" contype="0" conaffinity="0"/></body>
    <body name="shelf" pos="1.5 0 0.3"><geom type="box" size="0.2 0.2 0.01"/></body>
    <body name="target" mocap="true" pos="1.8 0 0.3"><geom type="sphere" size="0.02"/></body>
  </worldbody>
</mujoco>)";
}

TEST_F(ConfigRefusal, BodiesMovedByTheirOwnJointsLoad) {
  mjModel* m = Compile(JointScene("free planar door drawer knob"));
  ASSERT_NE(m, nullptr) << error_ << WarningText();
  mjData* d = mj_makeData(m);
  ASSERT_NE(d, nullptr);
  const cuspInstance* inst = cusp_instance_find(d, 0);
  ASSERT_NE(inst, nullptr);
  EXPECT_EQ(inst->cfg.npatch_body, 5);
  mj_deleteData(d);
  mj_deleteModel(m);
}

// Nothing integrates them: refused naming key, value, body, why, and what to use instead
TEST_F(ConfigRefusal, BodiesNothingMovesAreRefusedWithWhatToDo) {
  ExpectRefused(JointScene("free shelf"),
                {"'bodies'", "'free shelf'", "body 'shelf'", "welded to the world", "static",
                 "list its geoms in 'environment'"});
  ExpectRefused(JointScene("target"),
                {"'bodies'", "'target'", "body 'target'", "mocap", "list its geoms in "
                 "'environment'"});
  ExpectRefused(JointScene("handle"),
                {"'bodies'", "'handle'", "body 'handle' has no joint", "welded to body 'door'",
                 "register 'door' instead"});
}

// Two cusp.contact instances: the second is refused (their geoms would pass through each other)
TEST_F(ConfigRefusal, SecondInstanceIsRefused) {
  std::string xml = R"(
<mujoco>
  <extension><plugin plugin="cusp.contact">
    <instance name="first"><config key="bodies" value="a"/></instance>
    <instance name="second"><config key="bodies" value="b"/></instance>
  </plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="a" pos="0 0 0.1"><freejoint/>
      <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/></body>
    <body name="b" pos="0 0 0.3"><freejoint/>
      <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/></body>
  </worldbody>
</mujoco>)";
  ExpectRefused(xml, {"instance 'second'", "second cusp.contact instance", "the first is 'first'",
                      "pass through each other", "register them all in one instance"});
}

TEST_F(ConfigRefusal, LimitSurfaceOfABodyNotRegistered) {
  ExpectRefused(
      Scene(std::string(kBody) + R"(<config key="environment" value="floor"/>)"
                                 R"(<config key="limit_surface" value="loose:1,1,0.02"/>)"),
      {"'limit_surface'", "'loose:1,1,0.02'", "'loose'", "not registered"});
  ExpectRefused(Scene(std::string(kBody) +
                      R"(<config key="environment" value="floor"/>)"
                      R"(<config key="limit_surface" value="block:1,1,0; block:2,2,0"/>)"),
                {"'limit_surface'", "'block'", "twice"});
}

TEST_F(ConfigRefusal, LimitSurfaceOutOfRange) {
  for (const char* v : {"block:-1e300,1,1", "block:1,1,-0.02", "block:1,1e7,0", "block:1e-9,1,0"}) {
    ExpectRefused(Scene(std::string(kBody) +
                        R"(<config key="environment" value="floor"/>)"
                        R"(<config key="limit_surface" value=")" +
                        v + R"("/>)"),
                  {"'limit_surface'", std::string("'") + v + "'", "out of range",
                   "0 (the default) or [1e-06, 1e+06]"});
  }
}

TEST_F(ConfigRefusal, RealOutOfRangeNamesTheRange) {
  ExpectRefused(Scene(std::string(kDisk) + R"(<config key="environment" value="floor"/>)"
                                           R"(<config key="tolerance" value="-1e300"/>)"),
                {"'tolerance'", "'-1e300'", "out of range [1e-16, 0.01]"});
}

TEST_F(ConfigRefusal, SelfContactNeighboursBelowMinusOne) {
  ExpectRefused(Scene(std::string(kDisk) + R"(<config key="environment" value="floor"/>)"
                                           R"(<config key="self_contact_neighbours" value="-2"/>)"),
                {"'self_contact_neighbours'", "'-2'", "out of range [-1, 1e+06]"});
  ExpectRefused(Scene(std::string(kDisk) + R"(<config key="environment" value="floor"/>)"
                                           R"(<config key="self_contact_neighbours" value="two"/>)"),
                {"'self_contact_neighbours'", "'two'", "not an integer"});
}

// A three-disk arm on a mount: d0 on the mount, d1 and d2 on hinges ('h1', 'h2'), with a link body
// without a disk between d1 and d2; `tie` is the equality block (empty: none).
std::string Arm(const std::string& neighbours, const std::string& tie) {
  return R"(
<mujoco>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="disks" value="d0 d1 d2"/><config key="environment" value="floor"/>
    <config key="self_contact_neighbours" value=")" + neighbours + R"("/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="mount" pos="0 0 0.5">
      <geom name="d0" type="cylinder" size="0.03 0.005" contype="0" conaffinity="0"/>
      <body name="b1" pos="0 0 -0.02">
        <joint name="h1" type="hinge" axis="0 1 0"/>
        <geom name="d1" type="cylinder" size="0.03 0.005" contype="0" conaffinity="0"/>
        <body name="link" pos="0 0 -0.01">
          <joint name="h2" type="hinge" axis="0 1 0"/>
          <body name="b2" pos="0 0 -0.01">
            <geom name="d2" type="cylinder" size="0.03 0.005" contype="0" conaffinity="0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>)" + tie + R"(
</mujoco>)";
}

// ties h2 alone (h1 free), so the refused pair is d1, d2 across the link body
const char* kTie = R"(<equality><joint name="cc" joint1="h2"/></equality>)";

// Adjacent disks tied by a constant-curvature joint equality may not touch each other: with
// `self_contact_neighbours` 0 their contacts fight the equality (a PCC arm diverged under it).
// The pair is the one across the tied joint, found through a body without a disk.
TEST_F(ConfigRefusal, AdjacentDisksOfAConstantCurvatureSection) {
  ExpectRefused(Arm("0", kTie), {"'self_contact_neighbours'", "'0'", "adjacent disks 'd1' and 'd2'",
                                 "joint equality 'cc'", "constant-curvature",
                                 "fights the equality", "use 1 or more"});
  // touching from two apart, never within the robot, or adjacent disks without a tie: loaded
  for (const auto& [neighbours, tie] : {std::pair<std::string, std::string>{"1", kTie},
                                        {"-1", kTie}, {"0", ""}}) {
    mjModel* m = Compile(Arm(neighbours, tie));
    EXPECT_NE(m, nullptr) << neighbours << " " << tie << ": " << error_ << WarningText();
    if (m) mj_deleteModel(m);
  }
}

TEST_F(ConfigRefusal, ReductionBasisThatCannotBeReadOrNamesNoGeom) {
  ExpectRefused(Scene(std::string(kDisk) + R"(<config key="environment" value="floor"/>)"
                                           R"(<config key="reduction_basis" value="/no/such/basis.txt"/>)"),
                {"'reduction_basis'", "'/no/such/basis.txt'", "cannot open the basis file"});
  std::string path = ::testing::TempDir() + "cusp_basis_unknown_geom.txt";
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("cusp-reduction-basis 1 1\ndisk no_such_geom 1\n", f);
  fclose(f);
  ExpectRefused(Scene(std::string(kDisk) + R"(<config key="environment" value="floor"/>)" +
                      "<config key=\"reduction_basis\" value=\"" + path + "\"/>"),
                {"'reduction_basis'", path, "'no_such_geom' is not a geom of the model"});
  ExpectRefused(Scene(std::string(kDisk) + R"(<config key="environment" value="floor"/>)"
                                           R"(<config key="reduction_tolerance" value="-1"/>)"),
                {"'reduction_tolerance'", "'-1'", "out of range [0, 1]"});
}

// Longer than the 1023 characters that were once kept: parsed whole, not cut
TEST_F(ConfigRefusal, LimitSurfaceOfAnyLength) {
  std::string pad(1500, ' ');
  std::string xml = Scene(std::string(kBody) +
                          R"(<config key="environment" value="floor"/>)"
                          R"(<config key="limit_surface" value=")" +
                          pad + R"(block:0.5,0.25,0.03"/>)");
  mjModel* m = Compile(xml);
  ASSERT_NE(m, nullptr) << error_ << WarningText();
  mjData* d = mj_makeData(m);
  ASSERT_NE(d, nullptr);
  const cuspInstance* inst = cusp_instance_find(d, 0);
  ASSERT_NE(inst, nullptr);
  ASSERT_EQ(inst->cfg.nlimit_surface, 1);
  EXPECT_EQ(inst->cfg.limit_surface[0].e[0], 0.5);
  EXPECT_EQ(inst->cfg.limit_surface[0].e[1], 0.25);
  EXPECT_EQ(inst->cfg.limit_surface[0].e[2], 0.03);
  mj_deleteData(d);
  mj_deleteModel(m);
  // the same length with a mistake at the end: refused, the message one readable line
  ExpectRefused(Scene(std::string(kBody) +
                      R"(<config key="environment" value="floor"/>)"
                      R"(<config key="limit_surface" value=")" +
                      pad + R"(block:0.5,0.25"/>)"),
                {"'limit_surface'", "(1514 characters)", "'block'", "three numbers"});
}

TEST_F(ConfigRefusal, OverrideLongerThanItHoldsIsRefusedNamingKeyAndLength) {
  char err[512];
  std::string value(2000, ' ');
  value += "block:1,1,0";
  EXPECT_EQ(cusp_config_override_set("limit_surface", value.c_str(), err, sizeof(err)), -1);
  std::string msg(err);
  EXPECT_NE(msg.find("'limit_surface'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2011 characters"), std::string::npos) << msg;
}

// MuJoCo 4.0.0 composes a refused init as its generic line and the plugin's warning twice;
// cusp_error_line (what cusp-sim and Python print) keeps the plugin's line, once, and nothing else.
TEST_F(ConfigRefusal, ErrorLineIsThePluginsLineOnce) {
  mjModel* m = Compile(Scene(std::string(kBody) + R"(<config key="environment" value="floor"/>)"
                             R"(<config key="friction" value="-3"/>)"));
  ASSERT_EQ(m, nullptr);
  const std::string line =
      "cusp.contact: config key 'friction' has value '-3': out of range [-1, 100]; write a value "
      "within it";
  ASSERT_NE(error_.find("plugin->init failed"), std::string::npos) << error_;  // MuJoCo's part
  char out[2048];
  cusp_error_line(out, sizeof(out), error_.c_str());
  EXPECT_EQ(std::string(out), line);
  // an undeclared key: MuJoCo's line once, then the keys there are
  m = Compile(Scene(std::string(kBody) + R"(<config key="frictoin" value="0.5"/>)"));
  ASSERT_EQ(m, nullptr);
  cusp_error_line(out, sizeof(out), error_.c_str());
  std::string text(out);
  EXPECT_EQ(text.find("unrecognized attribute 'plugin:frictoin'"),
            text.rfind("unrecognized attribute 'plugin:frictoin'")) << text;
  EXPECT_NE(text.find("; valid cusp.contact config keys: disks, environment, visual_geoms, bodies"),
            std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
}

TEST_F(ConfigRefusal, UnknownOverrideKeyNamesTheValidKeys) {
  char err[2048];
  EXPECT_EQ(cusp_config_override_set("frictoin", "0.5", err, sizeof(err)), -1);
  std::string expect = "cusp.contact: unknown config key 'frictoin'; valid keys: ";
  for (int i = 0; i < cusp_key_count(cusp_config_keys); i++) {
    expect += std::string(i ? ", " : "") + cusp_config_keys[i].key;
  }
  EXPECT_EQ(std::string(err), expect);
}

}  // namespace
