// Contact islands (plugin/assemble/island.c), island-local dynamics (plugin/assemble/dynamics.c) and assembly:
// grouping of kinematic trees by contacts and equalities, island dof lists, island Jacobians
// against mj_jac, island inertia against mj_fullM, contact rows against finite differences.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "scene_test_util.h"

extern "C" {
#include "collide/detect.h"
#include "assemble/dynamics.h"
#include "assemble/island.h"
}

namespace {

// three free boxes and a two-link arm (hinge + slide + ball) on a free base; boxes 0 and 2 may be
// welded together
std::string Scene(bool weld) {
  std::string xml = R"(
<mujoco>
  <option timestep="1e-3"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <body name="b0" pos="0 0 0.05"><freejoint/><geom type="box" size=".05 .05 .05"/></body>
    <body name="b1" pos="0.2 0 0.05"><freejoint/><geom type="box" size=".05 .05 .05"/></body>
    <body name="b2" pos="0.4 0 0.05"><freejoint/><geom type="box" size=".05 .05 .05"/></body>
    <body name="base" pos="1 0 0.3"><freejoint/><geom type="sphere" size=".05"/>
      <body name="l1" pos="0 0 0.1"><joint type="hinge" axis="0 1 0"/>
        <joint type="slide" axis="0 0 1"/><geom type="capsule" size=".02 .05"/>
        <body name="l2" pos="0 0 0.1"><joint type="ball"/><geom type="box" size=".02 .02 .05"/>
          <body name="tip" pos="0 0 0.06"><geom type="sphere" size=".02"/></body>
        </body>
      </body>
    </body>
  </worldbody>)";
  if (weld) xml += R"(<equality><weld body1="b0" body2="b2"/></equality>)";
  return xml + "</mujoco>";
}

class Islands : public ::testing::Test {
 protected:
  void Load(bool weld) {
    std::string err;
    m_ = cusp_test::CompileXml(Scene(weld), &err);
    ASSERT_NE(m_, nullptr) << err;
    d_ = mj_makeData(m_);
    mj_forward(m_, d_);
    ASSERT_EQ(cusp_islands_init(&isl_, m_), 0);
  }
  void TearDown() override {
    cusp_islands_free(&isl_);
    if (d_) mj_deleteData(d_);
    if (m_) mj_deleteModel(m_);
  }
  int Body(const char* name) const { return mj_name2id(m_, mjOBJ_BODY, name); }
  std::vector<int> Dofs(int island) const {
    return std::vector<int>(isl_.dofs + isl_.dofadr[island], isl_.dofs + isl_.dofadr[island + 1]);
  }
  mjModel* m_ = nullptr;
  mjData* d_ = nullptr;
  cuspIslands isl_{};
};

TEST_F(Islands, ContactsJoinTreesAndOnlyTreesWithContactsFormIslands) {
  Load(false);
  int b0 = Body("b0"), b1 = Body("b1"), b2 = Body("b2");
  cusp_islands_begin(&isl_, m_, d_);
  cusp_islands_join(&isl_, m_, b0, b1);  // b0 touches b1
  cusp_islands_join(&isl_, m_, b2, 0);   // b2 touches the floor: joins nothing
  cusp_islands_mark(&isl_, m_, b0, b1);
  cusp_islands_mark(&isl_, m_, b2, 0);
  cusp_islands_finish(&isl_, m_);
  ASSERT_EQ(isl_.nisland, 2);
  int i01 = cusp_islands_of(&isl_, m_, b0, b1), i2 = cusp_islands_of(&isl_, m_, b2, 0);
  EXPECT_EQ(i01, 0);  // numbered by smallest tree
  EXPECT_EQ(i2, 1);
  EXPECT_EQ(cusp_islands_of(&isl_, m_, b1, 0), i01);
  std::vector<int> want01 = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  EXPECT_EQ(Dofs(i01), want01);
  std::vector<int> want2 = {12, 13, 14, 15, 16, 17};
  EXPECT_EQ(Dofs(i2), want2);
}

