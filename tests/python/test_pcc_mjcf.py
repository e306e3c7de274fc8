"""Generated PCC sections in MuJoCo against the closed form of models/pcc.c (reached through
libcusp.so with ctypes): disk poses, chamber tendon lengths, constant-curvature equalities under
stepping, and the static curvature that constant chamber forces produce through stiffness K."""
import ctypes
import math
import os

import mujoco
import numpy as np
import pytest

import cusp
from cusp import mjcf_gen

L0 = 0.15      # section rest length (m)
K = 265.0      # chamber stiffness (N/m)
D_OFF = 0.02   # chamber offset (m)

_DP = ctypes.POINTER(ctypes.c_double)


@pytest.fixture(scope="module")
def pcc_lib():
    lib = ctypes.CDLL(os.environ.get("CUSP_PLUGIN") or str(cusp.plugin_path()))
    lib.cusp_pcc_chain_pose.restype = ctypes.c_int
    lib.cusp_pcc_chain_pose.argtypes = [_DP, _DP, _DP, _DP, _DP, _DP, ctypes.c_int,
                                        ctypes.c_double, ctypes.c_int]
    lib.cusp_pcc_lengths_from_arc.argtypes = [_DP, ctypes.c_double, ctypes.c_double,
                                              ctypes.c_double, ctypes.c_double]
    return lib


def chain_pose(lib, lengths, offsets, section, sigma):
    """Closed-form position (m) and quaternion in the arm base frame (C implementation)."""
    l = np.ascontiguousarray(lengths, dtype=float).ravel()
    d = np.ascontiguousarray(offsets, dtype=float)
    pos, quat = np.zeros(3), np.zeros(4)
    rc = lib.cusp_pcc_chain_pose(pos.ctypes.data_as(_DP), quat.ctypes.data_as(_DP), None, None,
                                 l.ctypes.data_as(_DP), d.ctypes.data_as(_DP), section, sigma,
                                 len(d))
    assert rc == 0
    return pos, quat


def lengths_from_arc(lib, kappa, phi, s, d):
    out = np.zeros(3)
    lib.cusp_pcc_lengths_from_arc(out.ctypes.data_as(_DP), kappa, phi, s, d)
    return out


def section_scene(disks, nsection=1, gravity="0 0 0", extra=""):
    sections = "\n".join(f'<section length="{L0}" mass="{m}"/>'
                         for m in (1.17, 0.54, 0.265)[:nsection])
    text = f"""<mujoco><option timestep="0.001" gravity="{gravity}" integrator="implicitfast"/>
      <worldbody><pcc name="arm" pos="0.1 -0.2 0.5" euler="30 160 10" disks="{disks}"
        chamber_offset="{D_OFF}" stiffness="{K}" damping="125" {extra}>{sections}</pcc>
      </worldbody></mujoco>"""
    xml = mjcf_gen.expand_string(text, plugin=False)
    model = mujoco.MjModel.from_xml_string(xml)
    return model, mujoco.MjData(model)


def random_lengths(lib, rng, nsection, max_theta=math.pi / 2):
    out = []
    for _ in range(nsection):
        s = L0 * rng.uniform(0.85, 1.15)
        theta = max_theta * rng.uniform()
        out.append(lengths_from_arc(lib, theta / s, rng.uniform(-math.pi, math.pi), s, D_OFF))
    return np.array(out)


def disk_errors(lib, model, data, lengths):
    """Largest distance (m) between MuJoCo's disk positions and the closed form, and the
    largest angle (rad) between their frames."""
    layout = mjcf_gen.pcc_layout(model, "arm")
    base = model.body("arm_disk0").id
    p0, r0 = data.xpos[base], data.xmat[base].reshape(3, 3)
    q0 = data.xquat[base]
    worst_pos = worst_ang = 0.0
    for i, sec in enumerate(layout):
        for k, gid in enumerate(sec["disks"]):
            p, q = chain_pose(lib, lengths, [D_OFF] * len(layout), i, k / sec["nseg"])
            worst_pos = max(worst_pos, np.linalg.norm(data.geom_xpos[gid] - (p0 + r0 @ p)))
            qw = np.zeros(4)
            mujoco.mju_mulQuat(qw, q0, q)
            gq = np.zeros(4)
            mujoco.mju_mat2Quat(gq, data.geom_xmat[gid])
            worst_ang = max(worst_ang, 2 * math.acos(min(1.0, abs(float(np.dot(qw, gq))))))
    return worst_pos, worst_ang


