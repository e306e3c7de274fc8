"""Scenes of what MuJoCo users register (issue: register what MuJoCo users have), each compared
with its stock twin in the same test: a hinged door and a drawer on a slide (mjcf/door_push.xml,
mjcf/drawer_push.xml) held shut by a finger pushing below friction; from dm_control's planar
manipulator (tests/data/suites/dm_control, copied unchanged, Apache-2.0): its ball on x/z slides
and a hinge lifted by a two-finger gripper made of its fingertip spheres, and its peg (blade and
guard, the pommel on a welded child body) resting on a table; from its planar stacker (same source):
four boxes on x/z slides and a hinge, stacked with overhangs, and dropped tilted onto each other. Observables: d.plugin_state (names
from cusp.slot_names()), cusp.contacts, and MuJoCo's own distance query mj_geomDistance."""
import mujoco
import numpy as np
import pytest

import cusp
from scene_util import register

NAMES = cusp.slot_names()
PEN = NAMES.index("max_penetration")
FAILURES = NAMES.index("solver_failures")
SUITES = cusp.REPO / "tests" / "data" / "suites"
MANIPULATOR = SUITES / "dm_control" / "manipulator.xml"
STACKER = SUITES / "dm_control" / "stacker.xml"


def counters(m, d):
    a = m.plugin_stateadr[0]
    return d.plugin_state[a + PEN], d.plugin_state[a + FAILURES]


def distance(m, d, g1, g2):
    """Signed distance (m) of two geoms at d's state (kinematics recomputed: after mj_step d holds
    those of the step's start)."""
    scratch = mujoco.MjData(m)
    scratch.qpos[:] = d.qpos
    mujoco.mj_kinematics(m, scratch)
    return mujoco.mj_geomDistance(m, scratch, m.geom(g1).id, m.geom(g2).id, 0.05, None)


def compiled(spec, stock):
    """(model, data) of spec, or of its stock twin."""
    m = (cusp.stock_twin(spec) if stock else spec).compile()
    return m, mujoco.MjData(m)


# ---------------------------------- door and drawer held shut ------------------------------------

@pytest.mark.parametrize("scene, pairs", [
    ("door_push.xml", [("finger", "door"), ("door", "stop")]),
    ("drawer_push.xml", [("finger", "front"), ("drawer", "back"), ("drawer", "bottom"),
                         ("front", "left")]),
])
def test_finger_holds_door_and_drawer_without_creep(scene, pairs):
    # the finger presses with 5 N (position actuator) and pushes 1 N up and 1 N sideways (motors):
    # 1.4 N < mu 5 N. Over the last second nothing moves (< 1e-6 m/s); no contact sinks (<= 0.1 mm)
    creep = {}
    for stock in (False, True):
        m = cusp.load_spec(cusp.REPO / "mjcf" / scene, stock=stock).compile()
        d = mujoco.MjData(m)
        mujoco.mj_resetDataKeyframe(m, d, 0)
        max_pen = 0.0
        for i in range(3000):
            mujoco.mj_step(m, d)
            if not stock:
                max_pen = max(max_pen, counters(m, d)[0])
            if i == 1999:
                q = d.qpos.copy()
        creep[stock] = np.abs(d.qpos - q).max() / 1.0  # m/s (rad/s) over the last second
        if stock:
            continue
        assert counters(m, d)[1] == 0
        assert max_pen <= 1e-4
        assert creep[stock] < 1e-6
        assert min(distance(m, d, a, b) for a, b in pairs) >= -1e-4
        assert distance(m, d, *pairs[0]) <= 1e-4  # the finger still presses
        assert d.actuator_force == pytest.approx([1, 5, 1], abs=1e-6)
    # stock MuJoCo's soft friction lets the finger creep along the door or drawer (1.5 cm/s)
    assert creep[True] > 100 * creep[False]


# ---------------------------------- dm_control manipulator: the ball ------------------------------

