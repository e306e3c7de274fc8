// The key-table parser every plugin uses (config/keys.h): each key type sets the field its row
// names, an empty text takes the default, the refusals carry the table's wording, and a row that
// names no field of its type is refused instead of writing anywhere.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cstdlib>
#include <map>
#include <string>

extern "C" {
#include "config/keys.h"
}

#include "scene_test_util.h"

namespace {

struct Parsed {
  mjtNum real;
  int rounds;  // a real key truncated into an int field
  int integer, flag, choice;
  int* geoms;
  int ngeom;
  int* bodies;
  int nbody;
  int* sites;
  int nsite;
  int site, body;
  mjtNum* reals;
  int nreal;
};

#define AT(member) 0, CUSP_FIELD(Parsed, member), nullptr
#define LIST(member, n) 1, CUSP_LIST(Parsed, member, n), nullptr

const cuspKey kKeys[] = {
  {"real", CUSP_KEY_REAL, "0.5", 0, 1, nullptr, "m", "a number", AT(real)},
  {"rounds", CUSP_KEY_REAL, "3", 1, 100, nullptr, "-", "a count written as a number", AT(rounds)},
  {"integer", CUSP_KEY_INT, "4", -1, 10, nullptr, "-", "an integer", AT(integer)},
  {"flag", CUSP_KEY_BOOL, "true", 0, 0, nullptr, "-", "a switch", AT(flag)},
  {"choice", CUSP_KEY_CHOICE, "a", 0, 0, "a|b|c", "-", "a word", AT(choice)},
  {"geoms", CUSP_KEY_GEOMS, "", 0, 0, nullptr, "-", "geoms", LIST(geoms, ngeom)},
  {"bodies", CUSP_KEY_BODIES, "", 0, 0, nullptr, "-", "bodies", LIST(bodies, nbody)},
  {"sites", CUSP_KEY_SITES, "", 0, 0, nullptr, "-", "sites", LIST(sites, nsite)},
  {"site", CUSP_KEY_SITE, "s1", 0, 0, nullptr, "-", "a site", AT(site)},
  {"body", CUSP_KEY_BODY, "b1", 0, 0, nullptr, "-", "a body", AT(body)},
  {"reals", CUSP_KEY_REALS, "", -5, 5, nullptr, "-", "numbers", LIST(reals, nreal)},
  {nullptr, CUSP_KEY_REAL, nullptr, 0, 0, nullptr, nullptr, nullptr, 0, CUSP_NO_FIELD, nullptr},
};

std::map<std::string, std::string> g_text;  // the keys' texts; absent: the default

const char* text_of(const mjModel*, int, const cuspKey* key) {
  auto it = g_text.find(key->key);
  return it != g_text.end() && !it->second.empty() ? it->second.c_str() : key->default_value;
}

const char* kXml = R"(<mujoco><worldbody>
  <body name="b1"><geom name="g1" size="0.1"/><site name="s1"/></body>
  <body name="b2" pos="1 0 0"><geom name="g2" size="0.1"/><site name="s2"/></body>
</worldbody></mujoco>)";

class Keys : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    m_ = cusp_test::CompileXml(kXml, &err);
    ASSERT_NE(m_, nullptr) << err;
    g_text.clear();
  }
  void TearDown() override {
    Free();
    mj_deleteModel(m_);
  }
  int Parse(const cuspKey* keys) {
    Free();
    cuspKeyTable table = {"test.plugin", keys, text_of};
    err_[0] = 0;
    return cusp_keys_parse(&p_, &table, m_, 0, err_, sizeof(err_));
  }
  void Free() {
    std::free(p_.geoms);
    std::free(p_.bodies);
    std::free(p_.sites);
    std::free(p_.reals);
    p_ = Parsed{};
  }
  int Id(mjtObj type, const char* name) { return mj_name2id(m_, type, name); }
  mjModel* m_ = nullptr;
  Parsed p_{};
  char err_[1024];
};

TEST_F(Keys, EveryTypeSetsItsField) {
  g_text = {{"real", "0.25"}, {"rounds", "20.7"}, {"integer", "-1"}, {"flag", "false"},
            {"choice", "c"}, {"geoms", "g2 g1"}, {"bodies", " b2 "}, {"sites", "s2"},
            {"site", "s2"}, {"body", "b2"}, {"reals", "1 -2.5e0"}};
  ASSERT_EQ(Parse(kKeys), 0) << err_;
  EXPECT_EQ(p_.real, 0.25);
  EXPECT_EQ(p_.rounds, 20);  // truncated, as (int) does
  EXPECT_EQ(p_.integer, -1);
  EXPECT_EQ(p_.flag, 0);
  EXPECT_EQ(p_.choice, 2);
  ASSERT_EQ(p_.ngeom, 2);
  EXPECT_EQ(p_.geoms[0], Id(mjOBJ_GEOM, "g2"));
  EXPECT_EQ(p_.geoms[1], Id(mjOBJ_GEOM, "g1"));
  ASSERT_EQ(p_.nbody, 1);
  EXPECT_EQ(p_.bodies[0], Id(mjOBJ_BODY, "b2"));
  ASSERT_EQ(p_.nsite, 1);
  EXPECT_EQ(p_.sites[0], Id(mjOBJ_SITE, "s2"));
  EXPECT_EQ(p_.site, Id(mjOBJ_SITE, "s2"));
  EXPECT_EQ(p_.body, Id(mjOBJ_BODY, "b2"));
  ASSERT_EQ(p_.nreal, 2);
  EXPECT_EQ(p_.reals[0], 1.0);
  EXPECT_EQ(p_.reals[1], -2.5);
}

