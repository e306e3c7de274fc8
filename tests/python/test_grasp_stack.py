"""Grasps, stacks and piles with registered rigid objects (tests/python/rigid_scenes.py): the
island solver must not fail on hyperstatic islands (several contacts on one object), a held object
must not creep relative to the fingers, nothing may penetrate, and an unactuated scene may not gain
energy in a step. Each under several integrators and time steps, as users run them.

Tolerances: creep <= 1e-6 m/s (the object's velocity relative to the fingers while the grip is
inside the friction cone), penetration <= 0.1 mm measured with MuJoCo's own mj_geomDistance
between the object and every finger geom (and the published max_penetration), one-step energy
gain <= 1e-6 J where nothing is actuated.
"""
import mujoco
import numpy as np
import pytest

import cusp
from scene_util import largest_step_gain, load_xml
import rigid_scenes as rs

INTEGRATORS = [("Euler", 0.002), ("implicitfast", 0.002), ("RK4", 0.002), ("implicitfast", 0.001),
               ("implicit", 0.001)]


def _load(xml):
    return load_xml(xml, keyframe=True, forward=True)


def _slot(d, name):
    return d.plugin_state[cusp.slot_names().index(name)]


def _min_distance(m, d, body, others):
    """Smallest signed distance (m) between the geoms of `body` and the geoms of bodies `others`,
    by MuJoCo's own mj_geomDistance (negative: penetration)."""
    fromto = np.zeros(6)
    worst = np.inf
    for g in range(m.ngeom):
        if m.geom_bodyid[g] != body:
            continue
        for h in range(m.ngeom):
            if m.geom_bodyid[h] in others:
                worst = min(worst, mujoco.mj_geomDistance(m, d, g, h, 0.05, fromto))
    return worst


def _hold(xml, seconds, settle, fingers, obj="ball"):
    """Runs a grip; returns (failures, worst creep after `settle` s (m/s, object relative to the
    fingers' velocity), worst mj_geomDistance penetration (m, >= 0), published max penetration)."""
    m, d = _load(xml)
    body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, obj)
    fids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f) for f in fingers]
    vel = np.zeros(6)
    creep = pen = pub = 0.0
    for i in range(int(round(seconds / m.opt.timestep))):
        mujoco.mj_step(m, d)
        # kinematics of the state the step left (mj_step's geom poses and cvel are those of its
        # last stage evaluation, before the integration and the contact correction)
        mujoco.mj_forward(m, d)
        pub = max(pub, _slot(d, "max_penetration"))
        pen = max(pen, -_min_distance(m, d, body, fids))
        if d.time >= settle:
            mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, body, vel, 0)
            v_obj = vel[3:].copy()
            v_fingers = np.zeros(3)
            for f in fids:
                mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, f, vel, 0)
                v_fingers += vel[3:] / len(fids)
            # the fingers only squeeze (x, y); what the grip must hold is the object's motion along
            # the fingers' surfaces: its vertical velocity relative to theirs
            creep = max(creep, abs(v_obj[2] - v_fingers[2]))
    return _slot(d, "solver_failures"), creep, pen, pub


@pytest.mark.parametrize("integrator,h", INTEGRATORS)
@pytest.mark.parametrize("tips", ["sphere1", "sphere2", "sphere2h", "capsule"])
def test_a_pinch_holds_a_ball_without_creep(tips, integrator, h):
    """A 50 g ball (friction 0.7) pinched by two fingers (one or two spheres each, or a capsule),
    10 N each: the weight is carried by friction alone; two tips per finger make the grasp
    hyperstatic (the split between them is not unique)."""
    fails, creep, pen, pub = _hold(rs.pinch(tips, integrator, h), 0.6, 0.2, ["left", "right"])
    assert fails == 0
    assert creep <= 1e-6
    assert pen <= 1e-4 and pub <= 1e-4