def arena(spec, prop):
    """The manipulator's spec reduced to its arena and one prop ("ball" or "peg"): the arm, the
    other prop, the receptacles, the targets and what refers to them (tendons, the equality,
    sensors, actuators) deleted; h = 2 ms."""
    for name in ("upper_arm", "ball", "peg", "slot", "cup", "target_ball", "target_peg"):
        if name != prop:
            spec.delete(spec.body(name))
    for group in (spec.tendons, spec.equalities, spec.sensors, spec.actuators):
        for element in list(group):
            spec.delete(element)
    spec.option.timestep = 0.002
    return spec


X_BALL, R_BALL = 0.1, 0.022  # m: away from the arena's slanted walls; the suite's ball radius


def gripper_scene(tips):
    """The manipulator's arena and ball (x/z slides and a hinge) with the ball on the floor at
    x = 0.1 m, and a gripper in place of the arm: a hand on a vertical slide and two fingers on
    horizontal slides, each ending in the suite's fingertip spheres (radius, friction, solref,
    solimp of thumbtip1) at heights `tips` (m; the suite's pair: -3 and 3 mm), all driven by
    position servos."""
    spec = mujoco.MjSpec.from_file(str(MANIPULATOR))
    tip = spec.geom("thumbtip1")
    size, friction = np.array(tip.size), np.array(tip.friction)
    solref, solimp = np.array(tip.solref), np.array(tip.solimp)
    arena(spec, "ball")
    spec.body("ball").pos = [X_BALL, 0, R_BALL]
    spec.joint("ball_x").ref = X_BALL
    spec.joint("ball_z").ref = R_BALL
    hand = spec.worldbody.add_body(name="hand", pos=[X_BALL, 0, R_BALL], gravcomp=1)
    hand.add_joint(name="lift", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, 0, 1], damping=5)
    hand.add_geom(name="palm", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.045, 0.01, 0.005],
                  pos=[0, 0, 0.04], contype=0, conaffinity=0, mass=0.05)
    for side, name in ((-1, "thumb"), (1, "finger")):
        body = hand.add_body(name=name, pos=[side * (R_BALL + size[0] + 0.01), 0, 0], gravcomp=1)
        body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[1, 0, 0], damping=2)
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[0.004, 0, 0],
                      fromto=[0, 0, 0.008, 0, 0, 0.04], contype=0, conaffinity=0, mass=0.005)
        for k, z in enumerate(tips):
            body.add_geom(name=f"{name}tip{k + 1}", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=size,
                          pos=[0, 0, z], friction=friction, solref=solref, solimp=solimp,
                          mass=0.005)
    for name, kp in (("lift", 400), ("thumb", 100), ("finger", 100)):
        spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT,
                          biastype=mujoco.mjtBias.mjBIAS_AFFINE, ctrlrange=[-1, 1],
                          gainprm=[kp] + [0] * 9, biasprm=[0, -kp, 0] + [0] * 7)
    return register(spec, ["ball"])


def grip(t):
    """Servo targets: fingers close at 0.2 s to 20 mm past the ball's surface (2 N squeeze, the
    ball weighs 0.44 N, mu 0.7), the hand lifts 0.1 m from 0.5 s to 1 s."""
    close = 0.03 if t > 0.2 else 0.0
    lift = 0.0 if t < 0.5 else min(0.1, 0.1 * (t - 0.5) / 0.5)
    return [lift, close, -close]


