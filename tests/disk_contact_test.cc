// Disk contact physics against analytic results (tolerances stated per test).
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include "scene_test_util.h"

extern "C" {
#include "instance.h"
#include "publish/visualize.h"
}

namespace {

const double kG = 9.81;

// A free "puck": one cylinder disk (radius 0.05 m, half-thickness 0.01 m, 1 kg) lying flat on
// a plane tilted by `alpha_deg` about the world y axis.
std::string Puck(double alpha_deg, double mu, const char* integrator = "Euler",
                 double h = 0.001) {
  double a = alpha_deg * M_PI / 180;
  // start resting on the plane: centre 0.01 m above the plane along its normal
  double nx = std::sin(a), nz = std::cos(a);
  char xml[4096];
  std::snprintf(xml, sizeof(xml), R"(
<mujoco>
  <option timestep="%g" integrator="%s" gravity="0 0 -%g"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="disks" value="puck"/><config key="environment" value="ground"/>
    <config key="friction" value="%g"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="ground" type="plane" size="5 5 .1" euler="0 %g 0"/>
    <body name="b" pos="%.12g 0 %.12g" euler="0 %g 0">
      <freejoint/>
      <geom name="puck" type="cylinder" size="0.05 0.01" mass="1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>)",
                h, integrator, kG, mu, alpha_deg, 0.01 * nx, 0.01 * nz, alpha_deg);
  return xml;
}

mjModel* Load(const std::string& xml) {
  static bool loaded = false;
  if (!loaded) {
    mj_loadPluginLibrary(CUSP_PLUGIN_PATH);
    loaded = true;
  }
  std::string err;
  mjModel* m = cusp_test::CompileXml(xml, &err);
  EXPECT_NE(m, nullptr) << err;
  return m;
}

const cuspInstance* Instance(const mjData* d) { return (const cuspInstance*)d->plugin_data[0]; }
const mjtNum* State(const mjModel* m, const mjData* d) {
  return d->plugin_state + m->plugin_stateadr[0];
}

// down-slope unit vector of the tilted plane (world frame)
void DownSlope(double out[3], double alpha_deg) {
  double a = alpha_deg * M_PI / 180;
  out[0] = std::cos(a);
  out[1] = 0;
  out[2] = -std::sin(a);
  // with euler="0 a 0" the plane normal is (sin a, 0, cos a); the slope falls towards +x
}

TEST(DiskContact, RestingOnPlaneCarriesWeightWithoutPenetrationOrDrift) {
  mjModel* m = Load(Puck(0, 0.5));
  mjData* d = mj_makeData(m);
  d->qpos[2] += 0.02;  // drop from 2 cm
  const double h = m->opt.timestep, mass = 1;
  for (int i = 0; i < 1000; i++) mj_step(m, d);  // settle (1 s)
  double x0[3] = {d->qpos[0], d->qpos[1], d->qpos[2]};
  double max_pen = 0, max_impulse_err = 0;
  for (int i = 0; i < 5000; i++) {  // 5 s at rest
    mj_step(m, d);
    const cuspStepWork* w = &Instance(d)->work;
    double total = 0;
    for (int c = 0; c < w->ncontact; c++) total += w->contacts[c].impulse_n;
    max_impulse_err = std::fmax(max_impulse_err, std::fabs(total - mass * kG * h) / (mass * kG * h));
    max_pen = std::fmax(max_pen, State(m, d)[CUSP_STATE_MAX_PENETRATION]);
  }
  EXPECT_LE(max_pen, 1e-4);                 // <= 0.1 mm
  EXPECT_LE(max_impulse_err, 0.01);         // normal impulse per step = m g h within 1 %
  EXPECT_NEAR(d->qpos[2], 0.01, 1e-4);      // resting on its face
  for (int k = 0; k < 3; k++) EXPECT_NEAR(d->qpos[k], x0[k], 1e-6) << k;  // no drift in 5 s
  EXPECT_EQ(State(m, d)[CUSP_STATE_SOLVER_FAILURES], 0);
  mj_deleteData(d);
  mj_deleteModel(m);
}

TEST(DiskContact, StickingOnInclineDoesNotCreep) {
  const double alpha = 20, mu = 0.5;  // tan 20 deg = 0.364 < 0.5
  mjModel* m = Load(Puck(alpha, mu));
  mjData* d = mj_makeData(m);
  for (int i = 0; i < 200; i++) mj_step(m, d);
  double x0[3] = {d->qpos[0], d->qpos[1], d->qpos[2]};
  double max_speed = 0;
  for (int i = 0; i < 5000; i++) {
    mj_step(m, d);
    max_speed = std::fmax(max_speed, mju_norm3(d->qvel));
    EXPECT_EQ(State(m, d)[CUSP_STATE_NSLIDE], 0) << "t=" << d->time;
    if (HasFailure()) break;
  }
  double moved[3] = {d->qpos[0] - x0[0], d->qpos[1] - x0[1], d->qpos[2] - x0[2]};
  EXPECT_LE(max_speed, 1e-6);              // creep speed <= 1e-6 m/s
  EXPECT_LE(mju_norm3(moved) / 5.0, 1e-6); // mean creep over 5 s
  mj_deleteData(d);
  mj_deleteModel(m);
}

TEST(DiskContact, SlidingOnInclineAcceleratesAsCoulombSays) {
  const double alpha = 35, mu = 0.3;  // tan 35 deg = 0.70 > 0.3
  mjModel* m = Load(Puck(alpha, mu));
  mjData* d = mj_makeData(m);
  double down[3];
  DownSlope(down, alpha);
  for (int i = 0; i < 100; i++) mj_step(m, d);
  double v0 = mju_dot3(d->qvel, down), t0 = d->time;
  for (int i = 0; i < 1000; i++) mj_step(m, d);
  double v1 = mju_dot3(d->qvel, down), t1 = d->time;
  double a = alpha * M_PI / 180;
  double expected = kG * (std::sin(a) - mu * std::cos(a));
  double measured = (v1 - v0) / (t1 - t0);
  EXPECT_NEAR(measured, expected, 0.02 * expected);  // within 2 %
  EXPECT_GT(State(m, d)[CUSP_STATE_NSLIDE], 0);
  mj_deleteData(d);
  mj_deleteModel(m);
}

// After each step, the post-correction contact velocities (recomputed from qvel and the
// geometry, not taken from the solver) satisfy the complementarity the solver claimed.
TEST(DiskContact, PostCorrectionVelocitiesSatisfyComplementarity) {
  const double alpha = 35, mu = 0.3;
  mjModel* m = Load(Puck(alpha, mu));
  mjData* d = mj_makeData(m);
  d->qvel[1] = 0.3;  // sideways too, so the slip direction is not a cone direction
  d->qpos[2] += 0.005;
  const cuspConfig* cfg = &Instance(d)->cfg;
  int nv = m->nv, checked = 0;
  std::vector<mjtNum> vfree(nv), jac(3 * nv);
  for (int step = 0; step < 600; step++) {
    // Euler: the free velocity is v_t + h qacc (qacc is not touched by the plugin)
    std::vector<mjtNum> v0(d->qvel, d->qvel + nv);
    mj_step(m, d);
    for (int i = 0; i < nv; i++) vfree[i] = v0[i] + m->opt.timestep * d->qacc[i];
    const cuspStepWork* w = &Instance(d)->work;
    for (int c = 0; c < w->ncontact; c++) {
      const cuspContact* ct = w->contacts + c;
      mj_jac(m, d, jac.data(), nullptr, ct->pos, ct->body[0]);  // kinematics are at q*
      mjtNum vel_after[3], vel_free[3];
      mju_mulMatVec(vel_after, jac.data(), d->qvel, 3, nv);
      mju_mulMatVec(vel_free, jac.data(), vfree.data(), 3, nv);
      const mjtNum* n = ct->frame + 6;
      double h = m->opt.timestep;
      double g0 = ct->gap - h * mju_dot3(vel_free, n);
      double w_n = mju_dot3(vel_after, n) + (g0 >= 0 ? g0 : cfg->gap_alpha * g0) / h;
      EXPECT_GE(w_n, -1e-7) << "step " << step;
      if (ct->impulse_n > 1e-9) {
        EXPECT_NEAR(w_n, 0, 1e-7) << "step " << step;
      }
      if (ct->mode == CUSP_MODE_STICK) {
        double vt[3];
        mju_addScl3(vt, vel_after, n, -mju_dot3(vel_after, n));
        EXPECT_LE(mju_norm3(vt), 1e-7) << "step " << step;
      }
      if (ct->mode == CUSP_MODE_SLIDE) {
        // friction opposes the slip: f . v_t < 0
        double f[3], vt[3];
        mju_scl3(f, ct->frame, ct->impulse_t[0]);
        mju_addToScl3(f, ct->frame + 3, ct->impulse_t[1]);
        mju_addScl3(vt, vel_after, n, -mju_dot3(vel_after, n));
        EXPECT_LT(mju_dot3(f, vt), 0) << "step " << step;
        // polyhedral cone: the friction magnitude is mu * fn along the cone directions used
        EXPECT_LE(mju_norm3(f), mu * ct->impulse_n * (1 + 1e-6));
      }
      checked++;
    }
    if (HasFailure()) break;
  }
  EXPECT_GT(checked, 500);
  mj_deleteData(d);
  mj_deleteModel(m);
}

std::vector<mjtNum> Trajectory(const mjModel* m, int steps) {
  mjData* d = mj_makeData(m);
  d->qpos[2] += 0.02;
  d->qvel[0] = 0.4;
  d->qvel[5] = 3;
  std::vector<mjtNum> out;
  for (int i = 0; i < steps; i++) {
    mj_step(m, d);
    out.insert(out.end(), d->qpos, d->qpos + m->nq);
    out.insert(out.end(), d->qvel, d->qvel + m->nv);
  }
  mj_deleteData(d);
  return out;
}

TEST(DiskContact, DeterministicAcrossRunsAndThreads) {
  mjModel* m = Load(Puck(10, 0.4));
  const int steps = 1500;
  std::vector<mjtNum> a = Trajectory(m, steps), b = Trajectory(m, steps);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(mjtNum)), 0);
  std::vector<mjtNum> t1, t2;
  std::thread th1([&] { t1 = Trajectory(m, steps); });
  std::thread th2([&] { t2 = Trajectory(m, steps); });
  th1.join();
  th2.join();
  EXPECT_EQ(std::memcmp(a.data(), t1.data(), a.size() * sizeof(mjtNum)), 0);
  EXPECT_EQ(std::memcmp(a.data(), t2.data(), a.size() * sizeof(mjtNum)), 0);
  mj_deleteModel(m);
}

}  // namespace

