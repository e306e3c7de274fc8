// Collision layer, pair by pair: disk detection (plugin/collide/detect.c) against closed forms where the
// geometry gives one (plane, sphere, box face: tolerance 1e-12 m) and against MuJoCo's own
// distance query (mj_geomDistance) where it does not (box edge, capsule, ellipsoid, cylinder,
// convex mesh: tolerance 1e-6 m, the MPR and GJK tolerances); patch detection (plugin/
// patch_detect.c) through one step without gravity or motion, whose published gaps are those of
// the configuration itself; the normal right-hand side by start-of-step gap (collide/contact.h).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "scene_test_util.h"

extern "C" {
#include "publish/contacts_api.h"
#include "collide/contact.h"
#include "collide/detect.h"
}

namespace {

class Collide : public cusp_test::SceneTest {
 protected:
  void Load(const std::string& worldbody, const std::string& config = "",
            const std::string& asset = "") {
    std::string xml = R"(<mujoco><option gravity="0 0 0" timestep="1e-3"/>)";
    if (!config.empty()) {
      xml += R"(<extension><plugin plugin="cusp.contact"><instance name="cusp">)" + config +
             "</instance></plugin></extension>";
    }
    xml += "<asset>" + asset + "</asset><worldbody>" + worldbody + "</worldbody></mujoco>";
    SceneTest::Load(xml);
    mj_kinematics(m_, d_);
    mj_comPos(m_, d_);
  }
  int Geom(const char* name) const { return mj_name2id(m_, mjOBJ_GEOM, name); }
  std::vector<cuspContact> Detect(const char* disk, const char* other, double margin) {
    std::vector<cuspContact> c(CUSP_MAX_DISK_POINTS);
    int n = cusp_detect_disk(c.data(), m_, d_, Geom(disk), Geom(other), margin);
    c.resize(n);
    return c;
  }
};

const char* kDisk = R"(<geom name="disk" type="cylinder" size="0.05 0.01"/>)";

TEST_F(Collide, DiskTiltedOverPlaneTouchesWithItsLowestRimPoint) {
  const double z = 0.035, tilt = 30 * M_PI / 180;
  char body[256];
  std::snprintf(body, sizeof(body), R"(<body pos="0 0 %g" euler="30 0 0">%s</body>)", z, kDisk);
  Load(std::string(R"(<geom name="floor" type="plane" size="1 1 .1"/>)") + body);
  auto c = Detect("disk", "floor", 0.005);
  ASSERT_GE(c.size(), 1u);
  double lowest = z - 0.01 * std::cos(tilt) - 0.05 * std::sin(tilt);
  EXPECT_NEAR(c[0].gap, lowest, 1e-12);
  EXPECT_NEAR(c[0].frame[8], 1.0, 1e-12);  // normal +z, from the floor to the disk
  for (const auto& k : c) EXPECT_LE(k.gap, 0.005);
}

TEST_F(Collide, DiskStandingOnItsRimTouchesAtBothEndsOfTheSegment) {
  Load(std::string(R"(<geom name="floor" type="plane" size="1 1 .1"/>)") +
       R"(<body pos="0 0 0.051" euler="0 90 0">)" + kDisk + "</body>");
  auto c = Detect("disk", "floor", 0.005);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NEAR(c[0].gap, 0.001, 1e-12);
  EXPECT_NEAR(c[1].gap, 0.001, 1e-12);
  EXPECT_NEAR(std::fabs(c[0].pos[0] - c[1].pos[0]), 0.02, 1e-12);  // the two faces, 2 hz apart
}

TEST_F(Collide, DiskUnderSphereGapAlongTheAxis) {
  Load(std::string(R"(<body pos="0 0 0">)") + kDisk +
       R"(</body><body pos="0.01 0 0.042"><geom name="ball" type="sphere" size="0.03"/></body>)");
  auto c = Detect("disk", "ball", 0.005);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].gap, 0.042 - 0.01 - 0.03, 1e-12);
  EXPECT_NEAR(c[0].frame[8], -1.0, 1e-12);  // from the sphere down to the disk
}

