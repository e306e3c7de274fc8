// Siconos .dat reader: dense and sparse-block twins agree, column-by-column storage, and
// malformed input names the file and line.
#include "lcp_test_util.h"

namespace {
using namespace cusp_test;

TEST(LcpFile, DenseIsColumnByColumn) {
  cuspLcpFileData d;
  char err[256];
  ASSERT_EQ(cusp_lcp_file_read(&d, err, sizeof(err), DataPath("lcp_ortiz.dat").c_str()), 0);
  ASSERT_EQ(d.n, 4);
  // second text line of M is column 1: (1, 2, 1, 0)
  EXPECT_EQ(d.M[0 + 1 * 4], 1.0);
  EXPECT_EQ(d.M[1 + 1 * 4], 2.0);
  EXPECT_EQ(d.M[2 + 1 * 4], 1.0);
  EXPECT_EQ(d.M[3 + 0 * 4], 0.0);
  EXPECT_EQ(d.M[1 + 0 * 4], -1.0);
  EXPECT_EQ(d.q[0], -2.0);
  cusp_lcp_file_free(&d);
}

TEST(LcpFile, BlockTwinsMatchDense) {
  const char* pairs[][2] = {{"lcp_deudeu.dat", "lcp_deudeu_block.dat"},
                            {"lcp_ortiz.dat", "lcp_ortiz_block.dat"},
                            {"lcp_trivial.dat", "lcp_trivial_block.dat"}};
  for (auto& pr : pairs) {
    cuspLcpFileData a, b;
    char err[256];
    ASSERT_EQ(cusp_lcp_file_read(&a, err, sizeof(err), DataPath(pr[0]).c_str()), 0) << err;
    ASSERT_EQ(cusp_lcp_file_read(&b, err, sizeof(err), DataPath(pr[1]).c_str()), 0) << err;
    ASSERT_EQ(a.n, b.n);
    EXPECT_EQ(b.storage, 1);
    for (int k = 0; k < a.n * a.n; k++) EXPECT_DOUBLE_EQ(a.M[k], b.M[k]) << pr[1] << " " << k;
    for (int k = 0; k < a.n; k++) EXPECT_DOUBLE_EQ(a.q[k], b.q[k]);
    cusp_lcp_file_free(&a);
    cusp_lcp_file_free(&b);
  }
}

TEST(LcpFile, MalformedNamesFileAndLine) {
  cuspLcpFileData d;
  char err[256];
  const char* bad = "2\n0\n2\n2\n2 2\n1 0\n0 x1\n-1 -1\n";
  EXPECT_EQ(cusp_lcp_file_parse(&d, err, sizeof(err), bad, "bad.dat"), -1);
  EXPECT_NE(std::string(err).find("bad.dat:7:"), std::string::npos) << err;
  EXPECT_NE(std::string(err).find("x1"), std::string::npos) << err;
  const char* truncated = "2\n0\n2\n2\n2 2\n1 0\n0 1\n-1\n";
  EXPECT_EQ(cusp_lcp_file_parse(&d, err, sizeof(err), truncated, "short.dat"), -1);
  EXPECT_NE(std::string(err).find("short.dat:"), std::string::npos) << err;
  EXPECT_NE(std::string(err).find("end of file"), std::string::npos) << err;
  const char* wrong_size = "3\n0\n2\n2\n";
  EXPECT_EQ(cusp_lcp_file_parse(&d, err, sizeof(err), wrong_size, "size.dat"), -1);
  EXPECT_NE(std::string(err).find("size.dat:3:"), std::string::npos) << err;
  EXPECT_EQ(cusp_lcp_file_read(&d, err, sizeof(err), "/nonexistent/x.dat"), -1);
  EXPECT_NE(std::string(err).find("/nonexistent/x.dat"), std::string::npos);
}

TEST(LcpFile, CliPrintsJsonAndFailsOnBadFile) {
  std::string exe = std::string(CUSP_BUILD_DIR) + "/cusp-lcp";
  std::string cmd = exe + " --solver lemke --print-z " + DataPath("lcp_trivial.dat") + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buf[4096] = {0};
  size_t got = fread(buf, 1, sizeof(buf) - 1, f);
  int rc = pclose(f);
  std::string out(buf, got);
  EXPECT_EQ(rc, 0) << out;
  for (const char* key : {"\"file\"", "\"n\": 9", "\"solver\": \"lemke\"", "\"status\": \"solved\"",
                          "\"iterations\"", "\"residual\"", "\"siconos_error\"", "\"seconds\"",
                          "\"z\": [1, 0.5,"}) {
    EXPECT_NE(out.find(key), std::string::npos) << key << " in " << out;
  }
  std::string tmp = std::string(CUSP_BUILD_DIR) + "/bad_lcp_test.dat";
  FILE* t = fopen(tmp.c_str(), "w");
  fputs("2\n0\n2\n2\n2 2\n1 0\n0 oops\n", t);
  fclose(t);
  f = popen((exe + " " + tmp + " 2>&1").c_str(), "r");
  got = fread(buf, 1, sizeof(buf) - 1, f);
  rc = pclose(f);
  out.assign(buf, got);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("bad_lcp_test.dat:7:"), std::string::npos) << out;
}
}  // namespace
