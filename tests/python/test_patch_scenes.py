"""Patch contact scenes (mjcf/push_table.xml, push_dumbbell.xml, push_chain.xml,
block_incline.xml, disk_spin.xml, disk_slide_spin.xml) and patches against faces of other
registered bodies (box on box) and convex-mesh bodies, with physical assertions. Observables are
read from d.plugin_state: the counters (cusp.slot_names()), then 11 slots per registered body (patch.h)."""
import math

import mujoco
import numpy as np
import pytest

import cusp
from scene_util import energy

G = 9.81
NSTATE = len(cusp.slot_names())  # counters, plugin/state.h (read from the library)
NSLOT = 11
LN, S, ECP_X, ECP_Y, ECP_Z, MODE = 0, 4, 7, 8, 9, 10
PEN, FAILURES = 7, 8
STICK, SLIDE = 1, 2


def scene(name):
    cusp.load()
    m = mujoco.MjModel.from_xml_path(str(cusp.REPO / "mjcf" / name))
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    return m, d


def slots(m, d, i=0):
    a = m.plugin_stateadr[0] + NSTATE + NSLOT * i
    return d.plugin_state[a:a + NSLOT]


def counters(m, d):
    return d.plugin_state[m.plugin_stateadr[0]:][:NSTATE]


def tool_off(m, d):
    """Disable the impedance actuators and park the sphere far away: the body is unactuated."""
    m.actuator_biasprm[:] = 0
    m.actuator_gainprm[:] = 0
    tool = m.body("tool").id
    d.qpos[m.jnt_qposadr[m.body_jntadr[tool]] + 2] = 1.0  # tz: 1 m up


# ---------------------------------- table and dumbbell ---------------------------------------------

def test_table_push_moves_support_to_front_feet():
    # static moment balance: ECP offset = F H / (m g) with F the pushing force (the sphere's
    # actuator force, gravity-compensated, quasi-static), H = 0.095 m; above 3 cm the ECP is inside
    # the front feet only (rear feet unloaded); no penetration, no sliding, no tilt
    m, d = scene("push_table.xml")
    table = m.body("table").id
    max_pen = 0.0
    ecp0 = pos_hold = None
    for i in range(1500):
        mujoco.mj_step(m, d)
        max_pen = max(max_pen, counters(m, d)[PEN])
        if i == 0:
            ecp0 = slots(m, d)[ECP_Y] - d.qpos[1]
        if i == 499:
            pos_hold = d.qpos[:7].copy()
    s = slots(m, d)
    F = d.actuator_force[1]
    offset = s[ECP_Y] - d.qpos[1]
    predicted = F * 0.095 / (m.body_subtreemass[table] * G)
    print(f"ECP offset {offset:.5f} m (before the push {ecp0:.2e}), F H/(m g) = {predicted:.5f} m, "
          f"F = {F:.3f} N, penetration {max_pen:.2e} m")
    assert abs(ecp0) < 1e-6  # at rest: under the centre of mass
    assert F == pytest.approx(3.5, rel=1e-3)  # saturated push
    assert offset == pytest.approx(predicted, abs=5e-4)
    assert 0.030 < offset < 0.045  # inside the front feet: support switched to them
    assert s[MODE] == STICK
    assert max_pen <= 1e-4
    assert np.linalg.norm(d.qpos[:7] - pos_hold) < 1e-6  # held: neither slides nor tilts in 1 s
    assert abs(d.qpos[2]) < 1e-6 and abs(d.qpos[4]) < 1e-6  # all feet down, no tilt about x
    assert counters(m, d)[FAILURES] <= 1


@pytest.mark.parametrize("name, body", [("push_table.xml", "table"),
                                        ("push_dumbbell.xml", "dumbbell")])
def test_unactuated_slide_and_spin_never_gains_energy(name, body):
    # the scene's body thrown sliding and spinning with the tool off: its disjoint support regions
    # (four feet, two ends) must dissipate monotonically, without penetration, and bring it to rest
    m, d = scene(name)
    tool_off(m, d)
    adr = m.jnt_dofadr[m.body_jntadr[m.body(body).id]]
    d.qvel[adr:adr + 6] = [0.6, 0.2, 0, 0, 0, 8.0]
    scratch = mujoco.MjData(m)
    e_prev = energy(m, d, scratch)
    worst, max_pen = -1.0, 0.0
    for i in range(1500):
        mujoco.mj_step(m, d)
        e = energy(m, d, scratch)
        worst = max(worst, e - e_prev)
        e_prev = e
        max_pen = max(max_pen, counters(m, d)[PEN])
    print(f"{name}: largest step energy increase {worst:.3e} J, penetration {max_pen:.2e} m")
    assert worst <= 1e-9
    assert max_pen <= 1e-4
    assert np.linalg.norm(d.qvel[adr:adr + 6]) < 1e-6  # at rest
    assert counters(m, d)[FAILURES] == 0


