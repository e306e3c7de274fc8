"""Disk-disk contact (self-contact within one arm beyond `self_contact_neighbours`, and contact
between arms): the curl scene (mjcf/arm_curl.xml) and the two-arm scene (mjcf/two_arms_press.xml).
Penetration is measured independently of the plugin, with MuJoCo's own signed distance between
the disk cylinders (mj_geomDistance)."""
import itertools
import math
import re

import mujoco
import numpy as np
import pytest

import cusp
from cusp import mjcf_gen
from cusp.state import state

from conftest import REPO

CURL = REPO / "mjcf" / "arm_curl.xml"
TWO = REPO / "mjcf" / "two_arms_press.xml"


def _model(scene, **overrides):
    return cusp.compile_spec(cusp.load_spec(scene, **overrides), scene)


def _disks(model, arm):
    return list(dict.fromkeys(g for sec in mjcf_gen.pcc_layout(model, arm) for g in sec["disks"]))


def _pairs(model, arms, neighbours):
    """Disk pairs the touch rule lets touch: different arms, or more than `neighbours` apart
    along one arm (disks of a PCC arm are numbered along it, one body each)."""
    out = []
    for i, a in enumerate(arms):
        da = _disks(model, a)
        out += [(da[x], da[y]) for x, y in itertools.combinations(range(len(da)), 2)
                if y - x > neighbours]
        for b in arms[i + 1:]:
            out += list(itertools.product(da, _disks(model, b)))
    return out


def _min_distance(model, data, pairs):
    return min(mujoco.mj_geomDistance(model, data, g1, g2, 0.01, None) for g1, g2 in pairs)


def _run(model, seconds, pairs, every=50):
    """Steps to `seconds`; returns (data, deepest penetration (m, >= 0) over the checks every
    `every` steps, checks at which a rule-eligible disk pair carried load)."""
    data = mujoco.MjData(model)
    deepest, loaded = 0.0, 0
    either_order = set(pairs) | {(b, a) for a, b in pairs}
    nstep = int(round(seconds / model.opt.timestep))
    for k in range(nstep):
        mujoco.mj_step(model, data)
        if k % every == every - 1:
            deepest = max(deepest, -_min_distance(model, data, pairs))
            c = cusp.contacts(model, data)
            loaded += any(c.impulse[i, 0] > 0 and (c.geom[i, 0], c.geom[i, 1]) in either_order
                          for i in range(len(c)))
    return data, deepest, loaded


def test_curl_distal_section_rests_on_proximal_without_penetration():
    model = _model(CURL)
    pairs = _pairs(model, ["arm"], 3)
    data, deepest, loaded = _run(model, 2.0, pairs)
    # 0.1 mm: the self-contact target; measured by MuJoCo's distance, not the plugin's gap
    assert deepest <= 1e-4, f"disk-disk penetration {deepest * 1e3:.3f} mm"
    assert loaded >= 10, "the distal section never pressed on the proximal one"
    # the pressing pairs are distal (section 3) on proximal (section 1) disks
    lay = mjcf_gen.pcc_layout(model, "arm")
    proximal, distal = set(lay[0]["disks"]), set(lay[2]["disks"])
    c = cusp.contacts(model, data)
    touching = {(a, b) for (a, b), f in zip(c.geom, c.impulse[:, 0]) if f > 0}
    assert any((a in proximal and b in distal) or (b in proximal and a in distal)
               for a, b in touching), touching


def test_curl_without_self_contact_passes_through():
    """The same scene with self-contact off (-1): the distal disks go into the proximal ones,
    so the test above measures what the touch rule does."""
    model = _model(CURL, self_contact_neighbours=-1)
    pairs = _pairs(model, ["arm"], 3)
    _, deepest, loaded = _run(model, 2.0, pairs, every=200)
    assert deepest > 5e-3, f"only {deepest * 1e3:.3f} mm: the scene does not test self-contact"
    assert loaded == 0


def test_adjacent_disks_of_a_constant_curvature_section_are_refused():
    """`self_contact_neighbours` = 0 would let each disk touch the next one along the arm; on a
    PCC arm joint equalities tie the joints between them (the section bends evenly), and their
    contacts fight the equalities (a mocap-held arm ramped to 24 N diverged). Refused at load, one
    line with the key, the value, the reason and the fix; 1 loads."""
    with pytest.raises(cusp.SceneError) as err:
        _model(CURL, self_contact_neighbours=0)
    msg = str(err.value)
    assert "\n" not in msg
    for part in ("'self_contact_neighbours'", "'0'", "adjacent disks 'arm_disk0' and 'arm_disk1'",
                 "joint equality", "constant-curvature", "fights the equality", "use 1 or more"):
        assert part in msg, (part, msg)
    assert _model(CURL, self_contact_neighbours=1).nbody > 0