TEST_F(Collide, DiskFlatOnABoxFaceRestsOnThreeRimPoints) {
  Load(std::string(R"(<geom name="table" type="box" size="0.2 0.2 0.05" pos="0 0 0.05"/>)") +
       R"(<body pos="0.02 0.03 0.1115">)" + kDisk + "</body>");
  auto c = Detect("disk", "table", 0.005);
  ASSERT_EQ(c.size(), 3u);
  for (const auto& k : c) {
    EXPECT_NEAR(k.gap, 0.0015, 1e-12);
    EXPECT_NEAR(k.frame[8], 1.0, 1e-12);
  }
}

// Two disks end on (tip on base, two arms meeting face to face): the upper one rests on the
// lower one's round face with its rim points, each at the faces' separation (3 mm; 1e-9: the
// gaps are closed form). Coaxial, all three rim points are on the face; offset sideways, the rim
// points beyond the lower face's edge are dropped.
TEST_F(Collide, DiskFlatOnAnotherDisksFaceRestsOnItsRimPoints) {
  for (double offset : {0.0, 0.02}) {
    char upper[256];
    std::snprintf(upper, sizeof(upper),
                  R"(<body pos="%g 0 0.023"><geom name="upper" type="cylinder" size="0.05 0.01"/>)"
                  "</body>",
                  offset);
    Load(std::string(R"(<body><geom name="lower" type="cylinder" size="0.05 0.01"/></body>)") +
         upper);
    auto c = Detect("upper", "lower", 0.005);
    if (offset == 0) {
      ASSERT_EQ(c.size(), 3u);
    } else {
      ASSERT_GE(c.size(), 1u);
      ASSERT_LE(c.size(), 2u);  // at 2 cm, at least one of three rim points 120 deg apart is off
    }
    for (const auto& k : c) {
      EXPECT_NEAR(k.gap, 0.003, 1e-9);
      EXPECT_NEAR(k.frame[8], 1.0, 1e-9);  // normal +z, from the lower disk to the upper one
      EXPECT_LE(std::hypot(k.pos[0], k.pos[1]), 0.05 * (1 + 1e-9));  // on the lower face
    }
    Unload();
  }
}

// Pairs without a closed form, 3 mm apart: the gap agrees with MuJoCo's distance between the same
// geoms (GJK), and the normal with the direction of its shortest segment.
TEST_F(Collide, ConvexPairsAgreeWithMujocosDistance) {
  const char* others[] = {
      R"(<body pos="0.08 0.01 0.07" euler="30 45 10"><geom name="o" type="box" size="0.03 0.02 0.04"/></body>)",
      R"(<body pos="0.02 0.06 0.055" euler="80 0 20"><geom name="o" type="capsule" size="0.02 0.05"/></body>)",
      R"(<body pos="0.07 -0.02 0.05" euler="10 20 30"><geom name="o" type="ellipsoid" size="0.03 0.02 0.04"/></body>)",
      R"(<body pos="0.09 0.0 0.03" euler="90 0 0"><geom name="o" type="cylinder" size="0.03 0.03"/></body>)",
      R"(<body pos="0.06 0.06 0.05" euler="20 30 40"><geom name="o" type="mesh" mesh="tet"/></body>)",
  };
  const char* asset = R"(<mesh name="tet" vertex="0 0 0  0.04 0 0  0 0.04 0  0 0 0.04"/>)";
  for (const char* other : others) {
    Unload();
    Load(std::string(R"(<body pos="0 0 0" euler="5 10 0">)") + kDisk + "</body>" + other, "",
         asset);
    // move the other geom along the shortest segment until it is 3 mm from the disk (within the
    // default margin of 5 mm, where detection must report the distance)
    mjtNum fromto[6];
    mjtNum far = mj_geomDistance(m_, d_, Geom("disk"), Geom("o"), 1.0, fromto);
    mjtNum u[3] = {fromto[3] - fromto[0], fromto[4] - fromto[1], fromto[5] - fromto[2]};
    mju_normalize3(u);
    int body = m_->geom_bodyid[Geom("o")];
    mju_addToScl3(m_->body_pos + 3 * body, u, -(far - 0.003));
    mj_kinematics(m_, d_);
    mj_comPos(m_, d_);
    mjtNum dist = mj_geomDistance(m_, d_, Geom("disk"), Geom("o"), 0.005, fromto);
    ASSERT_LT(dist, 0.004) << other;
    auto c = Detect("disk", "o", 0.005);
    ASSERT_GE(c.size(), 1u) << other;
    mjtNum best = c[0].gap;
    for (const auto& k : c) best = std::fmin(best, k.gap);
    EXPECT_NEAR(best, dist, 1e-6) << other;
    // the normal points from the other geom towards the disk: along from -> to reversed
    mjtNum dir[3] = {fromto[0] - fromto[3], fromto[1] - fromto[4], fromto[2] - fromto[5]};
    mjtNum len = mju_normalize3(dir);
    if (len > 1e-4) {
      EXPECT_GT(mju_dot3(dir, c[0].frame + 6), 0.999) << other;
    }
  }
}