def test_dumbbell_push_turns_and_stays_on_its_ends():
    m, d = scene("push_dumbbell.xml")
    max_pen = 0.0
    for i in range(1500):
        mujoco.mj_step(m, d)
        max_pen = max(max_pen, counters(m, d)[PEN])
        # the ECP stays in the ground plane and within the dumbbell's footprint (11 cm from its COM)
        s = slots(m, d)
        if s[LN] > 0:
            assert abs(s[ECP_Z]) < 1e-4
            assert math.hypot(s[ECP_X] - d.qpos[0], s[ECP_Y] - d.qpos[1]) <= 0.11 + 1e-9
    yaw = 2 * math.atan2(d.qpos[6], d.qpos[3])
    print(f"yaw {math.degrees(yaw):.1f} deg, moved {d.qpos[:2]}, penetration {max_pen:.2e} m")
    assert max_pen <= 1e-4
    assert yaw > math.radians(10)  # pushed at one end: it turns
    assert abs(d.qpos[2] - 0.02) < 1e-4  # flat on its ends


# ---------------------------------- tool -> block 1 -> block 2 -------------------------------------

def test_chain_momentum_bounded_by_tool_impulse():
    # Along y, the only external impulses on tool + blocks are the actuator (+) and ground friction
    # (opposing motion): their momentum never exceeds the actuator's impulse, and their energy never
    # exceeds the actuator's work. Block 2 starts only after block 1 has travelled the 1 cm gap.
    m, d = scene("push_chain.xml")
    b1, b2 = m.body("block1").id, m.body("block2").id
    dof1 = m.jnt_dofadr[m.body_jntadr[b1]]
    dof2 = m.jnt_dofadr[m.body_jntadr[b2]]
    tool_ty = m.jnt_dofadr[m.joint("ty").id]
    scratch = mujoco.MjData(m)
    e0 = energy(m, d, scratch)
    impulse = work = 0.0
    h = m.opt.timestep
    worst_p = worst_e = -1.0
    t1 = t2 = None
    max_pen = 0.0
    for i in range(1000):
        v_before = d.qvel[tool_ty]
        mujoco.mj_step(m, d)
        F = d.actuator_force[1]
        impulse += F * h
        work += F * 0.5 * (v_before + d.qvel[tool_ty]) * h
        p = (m.body_mass[m.body("tool").id] * d.qvel[tool_ty] + m.body_mass[b1] * d.qvel[dof1 + 1]
             + m.body_mass[b2] * d.qvel[dof2 + 1])
        worst_p = max(worst_p, p - impulse)
        worst_e = max(worst_e, energy(m, d, scratch) - e0 - work)
        if t1 is None and d.qvel[dof1 + 1] > 1e-3:
            t1 = d.time
        if t2 is None and d.qvel[dof2 + 1] > 1e-3:
            t2 = d.time
            gap_closed = d.qpos[m.jnt_qposadr[m.body_jntadr[b2]] + 1] - d.qpos[1]
        max_pen = max(max_pen, counters(m, d)[PEN])
    print(f"block 1 moves at {t1} s, block 2 at {t2} s; momentum - impulse <= {worst_p:.2e} N s; "
          f"energy - work <= {worst_e:.2e} J; penetration {max_pen:.2e}; "
          f"solver failures {counters(m, d)[FAILURES]:.0f}")
    assert t1 is not None and t2 is not None and t2 > t1
    assert gap_closed == pytest.approx(0.08, abs=1e-4)  # blocks touch face to face when 2 starts
    assert d.qpos[m.jnt_qposadr[m.body_jntadr[b2]] + 1] > 0.09 + 1e-3  # block 2 was pushed
    assert worst_p <= 1e-6
    # the actuator's work is a trapezoid estimate: allow its O(h^2) error (1e-4 of it)
    assert worst_e <= 1e-4 * abs(work) + 1e-9
    assert max_pen <= 1e-4


