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


# ---------------------------------- welded geoms, one object -----------------------------------

# a peg lying on a table: a capsule shaft on a free body and a box pommel on a child body welded to
# it (no joint): one rigid object, the pommel's geom the object's own
PEG = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="peg"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="table" type="box" size="0.3 0.3 0.02" pos="0 0 -0.02"/>
    <body name="peg" pos="0 0 0.05" euler="0 90 0">
      <freejoint/>
      <geom name="shaft" type="capsule" fromto="0 0 -0.06 0 0 0.06" size="0.01" mass="0.05"
            contype="0" conaffinity="0"/>
      <body name="pommel" pos="0 0 0.06">
        <geom name="pommel" type="box" size="0.02 0.02 0.01" mass="0.05" contype="0"
              conaffinity="0"/>
        <geom name="guard" type="box" size="0.03 0.005 0.005" pos="0 0 -0.012" mass="0.01"
              contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def distances(m, d, geoms, other):
    """Signed distances (m) of geoms to geom other at d's state (kinematics recomputed: after
    mj_step d holds those of the step's start)."""
    scratch = mujoco.MjData(m)
    scratch.qpos[:] = d.qpos
    mujoco.mj_kinematics(m, scratch)
    return [mujoco.mj_geomDistance(m, scratch, m.geom(g).id, m.geom(other).id, 0.05, None)
            for g in geoms]


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_welded_peg_rests_on_its_shaft_and_pommel(integrator):
    xml = PEG.format(integrator=integrator)
    m, d, max_pen, failures = run(xml, 1500)
    assert failures == 0
    assert max_pen <= 1e-4
    assert np.abs(d.qvel).max() < 1e-6
    # both the shaft and the welded pommel touch the table, neither sinks into it
    gaps = distances(m, d, ["shaft", "pommel", "guard"], "table")
    assert min(gaps) >= -1e-4
    assert gaps[0] <= 1e-4 and min(gaps[1:]) <= 1e-4
    # the welded geoms never touch each other (they overlap by construction): every contact is
    # with the table
    c = cusp.contacts(m, d)
    assert len(c.geom) and all(m.geom(int(g)).name == "table" for g in c.geom[:, 1])
    # at rest as in stock MuJoCo (which sinks about 1 mm into the table)
    ms, ds, _, _ = run(xml, 1500, stock=True)
    assert d.qpos[2] == pytest.approx(ds.qpos[2], abs=2e-3)


# two registered links of one object, joined by a hinge, their geoms overlapping at the joint
LINKS = """
<mujoco>
  <option gravity="0 0 0">{flag}</option>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="upper lower"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="upper" pos="0 0 0.5">
      <freejoint/>
      <geom name="upper" type="box" size="0.1 0.02 0.02" contype="0" conaffinity="0"/>
      <body name="lower" pos="0.1 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" damping="0.1"/>
        <geom name="lower" type="box" size="0.1 0.02 0.02" pos="0.08 0 0" contype="0"
              conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  {exclude}
</mujoco>"""


@pytest.mark.parametrize("flag, exclude, touch", [
    ("", "", False),  # MuJoCo's parent filter: a body and its parent do not touch
    ('<flag filterparent="disable"/>', "", True),
    ('<flag filterparent="disable"/>', '<contact><exclude body1="upper" body2="lower"/></contact>',
     False),
])
def test_links_of_one_object_obey_the_parent_filter(flag, exclude, touch):
    m, d, _, failures = run(LINKS.format(flag=flag, exclude=exclude), 20)
    c = cusp.contacts(m, d)
    between = [tuple(sorted((m.geom(int(a)).name, m.geom(int(b)).name))) for a, b in c.geom]
    assert (("lower", "upper") in between) == touch
    ms, ds, _, _ = run(LINKS.format(flag=flag, exclude=exclude), 20, stock=True)
    assert (ds.ncon > 0) == touch  # as MuJoCo decides for the same pair


# ---------------------------------- held objects: equality constraints -------------------------

# a registered box resting on the floor, held by a weld (MuJoCo's soft equality) to a mocap hand
# 0.42 m away or to the world; relpose None: the weld holds the pose the box starts in, else the
# weld's target lies 2 cm below it (a weld that pulls the box into the floor)
HELD = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="box"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" friction="0.5"/>
    <body name="hand" mocap="true" pos="0.42 0 0.05"/>
    <body name="box" pos="0 0 0.05">
      <freejoint/>
      <geom name="box" type="box" size="0.05 0.05 0.05" mass="1" contype="0" conaffinity="0"
            friction="0.5"/>
    </body>
  </worldbody>
  <equality><weld body1="{holder}" body2="box" {relpose}/></equality>