@pytest.mark.parametrize("disks", [3, 6])
def test_section_disks_and_tendons_match_closed_form(pcc_lib, disks):
    model, data = section_scene(disks)
    rng = np.random.default_rng(10 + disks)
    worst = worst_ang = worst_ten = 0.0
    for _ in range(50):
        lengths = random_lengths(pcc_lib, rng, 1)
        mjcf_gen.pcc_set_lengths(model, data.qpos, "arm", lengths)
        mujoco.mj_fwdPosition(model, data)
        pos_err, ang_err = disk_errors(pcc_lib, model, data, lengths)
        worst, worst_ang = max(worst, pos_err), max(worst_ang, ang_err)
        sec = mjcf_gen.pcc_layout(model, "arm")[0]
        worst_ten = max(worst_ten, np.abs(data.ten_length[sec["tendons"]] - lengths[0]).max())
    # chord discretisation: relative position error <= theta^2 / (24 N^2) = 0.64% for N = 4
    assert worst < 0.01 * L0, f"disk position error {worst / L0:.3%} of L0"
    print(f"disks={disks}: position error {worst / L0:.3%} of L0, angle {worst_ang:.2e} rad")
    # palindromic hinge split: orientation error third order in the segment angle pi/(2N)
    # palindromic hinge split: the orientation error is third order per segment, theta^3/N^2
    # over the section (measured 6.4e-3 rad for N = 4, 1.9e-3 rad for N = 7 at 90 deg)
    assert worst_ang < (1e-2 if disks == 3 else 3e-3), f"disk orientation error {worst_ang} rad"
    assert worst_ten < 1e-12, f"tendon length error {worst_ten} m"


@pytest.mark.parametrize("disks,tol_total", [(3, 0.01), (6, 0.01)])
def test_three_section_arm_matches_chained_closed_form(pcc_lib, disks, tol_total):
    """Chaining: every disk of the seeds' arm within 1% of the arm length (3 L0); with 6 disks
    also within 1% of one section length."""
    model, data = section_scene(disks, nsection=3)
    rng = np.random.default_rng(20 + disks)
    worst = 0.0
    for _ in range(50):
        lengths = random_lengths(pcc_lib, rng, 3)
        mjcf_gen.pcc_set_lengths(model, data.qpos, "arm", lengths)
        mujoco.mj_fwdPosition(model, data)
        worst = max(worst, disk_errors(pcc_lib, model, data, lengths)[0])
    assert worst < tol_total * 3 * L0
    if disks == 6:
        assert worst < 0.01 * L0


def equality_violation(model, data):
    eq = data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    return np.abs(data.efc_pos[eq]).max()


def test_equalities_hold_after_stepping_from_random_states(pcc_lib):
    model, data = section_scene(3, gravity="0 0 -9.81")
    rng = np.random.default_rng(5)
    for _ in range(10):
        mujoco.mj_resetData(model, data)
        lengths = random_lengths(pcc_lib, rng, 1)
        mjcf_gen.pcc_set_lengths(model, data.qpos, "arm", lengths)
        data.ctrl[:] = rng.uniform(-10, 10, 3)
        mujoco.mj_step(model, data, 500)
        assert np.isfinite(data.qpos).all()
        # joint equalities: residual below 3e-4 rad (or m) after 0.5 s of motion (the joints
        # themselves are up to pi/16 rad, the slides about 0.04 m)
        assert equality_violation(model, data) < 3e-4


@pytest.mark.parametrize("force", [[8.0, 0.0, 0.0], [0.0, 5.0, -3.0], [-4.0, 2.0, 6.0]])
def test_actuated_section_reaches_stiffness_curvature(pcc_lib, force):
    """Constant chamber forces f in free space: chamber j settles at L0 + f_j/K, so the
    curvature is that of these lengths; no drift of the equality constraints."""
    model, data = section_scene(3)
    data.ctrl[:] = force
    mujoco.mj_step(model, data, 3000)  # 3 s
    sec = mjcf_gen.pcc_layout(model, "arm")[0]
    l_sim = data.ten_length[sec["tendons"]]
    s, tx, ty = mjcf_gen.pcc_config_from_lengths(l_sim, D_OFF)
    kappa_sim = math.hypot(tx, ty) / s
    l_pred = L0 + np.array(force) / K
    s_p, tx_p, ty_p = mjcf_gen.pcc_config_from_lengths(l_pred, D_OFF)
    kappa_pred = math.hypot(tx_p, ty_p) / s_p
    assert kappa_pred > 1.0  # a real bend (1/m)
    assert abs(kappa_sim - kappa_pred) < 0.05 * kappa_pred
    assert abs(math.atan2(ty, tx) - math.atan2(ty_p, tx_p)) < 0.01  # bending plane (rad)
    assert np.abs(l_sim - l_pred).max() < 1e-4  # m
    assert np.abs(data.qvel).max() < 1e-3  # at rest
    violation = equality_violation(model, data)
    mujoco.mj_step(model, data, 2000)  # 2 s more: no drift
    assert equality_violation(model, data) <= max(violation * 1.1, 1e-8)
    assert equality_violation(model, data) < 1e-6


