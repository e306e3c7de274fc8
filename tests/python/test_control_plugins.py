"""Controller plugins registered by libcusp.so next to cusp.contact: cusp.avoid (whole-body
avoidance, Unicomp 37-47) on the 7-joint arm of mjcf/avoid_arm7.xml.

The clearance is checked with MuJoCo's own distance query (mj_geomDistance between the proxy sphere
geoms that sit on the controller's sphere sites and the obstacle geoms), not with the controller's
distances.
"""
import copy
import pathlib
import re

import mujoco
import numpy as np
import pytest

import cusp
from scene_util import load_xml, with_config

REPO = pathlib.Path(__file__).resolve().parents[2]
ARM7 = REPO / "mjcf" / "avoid_arm7.xml"
CLEARANCE = 0.02  # m, the scene's clearance key
# waypoints of the scripted target path (m), 1.5 s per leg: the straight sweeps take the arm's
# links through the pole (checked below by running the same path with the pole not registered)
PATH = np.array([[0.55, -0.2, 0.35], [0.55, 0.45, 0.35], [0.3, 0.45, 0.5], [0.35, -0.35, 0.3],
                 [0.6, -0.3, 0.1], [0.55, -0.2, 0.35]])
LEG = 1.5  # s

STARTED, STEPS, FAILURES, ROWS, ACTIVE, MIN_DISTANCE, TRACK_ERROR, STATUS = range(8)


def arm7_xml(**config):
    """The scene's text with config keys of the cusp.avoid instance replaced or added."""
    return with_config(ARM7.read_text(), "tool", **config)


def load_arm7(**config):
    return load_xml(arm7_xml(**config))


def target_at(t):
    k = min(int(t / LEG), len(PATH) - 2)
    s = min(t / LEG - k, 1.0)
    return PATH[k] + (PATH[k + 1] - PATH[k]) * s


def min_mujoco_distance(m, d):
    """Smallest distance between a proxy sphere and an obstacle, from mj_geomDistance (m)."""
    fromto = np.zeros(6)
    proxies = [m.geom(f"s{i}").id for i in range(1, 21)]
    obstacles = [m.geom(n).id for n in ("pole", "ball", "floor")]
    return min(mujoco.mj_geomDistance(m, d, g, o, 1.0, fromto) for g in proxies for o in obstacles)


def run_path(m, d, seconds):
    """Scripted target path; returns the smallest MuJoCo distance over every step and the state."""
    low = np.inf
    for i in range(int(round(seconds / m.opt.timestep))):
        d.mocap_pos[0] = target_at(i * m.opt.timestep)
        mujoco.mj_step(m, d)
        low = min(low, min_mujoco_distance(m, d))
    return low, d.plugin_state[m.plugin_stateadr[0]:].copy()


def test_avoid_keeps_clearance_along_scripted_path():
    m, d = load_arm7()
    low, state = run_path(m, d, LEG * (len(PATH) - 1) + 1.0)
    # tolerance 1e-6 m: the rows are linearised at each step (second-order error at 1 kHz) and
    # the servo lags its reference; measured margin ~0.2 mm on this path
    assert low >= CLEARANCE - 1e-6, f"a sphere came {low:.5f} m from an obstacle"
    assert state[FAILURES] == 0
    # the avoidance was exercised: the same path with only the floor as obstacle enters the pole
    m2, d2 = load_arm7(obstacles="floor")
    low_free, _ = run_path(m2, d2, 2 * LEG)
    assert low_free < 0, "the scripted path never reaches the pole: it would test nothing"


@pytest.mark.parametrize("solver", ["fbnewton", "pgs"])
def test_avoid_other_backends_same_clearance(solver):
    m, d = load_arm7(solver=solver)
    low, state = run_path(m, d, 2 * LEG)  # the leg past the pole
    assert low >= CLEARANCE - 1e-6 and state[FAILURES] == 0


def test_avoid_tracks_free_target_within_1mm():
    m, d = load_arm7()
    target = np.array([0.55, -0.2, 0.35])  # reachable, farther than clearance + influence
    d.mocap_pos[0] = target
    for _ in range(3000):
        mujoco.mj_step(m, d)
    state = d.plugin_state[m.plugin_stateadr[0]:]
    err = np.linalg.norm(d.site_xpos[m.site("tool").id] - target)
    assert state[ROWS] == 0, "the target pose is near an obstacle: not a free-space case"
    assert err <= 1e-3, f"tracking error {err * 1e3:.3f} mm"  # the target: <= 1 mm
    assert abs(state[TRACK_ERROR] - err) < 1e-6  # published error agrees (computed pre-step)