TEST_F(Islands, AnActiveEqualityJoinsTheTreesItTies) {
  Load(true);
  int b0 = Body("b0"), b2 = Body("b2");
  cusp_islands_begin(&isl_, m_, d_);
  cusp_islands_mark(&isl_, m_, b0, 0);
  cusp_islands_mark(&isl_, m_, b2, 0);
  cusp_islands_finish(&isl_, m_);
  ASSERT_EQ(isl_.nisland, 1);
  EXPECT_EQ(cusp_islands_of(&isl_, m_, b0, 0), cusp_islands_of(&isl_, m_, b2, 0));
  EXPECT_EQ(Dofs(0).size(), 12u);  // b0 and b2, not b1
  EXPECT_EQ(Dofs(0)[6], 12);
}

// The island Jacobian equals mj_jac's columns of the island's dofs (the others are 0 in mj_jac),
// for a point on every link of a chain with free, hinge, slide and ball joints; tolerance 1e-15
// (the same products, in the same order).
TEST_F(Islands, IslandJacobianEqualsMujocosColumns) {
  Load(false);
  int nv = m_->nv;
  mj_kinematics(m_, d_);
  mj_comPos(m_, d_);
  // the arm's tree alone as an island
  int tree = m_->body_treeid[Body("base")];
  std::vector<int> dofs;
  for (int j = 0; j < m_->tree_dofnum[tree]; j++) dofs.push_back(m_->tree_dofadr[tree] + j);
  cuspDynamics dyn;
  ASSERT_EQ(cusp_dynamics_init(&dyn, m_, (int)dofs.size()), 0);
  ASSERT_EQ(cusp_dynamics_update(&dyn, m_, d_, dofs.data(), (int)dofs.size()), 0);
  int k = (int)dofs.size();
  for (const char* name : {"base", "l1", "l2", "tip"}) {
    int b = Body(name);
    mjtNum point[3] = {d_->xpos[3 * b] + 0.01, d_->xpos[3 * b + 1] - 0.02,
                       d_->xpos[3 * b + 2] + 0.03};
    std::vector<mjtNum> jp(3 * nv), jr(3 * nv), lp(3 * k), lr(3 * k);
    mj_jac(m_, d_, jp.data(), jr.data(), point, b);
    cusp_dynamics_jac(lp.data(), lr.data(), &dyn, m_, d_, point, b);
    for (int r = 0; r < 3; r++) {
      for (int a = 0; a < k; a++) {
        EXPECT_NEAR(lp[r * k + a], jp[r * nv + dofs[a]], 1e-15) << name;
        EXPECT_NEAR(lr[r * k + a], jr[r * nv + dofs[a]], 1e-15) << name;
      }
    }
  }
  cusp_dynamics_free(&dyn);
}

// The island's effective inertia (Euler, no damping: M) is the island block of mj_fullM; the
// factor solves M x = b for the island block.
TEST_F(Islands, IslandInertiaIsTheBlockOfTheFullMatrix) {
  Load(false);
  int nv = m_->nv;
  std::vector<mjtNum> M(nv * nv);
  mj_fullM(m_, d_, M.data());
  int tree = m_->body_treeid[Body("base")];
  std::vector<int> dofs;
  for (int j = 0; j < m_->tree_dofnum[tree]; j++) dofs.push_back(m_->tree_dofadr[tree] + j);
  int k = (int)dofs.size();
  cuspDynamics dyn;
  ASSERT_EQ(cusp_dynamics_init(&dyn, m_, 2), 0);  // grown by the update
  ASSERT_EQ(cusp_dynamics_update(&dyn, m_, d_, dofs.data(), k), 0);
  ASSERT_EQ(dyn.nv, k);
  ASSERT_TRUE(dyn.identity);
  for (int a = 0; a < k; a++) {
    for (int b = 0; b < k; b++) {
      EXPECT_EQ(dyn.Meff[a * k + b], M[dofs[a] * nv + dofs[b]]) << a << " " << b;
    }
  }
  // solve M_island x = e_0 and check M x = e_0 (relative 1e-12)
  std::vector<mjtNum> x(k, 0.0);
  x[0] = 1;
  cusp_dynamics_solve(x.data(), &dyn, x.data());
  for (int a = 0; a < k; a++) {
    mjtNum s = 0;
    for (int b = 0; b < k; b++) s += M[dofs[a] * nv + dofs[b]] * x[b];
    EXPECT_NEAR(s, a == 0 ? 1.0 : 0.0, 1e-12);
  }
  cusp_dynamics_free(&dyn);
}

}  // namespace