@pytest.mark.parametrize("tips", [
    (0.0,),            # one sphere per finger
    (-0.003, 0.003),   # the suite's pair: two contacts per finger (see below)
])
def test_gripper_lifts_the_planar_ball(tips):
    # The ball is lifted with the hand without slipping (< 1 um), no contact sinks, no solve
    # fails. With the suite's pairs of fingertip spheres the squeeze and friction split between
    # the two contacts of one finger is statically indeterminate (180 failed steps of 1000 before
    # the proximal-point solve; 1, when the fingers strike the ball, while the friction rows
    # across the ball's plane, which nothing can move along, stayed unknowns of the problem).
    result = {}
    for stock in (False, True):
        m, d = compiled(gripper_scene(tips), stock)
        ball, lift = m.joint("ball_z").qposadr[0], m.joint("lift").qposadr[0]
        max_pen = 0.0
        for _ in range(1000):
            d.ctrl[:] = grip(d.time)
            mujoco.mj_step(m, d)
            if not stock:
                max_pen = max(max_pen, counters(m, d)[0])
            if abs(d.time - 0.5) < 1e-9:
                grasped = d.qpos[ball] - d.qpos[lift]
            if abs(d.time - 1.5) < 1e-9:
                held = d.qpos[ball] - d.qpos[lift]
        result[stock] = (d.qpos[ball], held - grasped, (d.qpos[ball] - d.qpos[lift] - held) / 0.5)
        if stock:
            continue
        assert counters(m, d)[1] == 0
        assert max_pen <= 1e-4
        for tip in ("thumbtip1", "fingertip1"):
            assert -1e-4 <= distance(m, d, tip, "ball") <= 1e-4
    height, slip, creep = result[False]
    assert height == pytest.approx(R_BALL + 0.0989, abs=1e-3)  # the hand's servo sags 1.1 mm
    assert abs(slip) < 1e-6 and abs(creep) < 1e-6
    # stock MuJoCo lifts it too, slipping in its soft grip (one sphere per finger: 4 mm, then
    # 7.7 mm/s; the pair: 0.9 mm, then 0.8 mm/s)
    assert result[True][0] == pytest.approx(height, abs=2e-2)
    assert abs(result[True][2]) > 100 * abs(creep)


# ---------------------------------- dm_control manipulator: the peg -------------------------------

def peg_scene(free):
    """The manipulator's arena and peg (blade and guard capsules, the pommel sphere on a child
    body welded to the peg) over a table: on its own x/z slides and hinge as in the suite (lying
    in the x-z plane, its guard upright), or (free) on a free joint, lying flat."""
    spec = arena(mujoco.MjSpec.from_file(str(MANIPULATOR)), "peg")
    spec.worldbody.add_geom(name="table", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.15, 0.1, 0.02],
                            pos=[-0.1, 0, 0.1])
    peg = spec.body("peg")
    peg.pos = [-0.1, 0, 0.15]
    if free:
        peg.quat = [0.5, 0.5, 0.5, 0.5]  # blade along x, guard along y: lying flat
    else:
        # blade along x, guard upright: the peg moves in the x-z plane (its hinge's axis is y)
        peg.quat = [np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0]
    if free:
        for joint in list(peg.joints):
            spec.delete(joint)
        peg.add_freejoint()
    else:
        spec.joint("peg_x").ref = 0
        spec.joint("peg_z").ref = 0
    return register(spec, ["peg"])


@pytest.mark.parametrize("free", [True, False])
def test_suite_peg_with_welded_pommel_rests_on_a_table(free):
    rest = {}
    for stock in (False, True):
        m, d = compiled(peg_scene(free), stock)
        max_pen = 0.0
        for _ in range(1500):
            mujoco.mj_step(m, d)
            if not stock:
                max_pen = max(max_pen, counters(m, d)[0])
        rest[stock] = d.xpos[m.body("peg").id].copy()  # of the step's start: at rest the same
        if stock:
            continue
        assert counters(m, d)[1] == 0
        assert max_pen <= 1e-4
        assert np.abs(d.qvel).max() < 1e-6
        gaps = [distance(m, d, g, "table") for g in ("blade", "guard", "pommel")]
        assert min(gaps) >= -1e-4
        # lying flat, the pommel (the welded child's geom, the thickest) carries its end: it
        # touches the table (with the guard upright, the peg rests on the guard and the blade)
        assert max(gaps[0], gaps[2] if free else gaps[1]) <= 1e-4
    assert rest[False] == pytest.approx(rest[True], abs=3e-3)


# ---------------------------------- dm_control's planar stacker ----------------------------------