# ---- the lean realisation (realisation="lean": 3 joints per segment, the bend at the segment
# midpoint). The closed form is the same; tolerances are this realisation's own and
# are stated against the measured errors (90 deg sections, 200 random states).

def lean_scene(disks=6, nsection=1, gravity="0 0 0"):
    return section_scene(disks, nsection=nsection, gravity=gravity, extra='realisation="lean"')


def test_lean_section_has_three_joints_per_disk():
    for disks, nsection in ((6, 1), (6, 3), (3, 3)):
        model, _ = lean_scene(disks, nsection)
        n = disks + 1
        per_section = 3 * n + (2 if n % 2 else 0)  # odd count: the middle segment has 5 joints
        assert model.nv == nsection * per_section
        assert model.neq == nsection * (per_section - 3)  # 3 free coordinates per section
        chain, _ = section_scene(disks, nsection)
        assert chain.nv == nsection * 5 * n  # the chain realisation, for comparison
    model, _ = lean_scene(6, 3)
    assert (model.nv, model.neq) == (69, 60)  # scenario A: was 105 joints, 96 equalities


def test_lean_section_matches_closed_form(pcc_lib):
    model, data = lean_scene(6)
    rng = np.random.default_rng(16)
    worst = worst_ang = worst_ten = 0.0
    for _ in range(200):
        lengths = random_lengths(pcc_lib, rng, 1)
        mjcf_gen.pcc_set_lengths(model, data.qpos, "arm", lengths)
        mujoco.mj_fwdPosition(model, data)
        pos_err, ang_err = disk_errors(pcc_lib, model, data, lengths)
        worst, worst_ang = max(worst, pos_err), max(worst_ang, ang_err)
        sec = mjcf_gen.pcc_layout(model, "arm")[0]
        worst_ten = max(worst_ten, np.abs(data.ten_length[sec["tendons"]] - lengths[0]).max())
    # tangent legs: each segment's chord is short by (theta/N)^2 / 12 of its length, so the tip
    # is off by about theta^2 / (12 N^2) L0 = 0.42% for N = 7 at 90 deg (measured 0.60% with the
    # stretch and twist); orientation: the twist of one x-y hinge pair, (theta/N)^2 / 4 = 0.013 rad
    assert worst < 0.01 * L0, f"disk position error {worst / L0:.3%} of L0"
    assert worst_ang < 0.015, f"disk orientation error {worst_ang} rad"
    assert worst_ten < 1e-12, f"tendon length error {worst_ten} m"  # chamber lengths exact


def test_lean_three_section_arm_matches_chained_closed_form(pcc_lib):
    """Every disk of the seeds' arm (6 disks per section) within 1% of the arm length 3 L0
    (measured 0.75%: the tip-frame twist of a section, third order in theta/N, is carried down
    the arm; the chain realisation stays within 1% of one section length)."""
    model, data = lean_scene(6, nsection=3)
    rng = np.random.default_rng(26)
    worst = 0.0
    for _ in range(100):
        lengths = random_lengths(pcc_lib, rng, 3)
        mjcf_gen.pcc_set_lengths(model, data.qpos, "arm", lengths)
        mujoco.mj_fwdPosition(model, data)
        worst = max(worst, disk_errors(pcc_lib, model, data, lengths)[0])
    assert worst < 0.01 * 3 * L0, f"{worst / (3 * L0):.3%} of the arm length"


