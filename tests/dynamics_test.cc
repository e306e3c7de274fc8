// Effective inertia of the contact correction (plugin/assemble/dynamics.c): under Euler it must be
// the matrix MuJoCo's free step factored, M + h diag(b) with b the derivative of every damping
// force Euler treats implicitly (dof damping, polynomial dof damping at the step's starting
// velocity, the damping of an actuator on the joint), and a damped chain thrown onto the floor
// under Euler gains no energy beyond its stock twin's.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "scene_test_util.h"

extern "C" {
#include "assemble/dynamics.h"
#include "cli/stock_twin.h"
#include "state.h"
}

namespace {

// A zero-gravity chain of three hinged links lying 1 mm above the floor, each carrying a contact
// disk at its end. damping: the hinges' damping attribute (one value, or three: linear and the
// two polynomial coefficients); act_damping > 0: a motor on the second hinge with that damping.
std::string Chain(double h, const std::string& damping, double act_damping) {
  char xml[4096];
  std::snprintf(xml, sizeof(xml), R"(
<mujoco>
  <option timestep="%g" integrator="Euler" gravity="0 0 0"><flag energy="enable"/></option>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="disks" value="d0 d1 d2"/><config key="environment" value="floor"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body pos="0 0 0.021">
      <joint name="j0" type="hinge" axis="0 1 0" damping="%s"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.005" mass="0.05" contype="0" conaffinity="0"/>
      <geom name="d0" type="cylinder" pos="0.1 0 0" zaxis="1 0 0" size="0.02 0.004" mass="0.02"
            contype="0" conaffinity="0"/>
      <body pos="0.1 0 0">
        <joint name="j1" type="hinge" axis="0 1 0" damping="%s"/>
        <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.005" mass="0.05" contype="0" conaffinity="0"/>
        <geom name="d1" type="cylinder" pos="0.1 0 0" zaxis="1 0 0" size="0.02 0.004" mass="0.02"
              contype="0" conaffinity="0"/>
        <body pos="0.1 0 0">
          <joint name="j2" type="hinge" axis="0 1 0" damping="%s"/>
          <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.005" mass="0.05" contype="0" conaffinity="0"/>
          <geom name="d2" type="cylinder" pos="0.1 0 0" zaxis="1 0 0" size="0.02 0.004" mass="0.02"
                contype="0" conaffinity="0"/>
        </body>
      </body>
    </body>
  </worldbody>
  %s
</mujoco>)",
                h, damping.c_str(), damping.c_str(), damping.c_str(),
                act_damping > 0
                    ? (std::string("<actuator><motor joint=\"j1\" damping=\"") +
                       std::to_string(act_damping) + "\"/></actuator>")
                          .c_str()
                    : "");
  return xml;
}

class Dynamics : public cusp_test::SceneTest {
 protected:
  void Load(const std::string& xml, bool stock = false) {
    std::string err;
    m_ = cusp_test::CompileXml(xml, &err, stock);
    ASSERT_NE(m_, nullptr) << err;
    d_ = mj_makeData(m_);
  }
  // the island Meff of all dofs after one step from qvel v0
  std::vector<mjtNum> MeffAfterStep(const std::vector<mjtNum>& v0) {
    for (int i = 0; i < m_->nv; i++) d_->qvel[i] = v0[i];
    mj_step(m_, d_);
    cuspDynamics dyn;
    EXPECT_EQ(cusp_dynamics_init(&dyn, m_, m_->nv), 0);
    std::vector<int> dofs(m_->nv);
    for (int i = 0; i < m_->nv; i++) dofs[i] = i;
    EXPECT_EQ(cusp_dynamics_update(&dyn, m_, d_, dofs.data(), m_->nv), 0);
    std::vector<mjtNum> meff(dyn.Meff, dyn.Meff + m_->nv * m_->nv);
    cusp_dynamics_free(&dyn);
    return meff;
  }
  mjtNum Mdiag(int i) const { return d_->M[m_->M_rowadr[i] + m_->M_rownnz[i] - 1]; }
};