// A disk at random poses around a tilted box (beyond faces, over edges and corners, far away,
// overlapping a face or deeper): detection, which decides pairs far from the box and disks beyond
// one face in closed form, finds bitwise the contacts of the distance query's route
// (cusp_detect_disk_by_query).
TEST_F(Collide, DiskAroundABoxClosedFormsMatchTheDistanceQuery) {
  Load(std::string(R"(<body euler="20 35 10"><geom name="o" type="box" size="0.2 0.1 0.03"/>)") +
       R"(</body><body name="d" pos="0 0 0.2"><freejoint/>)" + kDisk + "</body>");
  const double margin = 0.005;
  int body = mj_name2id(m_, mjOBJ_BODY, "d"), adr = m_->jnt_qposadr[m_->body_jntadr[body]];
  unsigned state = 12345;
  auto uniform = [&state](double lo, double hi) {
    state = state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (state >> 8) / double(1u << 24);
  };
  int far = 0, near = 0, flat = 0;
  for (int trial = 0; trial < 20000; trial++) {
    // centre up to 8 cm beyond the box's faces; any orientation, or (one in four) lying nearly
    // flat on the large face
    mjtNum local[3] = {uniform(-0.28, 0.28), uniform(-0.18, 0.18), uniform(-0.11, 0.11)};
    mjtNum quat[4] = {uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
    const mjtNum* R = d_->geom_xmat + 9 * Geom("o");
    if (trial % 4 == 0) {
      local[2] = 0.03 + 0.01 + uniform(-0.004, 0.006);
      mjtNum box_quat[4], tilt[4] = {1, uniform(-0.01, 0.01), uniform(-0.01, 0.01), 0};
      mju_mat2Quat(box_quat, R);
      mju_mulQuat(quat, box_quat, tilt);
    }
    mju_normalize4(quat);
    mju_mulMatVec3(d_->qpos + adr, R, local);
    mju_copy4(d_->qpos + adr + 3, quat);
    mj_kinematics(m_, d_);
    mj_comPos(m_, d_);
    std::vector<cuspContact> ref(CUSP_MAX_DISK_POINTS);
    int nref = cusp_detect_disk_by_query(ref.data(), m_, d_, Geom("disk"), Geom("o"), margin);
    auto c = Detect("disk", "o", margin);
    ASSERT_EQ((int)c.size(), nref) << "trial " << trial;
    for (int k = 0; k < nref; k++) {
      EXPECT_EQ(c[k].sub, ref[k].sub) << "trial " << trial;
      EXPECT_EQ(c[k].gap, ref[k].gap) << "trial " << trial;
      for (int x = 0; x < 3; x++) EXPECT_EQ(c[k].pos[x], ref[k].pos[x]) << "trial " << trial;
      for (int x = 0; x < 9; x++) EXPECT_EQ(c[k].frame[x], ref[k].frame[x]) << "trial " << trial;
    }
    far += nref == 0;
    near += nref > 0;
    flat += nref >= 3;
  }
  EXPECT_GT(far, 5000);  // every regime sampled
  EXPECT_GT(near, 2000);
  EXPECT_GT(flat, 500);
}

// Places the free disk of the scene at (box-frame position local, box-frame orientation
// local_quat) of geom o, and compares the smallest gap detection reports with MuJoCo's signed
// distance (mj_geomDistance). Counts the pairs within the margin apart and overlapping and the
// largest difference of each.
struct DistanceTally {
  int apart = 0, overlapping = 0, beyond = 0;
  double worst_apart = 0, worst_overlap = 0;
};

class CollideDistance : public Collide {
 protected:
  void Place(const mjtNum local[3], const mjtNum local_quat[4]) {
    int body = mj_name2id(m_, mjOBJ_BODY, "d"), adr = m_->jnt_qposadr[m_->body_jntadr[body]];
    const mjtNum* R = d_->geom_xmat + 9 * Geom("o");
    mjtNum other_quat[4];
    mju_mat2Quat(other_quat, R);
    mju_mulQuat(d_->qpos + adr + 3, other_quat, local_quat);
    mju_normalize4(d_->qpos + adr + 3);
    mju_mulMatVec3(d_->qpos + adr, R, local);
    mju_addTo3(d_->qpos + adr, d_->geom_xpos + 3 * Geom("o"));
    mj_kinematics(m_, d_);
    mj_comPos(m_, d_);
  }
  void Compare(DistanceTally* t, double margin, double tol) {
    mjtNum dist = mj_geomDistance(m_, d_, Geom("disk"), Geom("o"), margin, nullptr);
    if (dist >= margin) return;
    auto c = Detect("disk", "o", margin);
    double least = margin;
    for (const auto& k : c) least = std::fmin(least, k.gap);
    double err = std::fabs(least - dist);
    if (dist > 0) {
      t->apart++;
      t->worst_apart = std::fmax(t->worst_apart, err);
    } else {
      t->overlapping++;
      t->worst_overlap = std::fmax(t->worst_overlap, err);
    }
    if (err > tol && t->beyond++ < 5) {
      ADD_FAILURE() << "reported " << least << " m, mj_geomDistance " << dist << " m, "
                    << c.size() << " contacts";
    }
  }
  // a random unit quaternion: the disk's axis within max_tilt (rad) of local z, any spin about it,
  // turned upside down when flip
  template <class Uniform>
  static void NearAxis(mjtNum q[4], Uniform& uniform, double max_tilt, bool flip) {
    mjtNum tilt_axis[3] = {uniform(-1, 1), uniform(-1, 1), 0}, zaxis[3] = {0, 0, 1};
    mjtNum tilt[4], spin[4], tmp[4], turn[4] = {flip ? 0.0 : 1.0, flip ? 1.0 : 0.0, 0, 0};
    mju_normalize3(tilt_axis);
    mju_axisAngle2Quat(tilt, tilt_axis, uniform(0, max_tilt));
    mju_axisAngle2Quat(spin, zaxis, uniform(0, 2 * M_PI));
    mju_mulQuat(tmp, tilt, spin);
    mju_mulQuat(q, turn, tmp);
  }
};

// A disk near the edges and corners of a tilted box, nearly flat on one of its faces (its axis
// within 10 deg of the face normal: the face rule's range, whose rim points may hang over the
// edge) or at any orientation, from 3 mm into the box's face plane to 6 mm above it: the
// smallest reported gap is MuJoCo's signed distance within 1e-6 m (its GJK tolerance; the rim
// points' gaps are exact for points over the face), apart and overlapping alike. Before the
// face rule checked its rim points against the distance (and overlaps took MPR's depth), 9442 of
// 16992 poses read beyond it: apart up to 4.9 mm too far, overlapping up to 73 mm off.
TEST_F(CollideDistance, DiskNearBoxEdgesAndCornersReadsMujocosDistance) {
  Load(std::string(R"(<body euler="20 35 10"><geom name="o" type="box" size="0.2 0.1 0.03"/>)") +
       R"(</body><body name="d" pos="0 0 0.2"><freejoint/>)" + kDisk + "</body>");
  const mjtNum* size = m_->geom_size + 3 * Geom("o");
  unsigned state = 2468;
  auto uniform = [&state](double lo, double hi) {
    state = state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (state >> 8) / double(1u << 24);
  };
  DistanceTally t;
  for (int trial = 0; trial < 20000; trial++) {
    // a point on an edge (one coordinate free) or a corner of the box, in its frame
    int face = trial % 3, free_axis = (face + 1 + (trial / 3) % 2) % 3;
    mjtNum sign[3], point[3];
    for (int k = 0; k < 3; k++) {
      sign[k] = uniform(-1, 1) < 0 ? -1.0 : 1.0;
      point[k] = sign[k] * size[k];
    }
    if (trial % 5 != 0) point[free_axis] = uniform(-size[free_axis], size[free_axis]);
    // orientation: the face's normal is local z turned onto box axis `face`
    mjtNum q[4], to_face[4] = {1, 0, 0, 0}, near[4];
    const mjtNum xaxis[3] = {1, 0, 0}, yaxis[3] = {0, 1, 0};
    if (face == 0) mju_axisAngle2Quat(to_face, yaxis, M_PI / 2);
    if (face == 1) mju_axisAngle2Quat(to_face, xaxis, -M_PI / 2);
    NearAxis(near, uniform, 10 * M_PI / 180, sign[face] < 0);
    mju_mulQuat(q, to_face, near);
    if (trial % 4 == 3) {
      for (int k = 0; k < 4; k++) q[k] = uniform(-1, 1);
    }
    // centre: beside the point within 6 cm in the face's plane, above it by the disk's
    // half-thickness and -3 to +6 mm
    mjtNum local[3];
    for (int k = 0; k < 3; k++) local[k] = point[k] + (k == face ? 0 : uniform(-0.06, 0.06));
    local[face] += sign[face] * (0.01 + uniform(-0.003, 0.006));
    Place(local, q);
    Compare(&t, 0.005, 1e-6);
  }
  std::printf("apart %d (worst %.3g m), overlapping %d (worst %.3g m), %d beyond 1e-6 m\n",
              t.apart, t.worst_apart, t.overlapping, t.worst_overlap, t.beyond);
  EXPECT_GT(t.apart, 2000);  // both regimes sampled
  EXPECT_GT(t.overlapping, 2000);
  EXPECT_EQ(t.beyond, 0);
}

// The same on the round end of another disk (an arm's tip on another's base): a disk nearly
// coaxial (within 10 deg), reaching over the end's rim by up to its radius, or at any
// orientation (before: 5868 of 9187 poses beyond 1e-6 m, apart up to 4.8 mm too far).
TEST_F(CollideDistance, DiskOverAnotherDisksRimReadsMujocosDistance) {
  Load(std::string(R"(<body euler="20 35 10"><geom name="o" type="cylinder" size="0.06 0.02"/>)") +
       R"(</body><body name="d" pos="0 0 0.2"><freejoint/>)" + kDisk + "</body>");
  unsigned state = 1357;
  auto uniform = [&state](double lo, double hi) {
    state = state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (state >> 8) / double(1u << 24);
  };
  DistanceTally t;
  for (int trial = 0; trial < 10000; trial++) {
    mjtNum side = trial % 2 ? 1 : -1, q[4];
    NearAxis(q, uniform, 10 * M_PI / 180, side < 0);
    if (trial % 4 == 3) {
      for (int k = 0; k < 4; k++) q[k] = uniform(-1, 1);
    }
    mjtNum angle = uniform(0, 2 * M_PI), radial = uniform(0.03, 0.11);
    mjtNum local[3] = {radial * std::cos(angle), radial * std::sin(angle),
                       side * (0.02 + 0.01 + uniform(-0.003, 0.006))};
    Place(local, q);
    Compare(&t, 0.005, 1e-6);
  }
  std::printf("apart %d (worst %.3g m), overlapping %d (worst %.3g m), %d beyond 1e-6 m\n",
              t.apart, t.worst_apart, t.overlapping, t.worst_overlap, t.beyond);
  EXPECT_GT(t.apart, 1000);
  EXPECT_GT(t.overlapping, 1000);
  EXPECT_EQ(t.beyond, 0);
}

// Patch contact records after one step without gravity or motion: gaps of the configuration.
TEST_F(Collide, PatchOfABoxOnAPlaneAndOfASphereOnABoxFace) {
  Load(R"(<geom name="floor" type="plane" size="1 1 .1"/>
          <body name="crate" pos="0 0 0.052"><freejoint/>
            <geom type="box" size="0.05 0.04 0.05" contype="0" conaffinity="0"/></body>
          <geom name="table" type="box" size="0.1 0.1 0.05" pos="0.5 0 0.05"/>
          <body name="ball" pos="0.5 0 0.133"><freejoint/>
            <geom type="sphere" size="0.03" contype="0" conaffinity="0"/></body>)",
       R"(<config key="bodies" value="crate ball"/>)");
  mj_step(m_, d_);
  int n = cusp_contacts_count(m_, d_, 0);
  ASSERT_EQ(n, 2);
  std::vector<double> pos(3 * n), frame(9 * n), imp(4 * n), gap(n);
  std::vector<int> mode(n), kind(n), geom(2 * n), body(2 * n);
  ASSERT_EQ(cusp_contacts_copy(m_, d_, 0, n, pos.data(), frame.data(), imp.data(), gap.data(),
                               mode.data(), kind.data(), geom.data(), body.data()),
            n);
  int crate = mj_name2id(m_, mjOBJ_BODY, "crate"), ball = mj_name2id(m_, mjOBJ_BODY, "ball");
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(kind[i], CUSP_RECORD_PATCH);
    EXPECT_NEAR(frame[9 * i + 8], 1.0, 1e-12);  // both supports face up
    if (body[2 * i] == crate) {
      EXPECT_NEAR(gap[i], 0.002, 1e-12);
    }
    if (body[2 * i] == ball) {
      EXPECT_NEAR(gap[i], 0.133 - 0.03 - 0.1, 1e-12);
    }
    EXPECT_EQ(imp[4 * i], 0);  // an open gap and no motion: no impulse
  }
  EXPECT_TRUE(body[0] == crate || body[2] == crate);
  EXPECT_TRUE(body[0] == ball || body[2] == ball);
}