ROD_DROOP = """<mujoco model="rod_droop">
  <option timestep="0.001" gravity="0 0 -9.81" integrator="implicitfast"/>
  <cusp instance="cusp">
    <config key="self_contact_neighbours" value="{neighbours}"/>
  </cusp>
  <worldbody>
    <body name="clamp" pos="0 0 1">
      <rod name="rod" base="fixed" zaxis="1 0 0" length="0.4" mass="0.1" segments="20"
           disk_radius="0.03" disk_thickness="0.01" bend_stiffness="0.002" damping="0.001"/>
    </body>
  </worldbody>
</mujoco>"""


def test_adjacent_disks_of_a_rod_touch_with_zero_neighbours():
    """A rod has no equality between its joints, so `self_contact_neighbours` = 0 is allowed: a
    clamped rod of wide, closely spaced disks (radius 30 mm, 10 mm apart) droops under gravity
    until adjacent disks meet near the clamp. With 0 they hold each other off (MuJoCo's distance
    between every adjacent pair, checked every 20 steps for 2 s: within 0.1 mm, measured 0.000)
    and the failed solves are counted (measured 2 of 2000, max_iter on 8 contacts at t = 0.44 s);
    with 3 the same disks pass 10 mm into each other."""
    deepest, loaded, failures = {}, {}, {}
    for neighbours in (0, 3):
        xml = mjcf_gen.expand_string(ROD_DROOP.format(neighbours=neighbours))
        model = mujoco.MjModel.from_xml_string(xml)
        data = mujoco.MjData(model)
        disks = [g for g in range(model.ngeom) if re.fullmatch(r"rod_disk\d+", model.geom(g).name)]
        pairs = list(zip(disks, disks[1:]))
        deepest[neighbours], loaded[neighbours] = 0.0, 0
        for k in range(2000):
            mujoco.mj_step(model, data)
            if k % 20 == 19:
                deepest[neighbours] = max(deepest[neighbours], -_min_distance(model, data, pairs))
                c = cusp.contacts(model, data)
                loaded[neighbours] += bool(np.any(c.impulse[:, 0] > 0)) if len(c) else 0
        assert np.all(np.isfinite(data.qvel))
        failures[neighbours] = state(model, data)["solver_failures"]
    assert deepest[3] > 5e-3, deepest  # the scene brings adjacent disks together
    assert loaded[3] == 0
    assert deepest[0] <= 1e-4, deepest
    assert loaded[0] >= 20, loaded
    assert failures[0] <= 5, failures
    assert failures[3] == 0, failures


def _energy_run(model, seconds):
    """(E(t) - E(0) - actuator work) per 100 steps, E = kinetic + potential (springs, gravity)."""
    model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    e0 = data.energy.sum()
    work, excess = 0.0, []
    h = model.opt.timestep
    for k in range(int(round(seconds / h))):
        # actuator power at the start of the step (Euler: forces of time t act over [t, t + h])
        work += h * float(np.dot(data.actuator_force, data.actuator_velocity))
        mujoco.mj_step(model, data)
        if k % 100 == 99:
            mujoco.mj_forward(model, data)
            excess.append(data.energy.sum() - e0 - work)
    return np.array(excess), work


def test_two_arms_press_without_penetration_or_energy_gain():
    model = _model(TWO)
    pairs = _pairs(model, ["left", "right"], 3)
    data, deepest, loaded = _run(model, 2.0, pairs)
    assert deepest <= 1e-4, f"disk-disk penetration {deepest * 1e3:.3f} mm"
    assert loaded >= 10, "the arms never pressed on each other"
    left, right = set(_disks(model, "left")), set(_disks(model, "right"))
    c = cusp.contacts(model, data)
    assert any(f > 0 and ((a in left and b in right) or (a in right and b in left))
               for (a, b), f in zip(c.geom, c.impulse[:, 0]))


def test_two_arms_energy_balance():
    """No energy from contact: the mechanical energy never exceeds its start plus the work the
    actuators did (the chambers' dampers only take energy out). Tolerance 1e-3 J against work
    of order 1e-1 J (the Euler step's own error)."""
    model = _model(TWO)
    excess, work = _energy_run(model, 1.5)
    assert work > 1e-2, work
    assert excess.max() <= 1e-3, f"energy gain {excess.max():.3e} J (actuator work {work:.3e} J)"


