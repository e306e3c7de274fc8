"""A contact disk lying flat on a box face (plugin/collide/detect.c, the libccd/MPR path): like the
disk-plane closed form it must rest on three rim points, not on one MPR point."""
import math

import mujoco
import numpy as np
import pytest

import cusp

G = 9.81
H = 1e-3           # s
MASS = 0.2         # kg
R, HZ = 0.04, 0.005  # m, puck radius and half-thickness
TOP = 0.1          # m, height of the box's top face


def puck_on_box(tilt_deg):
    cusp.load()
    xml = f"""<mujoco><option timestep="{H}"/>
<extension><plugin plugin="cusp.contact"><instance name="cusp">
<config key="disks" value="puck"/><config key="environment" value="table"/>
<config key="friction" value="0.5"/></instance></plugin></extension>
<worldbody><geom name="table" type="box" pos="0 0 0.05" size="0.2 0.15 0.05"/>
<body name="puck" pos="0.03 -0.02 {TOP + HZ + 2e-4}" euler="{tilt_deg} 0 0"><freejoint/>
<geom name="puck" type="cylinder" size="{R} {HZ}" mass="{MASS}" contype="0" conaffinity="0"/>
</body></worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    return m, mujoco.MjData(m)


def energy_and_penetration(m, d, scratch):
    """Energy (J) of (qpos, qvel) with kinematics recomputed, and the depth (m) of the puck's
    lowest bottom-rim point below the top face (64 rim samples)."""
    scratch.qpos[:] = d.qpos
    scratch.qvel[:] = d.qvel
    mujoco.mj_forward(m, scratch)
    R_ = scratch.xmat[1].reshape(3, 3)
    rim = [scratch.xpos[1] + R_ @ np.array([R * math.cos(a), R * math.sin(a), -HZ])
           for a in np.linspace(0, 2 * math.pi, 64, endpoint=False)]
    return scratch.energy.sum(), TOP - min(p[2] for p in rim)


@pytest.mark.parametrize("tilt_deg", [0.0, 0.2])
def test_puck_rests_flat_on_box(tilt_deg):
    # released 0.2 mm above the top face (level, or tilted 0.2 deg: the low rim lands first):
    # after 0.5 s of settling the penetration is <= 0.1 mm, no step gains energy (> 1e-9 J), three
    # contacts carry it, and the normal impulse per step from momentum balance,
    # m (vz - vz_prev + g h), equals m g h within 1%
    m, d = puck_on_box(tilt_deg)
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    scratch = mujoco.MjData(m)
    e_prev, _ = energy_and_penetration(m, d, scratch)
    max_gain, max_pen = -np.inf, 0.0
    impulses = []
    for i in range(2000):
        vz_prev = d.qvel[2]
        mujoco.mj_step(m, d)
        e, pen = energy_and_penetration(m, d, scratch)
        max_gain = max(max_gain, e - e_prev)
        e_prev = e
        if i >= 500:
            max_pen = max(max_pen, pen)
            impulses.append(MASS * (d.qvel[2] - vz_prev + G * H))
    ncontact = d.plugin_state[m.plugin_stateadr[0]]
    print(f"tilt {tilt_deg}: penetration {max_pen:.2e} m, max step gain {max_gain:.2e} J, "
          f"contacts {ncontact:.0f}, impulse {np.mean(impulses):.6e} vs {MASS * G * H:.6e} N s")
    assert max_pen <= 1e-4
    assert max_gain <= 1e-9
    assert ncontact == 3
    assert np.min(impulses) == pytest.approx(MASS * G * H, rel=0.01)
    assert np.max(impulses) == pytest.approx(MASS * G * H, rel=0.01)