@pytest.mark.parametrize("integrator,h", INTEGRATORS[:3])
@pytest.mark.parametrize("obj", ["sphere", "box"])
def test_three_fingers_hold_a_sphere_and_a_box(obj, integrator, h):
    """Three sphere tips at 120 deg, 8 N each, hold an 80 g sphere or box in the air."""
    fails, creep, pen, pub = _hold(rs.three_finger(obj, integrator, h), 0.6, 0.2,
                                   ["f0", "f1", "f2"], obj="obj")
    assert fails == 0
    assert creep <= 1e-6
    assert pen <= 1e-4 and pub <= 1e-4


@pytest.mark.parametrize("integrator,h", INTEGRATORS)
def test_a_mesh_jaw_gripper_lifts_a_box_off_the_table(integrator, h):
    """Convex-mesh jaws squeeze a 100 g box (5 N each) and the hand lifts it 5 cm: the box rises
    with the hand, does not slip in the jaws once the lift has settled, and nothing penetrates.
    Each pad's inner hull face holds a patch of the box (with torsion), as a box face would: with
    point contacts of the pads' vertices the box pivoted between them (creep 1.2e-5 m/s). Every
    solve succeeds under every integrator (under implicit at 1 ms one stalled at 2.2e-10 m/s while
    the plain Newton steps before the proximal loop were capped at 50, not 4)."""
    m, d = _load(rs.jaw_lift(integrator, h))
    box = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "box")
    hand = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "hand")
    jaws = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, j) for j in ("jaw_l", "jaw_r")]
    slip = pen = 0.0
    offset = None
    for i in range(int(round(1.5 / h))):
        d.ctrl[1] = d.ctrl[2] = 5.0
        d.ctrl[0] = 0.0 if d.time < 0.3 else 0.05
        mujoco.mj_step(m, d)
        mujoco.mj_forward(m, d)  # kinematics of the state the step left
        pen = max(pen, -_min_distance(m, d, box, jaws))
        if d.time >= 1.0:  # lifted and settled: the box must ride with the hand exactly
            rel = d.xpos[box, 2] - d.xpos[hand, 2]
            offset = rel if offset is None else offset
            slip = max(slip, abs(rel - offset))
    assert _slot(d, "solver_failures") == 0
    assert d.xpos[box, 2] > 0.02 + 0.04  # lifted about 5 cm
    assert slip <= 1e-6 * 0.5  # creep <= 1e-6 m/s over the last 0.5 s
    assert pen <= 1e-4 and _slot(d, "max_penetration") <= 1e-4


def jaw_mocap_pick(integrator, h, stock=False, weld=""):
    """rigid_scenes.jaw_mocap: the jaws squeeze 5 N each, the mocap target rises 5 cm from 0.3 s
    to 0.6 s; returns the box's largest slip in the hand's frame over the last 0.5 s (m), the
    deepest box-jaw and box-table distance by mj_geomDistance (m, > 0: penetration), the box's
    rise (m) and the plugin's failed solves (None for the stock twin)."""
    xml = rs.jaw_mocap(integrator, h, weld)
    if stock:
        spec = mujoco.MjSpec.from_string(xml)
        m = cusp.stock_twin(spec).compile()
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
    else:
        m, d = _load(xml)
    box = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "box")
    hand = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "hand")
    jaws = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, j) for j in ("jaw_l", "jaw_r")]
    table = [0]  # the world body: the table plane
    z0 = d.xpos[box, 2]
    slip = pen = 0.0
    offset = None
    for i in range(int(round(1.5 / h))):
        d.ctrl[0] = d.ctrl[1] = 5.0
        d.mocap_pos[0, 2] = 0.02 + 0.05 * min(max((d.time - 0.3) / 0.3, 0.0), 1.0)
        mujoco.mj_step(m, d)
        mujoco.mj_forward(m, d)  # kinematics of the state the step left
        pen = max(pen, -_min_distance(m, d, box, jaws + table))
        if d.time >= 1.0:
            rel = (d.xmat[hand].reshape(3, 3).T @ (d.xpos[box] - d.xpos[hand]))
            offset = rel if offset is None else offset
            slip = max(slip, float(np.linalg.norm(rel - offset)))
    fails = None if stock else _slot(d, "solver_failures")
    return dict(slip=slip, pen=pen, rise=d.xpos[box, 2] - z0, fails=fails,
                pub=None if stock else _slot(d, "max_penetration"))