@pytest.mark.parametrize("name", ["push_chain.xml", "push_table.xml"])
def test_push_scene_solves_every_step(name):
    # block 1 pressed against block 2 makes their shared-face friction statically indeterminate;
    # the FB Newton used to stall there (push_chain: 51 failed steps in 2 s; push_table: one at
    # t = 0.099 s). Every solve must reach the tolerance over the whole 2 s scene
    m, d = scene(name)
    for i in range(2000):
        mujoco.mj_step(m, d)
    assert counters(m, d)[FAILURES] == 0


# ---------------------------------- incline and disks ----------------------------------------------

def test_incline_scene_sticks_with_shifted_ecp():
    m, d = scene("block_incline.xml")
    alpha, hcom = math.radians(20), 0.02
    vmax = 0.0
    for i in range(5000):
        mujoco.mj_step(m, d)
        if i > 10:
            vmax = max(vmax, np.linalg.norm(d.qvel[:3]))
    s = slots(m, d)
    # the incline frame is rotated +20 deg about y: its x axis (cos a, 0, -sin a) points downhill
    R = d.xmat[m.body("block").id].reshape(3, 3)
    shift = (R.T @ (s[ECP_X:ECP_Z + 1] - d.xpos[m.body("block").id]))[0]
    print(f"creep {vmax:.2e} m/s, ECP shift {shift:.5f} m vs {hcom * math.tan(alpha):.5f}")
    assert vmax <= 1e-6
    assert shift == pytest.approx(hcom * math.tan(alpha), rel=0.05)
    assert s[MODE] == STICK


def test_spin_scene_decelerates_at_torsional_friction():
    m, d = scene("disk_spin.xml")
    mu, mass, R = 0.4, 1.0, 0.05
    w = []
    for i in range(150):
        mujoco.mj_step(m, d)
        w.append(d.qvel[5])
    decel = (w[29] - w[129]) / 0.1
    expected = mu * mass * G * (2 * R / 3) / (0.5 * mass * R * R)
    print(f"spin deceleration {decel:.4f} vs {expected:.4f} rad/s^2")
    assert decel == pytest.approx(expected, rel=0.02)


def test_slide_spin_scene_couples_decelerations():
    # initial decelerations from the limit surface: a = mu g v / q, alpha = mu m g er^2 w / (q I)
    m, d = scene("disk_slide_spin.xml")
    mu, mass, R, v0, w0 = 0.3, 1.0, 0.05, 0.5, 15.0
    er, Iz = 2 * R / 3, 0.5 * mass * R * R
    q = math.hypot(v0, er * w0)
    mujoco.mj_step(m, d)
    mujoco.mj_step(m, d)
    a = (v0 - d.qvel[0]) / (2 * m.opt.timestep)
    alpha = (w0 - d.qvel[5]) / (2 * m.opt.timestep)
    print(f"a {a:.4f} vs {mu * G * v0 / q:.4f}; alpha {alpha:.3f} vs {mu * mass * G * er**2 * w0 / (q * Iz):.3f}")
    assert a == pytest.approx(mu * G * v0 / q, rel=0.02)
    assert alpha == pytest.approx(mu * mass * G * er ** 2 * w0 / (q * Iz), rel=0.02)


# ---------------------------------- box on box, convex mesh ----------------------------------------

