// Siconos FC3D reader: every file of tests/data/fc3d reads with the right sizes; the layout (block
// orientation, dense column order) is pinned by entries read with Siconos' own reader
// (frictionContact_new_from_filename + NM_get_value, Siconos Numerics 4.4.0); malformed text is
// refused with a one-line message and never crashes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include "solver/fc3d_file.h"
}

namespace {

std::string DataPath(const std::string& file) {
  return std::string(CUSP_SOURCE_DIR) + "/tests/data/fc3d/" + file;
}

struct Entry {
  int i, j;
  double value;  // W(i, j) as Siconos reads it
};

struct FileCase {
  const char* file;
  int nc, storage, nblocks;
  double mu;          // every contact's friction coefficient
  double asymmetry;   // max |W - W^T| / max |W| as Siconos reads the file
  std::vector<Entry> entries;
};

const std::vector<FileCase>& Files() {
  static const std::vector<FileCase> files = {
      {"BoxesStack1-i100000-32.hdf5.dat", 52, 1, 592, 0.7, 1.6e-16,
       {{13, 22, 575.88048229465608}, {22, 13, 575.88048229465596}}},
      // three files are not symmetric beyond round-off: the data, not the reader (Siconos' own
      // reader gives the same entries)
      {"Capsules-i101-404.dat", 225, 1, 1011, 0.7, 5.97e-4,
       {{519, 520, -0.1331426288478913}, {520, 519, -0.13749057241226992}}},
      {"Confeti-ex03-Fc3D-SBM.dat", 54, 1, 400, 0.4, 4.9e-17,
       {{115, 116, 0}, {116, 115, 1.3552529999999999e-20}}},
      {"NESpheres_10_1.dat", 9, 0, 0, 0.8, 7.9e-17,
       {{19, 26, -0.58239962945227508}, {26, 19, -0.58239962945227519}}},
      {"OneObject-i100000-499.hdf5.dat", 24, 1, 164, 0.3, 8.06e-5,
       {{16, 17, 1.0662336914042108}, {17, 16, 1.0773252034446159}}},
      {"Rover4609.dat", 5, 0, 0, 0.7, 1.37e-5,
       {{0, 14, 0.00010172097361101627}, {14, 0, 0.0001002617198633872}}},
  };
  return files;
}

TEST(Fc3dFile, EveryFileReadsWithItsSizesAndLayout) {
  for (const FileCase& fc : Files()) {
    SCOPED_TRACE(fc.file);
    cuspFc3dFileData d;
    char err[512] = "";
    ASSERT_EQ(cusp_fc3d_file_read(&d, err, sizeof(err), DataPath(fc.file).c_str()), 0) << err;
    int n = 3 * d.nc;
    EXPECT_EQ(d.nc, fc.nc);
    EXPECT_EQ(d.storage, fc.storage);
    EXPECT_EQ(d.nblocks, fc.nblocks);
    for (int c = 0; c < d.nc; c++) EXPECT_NEAR(d.mu[c], fc.mu, 1e-15) << c;
    double wmax = 0, asym = 0;
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < n; i++) {
        double a = d.W[i + (size_t)j * n], b = d.W[j + (size_t)i * n];
        wmax = std::max(wmax, std::fabs(a));
        asym = std::max(asym, std::fabs(a - b));
      }
    }
    ASSERT_GT(wmax, 0);
    if (fc.asymmetry < 1e-12) {
      EXPECT_LE(asym / wmax, 1e-12) << "W symmetric within 1e-12 relative";
    } else {
      EXPECT_NEAR(asym / wmax, fc.asymmetry, 0.01 * fc.asymmetry) << "the file's own asymmetry";
    }
    for (const Entry& e : fc.entries) {
      EXPECT_EQ(d.W[e.i + (size_t)e.j * n], e.value) << "W(" << e.i << ", " << e.j << ")";
    }
    // the normal diagonal is positive and q is finite
    for (int c = 0; c < d.nc; c++) EXPECT_GT(d.W[3 * c + (size_t)(3 * c) * n], 0) << c;
    for (int i = 0; i < n; i++) EXPECT_TRUE(std::isfinite(d.q[i]));
    cusp_fc3d_file_free(&d);
  }
}

// A small sparse-block problem: 2 contacts, blocks (0,0), (0,1), (1,0), (1,1) of a symmetric W.
const char* kSmall =
    "3\n2\n1\n6\n6\n"
    "4\n2\n2\n3\t6\t\n3\t6\t\n3\n4\n0\t2\t4\t\n0\t1\t0\t1\t\n"
    "0\n2 0 0 0 2 0 0 0 2\n"
    "1\n0.5 0 0 0 0.25 0 0 0 0\n"
    "2\n0.5 0 0 0 0.25 0 0 0 0\n"
    "3\n3 0 0 0 3 0 0 0 3\n"
    "-1 0.5 0 -2 0 0.1\n"
    "0.5 0.3\n";

int Parse(const std::string& text, std::string* err) {
  cuspFc3dFileData d;
  char buf[512] = "";
  int rc = cusp_fc3d_file_parse(&d, buf, sizeof(buf), text.c_str(), "t.dat");
  *err = buf;
  if (rc == 0) cusp_fc3d_file_free(&d);
  return rc;
}