def _section_contacts(model, data):
    """(normal force N, tangential force N, creep m/s, mode) of the loaded contacts between a
    distal-section and a proximal-section disk of the curl; creep is the tangential speed of one
    disk's contact point relative to the other's, from MuJoCo's Jacobians."""
    lay = mjcf_gen.pcc_layout(model, "arm")
    proximal, distal = set(lay[0]["disks"]), set(lay[2]["disks"])
    c = cusp.contacts(model, data)
    jp, jq = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    out = []
    for i in range(len(c)):
        a, b = c.geom[i]
        if c.impulse[i, 0] <= 0 or not ({a, b} & proximal and {a, b} & distal):
            continue
        mujoco.mj_jac(model, data, jp, None, c.pos[i], c.body[i, 0])
        mujoco.mj_jac(model, data, jq, None, c.pos[i], c.body[i, 1])
        v = (jp - jq) @ data.qvel
        n = c.normal[i]
        out.append((c.force[i, 0], np.linalg.norm(c.force[i, 1:]),
                    np.linalg.norm(v - np.dot(v, n) * n), c.mode[i]))
    return out


def test_curl_sections_stick_when_friction_is_high_enough():
    """The curled distal section rests on the proximal one under a tangential load of about
    1.5 times its normal load: with mu = 2 it sticks once the arm has settled (creep <= 1e-6 m/s),
    with mu = 0.3 it slides along it (creep above 1e-4 m/s)."""
    model = _model(CURL, friction=2.0)
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, int(round(3.0 / model.opt.timestep)))
    held = _section_contacts(model, data)
    assert held, "no contact between the sections at t = 3 s"
    for fn, ft, creep, mode in held:
        assert creep <= 1e-6, f"creep {creep:.3e} m/s"
        assert mode == cusp.MODE_STICK
        assert ft > 1.0 * fn  # a load that mu = 1 could not hold: the test needs the high mu
    model = _model(CURL, friction=0.3)
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, int(round(2.5 / model.opt.timestep)))
    sliding = _section_contacts(model, data)
    assert sliding and max(creep for _, _, creep, _ in sliding) > 1e-4, sliding


def _two_arms_leaning(tilt_deg=1.5):
    """two_arms_press without its actuators, under gravity, each mount leaning tilt_deg towards
    the other arm: the upright arms sag into each other under their weight and come to rest
    leaning on each other (contact between robots, no actuation)."""
    spec = cusp.load_spec(TWO)
    for act in list(spec.actuators):
        spec.delete(act)
    spec.option.gravity = [0, 0, -9.81]
    half = math.radians(tilt_deg) / 2
    for body in spec.bodies:
        if body.name == "mount_left":  # about +y: its top moves towards +x
            body.quat = [math.cos(half), 0, math.sin(half), 0]
        elif body.name == "mount_right":  # turned 180 deg about z, then about -y
            q = np.zeros(4)
            mujoco.mju_mulQuat(q, np.array([math.cos(half), 0, -math.sin(half), 0]),
                               np.array([0.0, 0, 0, 1]))
            body.quat = q
    return cusp.compile_spec(spec, "two_arms_leaning")


def test_two_arms_leaning_without_actuation_gain_no_energy():
    """Unactuated: the mechanical energy (kinetic + gravity + chamber springs) never rises above
    its start (tolerance 1e-6 J against about 1.2 J dissipated over the second), while the arms
    press on each other (a loaded contact between them) without penetrating (0.1 mm)."""
    model = _two_arms_leaning()
    model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    e0 = data.energy.sum()
    pairs = _pairs(model, ["left", "right"], 3)
    either = set(pairs) | {(b, a) for a, b in pairs}
    gain, loaded, deepest = -np.inf, 0, 0.0
    for k in range(int(round(1.0 / model.opt.timestep))):
        mujoco.mj_step(model, data)
        if k % 20 == 19:
            mujoco.mj_forward(model, data)
            gain = max(gain, data.energy.sum() - e0)
            c = cusp.contacts(model, data)
            loaded += any(f > 0 and (a, b) in either for (a, b), f in zip(c.geom, c.impulse[:, 0]))
        if k % 200 == 199:
            deepest = max(deepest, -_min_distance(model, data, pairs))
    assert loaded >= 100, "the arms did not lean on each other"
    assert gain <= 1e-6, f"energy gain {gain:.3e} J without actuation"
    assert data.energy.sum() - e0 < -0.1  # the dampers took energy out: the check has teeth
    assert deepest <= 1e-4, f"penetration {deepest * 1e3:.3f} mm"