</mujoco>"""
MASS, HALF = 1.0, 0.05  # kg, m: the held box


def held_run(xml, steps, stock=False, drive=None):
    """Step a held-box scene; returns (model, data, lowest box height (m), largest one-step gain of
    kinetic + potential energy (J), largest reported penetration (m))."""
    spec = cusp.load_spec(mujoco.MjSpec.from_string(xml), stock=stock)
    m = spec.compile()
    d = mujoco.MjData(m)
    zmin, gain, pen, energy = np.inf, -np.inf, 0.0, None
    for _ in range(steps):
        if drive:
            drive(d)
        mujoco.mj_step(m, d)
        zmin = min(zmin, d.qpos[2])
        mujoco.mj_energyPos(m, d)
        mujoco.mj_energyVel(m, d)
        e = d.energy.sum()
        if energy is not None:
            gain = max(gain, e - energy)
        energy = e
        if not stock:
            pen = max(pen, d.plugin_state[m.plugin_stateadr[0] + PEN])
    return m, d, zmin, gain, pen


def floor_gap(m, d):
    return distances(m, d, ["box"], "floor")[0]


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("holder", ["hand", "world"])
def test_a_box_held_by_a_weld_rests_on_the_floor(integrator, holder):
    # the weld holds the box where it rests: the floor carries its weight (the soft weld's force
    # is zero at zero error), the box neither sinks nor drifts, as in the stock twin
    xml = HELD.format(integrator=integrator, holder=holder, relpose="")
    m, d, zmin, gain, pen = held_run(xml, 500)
    assert d.plugin_state[m.plugin_stateadr[0] + FAILURES] == 0
    assert pen <= 1e-4 and floor_gap(m, d) >= -1e-4
    assert zmin >= HALF - 1e-4
    assert gain <= 1e-6  # J: nothing gains energy
    ms, ds, _, _, _ = held_run(xml, 500, stock=True)
    assert d.qpos[2] == pytest.approx(ds.qpos[2], abs=1e-3)
    # the floor's impulses are published and carry the weight: sum = m g h within 1 %. Under RK4
    # the free step's later stages see the box falling and the weld answering, so the weld's stage
    # forces carry part of the step's weight (measured 9 %): the floor carries 85-100 % of it.
    c = cusp.contacts(m, d)
    weight = MASS * 9.81 * m.opt.timestep  # N s a step
    if integrator == "RK4":
        assert 0.85 * weight <= c.impulse[:, 0].sum() <= weight * (1 + 1e-6)
    else:
        assert c.impulse[:, 0].sum() == pytest.approx(weight, rel=1e-2)


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_a_weld_pulling_a_box_into_the_floor_is_resisted(integrator):
    # the weld's target is 2 cm below the resting pose: the floor holds the box up against the
    # weld's pull (stock MuJoCo's soft contact lets it sink ~4 mm), the floor's impulse exceeds the
    # weight by the weld's pull, and no step gains energy
    relpose = 'relpose="-0.42 0 -0.02 1 0 0 0"'
    xml = HELD.format(integrator=integrator, holder="hand", relpose=relpose)
    m, d, zmin, gain, pen = held_run(xml, 500)
    assert d.plugin_state[m.plugin_stateadr[0] + FAILURES] == 0
    assert pen <= 1e-4 and floor_gap(m, d) >= -1e-4
    assert zmin >= HALF - 1e-4
    assert gain <= 1e-6
    c = cusp.contacts(m, d)
    assert c.impulse[:, 0].sum() > 1.5 * MASS * 9.81 * m.opt.timestep


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("motion", ["drag", "lift"])
def test_a_mocap_hand_drags_and_lifts_a_welded_box(integrator, motion):
    # the hand moves 10 cm in 1 s along the floor or up: the box follows as in the stock twin
    # (within 1 mm: both welds are MuJoCo's soft ones), never sinks into the floor
    def drive(d):
        s = 0.1 * min(d.time, 1.0)
        d.mocap_pos[0] = [0.42 + s, 0, 0.05] if motion == "drag" else [0.42, 0, 0.05 + s]

    xml = HELD.format(integrator=integrator, holder="hand", relpose="")
    m, d, zmin, _, pen = held_run(xml, 1000, drive=drive)
    assert d.plugin_state[m.plugin_stateadr[0] + FAILURES] == 0
    assert pen <= 1e-4 and zmin >= HALF - 1e-4
    ms, ds, _, _, _ = held_run(xml, 1000, stock=True, drive=drive)
    np.testing.assert_allclose(d.qpos[:3], ds.qpos[:3], atol=1e-3)


# ---------------------------------- visual geoms of a registered body ---------------------------

# a box with a visual sphere larger than it (a marker, or a mesh drawn around collision
# primitives): listed in visual_geoms it touches nothing and the box rests on its faces
VISUAL = """
<mujoco>
  <option timestep="0.002"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="box"/>
    {visual}
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="box" pos="0 0 0.2">
      <freejoint/>
      <geom name="box" type="box" size="0.05 0.05 0.05" mass="1" contype="0" conaffinity="0"/>
      <geom name="halo" type="sphere" size="0.09" mass="0" contype="0" conaffinity="0"
            rgba="1 1 1 0.2"/>
      {extra}
    </body>
    <body name="other" pos="1 0 0.05">
      <freejoint/>
      <geom name="other" type="box" size="0.05 0.05 0.05"/>
    </body>
  </worldbody>