BOX = 0.022  # m, half size of the stacker's boxes
OVERHANG = [0.0, 0.012, -0.006, 0.015]  # m, x offset of each box (the stack of 4 stands: every
                                        # partial centre of mass lies over the box below)


def stacker(integrator, stock, gap, tilt):
    """The stacker with its 4 boxes registered, placed in a column at x = 0.3 m with OVERHANG,
    `gap` (m) between them and hinge angles +-tilt (rad); the arm held upright by a PD on its
    motors. Returns (m, d, the boxes' qpos addresses (x, z, angle per box), a step function)."""
    spec = mujoco.MjSpec.from_file(str(STACKER))
    spec.option.integrator = getattr(mujoco.mjtIntegrator, "mjINT_" + integrator.upper())
    m, d = compiled(register(spec, [f"box{i}" for i in range(4)]), stock)
    adr = [m.jnt_qposadr[m.joint(f"box{i}_{a}").id] for i in range(4) for a in "xzy"]
    for i in range(4):
        d.qpos[adr[3 * i]] = 0.3 + OVERHANG[i]  # the slides' ref: qpos is the world position
        d.qpos[adr[3 * i + 1]] = BOX + 2 * BOX * i + gap * (i + 1)
        d.qpos[adr[3 * i + 2]] = tilt * (-1) ** i
    arm = [m.joint(n).id for n in ("arm_root", "arm_shoulder", "arm_elbow", "arm_wrist")]

    def step():
        for a, j in enumerate(arm):
            q, v = d.qpos[m.jnt_qposadr[j]], d.qvel[m.jnt_dofadr[j]]
            d.ctrl[a] = np.clip(-2 * q - 0.2 * v, -1, 1)
        mujoco.mj_step(m, d)

    return m, d, adr, step


def box_gaps(m, d):
    """mj_geomDistance (m) of every box to the floor and to every other box."""
    geoms = [m.geom(f"box{i}").id for i in range(4)] + [m.geom("floor").id]
    scratch = mujoco.MjData(m)
    scratch.qpos[:] = d.qpos
    mujoco.mj_kinematics(m, scratch)
    return [mujoco.mj_geomDistance(m, scratch, a, b, 0.05, None)
            for i, a in enumerate(geoms[:4]) for b in geoms[i + 1:]]


# RK4 is left out: the stacker's fingertip joints (damping and stiffness 0.01 on tiny bodies)
# diverge under RK4 at its 1 ms step in stock MuJoCo too (NaN within 4 steps)
@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
def test_stacker_boxes_stand_in_an_overhanging_stack(integrator):
    # four boxes stacked with overhangs of up to 2.1 cm: cusp holds them exactly (no creep, no
    # failed solve, no penetration), at the heights of rigid boxes; stock MuJoCo's soft contact
    # sinks each level ~0.1 mm and creeps
    heights, creep = {}, {}
    for stock in (False, True):
        m, d, adr, step = stacker(integrator, stock, gap=0.0, tilt=0.0)
        worst = np.inf
        for i in range(3000):
            step()
            if i % 100 == 0:
                worst = min(worst, min(box_gaps(m, d)))
            if i == 1999:
                q = d.qpos[adr].copy()
        creep[stock] = np.abs(d.qpos[adr] - q).max()  # m (rad) over the last second
        heights[stock] = d.qpos[adr[1::3]]
        if stock:
            continue
        max_pen, failures = counters(m, d)
        assert failures == 0
        assert max_pen <= 1e-4 and worst >= -1e-4
        assert creep[stock] <= 1e-6
        np.testing.assert_allclose(heights[stock], BOX * np.array([1, 3, 5, 7]), atol=1e-6)
        np.testing.assert_allclose(d.qpos[adr[0::3]], 0.3 + np.array(OVERHANG), atol=1e-6)
    np.testing.assert_allclose(heights[False], heights[True], atol=1e-3)


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast"])
def test_stacker_boxes_dropped_tilted_onto_each_other_settle(integrator):
    # the column dropped with 1 cm gaps and the boxes tilted +-0.2 rad: they strike edge first,
    # tumble and scatter; no failed solve, no penetration beyond 0.1 mm at any sampled step, all at
    # rest on the floor or on each other after 3 s, with no box sunk into another
    m, d, adr, step = stacker(integrator, False, gap=0.01, tilt=0.2)
    worst = np.inf
    for i in range(3000):
        step()
        if i % 10 == 0:
            worst = min(worst, min(box_gaps(m, d)))
    max_pen, failures = counters(m, d)
    assert failures == 0
    assert max_pen <= 1e-4 and worst >= -1e-4
    assert np.abs(d.qvel[m.jnt_dofadr[m.joint("box0_x").id]:]).max() < 1e-6