# the weld as MuJoCo's defaults make it, and a stiff one (time constant 0.5 ms instead of 20 ms,
# impedance 0.99-0.999 instead of 0.9-0.95: its efc_D, which enters the effective inertia, 11
# times larger: 23.1 instead of 2.1 kg on its translation rows)
WELDS = ["", 'solref="0.0005 1" solimp="0.99 0.999 0.001"']


@pytest.mark.parametrize("weld", WELDS, ids=["default_weld", "stiff_weld"])
@pytest.mark.parametrize("integrator,h", INTEGRATORS)
def test_a_jaw_gripper_welded_to_a_mocap_target_lifts_a_box(integrator, h, weld):
    """The hand of the jaw gripper free and welded to a mocap body (MuJoCo's soft weld), as task
    suites drive a hand: the weld is one of the compliant equalities (config/params.c), so the
    hand yields to what it grips as the soft weld lets it, and the grip holds exactly. Every
    solve succeeds, the box rises with the target (>= 4 cm of 5), does not slip in the hand's
    frame once lifted (<= 1e-6 m/s over the last 0.5 s: stock MuJoCo's soft contact lets it slide
    down, reported) and nothing penetrates by MuJoCo's own distance (<= 0.1 mm)."""
    c = jaw_mocap_pick(integrator, h, weld=weld)
    s = jaw_mocap_pick(integrator, h, stock=True, weld=weld)
    print(f"\n{integrator} h={h} {weld or 'default weld'}: cusp slip {c['slip'] / 0.5:.2e} m/s, pen {c['pen']:.2e} m, rise "
          f"{c['rise']:.4f} m; stock slip {s['slip'] / 0.5:.2e} m/s, pen {s['pen']:.2e} m, rise "
          f"{s['rise']:.4f} m")
    assert c["fails"] == 0
    assert c["rise"] >= 0.04
    assert c["slip"] <= 1e-6 * 0.5
    assert c["pen"] <= 1e-4 and c["pub"] <= 1e-4


@pytest.mark.parametrize("integrator,h", INTEGRATORS[:3])
@pytest.mark.parametrize("n,taper", [(5, True), (8, False)])
def test_a_stack_rests_without_failures_or_energy_gain(n, taper, integrator, h):
    """A tapering stack of 5 with its middle box turned 20 deg (corners overhang), and 8 equal
    boxes: every solve succeeds, no step gains energy (1e-6 J), and the stack comes to rest."""
    m, d = _load(rs.stack(n, integrator, h, taper=taper))
    gain = largest_step_gain(m, d, int(round(0.5 / h)))
    assert _slot(d, "solver_failures") == 0
    assert gain <= 1e-6
    assert np.abs(d.qvel).max() <= 1e-6
    assert _slot(d, "max_penetration") <= 1e-4


def test_a_tall_stack_of_32_boxes_stands_without_failures():
    """32 equal boxes (one island of 32 bodies, 224 unknowns): every step solved within the
    island's work budget (at least 200 Newton steps of the island's size), the stack at rest and
    nothing penetrating."""
    m, d = _load(rs.stack(32, "implicitfast", 0.002, taper=False))
    for _ in range(100):
        mujoco.mj_step(m, d)
    assert _slot(d, "solver_failures") == 0
    assert np.abs(d.qvel).max() <= 1e-6
    assert _slot(d, "max_penetration") <= 1e-4


@pytest.mark.parametrize("integrator,h", INTEGRATORS)
def test_a_pile_in_a_bin_settles_with_at_most_two_failed_solves(integrator, h):
    """Ten mixed shapes (boxes, spheres, capsules, cylinders, an ellipsoid) dropped into a bin:
    one island of up to about 100 unknowns, patches sliding, sticking and tipping. In 1000 steps
    at most 2 failed solves (0.2 %), the published penetration at most 0.5 mm (the landing's
    impacts), and no step gains more than 1e-6 J (nothing is actuated)."""
    m, d = _load(rs.pile(integrator, h))
    gain = largest_step_gain(m, d, 1000)
    print(f"pile {integrator} h={h}: {_slot(d, 'solver_failures'):.0f} failed solves, gain "
          f"{gain:.2e} J, published penetration {_slot(d, 'max_penetration'):.2e} m")
    assert _slot(d, "solver_failures") <= 2
    assert _slot(d, "max_penetration") <= 5e-4
    assert gain <= 1e-6


