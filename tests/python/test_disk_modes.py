"""Disk contact modes (plugin/step/step.c, publish): a loaded disk contact slides iff its tangential
slip speed after the correction exceeds CUSP_SLIP_SPEED = 1e-6 m/s (plugin/contact.h).

A puck (radius 0.03 m, half-height 0.01 m, 0.2 kg, mu = 0.5, r = 8 directions) lies flat on a
plane; the incline is made by tilting gravity by alpha about y. Analytic cases:
- level plane and tan(alpha) = 0.3 < mu: static friction holds it; every step after 0.05 s of
  settling has all three rim contacts loaded and STICK, and the puck does not move (< 1e-9 m/s);
- tan(alpha) = 0.8 > mu: it slides with acceleration g (sin a - mu cos a) in the polyhedral
  cone's direction along the fall line (an 8-direction cone contains the fall line, so the
  friction bound is mu fn exactly); every loaded contact is SLIDE after 0.05 s and the
  acceleration matches within 1e-6 relative.
"""
import math

import mujoco
import numpy as np
import pytest

import cusp

G = 9.81
H = 1e-3
MU = 0.5
NSTICK, NSLIDE, NBREAK = 2, 3, 4  # d.plugin_state slots (plugin/instance.h)


def puck(tan_alpha):
    cusp.load()
    a = math.atan(tan_alpha)
    xml = f"""<mujoco><option timestep="{H}" gravity="{G * math.sin(a)} 0 {-G * math.cos(a)}"/>
<extension><plugin plugin="cusp.contact"><instance name="cusp">
<config key="disks" value="puck"/><config key="friction" value="{MU}"/>
</instance></plugin></extension>
<worldbody><geom name="floor" type="plane" size="5 5 .1"/>
<body name="p" pos="0 0 0.0101"><freejoint/>
  <geom name="puck" type="cylinder" size="0.03 0.01" mass="0.2" contype="0" conaffinity="0"/></body>
</worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    return m, mujoco.MjData(m)


def run(tan_alpha, seconds=0.5, settle=0.05):
    """Per step after `settle`: (nstick, nslide, nbreak) and the puck's x velocity."""
    m, d = puck(tan_alpha)
    counts, vx = [], []
    for _ in range(round(seconds / H)):
        mujoco.mj_step(m, d)
        if d.time > settle:
            s = d.plugin_state[m.plugin_stateadr[0]:]
            counts.append((s[NSTICK], s[NSLIDE], s[NBREAK]))
            vx.append(d.qvel[0])
    return np.array(counts), np.array(vx)


@pytest.mark.parametrize("tan_alpha", [0.0, 0.3])
def test_puck_sticks_below_the_friction_angle(tan_alpha):
    counts, vx = run(tan_alpha)
    assert np.all(counts[:, 0] == 3), counts[counts[:, 0] != 3][:3]  # three rim points, all stick
    assert np.all(counts[:, 1] == 0)
    assert np.abs(vx).max() < 1e-9


def test_puck_slides_above_the_friction_angle():
    tan_alpha = 0.8
    counts, vx = run(tan_alpha)
    loaded = counts[:, 0] + counts[:, 1]
    assert np.all(loaded >= 1)
    assert np.all(counts[:, 0] == 0) and np.all(counts[:, 1] == loaded)
    a = math.atan(tan_alpha)
    accel = np.diff(vx) / H
    expected = G * (math.sin(a) - MU * math.cos(a))
    assert accel == pytest.approx(expected, rel=1e-6)
