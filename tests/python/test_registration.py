"""What MuJoCo users register (issue: register what MuJoCo users have): bodies on any joints MuJoCo
integrates (free, ball, hinge, slide and combinations), under Euler, implicitfast and RK4, with
patch contact that holds: no failed solve, penetration <= 0.1 mm, the resting state of the stock
twin. Observables: d.plugin_state (names from cusp.slot_names())."""
import mujoco
import numpy as np
import pytest

import cusp

NAMES = cusp.slot_names()
PEN = NAMES.index("max_penetration")
FAILURES = NAMES.index("solver_failures")
INTEGRATORS = ["Euler", "implicitfast", "RK4"]

# a ball on x/z slides and a hinge (the planar suites' objects), a lever on a hinge falling onto
# the floor (its tip jams: friction 1, nearly vertical), a drawer on a vertical slide dropping
# onto the floor
JOINTS = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="ball lever drawer"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="ball" pos="0 0 0.06">
      <joint name="bx" type="slide" axis="1 0 0"/>
      <joint name="bz" type="slide" axis="0 0 1"/>
      <joint name="by" type="hinge" axis="0 1 0"/>
      <geom name="ball" type="sphere" size="0.05" mass="0.1" contype="0" conaffinity="0"/>
    </body>
    <body name="lever" pos="0.5 0 0.2">
      <joint name="lh" type="hinge" axis="0 1 0"/>
      <geom name="lever" type="box" size="0.1 0.02 0.01" pos="0.1 0 0" mass="0.2" contype="0"
            conaffinity="0"/>
    </body>
    <body name="drawer" pos="-0.5 0 0.03">
      <joint name="ds" type="slide" axis="0 0 1"/>
      <geom name="drawer" type="box" size="0.1 0.05 0.02" mass="0.5" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>"""


def run(xml, steps, stock=False, setup=None):
    spec = cusp.load_spec(mujoco.MjSpec.from_string(xml), stock=stock)
    m = spec.compile()
    d = mujoco.MjData(m)
    if setup:
        setup(m, d)
    max_pen = 0.0
    for _ in range(steps):
        mujoco.mj_step(m, d)
        if not stock:
            max_pen = max(max_pen, d.plugin_state[m.plugin_stateadr[0] + PEN])
    failures = 0 if stock else d.plugin_state[m.plugin_stateadr[0] + FAILURES]
    return m, d, max_pen, failures


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_hinge_slide_and_planar_bodies_rest_like_the_stock_twin(integrator):
    xml = JOINTS.format(integrator=integrator)
    m, d, max_pen, failures = run(xml, 1500)
    assert failures == 0
    assert max_pen <= 1e-4
    assert np.abs(d.qvel).max() < 1e-6  # everything at rest
    ms, ds, _, _ = run(xml, 1500, stock=True)
    # ball and drawer on the floor: their heights as stock MuJoCo's (soft contact sinks ~1 mm)
    for joint in ("bz", "ds"):
        q, qs = d.qpos[m.joint(joint).qposadr[0]], ds.qpos[ms.joint(joint).qposadr[0]]
        assert q == pytest.approx(-0.01, abs=1e-4)
        assert q == pytest.approx(qs, abs=2e-3)
    # the lever's tip on the floor: at the angle where its lower far corner touches. It lands at
    # 84 deg, its tip moving 10x faster along the floor than into it: friction 1 stops it there
    # (rigid jam). Stock MuJoCo's soft friction creeps under the load and lets it slide on past the
    # vertical (1.59 rad after 3 s), so the angle is not compared.
    lever = d.qpos[m.joint("lh").qposadr[0]]
    tip = 0.2 - 0.2 * np.sin(lever) - 0.01 * np.cos(lever)  # height of the lower far corner
    assert tip == pytest.approx(0.0, abs=1e-4)
    assert lever == pytest.approx(1.4709, abs=1e-3)


DRAWER = """
<mujoco>
  <option timestep="0.002"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="drawer"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="shelf" type="box" size="1 0.2 0.01" pos="0 0 -0.01"/>
    <body name="drawer" pos="0 0 {z}">
      <joint name="ds" type="slide" axis="1 0 0"/>
      <geom name="drawer" type="box" size="0.1 0.05 0.02" mass="0.5" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <actuator><motor joint="ds"/></actuator>
</mujoco>"""


@pytest.mark.parametrize("overlap", [0.0, 1e-6, 1e-4])
def test_drawer_overlapping_its_shelf_slides_on_its_joint(overlap):
    # A drawer on a horizontal slide that overlaps its shelf (as modelled, or by round-off): no
    # contact impulse can move it out (its normal rows have no mobility), so the overlap is held,
    # not pushed out; the shelf carries no weight (the slide does): the drawer slides freely.
    def push(m, d):
        d.ctrl[0] = 1.0  # N
    m, d, _, failures = run(DRAWER.format(z=0.02 - overlap), 500, setup=push)
    assert failures == 0
    t = d.time
    assert d.qvel[0] == pytest.approx(1.0 / 0.5 * t, rel=1e-6)  # a = F / m, no friction
