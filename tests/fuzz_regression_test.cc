// The fuzz targets' entry points (fuzz/*_target.c) on the committed seed corpora
// (fuzz/corpus/<target>/) and on every crash reproducer found by bench/fuzz
// (fuzz/regressions/<target>/): none may crash (under the sanitizer build, none may trip ASan or
// UBSan) or break a solver's contract (the targets abort on that).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "solver/lcp_file.h"
#include "targets.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Inputs(const std::string& dir) {
  std::vector<fs::path> out;
  fs::path p = fs::path(CUSP_SOURCE_DIR) / "fuzz" / dir;
  if (!fs::exists(p)) return out;
  for (const auto& e : fs::directory_iterator(p)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint8_t> Read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// runs every input of the target's corpus and regressions; returns {inputs, accepted}
std::pair<int, int> RunAll(const std::string& target, int (*fn)(const uint8_t*, size_t)) {
  int n = 0, accepted = 0;
  for (const char* kind : {"corpus/", "regressions/"}) {
    for (const fs::path& p : Inputs(kind + target)) {
      std::vector<uint8_t> bytes = Read(p);
      SCOPED_TRACE(p.string());
      accepted += fn(bytes.data(), bytes.size()) > 0;
      n++;
    }
  }
  return {n, accepted};
}

TEST(FuzzRegression, LcpFileCorpusAndReproducers) {
  auto [n, accepted] = RunAll("lcp_file", cusp_fuzz_lcp_file);
  EXPECT_GE(n, 3);
  EXPECT_GE(accepted, 1);     // the seeds include valid files
  EXPECT_LT(accepted, n);     // ... and malformed ones
}

TEST(FuzzRegression, SolverCorpusAndReproducers) {
  auto [n, solved_any] = RunAll("solver", cusp_fuzz_solver);
  EXPECT_GE(n, 3);
  EXPECT_GE(solved_any, 1);
}

TEST(FuzzRegression, ConfigCorpusAndReproducers) {
  mj_loadPluginLibrary(CUSP_PLUGIN_PATH);
  auto [n, loaded] = RunAll("config", cusp_fuzz_config);
  EXPECT_GE(n, 3);
  EXPECT_GE(loaded, 1);   // a valid configuration loads
  EXPECT_LT(loaded, n);   // and invalid ones are refused
}

// a seed with known outcome: the well-formed 2x2 file parses, a truncated one does not
TEST(FuzzRegression, LcpFileKnownOutcomes) {
  const char good[] = "2 0 2 2 2 2\n2 1\n1 2\n-1 -1\n";
  const char cut[] = "2 0 2 2 2 2\n2 1\n1";
  EXPECT_EQ(cusp_fuzz_lcp_file((const uint8_t*)good, sizeof(good) - 1), 1);
  EXPECT_EQ(cusp_fuzz_lcp_file((const uint8_t*)cut, sizeof(cut) - 1), 0);
}

// found by fuzzing: a header asking for n = 32768 made the reader calloc an 8 GiB M before reading
// a single entry; now n is capped (M within 1 GiB) and a file too short for its numbers is
// refused before allocating
TEST(FuzzRegression, LcpFileHugeHeaderRefusedBeforeAllocating) {
  cuspLcpFileData lcp;
  char err[256] = "";
  EXPECT_EQ(cusp_lcp_file_parse(&lcp, err, sizeof(err), "32768 0 32768 32768 32768 32768 1 2",
                                "big"), -1);
  EXPECT_NE(std::string(err).find("n must be an integer in [1, 11585]"), std::string::npos) << err;
  EXPECT_EQ(cusp_lcp_file_parse(&lcp, err, sizeof(err), "3000 0 3000 3000 3000 3000 1 2", "short"),
            -1);
  EXPECT_NE(std::string(err).find("too short"), std::string::npos) << err;
  EXPECT_EQ(lcp.M, nullptr);
}

}  // namespace
