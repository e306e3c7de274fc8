// The rigid island solve's two linear-algebra paths: the Newton step through the island's bodies
// (solve_by_bodies, the default: a small LU per patch and one of the dofs' capacitance) and the
// dense LU of all its unknowns. They take different rounding, hence different iterates, but solve
// the same problem to the same tolerance: from the same state, one step of each gives the same
// velocities. Scene: the pile of mixed shapes in a bin (mjcf/pile_bin.xml: islands of up to 100
// unknowns, hyperstatic faces), under two integrators.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "scene_test_util.h"

namespace {

class IslandSolve : public cusp_test::SceneTest {
 protected:
  void TearDown() override {
    if (dense_d_) mj_deleteData(dense_d_);
    if (dense_m_) mj_deleteModel(dense_m_);
    SceneTest::TearDown();
  }
  mjModel* dense_m_ = nullptr;
  mjData* dense_d_ = nullptr;
};

// From the state of the default run at every step, one step of each path: the velocities agree
// within 1e-7 m/s and rad/s (both solve to the natural residual 1e-10 of the scaled problem; a
// hyperstatic island's impulses are not unique, its velocities are), and the paths do differ
// (some step is not bitwise the same, so the body path was taken). Both runs take the monotone
// line search (line_search_memory 1, set here; the default is the non-monotone 5): Coulomb
// friction may have several answers (a box on the floor at rest in one answer and turning at
// 0.019 rad/s in the other, both within the tolerance: the non-monotone search reached each
// from one path's rounding, pile_bin under Euler), and which one a search reaches is not what
// this test compares.
TEST_F(IslandSolve, StepThroughTheBodiesGivesTheVelocitiesOfTheDenseLU) {
  for (int integrator : {mjINT_IMPLICITFAST, mjINT_EULER}) {
    SCOPED_TRACE("integrator " + std::to_string(integrator));
    cusp_config_override_clear();
    char err[256] = "";
    ASSERT_EQ(cusp_config_override_set("line_search_memory", "1", err, sizeof(err)), 0) << err;
    LoadFile("pile_bin.xml");
    ASSERT_EQ(cusp_config_override_set("solve_by_bodies", "false", err, sizeof(err)), 0) << err;
    std::string path = std::string(CUSP_SOURCE_DIR) + "/mjcf/pile_bin.xml";
    dense_m_ = mj_loadXML(path.c_str(), nullptr, err, sizeof(err));
    ASSERT_NE(dense_m_, nullptr) << err;
    dense_d_ = mj_makeData(dense_m_);
    m_->opt.integrator = dense_m_->opt.integrator = integrator;
    const int spec = mjSTATE_INTEGRATION;
    std::vector<mjtNum> state(mj_stateSize(m_, spec));
    ASSERT_EQ(state.size(), (size_t)mj_stateSize(dense_m_, spec));
    mjtNum worst = 0;
    int differ = 0, steps = 0;
    for (int i = 0; i < 600; i++) {
      mj_getState(m_, d_, state.data(), spec);
      mj_setState(dense_m_, dense_d_, state.data(), spec);
      mj_step(m_, d_);
      mj_step(dense_m_, dense_d_);
      ASSERT_TRUE(Finite());
      for (int k = 0; k < m_->nv; k++) {
        mjtNum dv = std::fabs(d_->qvel[k] - dense_d_->qvel[k]);
        worst = std::fmax(worst, dv);
        differ += dv != 0;
      }
      steps++;
    }
    EXPECT_LE(worst, 1e-7) << "largest velocity difference over " << steps << " steps";
    EXPECT_GT(differ, 0) << "the two paths gave bitwise the same velocities: the body path ran?";
    mj_deleteData(dense_d_);
    mj_deleteModel(dense_m_);
    dense_d_ = nullptr;
    dense_m_ = nullptr;
    Unload();
  }
}

}  // namespace