// The normal right-hand side by start-of-step gap g0 (collide/contact.h): held from the slop deep to
// the rest band open (rigid patches' vertices), closed exactly when open, pushed out of all of its
// depth when deeper than the slop; exact values.
TEST(NormalRhs, ByStartGapHeldAtRestClosedWhenOpenPushedOutWhenDeeperThanTheSlop) {
  const double h = 2e-3, alpha = 0.2, cap = 0.1, vn = -0.3;  // s, -, m/s, m/s (approaching)
  const double band = cusp_rest_gap(h), slop = 1e-7;         // m
  EXPECT_DOUBLE_EQ(band, 2e-9);
  auto rhs = [&](double g0, double rest_gap, double rest_depth) {
    return cusp_normal_rhs(vn, g0 + h * vn, h, alpha, cap, rest_gap, rest_depth);  // g at q*
  };
  for (double g0 : {0.0, 0.9 * band, -0.9 * band, 0.99 * band, -0.99 * band}) {
    EXPECT_EQ(rhs(g0, band, band), vn) << g0;
  }
  for (double g0 : {0.99 * band, -1.1 * band, -0.5 * slop, -0.99 * slop}) {
    EXPECT_EQ(rhs(g0, band, slop), vn) << g0;
  }
  EXPECT_EQ(rhs(1.1 * band, band, slop), (1.1 * band + h * vn) / h);
  EXPECT_DOUBLE_EQ(rhs(-1.1 * band, band, band), vn - alpha * 1.1 * band / h);
  EXPECT_DOUBLE_EQ(rhs(-1.1 * slop, band, slop), vn - alpha * 1.1 * slop / h);  // all of it
  EXPECT_DOUBLE_EQ(rhs(-1.0, band, slop), vn - cap);  // a deep start: capped push-out
  // without the band (disk contacts): closed from g0 = 0 up, pushed out below
  EXPECT_EQ(rhs(0.9 * band, 0, 0), (0.9 * band + h * vn) / h);
  EXPECT_DOUBLE_EQ(rhs(-0.9 * band, 0, 0), vn - alpha * 0.9 * band / h);
}