TEST(Fc3dFile, SmallSparseBlockProblem) {
  cuspFc3dFileData d;
  char err[512] = "";
  ASSERT_EQ(cusp_fc3d_file_parse(&d, err, sizeof(err), kSmall, "small"), 0) << err;
  ASSERT_EQ(d.nc, 2);
  EXPECT_EQ(d.W[0], 2);
  EXPECT_EQ(d.W[3 + 0 * 6], 0.5);   // block (1, 0), row 3 col 0
  EXPECT_EQ(d.W[4 + 1 * 6], 0.25);  // block (1, 0), row 4 col 1
  EXPECT_EQ(d.W[0 + 3 * 6], 0.5);   // block (0, 1)
  EXPECT_EQ(d.W[5 + 5 * 6], 3);
  EXPECT_EQ(d.q[3], -2);
  EXPECT_EQ(d.mu[1], 0.3);
  cusp_fc3d_file_free(&d);
  // an empty sparse matrix (Siconos writes only the block count 0): W = 0
  std::string err2;
  EXPECT_EQ(Parse("3\n1\n1\n3\n3\n0\n-1 0 0\n0.5\n", &err2), 0) << err2;
}

TEST(Fc3dFile, MalformedInputIsRefusedWithOneLine) {
  std::string small(kSmall);
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = small;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  struct Bad {
    std::string text, expect;
  };
  std::vector<Bad> bad = {
      {"", "end of file"},
      {"3\n", "end of file"},
      {"2\n2\n", "dimension 2"},
      {"3\n0\n", "contact count"},
      {"3\n2\n2\n6\n6\n", "storage 2"},
      {"3\n2\n0\n5\n6\n", "row count"},
      {"3\n2\n1\n6\n6\n4\n2\n2\n3\n6\n3\n6\n3\n4\n0\n2\n4\n0\n1\n0\n1\n", "too short"},
      {replace("0.5 0.3\n", "0.5 -0.3\n"), "negative"},
      {replace("0.5 0.3\n", "0.5 abc\n"), "expected a number"},
      {replace("0.5 0.3\n", "0.5 nan\n"), "non-finite"},
      {replace("0.5 0.3\n", "0.5\n"), "end of file"},
      {replace("1\n0.5 0 0", "2\n0.5 0 0"), "block number"},
      {replace("0\t1\t0\t1\t\n", "0\t0\t0\t1\t\n"), "stored twice"},
      {replace("0\t1\t0\t1\t\n", "0\t1\t0\t2\t\n"), "block column index"},
      {replace("3\t6\t\n3\t6\t\n", "3\t5\t\n3\t6\t\n"), "row blocks cover"},
      {replace("3\t6\t\n3\t6\t\n", "3\t3\t\n3\t6\t\n"), "cumulative row block size"},
      {replace("0\t2\t4\t\n", "0\t3\t4\t\n"), "stored twice"},
      {replace("0\t2\t4\t\n", "1\t2\t4\t\n"), "block row pointer"},
      {replace("0\t2\t4\t\n", "0\t2\t3\t\n"), "block row pointer"},
      {replace("4\n2\n2\n", "5\n2\n2\n"), "blocks"},
      {replace("-1 0.5 0", "-1 0.5 0x"), "expected a number"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.text.substr(0, 60));
    std::string err;
    EXPECT_EQ(Parse(b.text, &err), -1);
    EXPECT_NE(err.find(b.expect), std::string::npos) << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << "one line";
    EXPECT_EQ(err.rfind("t.dat", 0), 0u) << "starts with the file name: " << err;
  }
  cuspFc3dFileData d;
  char err[256];
  EXPECT_EQ(cusp_fc3d_file_read(&d, err, sizeof(err), "/nonexistent/x.dat"), -1);
  EXPECT_NE(std::string(err).find("cannot open"), std::string::npos);
}

TEST(Fc3dFile, TruncationsAndByteFlipsNeverCrash) {
  // every prefix of the small file, and of the Rover file (dense), and single-byte mutations:
  // either a clean refusal or a well-formed problem; never a crash or a read past the end
  std::string small(kSmall);
  for (size_t len = 0; len < small.size(); len++) {
    std::string err;
    if (Parse(small.substr(0, len), &err) != 0) {
      EXPECT_FALSE(err.empty());
    }
  }
  FILE* f = fopen(DataPath("Rover4609.dat").c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string rover;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), f)) > 0) rover.append(buf, got);
  fclose(f);
  for (size_t len = 0; len < rover.size(); len += 97) {
    std::string err;
    if (Parse(rover.substr(0, len), &err) != 0) {
      EXPECT_FALSE(err.empty());
    }
  }
  uint64_t s = 12345;
  const char alphabet[] = "0123456789-+.eE \t\nx";
  for (int k = 0; k < 3000; k++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    std::string t = small;
    t[(s >> 33) % t.size()] = alphabet[(s >> 17) % (sizeof(alphabet) - 1)];
    std::string err;
    Parse(t, &err);
  }
}

}  // namespace