def test_avoid_is_deterministic_and_copies_step_alike():
    m, d1 = load_arm7()
    d2 = mujoco.MjData(m)
    for i in range(1500):
        for d in (d1, d2):
            d.mocap_pos[0] = target_at(i * m.opt.timestep)
            mujoco.mj_step(m, d)
    assert np.array_equal(d1.qpos, d2.qpos) and np.array_equal(d1.act, d2.act)
    d3 = copy.copy(d1)  # mj_copyData: the copy continues exactly like the original
    for i in range(1500, 2000):
        for d in (d1, d3):
            d.mocap_pos[0] = target_at(i * m.opt.timestep)
            mujoco.mj_step(m, d)
    assert np.array_equal(d1.qpos, d3.qpos) and np.array_equal(d1.plugin_state, d3.plugin_state)
    assert d1.plugin_state[m.plugin_stateadr[0] + ROWS] >= 0


def test_avoid_threaded_rollout_matches_serial():
    """mujoco.rollout in two threads (one MjData each), targets as mocap controls: every state
    equals stepping the same inputs one MjData at a time."""
    from mujoco import rollout
    m, d = load_arm7()
    full = mujoco.mjtState.mjSTATE_FULLPHYSICS
    x0 = np.zeros(mujoco.mj_stateSize(m, full))
    mujoco.mj_getState(m, d, x0, full)
    targets = np.array([PATH[1], PATH[3], PATH[4]])  # past the pole, by the ball, near the floor
    steps = 600
    control = targets[:, None, :]  # (nbatch x 1 x 3): held for every step
    mocap = mujoco.mjtState.mjSTATE_MOCAP_POS
    threaded, _ = rollout.rollout(m, [mujoco.MjData(m) for _ in range(2)], x0, control,
                                  control_spec=mocap, nstep=steps)
    rows_seen = 0
    for b, target in enumerate(targets):
        ds = mujoco.MjData(m)
        mujoco.mj_setState(m, ds, x0, full)
        for i in range(steps):
            ds.mocap_pos[0] = target
            mujoco.mj_step(m, ds)
            rows_seen += ds.plugin_state[m.plugin_stateadr[0] + ROWS] > 0
            x = np.zeros(x0.size)
            mujoco.mj_getState(m, ds, x, full)
            assert np.array_equal(x, threaded[b, i]), f"batch {b} step {i} differs"
    assert rows_seen > 0, "no separation row in the rollouts: the avoidance was not exercised"


@pytest.mark.parametrize("key,value,expect", [
    ("clearance", "-0.1", "out of range"),
    ("gain", "fast", "not a number"),
    ("solver", "magic", "expected one of"),
    ("spheres", "s1 nosuch", "no site named 'nosuch'"),
    ("obstacles", "pole s1 s1", "listed twice"),
    ("target", "", "required"),
])
def test_avoid_bad_config_names_key_and_value(key, value, expect):
    cusp.load()
    with pytest.raises(ValueError) as err:
        mujoco.MjModel.from_xml_string(arm7_xml(**{key: value}))
    text = str(err.value)
    assert "cusp.avoid" in text and f"'{key}'" in text and f"'{value}'" in text and expect in text


def test_avoid_refuses_a_site_that_is_not_a_sphere():
    cusp.load()
    xml = arm7_xml(spheres="tool s1").replace('<site type="sphere" size="0.01" group="0"',
                                              '<site type="box" size="0.01" group="0"')
    with pytest.raises(ValueError, match="'spheres' has value 'tool s1'.*not a sphere site"):
        mujoco.MjModel.from_xml_string(xml)


def test_avoid_refuses_actuator_without_activation():
    cusp.load()
    xml = arm7_xml().replace('joint="j3" instance="avoid" actdim="1"', 'joint="j3" instance="avoid"')
    with pytest.raises(ValueError, match="actdim"):
        mujoco.MjModel.from_xml_string(xml)