TEST_F(Keys, EmptyTextTakesTheDefault) {
  ASSERT_EQ(Parse(kKeys), 0) << err_;
  EXPECT_EQ(p_.real, 0.5);
  EXPECT_EQ(p_.rounds, 3);
  EXPECT_EQ(p_.integer, 4);
  EXPECT_EQ(p_.flag, 1);
  EXPECT_EQ(p_.choice, 0);
  EXPECT_EQ(p_.ngeom, 0);
  EXPECT_EQ(p_.geoms, nullptr);
  EXPECT_EQ(p_.nreal, 0);
  EXPECT_EQ(p_.site, Id(mjOBJ_SITE, "s1"));
  EXPECT_EQ(p_.body, Id(mjOBJ_BODY, "b1"));
}

// every plugin of the library refuses in one wording: key, value, reason and the fix
TEST_F(Keys, RefusalsNameTheFix) {
  g_text = {{"geoms", "g1 nosuch"}};
  ASSERT_EQ(Parse(kKeys), -1);
  EXPECT_STREQ(err_, "test.plugin: config key 'geoms' has value 'g1 nosuch': no geom named "
                     "'nosuch' in the model; name an existing geom (names are case-sensitive)");
  g_text = {{"real", "wide"}};
  ASSERT_EQ(Parse(kKeys), -1);
  EXPECT_STREQ(err_, "test.plugin: config key 'real' has value 'wide': not a number; write a "
                     "number in [0, 1]");
  g_text = {{"sites", "s1 s1"}};
  ASSERT_EQ(Parse(kKeys), -1);
  EXPECT_STREQ(err_, "test.plugin: config key 'sites' has value 's1 s1': 's1' is listed twice; "
                     "list it once");
  g_text = {{"reals", "1 9"}};
  ASSERT_EQ(Parse(kKeys), -1);
  EXPECT_STREQ(err_, "test.plugin: config key 'reals' has value '1 9': 9 out of range [-5, 5]; "
                     "write values within it");
  g_text = {{"choice", "d"}};
  ASSERT_EQ(Parse(kKeys), -1);
  EXPECT_STREQ(err_, "test.plugin: config key 'choice' has value 'd': expected one of a|b|c; "
                     "write one of them");
}

// a row that names no field for a type that needs one must not write to offset 0 (a row left
// short is already a compile error: -Wmissing-field-initializers)
TEST_F(Keys, RowWithoutFieldIsRefused) {
  const cuspKey keys[] = {
    {"real", CUSP_KEY_REAL, "0.5", 0, 1, nullptr, "m", "a number", AT(real)},
    {"stray", CUSP_KEY_REAL, "2", 0, 5, nullptr, "-", "a row without its field", 0, CUSP_NO_FIELD,
     nullptr},
    {nullptr, CUSP_KEY_REAL, nullptr, 0, 0, nullptr, nullptr, nullptr, 0, CUSP_NO_FIELD, nullptr},
  };
  ASSERT_EQ(Parse(keys), -1);
  EXPECT_STREQ(err_, "test.plugin: config key 'stray' has value '2': internal: the key table "
                     "gives no field of its type for this key");
  EXPECT_EQ(p_.real, 0.5);
  // and a row whose field has the wrong size for its type (an integer key on an mjtNum)
  const cuspKey wrong[] = {
    {"real", CUSP_KEY_INT, "1", 0, 5, nullptr, "-", "an integer on an mjtNum", AT(real)},
    {nullptr, CUSP_KEY_REAL, nullptr, 0, 0, nullptr, nullptr, nullptr, 0, CUSP_NO_FIELD, nullptr},
  };
  EXPECT_EQ(Parse(wrong), -1);
  EXPECT_NE(std::string(err_).find("internal"), std::string::npos) << err_;
}

TEST_F(Keys, MarkdownShowsRangesChoicesAndRequiredNames) {
  static char table[8192];
  int len = cusp_keys_markdown(table, sizeof(table), kKeys);
  ASSERT_LT(len, (int)sizeof(table));
  std::string md(table);
  EXPECT_NE(md.find("| `real` | real | m | `0.5` | [0, 1] | a number |\n"), std::string::npos);
  EXPECT_NE(md.find("| `choice` | choice | - | `a` | a/b/c | a word |\n"), std::string::npos);
  EXPECT_NE(md.find("| `geoms` | geom names | - | `(empty)` | - | geoms |\n"), std::string::npos);
  EXPECT_NE(md.find("| `flag` | bool | - | `true` | true, false | a switch |\n"),
            std::string::npos);
  EXPECT_EQ(cusp_key_count(kKeys), 11);
  EXPECT_EQ(cusp_key_named(kKeys, "body"), &kKeys[9]);
  EXPECT_EQ(cusp_key_named(kKeys, "nosuch"), nullptr);
  EXPECT_EQ(cusp_key_words("  a b\tc  "), 3);
  EXPECT_EQ(cusp_key_words(nullptr), 0);
}

}  // namespace