def test_lean_equalities_hold_after_stepping_from_random_states(pcc_lib):
    """The chain test's procedure. 3 disks: the chain test's bound 3e-4 rad (or m); 6 disks: no
    worse than the chain realisation of the same arm in the same runs (both about 3.1e-4: the
    residual is set by eq_solref under these loads, not by the realisation)."""
    worst = {}
    for real, disks in (("lean", 3), ("lean", 6), ("chain", 6)):
        model, data = section_scene(disks, gravity="0 0 -9.81", extra=f'realisation="{real}"')
        rng = np.random.default_rng(5)
        worst[real, disks] = 0.0
        for _ in range(10):
            mujoco.mj_resetData(model, data)
            lengths = random_lengths(pcc_lib, rng, 1)
            mjcf_gen.pcc_set_lengths(model, data.qpos, "arm", lengths)
            data.ctrl[:] = rng.uniform(-10, 10, 3)
            mujoco.mj_step(model, data, 500)
            assert np.isfinite(data.qpos).all()
            worst[real, disks] = max(worst[real, disks], equality_violation(model, data))
    assert worst["lean", 3] < 3e-4
    assert worst["lean", 6] <= 1.05 * worst["chain", 6]
    assert worst["lean", 6] < 4e-4


@pytest.mark.parametrize("force", [[8.0, 0.0, 0.0], [0.0, 5.0, -3.0], [-4.0, 2.0, 6.0]])
def test_lean_actuated_section_reaches_stiffness_curvature(pcc_lib, force):
    """As for the chain: chamber j settles at L0 + f_j/K, the curvature within 5% of the one
    these lengths give, the bending plane within 0.01 rad."""
    model, data = lean_scene(6)
    data.ctrl[:] = force
    mujoco.mj_step(model, data, 3000)  # 3 s
    sec = mjcf_gen.pcc_layout(model, "arm")[0]
    l_sim = data.ten_length[sec["tendons"]]
    s, tx, ty = mjcf_gen.pcc_config_from_lengths(l_sim, D_OFF)
    l_pred = L0 + np.array(force) / K
    s_p, tx_p, ty_p = mjcf_gen.pcc_config_from_lengths(l_pred, D_OFF)
    kappa_sim, kappa_pred = math.hypot(tx, ty) / s, math.hypot(tx_p, ty_p) / s_p
    assert kappa_pred > 1.0
    assert abs(kappa_sim - kappa_pred) < 0.05 * kappa_pred
    assert abs(math.atan2(ty, tx) - math.atan2(ty_p, tx_p)) < 0.01
    assert np.abs(l_sim - l_pred).max() < 1e-4
    assert np.abs(data.qvel).max() < 1e-3
    assert equality_violation(model, data) < 1e-6


@pytest.mark.parametrize("integrator,h", [("implicitfast", 1e-3), ("Euler", 1e-4)])
def test_lean_scenario_a_rests_like_the_chain(integrator, h):
    """Scenario A (6 disks per section) after its unactuated first second, with cusp contact: the
    lean arm's disks within 0.5 mm of the chain arm's (measured 0.015 mm Euler, 0.1 mm
    implicitfast; the two integrators differ by 0.5 mm), no divergence, and the cusp penetration
    no worse than twice the chain's or 1 um, whichever is larger (measured: Euler 0.78 um lean,
    0.29 um chain; implicitfast 0.042 mm lean, 0.083 mm chain)."""
    import pathlib
    import re
    cusp.load()
    adr = cusp.slot_names().index("max_penetration")  # plugin/state.h, by name
    repo = pathlib.Path(__file__).resolve().parents[2]
    text = (repo / "mjcf" / "scenario_a_45_6.cusp.xml").read_text()
    text = re.sub(r'<option timestep="[^"]*"', f'<option timestep="{h}"', text)
    text = re.sub(r'integrator="[^"]*"', f'integrator="{integrator}"', text)
    pos, pen = {}, {}
    for real in ("lean", "chain"):
        model = mujoco.MjModel.from_xml_string(
            mjcf_gen.expand_string(text.replace('realisation="lean"', f'realisation="{real}"')))
        data = mujoco.MjData(model)
        pen[real] = 0.0
        for _ in range(int(round(1.0 / h))):
            mujoco.mj_step(model, data)
            pen[real] = max(pen[real], data.plugin_state[model.plugin_stateadr[0] + adr])
        assert np.isfinite(data.qpos).all() and data.time > 0.999
        pos[real] = data.geom_xpos[[model.geom(f"arm_disk{k}").id for k in range(22)]].copy()
    assert np.linalg.norm(pos["lean"] - pos["chain"], axis=1).max() < 5e-4
    assert pen["lean"] <= max(2 * pen["chain"], 1e-6) and pen["lean"] < 2e-4