# ---- cusp.inverse -------------------------------------------------------------------------------

LEAN = REPO / "mjcf" / "inverse_lean.xml"
(INV_STEPS, INV_FAILURES, INV_CONTACTS, INV_FORCE, INV_TRACK_ERROR, INV_SPEED_ERROR, INV_STATUS,
 INV_LAST_FAILED, INV_ROUNDS) = range(9)


def lean_xml(**config):
    return with_config(LEAN.read_text(), "targets", **config)


@pytest.mark.parametrize("key,value,expect", [
    ("targets", "target", "1 targets for 2 effectors"),
    ("weights", "1 2 3", "3 weights for 2 effectors"),
    ("weights", "1 -1", "out of range"),
    ("effectors", "arm_disk21_c0 nosuch", "no site named 'nosuch'"),
    ("horizon", "0", "out of range"),
    ("contact", "maybe", "expected one of"),
    ("objects", "mount", "is static"),
    ("objects", "arm_disk3", "shares a kinematic tree"),
    ("objects", "nosuch", "no body named 'nosuch'"),
    ("grip", "-1", "out of range"),
    ("cone_margin", "1", "out of range"),
    ("sticking", "sometimes", "expected one of"),
])
def test_inverse_bad_config_names_key_and_value(key, value, expect):
    cusp.load()
    with pytest.raises(ValueError) as err:
        mujoco.MjModel.from_xml_string(lean_xml(**{key: value}))
    text = str(err.value)
    assert "cusp.inverse" in text and f"'{key}'" in text and f"'{value}'" in text and expect in text


def test_inverse_needs_a_contact_instance_unless_contact_is_ignored():
    cusp.load()
    no_contact = re.sub(r'<plugin plugin="cusp.contact">.*?</plugin>', '', lean_xml(), flags=re.S)
    with pytest.raises(ValueError, match="'contact' has value 'cusp'.*no cusp.contact instance"):
        mujoco.MjModel.from_xml_string(no_contact)
    ignored = re.sub(r'<plugin plugin="cusp.contact">.*?</plugin>', '',
                     lean_xml(contact="ignore"), flags=re.S)
    assert mujoco.MjModel.from_xml_string(ignored).nplugin == 1


def test_inverse_steps_deterministically_with_contacts_in_its_model():
    """Two MjData of the leaning scene, 0.3 s in (the arm reaches the box at ~0.25 s): bitwise the
    same, no failed solve, and contact rows in the controller's model at the end."""
    cusp.load()
    m = mujoco.MjModel.from_xml_string(lean_xml())
    d1, d2 = mujoco.MjData(m), mujoco.MjData(m)
    for _ in range(3500):
        mujoco.mj_step(m, d1)
        mujoco.mj_step(m, d2)
    assert np.array_equal(d1.qpos, d2.qpos) and np.array_equal(d1.actuator_force, d2.actuator_force)
    state = d1.plugin_state[m.plugin_stateadr[0]:]
    assert state[INV_FAILURES] == 0
    assert state[INV_CONTACTS] > 0, "the arm has not reached the box: the test shows nothing"
    u = d1.actuator_force
    lo, hi = m.actuator_forcerange[:, 0], m.actuator_forcerange[:, 1]
    assert np.all(u >= lo - 1e-9) and np.all(u <= hi + 1e-9)  # the boxes hold


# ---- cusp.avoid with cusp.contact: pushing a block around an obstacle -----------------------

PUSH = REPO / "mjcf" / "avoid_push.xml"


def run_push(**config):
    """The tool's target runs straight through the pole to the back of the block (2 s), then
    0.17 m along x (3 s); returns the smallest tool-pole distance from mj_geomDistance (m) and
    the block's final position."""
    m, d = load_xml(with_config(PUSH.read_text(), "tool", **config))
    way = np.array([[-0.3, 0, 0.025], [-0.07, 0, 0.025], [0.1, 0, 0.025]])
    tool, pole, fromto = m.geom("tool").id, m.geom("pole").id, np.zeros(6)
    low = np.inf
    for i in range(5500):
        t = i * m.opt.timestep
        s = min(t / 2.0, 1.0) if t < 2.0 else min((t - 2.0) / 3.0, 1.0)
        d.mocap_pos[0] = way[0] + (way[1] - way[0]) * s if t < 2.0 else way[1] + (way[2] - way[1]) * s
        mujoco.mj_step(m, d)
        low = min(low, mujoco.mj_geomDistance(m, d, tool, pole, 1.0, fromto))
    return low, d.xpos[m.body("block").id].copy()