# ---------------------------------- Gymnasium's pusher -----------------------------------------

GYM = SUITES / "gymnasium"


def pusher(scene, integrator, stock):
    """Gymnasium's pusher with its object registered: v4's invisible sphere (unnamed in the file,
    named here) listed in visual_geoms. Returns (m, d, the object's cylinder geom id, the ids of
    the arm's three pushing capsules)."""
    spec = mujoco.MjSpec.from_file(str(GYM / scene))
    spec.option.integrator = getattr(mujoco.mjtIntegrator, "mjINT_" + integrator.upper())
    obj = spec.body("object")
    spheres = [g for g in obj.geoms if g.type == mujoco.mjtGeom.mjGEOM_SPHERE]
    for i, g in enumerate(spheres):
        g.name = f"object_marker{i}"
    register(spec, ["object"])
    if spheres:
        spec.plugins[0].config = dict(spec.plugins[0].config,
                                      visual_geoms=" ".join(g.name for g in spheres))
    m, d = compiled(spec, stock)
    cylinder = next(g for g in range(m.ngeom)
                    if m.geom_bodyid[g] == m.body("object").id and m.geom_type[g] == 5)
    capsules = [g for g in range(m.ngeom) if m.geom_bodyid[g] == m.body("r_wrist_roll_link").id
                and m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE]
    return m, d, cylinder, capsules


@pytest.mark.parametrize("scene", ["pusher.xml", "pusher_v5.xml"])
@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "RK4"])
def test_gymnasium_pusher_pushes_its_object(scene, integrator):
    # The arm (PD on its motors) sweeps its shoulder from 0.3 to 1.3 rad with the wrist's U of
    # capsules at the object's height (the task's 10 ms step, condim 1: frictionless): cusp pushes
    # the object 10+ cm with no failed solve and the capsules never inside it by more than the
    # step's linearisation (mj_geomDistance >= -0.5 mm at 0.4 m/s: h^2-order); MuJoCo's own
    # contact in the same run lets the capsules pass through the light object (> 3 cm deep)
    depth = {}
    for stock in (False, True):
        m, d, cylinder, capsules = pusher(scene, integrator, stock)
        d.qpos[0], d.qpos[1], d.qpos[3] = 0.3, 0.74, -0.7
        scratch = mujoco.MjData(m)
        closest = np.inf
        for _ in range(300):
            target = np.zeros(7)
            target[0], target[1], target[3] = min(0.3 + 0.5 * d.time, 1.3), 0.74, -0.7
            d.ctrl[:] = np.clip(20 * (target - d.qpos[:7]) - 2 * d.qvel[:7], -2, 2)
            mujoco.mj_step(m, d)
            scratch.qpos[:] = d.qpos
            mujoco.mj_kinematics(m, scratch)
            for g in capsules:
                closest = min(closest, mujoco.mj_geomDistance(m, scratch, cylinder, g, 0.1, None))
        depth[stock] = -closest
        moved = np.hypot(d.qpos[m.joint("obj_slidex").qposadr[0]],
                         d.qpos[m.joint("obj_slidey").qposadr[0]])
        if not stock:
            assert counters(m, d)[1] == 0
            assert moved > 0.1
            assert depth[stock] <= 5e-4
    assert depth[True] > 0.03