SQUEEZED = """<mujoco model="squeezed">
  <option timestep="{h}" integrator="{integrator}"><flag energy="enable"/></option>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="box pusher"/></instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="box" pos="0 0 0.02"><freejoint/>
      <geom type="box" size="0.03 0.03 0.02" mass="0.5" contype="0" conaffinity="0"/></body>
    <body name="pusher" pos="0 0 {z}">
      <joint name="px" type="slide" axis="1 0 0"/><joint name="py" type="slide" axis="0 1 0"/>
      <geom type="sphere" size="0.01" mass="0.05" contype="0" conaffinity="0"/></body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("integrator,h", INTEGRATORS)
def test_a_box_squeezed_by_a_pusher_that_cannot_rise_is_solved_every_step(integrator, h):
    """A box on the floor and a sphere on x/y slides (it cannot move along z) sunk 1 mm into the
    box's top face: no motion can push the two apart, so the push-out has no solution. Every step
    solved (the push-out dropped, the vertices held at their depth), the overlap by
    mj_geomDistance never deeper than 1 mm + 1 um, the box on the floor within 1 um, no step gaining
    more than 1e-6 J (nothing is actuated)."""
    m, d = _load(SQUEEZED.format(integrator=integrator, h=h, z=0.04 + 0.01 - 0.001))
    box = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "box")
    pusher = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "pusher")
    floor = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    box_geom = m.body_geomadr[box]
    gain = largest_step_gain(m, d, int(round(0.5 / h)))
    mujoco.mj_forward(m, d)
    overlap = -_min_distance(m, d, box, [pusher])
    on_floor = mujoco.mj_geomDistance(m, d, box_geom, floor, 0.05, np.zeros(6))
    print(f"squeezed {integrator} h={h}: {_slot(d, 'solver_failures'):.0f} failed solves, overlap "
          f"{overlap:.3e} m, box-floor {on_floor:.2e} m, gain {gain:.2e} J")
    assert _slot(d, "solver_failures") == 0
    assert overlap <= 1e-3 + 1e-6
    assert abs(on_floor) <= 1e-6
    assert gain <= 1e-6


SUNK_BOX = """<mujoco model="sunk_box">
  <option timestep="{h}" integrator="{integrator}"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="box"/></instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="box" pos="0 0 {z}"><freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="1" contype="0" conaffinity="0"/></body>
  </worldbody>
</mujoco>
"""


@pytest.mark.parametrize("integrator,h", INTEGRATORS)
def test_a_box_sunk_less_than_the_slop_is_held_and_deeper_is_pushed_out(integrator, h):
    """A box at rest with its bottom face sunk into the floor (config key pushout_slop, 1e-7 m by
    default), one step under gravity: half the slop deep it is held where it is (its rise speed
    within 1e-9 m/s of 0, where a push-out would give gap_alpha depth / h = 2.5e-6 m/s or more),
    five slops deep it is pushed out of all of its depth at gap_alpha depth / h (gap_alpha 0.2),
    within 1e-4 of it; no rotation either way (the face's vertices are asked the same)."""
    slop, alpha = 1e-7, 0.2
    for depth, rise in ((0.5 * slop, 0.0), (5 * slop, alpha * 5 * slop / h)):
        m, d = _load(SUNK_BOX.format(integrator=integrator, h=h, z=0.05 - depth))
        mujoco.mj_step(m, d)
        assert _slot(d, "solver_failures") == 0
        assert abs(d.qvel[2] - rise) <= (1e-9 if rise == 0 else 1e-4 * rise), (depth, d.qvel[2])
        assert np.abs(d.qvel[3:]).max() <= 1e-12