</mujoco>"""


@pytest.mark.parametrize("stock", [False, True])
@pytest.mark.parametrize("listed", [True, False])
def test_visual_geoms_of_a_registered_body_touch_nothing(listed, stock):
    # listed: the box lands on its face (centre at 0.05 m); not listed: the sphere is part of the
    # solid shape and it rests on the sphere (centre at 0.09 m); the stock twin likewise (MuJoCo
    # collides the solid geoms only)
    visual = '<config key="visual_geoms" value="halo"/>' if listed else ""
    m, d, max_pen, failures = run(VISUAL.format(visual=visual, extra=""), 1000, stock=stock)
    expected = 0.05 if listed else 0.09
    assert d.qpos[2] == pytest.approx(expected, abs=2e-3 if stock else 1e-6)
    if not stock:
        assert failures == 0 and max_pen <= 1e-4


@pytest.mark.parametrize("visual, why", [
    ("other", "geom 'other' is not a geom of a body in 'bodies' (nor of a body welded to one): "
              "remove it from 'visual_geoms'"),
    ("box halo", "every geom of body 'box' is listed, so it has no solid shape: keep at least "
                 "one of its geoms out of 'visual_geoms'"),
    ("nothing", "no geom named 'nothing'"),
])
def test_visual_geoms_refusals_say_what_to_do(visual, why):
    xml = VISUAL.format(visual=f'<config key="visual_geoms" value="{visual}"/>', extra="")
    with pytest.raises(cusp.SceneError) as err:
        cusp.compile_spec(cusp.load_spec(mujoco.MjSpec.from_string(xml)))
    message = str(err.value)
    assert "visual_geoms" in message and why in message, message
    assert message.count(why) == 1


# two registered boxes joined by a weld equality (a handle welded to a mug as two free bodies),
# dropped 1 cm onto the floor: the weld's soft rows couple the two bodies' trees in the correction
TWO_WELDED = """
<mujoco>
  <option timestep="0.002" integrator="{integrator}"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="mug handle"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="mug" pos="0 0 0.06">
      <freejoint/>
      <geom name="mug" type="box" size="0.04 0.04 0.05" mass="0.3" contype="0" conaffinity="0"/>
    </body>
    <body name="handle" pos="0.06 0 0.06">
      <freejoint/>
      <geom name="handle" type="box" size="0.02 0.01 0.05" mass="0.05" contype="0"
            conaffinity="0"/>
    </body>
  </worldbody>
  <equality><weld body1="mug" body2="handle"/></equality>
</mujoco>"""


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_two_registered_bodies_joined_by_a_weld_rest_together(integrator):
    xml = TWO_WELDED.format(integrator=integrator)
    m, d, zmin, gain, pen = held_run(xml, 1000)
    assert d.plugin_state[m.plugin_stateadr[0] + FAILURES] == 0
    assert pen <= 1e-4
    gaps = distances(m, d, ["mug", "handle"], "floor")
    assert min(gaps) >= -1e-4 and max(gaps) <= 1e-3  # both on the floor (the weld sags < 1 mm)
    assert np.abs(d.qvel).max() < 1e-6
    ms, ds, _, _, _ = held_run(xml, 1000, stock=True)
    np.testing.assert_allclose(d.qpos[[2, 9]], ds.qpos[[2, 9]], atol=2e-3)