namespace {

int CountMarkers(const mjModel* m, mjData* d, int mode) {
  mjvScene scn;
  mjv_defaultScene(&scn);
  mjv_makeScene(m, &scn, 1000);
  mjvOption opt;
  mjv_defaultOption(&opt);
  opt.flags[mjVIS_CONTACTPOINT] = 1;  // cusp draws its points under MuJoCo's contact-point flag
  mjvCamera cam;
  mjv_defaultCamera(&cam);
  mjv_updateScene(m, d, &opt, nullptr, &cam, mjCAT_ALL, &scn);
  float rgba[4];
  cusp_mode_rgba(rgba, mode);
  int count = 0;
  for (int i = 0; i < scn.ngeom; i++) {
    const mjvGeom* g = scn.geoms + i;
    if (g->type == mjGEOM_SPHERE && g->rgba[0] == rgba[0] && g->rgba[1] == rgba[1] &&
        g->rgba[2] == rgba[2]) {
      count++;
    }
  }
  mjv_freeScene(&scn);
  return count;
}

TEST(DiskContactView, MarkersColouredByModeAndSwitchable) {
  mjModel* m = Load(Puck(0, 0.5));
  mjData* d = mj_makeData(m);
  for (int i = 0; i < 300; i++) mj_step(m, d);
  EXPECT_EQ(CountMarkers(m, d, CUSP_MODE_STICK), 3);  // three resting rim points, sticking
  EXPECT_EQ(CountMarkers(m, d, CUSP_MODE_SLIDE), 0);
  ((cuspInstance*)d->plugin_data[0])->cfg.visualize = 0;
  EXPECT_EQ(CountMarkers(m, d, CUSP_MODE_STICK), 0);
  mj_deleteData(d);
  mj_deleteModel(m);
}

}  // namespace