def test_avoid_pushes_block_around_obstacle():
    low, block = run_push()
    # clearance 0.01 m from MuJoCo's distance query (1e-6 m numerical tolerance)
    assert low >= 0.01 - 1e-6, f"the tool came {low:.4f} m from the pole"
    # the block (cusp patch contact, mu = 0.5) is pushed from x = 0: the tool ends at x = 0.1,
    # the block's back face 0.065 m ahead of the tool's centre, so x >= 0.15 (measured 0.165)
    assert block[0] >= 0.15 and abs(block[1]) < 0.03
    # without the pole in the controller, the same path runs the tool into the pole (MuJoCo's
    # contact then stops it): the path does test the avoidance
    low_free, _ = run_push(obstacles="floor", clearance="0", influence="0.001")
    assert low_free < 0


def contacts_force(m, d, instance):
    """Total normal force cusp.contact applied in the last step (N) and its contact gaps (m)."""
    c = cusp.contacts(m, d, instance)
    return c.force[:, 0].sum(), c.gap


def test_inverse_reaches_while_touching_the_box_and_ignoring_contact_misses():
    """The leaning scene for 2.5 s: with cusp's contacts in its model the tip ends within 1 mm of
    its target, the arm resting against the box (contacts at zero gap, in the controller's model
    too), the predicted normal force equal to the applied one; the same controller with contact
    ignored is still more than 50 mm away (measured 115 mm)."""
    errors = {}
    for contact in ("cusp", "ignore"):
        m, d = load_xml(lean_xml(contact=contact))
        for _ in range(25000):
            mujoco.mj_step(m, d)
        tip = m.site("arm_disk21_c0").id
        errors[contact] = np.linalg.norm(d.site_xpos[tip] - d.mocap_pos[0])
        if contact == "cusp":
            state = d.plugin_state[m.plugin_stateadr[0]:]
            applied, gaps = contacts_force(m, d, 1)
            assert state[INV_FAILURES] == 0
            assert state[INV_CONTACTS] > 0 and np.min(gaps) < 1e-4, "the arm does not touch the box"
            # 5 % of the applied force, or 0.05 N when the contacts are (nearly) unloaded
            assert abs(state[INV_FORCE] - applied) <= max(0.05 * applied, 0.05)
    assert errors["cusp"] <= 1e-3, f"tip {errors['cusp'] * 1e3:.3f} mm from its target"
    assert errors["ignore"] > 0.05, f"contact ignored: {errors['ignore'] * 1e3:.1f} mm"


LOADED = REPO / "mjcf" / "inverse_lean_loaded.xml"


def test_inverse_predicts_the_load_the_box_carries():
    """The arm hangs into a box that stands 15 mm inside its free path (actuators off, it rests on
    the box with 29 N); the tip's target lies under the mount, below the box. After 2.5 s with
    cusp's contacts in its model the tip is within 1 mm of the target at rest, the loaded contact
    sticks and carries load (more than 5 N; measured 60.3 N on one disk, two others within the
    margin and apart), and the controller's predicted normal force
    is the force cusp.contact applies within 5 % (measured within 0.01 %). The same controller with
    contact ignored is more than 10 mm off (measured 26 mm, still moving)."""
    errors = {}
    for contact in ("cusp", "ignore"):
        m, d = load_xml(with_config(LOADED.read_text(), "targets", contact=contact))
        for _ in range(25000):
            mujoco.mj_step(m, d)
        tip = m.site("arm_disk21_c0").id
        errors[contact] = np.linalg.norm(d.site_xpos[tip] - d.mocap_pos[0])
        if contact == "cusp":
            state = d.plugin_state[m.plugin_stateadr[0]:]
            applied, gaps = contacts_force(m, d, 1)
            assert state[INV_FAILURES] == 0
            c = cusp.contacts(m, d, 1)
            loaded = c.force[:, 0] > 0
            # every loaded contact sticks; the others are disks within the margin, apart (gap > 0)
            assert np.any(loaded) and np.all(c.mode[loaded] == 1), "the arm does not rest on the box"
            assert np.all(c.gap[~loaded] > 0) and np.all(c.mode[~loaded] == 0)
            assert applied > 5, f"the box carries {applied:.2f} N: not a loaded contact"
            assert abs(state[INV_FORCE] - applied) <= 0.05 * applied, \
                f"predicted {state[INV_FORCE]:.3f} N, applied {applied:.3f} N"
            assert np.max(np.abs(d.qvel)) < 0.01  # at rest (rad/s, m/s)
    assert errors["cusp"] <= 1e-3, f"tip {errors['cusp'] * 1e3:.3f} mm from its target"
    assert errors["ignore"] > 0.01, f"contact ignored: {errors['ignore'] * 1e3:.1f} mm"


