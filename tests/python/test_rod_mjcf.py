"""Generated Cosserat-style rods against Euler-Bernoulli / torsion / axial theory, and the
committed cantilever scene's stability."""
import math
import pathlib

import mujoco
import numpy as np
import pytest

import cusp
from cusp import mjcf_gen

REPO = pathlib.Path(__file__).resolve().parents[2]
L, MASS, EI = 0.5, 0.05, 0.1  # m, kg, N m^2 (as in mjcf/rod_cantilever.cusp.xml)


def rod_model(extra="", segments=20, gravity="0 0 0"):
    text = f"""<mujoco><option timestep="0.001" gravity="{gravity}" integrator="implicitfast"/>
      <worldbody><rod name="rod" pos="0 0 0.5" zaxis="1 0 0" length="{L}" mass="{MASS}"
        segments="{segments}" bend_stiffness="{EI}" damping="0.05" {extra}/></worldbody>
      </mujoco>"""
    model = mujoco.MjModel.from_xml_string(mjcf_gen.expand_string(text, plugin=False))
    return model, mujoco.MjData(model)


def settle(model, data, seconds=10.0):
    mujoco.mj_step(model, data, int(round(seconds / model.opt.timestep)))
    assert np.abs(data.qvel).max() < 1e-4, "not at rest"


@pytest.mark.parametrize("segments", [10, 20])
def test_cantilever_tip_deflection_matches_euler_bernoulli(segments):
    model, data = rod_model(segments=segments)
    tip = model.body(f"rod_disk{segments}").id
    delta_ref = 0.01 * L  # small load: 1% of L (m)
    load = 3 * EI * delta_ref / L ** 3  # N
    data.xfrc_applied[tip, 2] = -load
    settle(model, data)
    delta = 0.5 - data.xpos[tip, 2]
    # trapezoidal lumping of the bending energy: delta = PL^3/(3EI) (1 + 1/(2 N^2))
    assert abs(delta / delta_ref - 1) < 0.05
    assert abs(delta / delta_ref - (1 + 0.5 / segments ** 2)) < 5e-3


def test_cantilever_under_own_weight():
    model, data = rod_model(gravity="0 0 -9.81")
    settle(model, data)
    w = MASS * 9.81 / L  # N/m
    sag = 0.5 - data.xpos[model.body("rod_disk20").id, 2]
    # linear theory wL^4/(8EI) = 7.7 cm; the 15% deflection is mildly nonlinear: within 5%
    assert abs(sag / (w * L ** 4 / (8 * EI)) - 1) < 0.05


def test_twist_and_stretch_stiffness():
    # EA kept soft enough for the explicit spring at 1 ms: node mass 2.5 g on EA/ds = 800 N/m
    gj, ea = 0.05, 20.0  # N m^2, N
    model, data = rod_model(extra=f'joint="hinge" twist_stiffness="{gj}" '
                                  f'stretch_stiffness="{ea}" stretch_damping="1"')
    tip = model.body("rod_disk20").id
    torque, force = 0.01, 0.2  # N m about the rod axis (world x), N along it
    data.xfrc_applied[tip, 3] = torque
    data.xfrc_applied[tip, 0] = force
    settle(model, data)
    # twist of the tip disk about x: T L / GJ (sum of the joints' compliances (ds/2 + (N-1) ds)
    # / GJ = (L - ds/2) / GJ: within 1/(2N) of the continuum value)
    mat = data.xmat[tip].reshape(3, 3)
    twist = math.atan2(mat[2, 1], mat[1, 1])  # rotation of the disk's y axis about world x
    assert abs(twist / (torque * L / gj) - 1) < 0.05
    stretch = data.xpos[tip, 0] - L
    assert abs(stretch / (force * L / ea) - 1) < 0.05


def test_ball_joints_refuse_unequal_twist_stiffness():
    with pytest.raises(mjcf_gen.DescriptionError, match="twist_stiffness"):
        rod_model(extra='twist_stiffness="0.05"')


def test_cantilever_scene_stable_for_10_s():
    cusp.load()
    model = mujoco.MjModel.from_xml_path(str(REPO / "mjcf" / "rod_cantilever.xml"))
    data = mujoco.MjData(model)
    assert model.opt.timestep == 0.001
    energy_peak = 0.0
    for _ in range(10):
        mujoco.mj_step(model, data, 1000)
        assert np.isfinite(data.qpos).all()
        energy_peak = max(energy_peak, float(np.abs(data.qvel).max()))
    assert np.abs(data.qvel).max() < 1e-3  # came to rest
    tip = data.xpos[model.body("rod_disk20").id]
    assert 0.06 < 0.5 - tip[2] < 0.09  # sagging about wL^4/(8EI) = 7.7 cm