// Plain linear dof damping: M + h diag(damping), exactly.
TEST_F(Dynamics, EulerLinearDampingIsAddedExactly) {
  Load(Chain(2e-4, "0.05", 0));
  std::vector<mjtNum> meff = MeffAfterStep({2.0, -1.0, 0.5});
  for (int i = 0; i < 3; i++) EXPECT_EQ(meff[i * 3 + i], Mdiag(i) + 2e-4 * 0.05) << i;
}

// Polynomial damping and an actuator's damping on a joint (MuJoCo 4): b = d0 + 2 d1 |v| + 3 d2 v^2
// at the step's starting velocity, plus the actuator's damping on j1.
TEST_F(Dynamics, EulerPolynomialAndActuatorDampingAreTheFactoredOnes) {
  const double h = 2e-4, c0 = 0.05, c1 = 0.02, c2 = 0.01, ca = 0.3;
  Load(Chain(h, "0.05 0.02 0.01", ca));
  std::vector<mjtNum> v0 = {2.0, -1.0, 0.5};
  std::vector<mjtNum> meff = MeffAfterStep(v0);
  for (int i = 0; i < 3; i++) {
    double v = v0[i];
    double b = c0 + 2 * c1 * std::fabs(v) + 3 * c2 * v * v + (i == 1 ? ca : 0);
    EXPECT_NEAR(meff[i * 3 + i], Mdiag(i) + h * b, 1e-13 * Mdiag(i)) << i;
  }
  // off the diagonal Meff is M
  EXPECT_EQ(meff[1 * 3 + 0], d_->M[m_->M_rowadr[1]]);
}

// Without damping Euler integrates explicitly: Meff = M.
TEST_F(Dynamics, EulerWithoutDampingIsM) {
  Load(Chain(2e-4, "0", 0));
  std::vector<mjtNum> meff = MeffAfterStep({2.0, -1.0, 0.5});
  for (int i = 0; i < 3; i++) EXPECT_EQ(meff[i * 3 + i], Mdiag(i)) << i;
}

// The damped chain swung onto the floor (no gravity, no actuation: energy can only go) under
// Euler at 1.2e-4 .. 4e-4 s: the largest energy increase over 0.3 s stays within the stock twin's
// + 1 mJ, with linear, polynomial and actuator damping.
TEST_F(Dynamics, EulerDampedChainOnTheFloorGainsNoEnergy) {
  struct Damping {
    const char* joint;
    double actuator;
  } cases[] = {{"0.05", 0}, {"0.05 0.02 0.01", 0.3}, {"0.2", 0}};
  for (const Damping& c : cases) {
    for (double h : {1.2e-4, 2e-4, 4e-4}) {
      double gain[2];
      for (int stock = 0; stock < 2; stock++) {
        Load(Chain(h, c.joint, c.actuator), stock);
        d_->qvel[0] = 6;  // rad/s about y: the chain swings down onto the floor
        d_->qvel[1] = 3;
        mj_forward(m_, d_);
        mjtNum e0 = d_->energy[0] + d_->energy[1], emax = e0;
        int touched = 0;
        for (int i = 0; i < (int)(0.3 / h); i++) {
          mj_step(m_, d_);
          emax = std::fmax(emax, d_->energy[0] + d_->energy[1]);
          touched |= stock ? d_->ncon > 0
                           : d_->plugin_state[m_->plugin_stateadr[0] + CUSP_STATE_NCONTACT] > 0;
        }
        EXPECT_TRUE(touched) << "the chain never reached the floor";
        gain[stock] = emax - e0;
        TearDown();
        m_ = nullptr;
        d_ = nullptr;
      }
      SCOPED_TRACE(std::string("damping ") + c.joint + " h " + std::to_string(h));
      EXPECT_LE(gain[0], gain[1] + 1e-3);
      std::printf("damping %s, actuator %g, h %g: energy gain cusp %.3g J, stock %.3g J\n",
                  c.joint, c.actuator, h, gain[0], gain[1]);
    }
  }
}

}  // namespace