// A flat face resting on a plane, its vertices' start gaps either side of 0 by round-off (affine in
// the vertex position x): the velocity changes the rows ask of the vertices (rhs - vn) are those
// of a rigid motion (affine in x) with the band, and not without it (their slope changes at 0:
// 1 / h open, gap_alpha / h penetrating).
TEST(NormalRhs, AFaceStraddlingTouchAsksForARigidMotionWithinTheRestBand) {
  const double h = 2e-3, alpha = 0.2, cap = 0.1, vn = 0.0;
  auto second_difference = [&](double rest_gap) {
    double ask[4];
    for (int k = 0; k < 4; k++) {
      double g0 = 1e-10 * (k - 1.5);  // m: -1.5e-10 .. 1.5e-10
      ask[k] = cusp_normal_rhs(vn, g0 + h * vn, h, alpha, cap, rest_gap, rest_gap) - vn;
    }
    double worst = 0;
    for (int k = 1; k < 3; k++) {
      worst = std::fmax(worst, std::fabs(ask[k - 1] - 2 * ask[k] + ask[k + 1]));
    }
    return worst;  // m/s
  };
  EXPECT_EQ(second_difference(cusp_rest_gap(h)), 0);
  EXPECT_GT(second_difference(0), 1e-8);  // (1 - alpha) 1e-10 / h = 4e-8 m/s
}

}  // namespace