@pytest.mark.parametrize("src", sorted((REPO / "mjcf" / "control").glob("*.cusp.xml")),
                         ids=lambda p: p.name)
def test_controller_scene_descriptions_are_committed_expanded(src):
    """mjcf/control/X.cusp.xml expands to the committed mjcf/X.xml (scripts/cusp-mjcf expand)."""
    from cusp import mjcf_gen
    out = REPO / "mjcf" / src.name.replace(".cusp.xml", ".xml")
    assert out.is_file(), f"{out.name} missing: run scripts/cusp-mjcf expand mjcf/control/{src.name}"
    assert out.read_text() == mjcf_gen.expand_file(src), f"{out.name} is stale"


HOLD = REPO / "mjcf" / "inverse_hold.xml"


def run_hold(contact, seconds=1.2, release=0.6):
    """The holding scene with the shelf lowered at 5 cm/s from `release` (s); returns the model,
    the data and the parcel's lowest height (m) after the release."""
    m, d = load_xml(with_config(HOLD.read_text(), "targets", contact=contact))
    shelf = m.body("shelf").mocapid[0]
    s0 = d.mocap_pos[shelf].copy()
    parcel = m.body("parcel").id
    low = np.inf
    for _ in range(int(round(seconds / m.opt.timestep))):
        d.mocap_pos[shelf] = s0 - [0, 0, 0.05 * max(0.0, d.time - release)]
        mujoco.mj_step(m, d)
        if d.time > release:
            low = min(low, d.xpos[parcel][2])
    return m, d, low


def test_inverse_holds_an_object_against_a_wall_by_friction():
    """Coevoet's manipulation case: a 20 g parcel sits on a shelf against a wall, the arm's
    controller models it (objects), holds every touching contact sticking with 30 % of mu in
    reserve and squeezes with at least 0.5 N (grip); 0.6 s after the shelf is lowered away the
    parcel hangs by friction alone within 0.5 mm of where it sat (measured 0.1 mm), at rest, its
    contacts sticking; the controller's predicted normal force is the applied one within 5 %; the
    same controller with contact ignored does not hold it (it rides down on the shelf)."""
    m, d, low = run_hold("cusp")
    parcel = m.body("parcel").id
    state = d.plugin_state[m.plugin_stateadr[0]:]
    site = m.site("parcel_centre").id
    mujoco.mj_kinematics(m, d)
    assert np.linalg.norm(d.site_xpos[site] - d.mocap_pos[0]) <= 5e-4
    assert 0.40 - low <= 5e-4
    assert np.abs(d.cvel[parcel]).max() < 1e-3  # at rest (rad/s, m/s)
    shelf_top = d.mocap_pos[m.body("shelf").mocapid[0]][2] + 0.01
    assert d.xpos[parcel][2] - 0.02 - shelf_top > 0.02, "the shelf still carries the parcel"
    applied, _ = contacts_force(m, d, 1)
    assert applied >= 0.5  # the grip
    assert abs(state[INV_FORCE] - applied) <= 0.05 * applied, (state[INV_FORCE], applied)
    # the first control steps (contacts at zero gap, unloaded) and the hand-over may fail and are
    # counted (measured 5)
    assert state[INV_FAILURES] <= 10
    _, d_ignore, low_ignore = run_hold("ignore")
    # ignoring contact the arm does not squeeze: the parcel rides down on the shelf (3 cm by 1.2 s)
    assert 0.40 - low_ignore > 0.02, "contact ignored: the parcel should not be held"
