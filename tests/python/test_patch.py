"""Patch contact: ECP + ellipsoidal limit surface, against analytic or independent
results. Impulses are published per registered body after the instance's counters
(Ln, Lt, Lo, Lr, s, rho_t, rho_r, ecp_x, ecp_y, ecp_z, mode)."""
import ctypes
import math

import mujoco
import numpy as np
import pytest

import cusp
from scene_util import energy

G = 9.81
NSTATE = len(cusp.slot_names())  # counters, plugin/state.h (read from the library)
SLOTS = ["Ln", "Lt", "Lo", "Lr", "s", "rho_t", "rho_r", "ecp_x", "ecp_y", "ecp_z", "mode"]
STICK, SLIDE = 1, 2


def model(body_xml, mu=0.5, gravity=(0, 0, -G), floor_euler="0 0 0", extra_config=""):
    cusp.load()
    xml = f"""
<mujoco><option timestep="0.001" gravity="{' '.join(map(str, gravity))}"/>
<extension><plugin plugin="cusp.contact"><instance name="cusp">
<config key="bodies" value="obj"/><config key="friction" value="{mu}"/>{extra_config}
</instance></plugin></extension>
<worldbody><geom name="floor" type="plane" size="2 2 .1" euler="{floor_euler}"/>
{body_xml}
</worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    return m, mujoco.MjData(m)


def obs(m, d):
    s = d.plugin_state[m.plugin_stateadr[0] + NSTATE:][:len(SLOTS)]
    return dict(zip(SLOTS, s))


def counters(m, d):
    return d.plugin_state[m.plugin_stateadr[0]:][:NSTATE]


def test_block_at_rest_ecp_under_com():
    # an L-shaped body (two boxes of different mass): COM off the centroid of the patch
    m, d = model("""<body name="obj" pos="0 0 0.0305"><freejoint/>
      <geom type="box" size="0.06 0.04 0.03" mass="0.8" contype="0" conaffinity="0"/>
      <geom type="box" pos="0.04 0 0.05" size="0.02 0.04 0.02" mass="0.6" contype="0" conaffinity="0"/>
      </body>""")
    pos0 = None
    max_pen = 0.0
    for i in range(5000):
        mujoco.mj_step(m, d)
        max_pen = max(max_pen, counters(m, d)[7])
        if i == 499:
            pos0 = d.qpos[:3].copy()
    o = obs(m, d)
    com = d.subtree_com[1]
    ecp_err = math.hypot(o["ecp_x"] - com[0], o["ecp_y"] - com[1])
    tilt = 2 * math.acos(min(1.0, abs(d.qpos[3])))
    drift = np.linalg.norm(d.qpos[:3] - pos0)
    print(f"ECP error {ecp_err:.3e} m, tilt {tilt:.3e} rad, drift {drift:.3e} m, pen {max_pen:.3e} m")
    assert ecp_err <= 0.5e-3
    assert com[0] > 0.005  # the COM really is off the patch centroid
    assert tilt < 1e-6
    assert drift < 1e-6
    assert max_pen <= 1e-4
    # Ln carries the weight
    assert o["Ln"] == pytest.approx(1.4 * G * m.opt.timestep, rel=1e-6)


INCLINE_BLOCK = """<body name="obj" pos="0 0 0.02"><freejoint/>
  <geom type="box" size="0.05 0.04 0.02" mass="0.8" contype="0" conaffinity="0"/></body>"""


def incline(alpha, mu):
    # incline = gravity tilted by alpha about y: downhill is -x in the floor frame
    return model(INCLINE_BLOCK, mu=mu, gravity=(-G * math.sin(alpha), 0, -G * math.cos(alpha)))


def test_incline_stick_no_creep_ecp_shift():
    alpha, mu, hcom = math.radians(20), 0.5, 0.02
    m, d = incline(alpha, mu)
    vmax = 0.0
    for i in range(5000):
        mujoco.mj_step(m, d)
        if i > 10:
            vmax = max(vmax, np.linalg.norm(d.qvel[:3]))
    o = obs(m, d)
    shift = -(o["ecp_x"] - 0.0)  # downhill is -x; patch centroid at x = qpos x
    shift = d.qpos[0] - o["ecp_x"]
    expected = hcom * math.tan(alpha)
    print(f"creep {vmax:.3e} m/s, ECP shift {shift:.6e} vs {expected:.6e}, s {o['s']:.4f}")
    assert vmax <= 1e-6
    assert shift == pytest.approx(expected, rel=0.05)
    assert o["mode"] == STICK and o["s"] < 1


def test_incline_slide_acceleration_and_saturation():
    alpha, mu = math.radians(35), 0.5
    m, d = incline(alpha, mu)
    v = []
    for i in range(2000):
        mujoco.mj_step(m, d)
        v.append(-d.qvel[0])
    a = (v[1999] - v[999]) / 1.0
    expected = G * (math.sin(alpha) - mu * math.cos(alpha))
    o = obs(m, d)
    print(f"a {a:.6f} vs {expected:.6f}; s {o['s']:.8f}")
    assert a == pytest.approx(expected, rel=0.01)
    assert abs(o["s"] - 1) <= 1e-3
    assert o["mode"] == SLIDE


DISK = """<body name="obj" pos="0 0 0.01"><freejoint/>
  <geom type="cylinder" size="{R} 0.01" mass="{mass}" contype="0" conaffinity="0"/></body>"""


def test_pure_spin_deceleration():
    R, mass, mu, w0 = 0.05, 1.0, 0.4, 20.0
    m, d = model(DISK.format(R=R, mass=mass), mu=mu)
    d.qvel[5] = w0
    Iz = 0.5 * mass * R * R
    er = 2 * R / 3
    w = []
    for i in range(300):
        mujoco.mj_step(m, d)
        w.append(d.qvel[5])
    decel = (w[29] - w[129]) / 0.1  # spin stops after w0 / decel ~ 0.19 s
    expected = mu * mass * G * er / Iz
    print(f"spin deceleration {decel:.5f} vs {expected:.5f} rad/s^2")
    assert decel == pytest.approx(expected, rel=0.02)
    assert np.linalg.norm(d.qvel[:2]) < 1e-6  # no sliding induced


def reference_slide_spin(v0, w0, mu, mass, Iz, er, T, n=200000):
    # maximum dissipation on (Lt)^2 + (Lo)^2 + (Lr/er)^2 <= (mu N)^2 with et = eo = 1:
    # the friction wrench is -mu N (v, er^2 w) / sqrt(v^2 + er^2 w^2) (independent RK4)
    def f(x):
        v, w = x
        q = math.sqrt(v * v + er * er * w * w)
        if q < 1e-12:
            return np.zeros(2)
        return np.array([-mu * mass * G * v / q / mass, -mu * mass * G * er * er * w / q / Iz])
    h = T / n
    x = np.array([v0, w0], dtype=float)
    out = [x.copy()]
    for _ in range(n):
        k1 = f(x); k2 = f(x + h / 2 * k1); k3 = f(x + h / 2 * k2); k4 = f(x + h * k3)
        x = np.maximum(x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), 0)
        out.append(x.copy())
    return np.array(out), h


def test_slide_and_spin_follow_limit_surface_ode():
    R, mass, mu, v0, w0 = 0.05, 1.0, 0.3, 0.5, 15.0
    m, d = model(DISK.format(R=R, mass=mass), mu=mu)
    d.qvel[0] = v0
    d.qvel[5] = w0
    Iz = 0.5 * mass * R * R
    er = 2 * R / 3
    T = 0.12
    ref, hr = reference_slide_spin(v0, w0, mu, mass, Iz, er, T)
    worst_v = worst_w = 0.0
    for i in range(int(T / m.opt.timestep)):
        mujoco.mj_step(m, d)
        t = d.time
        rv, rw = ref[int(round(t / hr))]
        if rv > 0.1 * v0 and rw > 0.1 * w0:
            worst_v = max(worst_v, abs(d.qvel[0] - rv) / rv)
            worst_w = max(worst_w, abs(d.qvel[5] - rw) / rw)
    print(f"max relative error v {worst_v:.4f}, omega {worst_w:.4f}")
    assert worst_v <= 0.02 and worst_w <= 0.02


def test_tall_block_tips_when_ecp_reaches_edge():
    w, H, hb, mass = 0.05, 0.25, 0.15, 1.0  # half-width w/2 = 0.025, push height H
    m, d = model(f"""<body name="obj" pos="0 0 {hb}"><freejoint/>
      <geom type="box" size="{w/2} {w/2} {hb}" mass="{mass}" contype="0" conaffinity="0"/></body>""",
                 mu=0.8)
    Ftip = mass * G * (w / 2) / H
    # quasi-static load: 0 -> 0.9 Ftip in 0.5 s, then 5 % of Ftip per second; tipping onset is
    # the first tilt above 1e-4 rad (the rotation lag at this rate is < 1 % of Ftip)
    def load(t):
        return 0.9 * Ftip * min(t / 0.5, 1) + (0.05 * Ftip * (t - 0.5) if t > 0.5 else 0)
    tipped_at = None
    ecp_before = []
    for i in range(3500):
        F = load(d.time)
        # force F along +x at height H above the floor: force at the COM plus torque (H - hcom) F
        d.xfrc_applied[1] = [F, 0, 0, 0, (H - hb) * F, 0]
        mujoco.mj_step(m, d)
        tilt = 2 * math.acos(min(1.0, abs(d.qpos[3])))
        o = obs(m, d)
        if tipped_at is None and tilt > 1e-4:
            tipped_at = F
        if tipped_at is None and F < 0.99 * Ftip:
            assert tilt < 1e-5, f"tilted {tilt} at F = {F} < Ftip = {Ftip}"
            # static moment balance: ECP offset = F H / (m g)
            ecp_before.append((F, o["ecp_x"] - d.qpos[0]))
    assert tipped_at is not None
    print(f"tipped at F = {tipped_at:.4f} N, predicted {Ftip:.4f} N")
    assert tipped_at == pytest.approx(Ftip, rel=0.02)
    for F, off in ecp_before[::200]:
        assert off == pytest.approx(F * H / (mass * G), abs=2e-4)
    assert ecp_before[-1][1] == pytest.approx(0.99 * w / 2, abs=5e-4)


@pytest.mark.parametrize("scene", ["drop", "slide", "spin"])
def test_no_energy_gain_without_actuation(scene):
    if scene == "drop":
        m, d = model("""<body name="obj" pos="0 0 0.05" euler="10 5 0"><freejoint/>
          <geom type="box" size="0.05 0.04 0.02" mass="0.8" contype="0" conaffinity="0"/></body>""")
    else:
        m, d = model(DISK.format(R=0.05, mass=1.0), mu=0.3)
        d.qvel[0] = 0.5 if scene == "slide" else 0.0
        d.qvel[5] = 10.0
    scratch = mujoco.MjData(m)
    e_prev = energy(m, d, scratch)
    worst = -1.0
    for i in range(1500):
        mujoco.mj_step(m, d)
        e = energy(m, d, scratch)
        worst = max(worst, e - e_prev)
        e_prev = e
    print(f"largest energy increase in one step: {worst:.3e} J")
    assert worst <= 1e-9


def block_energy(m, scratch, block):
    """Kinetic + potential energy (J) of one free body at scratch's kinematics (mj_kinematics,
    mj_comPos and mj_comVel done): 0.5 m v.v + 0.5 w.I w - m g.x_com."""
    mass = m.body_mass[block]
    vel = np.zeros(6)
    mujoco.mj_objectVelocity(m, scratch, mujoco.mjtObj.mjOBJ_BODY, block, vel, 0)  # (w, v) at COM, world
    R = scratch.ximat[block].reshape(3, 3)
    w_local = R.T @ vel[:3]
    kinetic = 0.5 * mass * vel[3:] @ vel[3:] + 0.5 * float(np.sum(m.body_inertia[block] * w_local ** 2))
    return kinetic - mass * float(m.opt.gravity @ scratch.xipos[block])


def test_breaking_scene_lifts_block_without_energy_gain():
    # mjcf/push_break.xml: the sphere strikes the arch's slab from below and obliquely; the block
    # must leave the plane (break: mode 0 for a stretch of steps, not just one), land and settle,
    # and while the sphere is clear of it (> 1 mm) the block's own energy must never increase
    # (free flight conserves it, landing dissipates it).
    cusp.load()
    m = mujoco.MjModel.from_xml_path(str(cusp.REPO / "mjcf" / "push_break.xml"))
    d = mujoco.MjData(m)
    scratch = mujoco.MjData(m)
    st = m.plugin_stateadr[0]
    block, tool = m.body("block").id, m.geom("tool").id
    block_geoms = range(m.body_geomadr[block], m.body_geomadr[block] + m.body_geomnum[block])
    modes, e_prev, worst, free_steps, zmax = [], None, 0.0, 0, 0.0
    for i in range(1500):
        mujoco.mj_step(m, d)
        modes.append(int(d.plugin_state[st + NSTATE + 10]))
        scratch.qpos[:] = d.qpos
        scratch.qvel[:] = d.qvel
        mujoco.mj_kinematics(m, scratch)
        mujoco.mj_comPos(m, scratch)
        mujoco.mj_comVel(m, scratch)
        clear = min(mujoco.mj_geomDistance(m, scratch, tool, g, 0.01, None) for g in block_geoms)
        e = block_energy(m, scratch, block)
        if clear > 1e-3 and e_prev is not None:
            worst = max(worst, e - e_prev)
            free_steps += 1
        e_prev = e if clear > 1e-3 else None
        zmax = max(zmax, d.qpos[2])
    longest = max(len(run) for run in "".join(str(x) for x in modes).split("1") + ["2"])
    breaks = sum(1 for x in modes if x == 0)
    print(f"break steps {breaks}, block lifted {zmax * 1e3:.2f} mm, steps clear of the tool "
          f"{free_steps}, largest block energy step increase {worst:.3e} J, final mode {modes[-1]}")
    assert breaks >= 20 and longest >= 20  # the ground contact breaks for >= 20 ms in a row
    assert zmax > 2e-3  # the whole block is lifted off the plane, not only tipped
    assert modes[-1] == STICK  # landed and settled
    assert free_steps > 1400
    assert worst <= 1e-9
    assert counters(m, d)[8] == 0  # no solver failures


def test_cusp_sim_csv_patch_columns():
    # cusp-sim's CSV carries the published patch observables of every registered body (config
    # order); cusp.run parses them by name; the stock twin has no such columns
    scene = cusp.REPO / "mjcf" / "push_slide.xml"
    summary, series = cusp.run(scene, seconds=0.5)
    names = [f"block_{s}" for s in SLOTS]
    assert all(n in series for n in names)
    # resting block before the tool arrives: Ln = m g h (0.8 kg, h = 1 ms), stick, ECP on the floor
    assert series["block_Ln"][0] == pytest.approx(0.8 * G * 1e-3, rel=1e-6)
    assert series["block_mode"][0] == STICK
    assert abs(series["block_ecp_z"][0]) < 1e-4
    # modes are the published codes and agree with the saturation: slide <=> s >= 1 - 1e-6
    mode, s = series["block_mode"], series["block_s"]
    assert set(np.unique(mode)) <= {0.0, 1.0, 2.0}
    assert np.all((mode == SLIDE) == ((s >= 1 - 1e-6) & (mode != 0)))
    assert SLIDE in mode  # the 10 N push slides the block within 0.5 s
    # the ECP stays under the block (inside its 5 cm half-width footprint)
    assert np.all(np.abs(series["block_ecp_x"] - series["block_x"]) <= 0.05 + 1e-9)
    assert np.all(np.abs(series["block_ecp_y"] - series["block_y"]) <= 0.05 + 1e-9)
    _, stock = cusp.run(scene, seconds=0.05, stock=True)
    assert "block_x" in stock and not any(n in stock for n in names)


def test_mean_distance_defaults():
    lib = ctypes.CDLL(cusp.load())
    f = lib.cusp_patch_mean_distance
    f.restype = ctypes.c_double
    c = (ctypes.c_double * 2)()

    def md(pts):
        arr = (ctypes.c_double * (2 * len(pts)))(*[x for p in pts for x in p])
        return f(c, arr, len(pts))
    a = 0.1  # square: mean distance = a (sqrt2 + ln(1 + sqrt2)) / 6
    assert md([(0, 0), (a, 0), (a, a), (0, a)]) == pytest.approx(a * (math.sqrt(2) + math.log(1 + math.sqrt(2))) / 6, rel=1e-9)
    assert md([(0, 0), (0.2, 0)]) == pytest.approx(0.05, rel=1e-9)  # segment: L/4
    n = 150  # fine polygon -> disk: 2R/3 (inscribed 150-gon: 0.1% below)
    R = 0.05
    assert md([(R * math.cos(2 * math.pi * k / n), R * math.sin(2 * math.pi * k / n)) for k in range(n)]) == pytest.approx(2 * R / 3 * (1 - 1e-3), rel=2e-3)