namespace {

// Assembly against finite differences: for a disk on the tip of the arm (free base, hinge, slide,
// ball) touching a tilted plane, the contact's normal row n^T J (the island Jacobian of the
// contact point) times any velocity v equals the rate of change of the detected gap along v,
// (gap(q + e v) - gap(q - e v)) / 2e with e = 1e-6 s: tolerance 1e-6 m/s relative to |v| = 1.
TEST(Assembly, NormalRowMatchesTheFiniteDifferenceOfTheGap) {
  const char* xml = R"(
<mujoco><option timestep="1e-3"/><worldbody>
  <geom name="floor" type="plane" size="5 5 .1" euler="10 -5 0"/>
  <body name="base" pos="0 0 0.3"><freejoint/><geom type="sphere" size=".05"/>
    <body name="l1" pos="0 0 -0.1"><joint type="hinge" axis="0 1 0"/>
      <joint type="slide" axis="0 0 1"/><geom type="capsule" size=".02 .05"/>
      <body name="l2" pos="0 0 -0.1" euler="20 10 0"><joint type="ball"/>
        <geom name="disk" type="cylinder" size="0.05 0.01" pos="0 0 -0.095" euler="0 70 0"/>
      </body>
    </body>
  </body>
</worldbody></mujoco>)";
  std::string err;
  mjModel* m = cusp_test::CompileXml(xml, &err);
  ASSERT_NE(m, nullptr) << err;
  mjData* d = mj_makeData(m);
  int disk = mj_name2id(m, mjOBJ_GEOM, "disk"), floor = mj_name2id(m, mjOBJ_GEOM, "floor");
  mj_forward(m, d);  // M for the dynamics, kinematics for the detection
  cuspContact c[CUSP_MAX_DISK_POINTS];
  int n = cusp_detect_disk(c, m, d, disk, floor, 0.5);
  ASSERT_GE(n, 1);
  std::vector<int> dofs(m->nv);
  for (int j = 0; j < m->nv; j++) dofs[j] = j;
  cuspDynamics dyn;
  ASSERT_EQ(cusp_dynamics_init(&dyn, m, m->nv), 0);
  ASSERT_EQ(cusp_dynamics_update(&dyn, m, d, dofs.data(), m->nv), 0);
  std::vector<mjtNum> jp(3 * m->nv), q0(m->nq), q(m->nq), v(m->nv);
  for (int i = 0; i < m->nq; i++) q0[i] = d->qpos[i];
  const mjtNum e = 1e-6;
  for (int trial = 0; trial < 6; trial++) {
    // velocities: each dof alone for the first ones, then a mix
    for (int j = 0; j < m->nv; j++) v[j] = trial < 3 ? (j == 2 * trial + 6 ? 1 : 0)
                                                  : std::sin(1.0 + j * (trial + 1));
    mjtNum norm = 0;
    for (int j = 0; j < m->nv; j++) norm += v[j] * v[j];
    for (int j = 0; j < m->nv; j++) v[j] /= std::sqrt(norm);
    // analytic: n . (J v) at the lowest point (sub 0)
    for (int i = 0; i < m->nq; i++) d->qpos[i] = q0[i];
    mj_kinematics(m, d);
    mj_comPos(m, d);
    cusp_detect_disk(c, m, d, disk, floor, 0.5);
    cusp_dynamics_jac(jp.data(), nullptr, &dyn, m, d, c[0].pos, m->geom_bodyid[disk]);
    mjtNum vp[3];
    mju_mulMatVec(vp, jp.data(), v.data(), 3, m->nv);
    mjtNum analytic = mju_dot3(vp, c[0].frame + 6);
    mjtNum gap[2];
    for (int s = 0; s < 2; s++) {
      for (int i = 0; i < m->nq; i++) q[i] = q0[i];
      mj_integratePos(m, q.data(), v.data(), s ? -e : e);
      for (int i = 0; i < m->nq; i++) d->qpos[i] = q[i];
      mj_kinematics(m, d);
      mj_comPos(m, d);
      cuspContact cs[CUSP_MAX_DISK_POINTS];
      ASSERT_GE(cusp_detect_disk(cs, m, d, disk, floor, 0.5), 1);
      gap[s] = cs[0].gap;
    }
    EXPECT_NEAR(analytic, (gap[0] - gap[1]) / (2 * e), 1e-6) << "trial " << trial;
  }
  cusp_dynamics_free(&dyn);
  mj_deleteData(d);
  mj_deleteModel(m);
}

}  // namespace