def model(worldbody, bodies, mu=0.5, gravity=(0, 0, -G)):
    cusp.load()
    xml = f"""
<mujoco><option timestep="0.001" gravity="{' '.join(map(str, gravity))}"/>
<asset><mesh name="wedge" vertex="-0.05 -0.04 0  0.05 -0.04 0  0.05 0.04 0  -0.05 0.04 0
  -0.03 -0.02 0.04  0.03 -0.02 0.04  0.03 0.02 0.04  -0.03 0.02 0.04"/></asset>
<extension><plugin plugin="cusp.contact"><instance name="cusp">
<config key="bodies" value="{bodies}"/><config key="friction" value="{mu}"/>
</instance></plugin></extension>
<worldbody><geom name="floor" type="plane" size="2 2 .1"/>{worldbody}</worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    return m, mujoco.MjData(m)


def test_box_on_box_stack_rests():
    # the upper box's patch is on the top face of the lower (registered) box: no penetration, no
    # drift over 5 s; the upper ECP under its COM, Ln of each = its weight (upper) or both (lower)
    m, d = model("""
      <body name="lower" pos="0 0 0.025"><freejoint/>
        <geom type="box" size="0.06 0.05 0.025" mass="1.0" contype="0" conaffinity="0"/></body>
      <body name="upper" pos="0.01 0.005 0.07"><freejoint/>
        <geom type="box" size="0.04 0.03 0.02" mass="0.5" contype="0" conaffinity="0"/></body>""",
                 "lower upper")
    max_pen, pos0 = 0.0, None
    for i in range(5000):
        mujoco.mj_step(m, d)
        max_pen = max(max_pen, counters(m, d)[PEN])
        if i == 499:
            pos0 = d.qpos.copy()
    up = slots(m, d, 1)
    lo = slots(m, d, 0)
    drift = max(np.linalg.norm(d.qpos[0:3] - pos0[0:3]), np.linalg.norm(d.qpos[7:10] - pos0[7:10]))
    print(f"penetration {max_pen:.2e} m, drift {drift:.2e} m, Ln lower {lo[LN]:.5e} upper {up[LN]:.5e}")
    assert max_pen <= 1e-4
    assert drift <= 1e-6
    assert up[LN] == pytest.approx(0.5 * G * 1e-3, rel=1e-6)
    assert lo[LN] == pytest.approx(1.5 * G * 1e-3, rel=1e-6)
    assert math.hypot(up[ECP_X] - 0.01, up[ECP_Y] - 0.005) <= 0.5e-3
    assert abs(up[ECP_Z] - 0.05) <= 1e-4  # on the top face of the lower box


@pytest.mark.parametrize("order", ["lower upper", "upper lower"])
def test_wide_box_on_narrow_box_one_interface(order):
    # a wide box on a narrow one, bodies listed in either order: the interface is represented once
    # (2 patches: ground and interface), as the upper box's patch on the lower box's top face (the
    # rule of body_vs_body), so the upper body's Ln = its weight impulse m g h and its ECP is on
    # that face under its COM
    m, d = model("""
      <body name="lower" pos="0 0 0.025"><freejoint/>
        <geom type="box" size="0.03 0.03 0.025" mass="1.0" contype="0" conaffinity="0"/></body>
      <body name="upper" pos="-0.005 0.004 0.07"><freejoint/>
        <geom type="box" size="0.07 0.06 0.02" mass="0.5" contype="0" conaffinity="0"/></body>""",
                 order)
    for i in range(1000):
        mujoco.mj_step(m, d)
    up = slots(m, d, order.split().index("upper"))
    print(f"{order}: patches {counters(m, d)[0]:.0f}, Ln upper {up[LN]:.5e}, ECP {up[ECP_X:ECP_Z + 1]}")
    assert counters(m, d)[0] == 2
    assert up[LN] == pytest.approx(0.5 * G * 1e-3, rel=1e-6)
    assert math.hypot(up[ECP_X] + 0.005, up[ECP_Y] - 0.004) <= 0.5e-3
    assert abs(up[ECP_Z] - 0.05) <= 1e-4


def test_mesh_block_on_incline_sticks():
    # a convex mesh (a truncated wedge, flat 10 x 8 cm base) on a 20 deg incline (gravity tilted),
    # mu = 0.5 > tan 20 deg: creep <= 1e-6 m/s over 5 s
    alpha = math.radians(20)
    m, d = model("""<body name="obj" pos="0 0 0"><freejoint/>
        <geom type="mesh" mesh="wedge" mass="0.8" contype="0" conaffinity="0"/></body>""", "obj",
                 gravity=(-G * math.sin(alpha), 0, -G * math.cos(alpha)))
    vmax, max_pen = 0.0, 0.0
    for i in range(5000):
        mujoco.mj_step(m, d)
        max_pen = max(max_pen, counters(m, d)[PEN])
        if i > 10:
            vmax = max(vmax, np.linalg.norm(d.qvel[:3]))
    s = slots(m, d)
    print(f"mesh creep {vmax:.2e} m/s, penetration {max_pen:.2e} m, mode {s[MODE]:.0f}")
    assert vmax <= 1e-6
    assert max_pen <= 1e-4
    assert s[MODE] == STICK
