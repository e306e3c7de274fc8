"""Python API: cusp.contacts() against independent numbers, per-mjData threads through
mujoco.rollout equal to sequential stepping, run()'s columns equal cusp-sim's CSV."""
import pathlib
import subprocess

import mujoco
import numpy as np
import pytest
from mujoco import rollout

import cusp

REPO = pathlib.Path(__file__).resolve().parents[2]
G = 9.81  # m/s^2, the scenes' gravity (MuJoCo's default)


def stepped(scene: str, steps: int):
    cusp.load()
    model = mujoco.MjModel.from_xml_path(str(REPO / "mjcf" / scene))
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, steps)
    return model, data


def test_contacts_of_a_patch_carry_the_block_weight_at_an_ecp_under_it():
    model, data = stepped("push_slide.xml", 500)
    c = cusp.contacts(model, data)
    assert len(c) == 1 and c.kind[0] == cusp.KIND_PATCH
    block = model.body("block")
    weight = block.mass[0] * G  # N; the tool pushes horizontally, so the floor carries m g
    assert c.force[0, 0] == pytest.approx(weight, rel=1e-6)
    assert cusp.normal_force(model, data) == pytest.approx(weight, rel=1e-6)
    np.testing.assert_allclose(c.normal[0], [0, 0, 1], atol=1e-9)
    # the ECP lies on the floor inside the block's 0.1 m x 0.1 m footprint
    ecp = c.ecp[0]
    centre = data.xpos[block.id]
    assert abs(ecp[2]) < 1e-4
    assert np.all(np.abs(ecp[:2] - centre[:2]) <= 0.05 + 1e-9)
    # 10 N push > mu m g = 3.92 N: the block slides, friction on the limit surface boundary
    assert c.mode[0] == cusp.MODE_SLIDE
    assert np.hypot(*c.impulse[0, 1:]) == pytest.approx(0.5 * c.impulse[0, 0], rel=1e-3)
    assert tuple(c.body[0]) == (block.id, 0)


def test_contacts_of_resting_disks_sum_to_the_carried_weight():
    model, data = stepped("disk_drop.xml", 500)
    c = cusp.contacts(model, data)
    assert np.all(c.kind == cusp.KIND_DISK) and len(c) > 0
    mass = model.body_subtreemass[0]  # kg, everything rests on the floor at equilibrium
    assert c.force[:, 0].sum() == pytest.approx(mass * G, rel=1e-3)
    # copies, not views: stepping on leaves them unchanged
    before = c.pos.copy()
    mujoco.mj_step(model, data, 10)
    np.testing.assert_array_equal(c.pos, before)
    assert np.all(np.linalg.norm(c.normal, axis=1) == pytest.approx(1.0))


def test_contacts_of_a_stock_twin_are_mujocos_in_the_same_format():
    """Resting disk_drop twin: MuJoCo's contacts as point records (no mode), normals from the
    second geom towards the first, normal forces carrying the weight like cusp's records."""
    twin = cusp.load_spec(REPO / "mjcf" / "disk_drop.xml", stock=True).compile()
    data = mujoco.MjData(twin)
    mujoco.mj_step(twin, data, 500)
    c = cusp.contacts(twin, data)
    assert len(c) == data.ncon > 0
    assert np.all(c.kind == cusp.KIND_POINT) and np.all(c.mode == 0)
    floor = twin.geom("floor").id
    on_floor = c.geom[:, 1] == floor
    assert np.all(on_floor | (c.geom[:, 0] == floor))
    np.testing.assert_allclose(c.normal[on_floor], np.tile([0, 0, 1], (on_floor.sum(), 1)),
                               atol=1e-9)  # from the floor up into the disk
    assert c.force[:, 0].sum() == pytest.approx(twin.body_subtreemass[0] * G, rel=1e-3)
    np.testing.assert_allclose(c.impulse, c.force * twin.opt.timestep)
    assert cusp.normal_force(twin, data) == pytest.approx(c.force[:, 0].sum())
    np.testing.assert_allclose(np.cross(c.frame[:, 0], c.frame[:, 1]), c.frame[:, 2], atol=1e-9)


@pytest.mark.parametrize("scene", ["push_slide.xml", "disk_drop.xml", "arm3_free.xml"])
def test_rollout_in_threads_equals_sequential_steps(scene):
    """Several MjData in threads through mujoco.rollout (the plugin is per-mjData): every state,
    the plugin's published state included, is bitwise the one of stepping each initial state
    alone in a fresh MjData. 4 trajectories on 2 threads, so each MjData is reused after
    mj_setState (the warm start of the previous trajectory must not leak)."""
    cusp.load()
    model = mujoco.MjModel.from_xml_path(str(REPO / "mjcf" / scene))
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    nstate = mujoco.mj_stateSize(model, spec)
    nbatch, nstep = 4, 300
    initial = np.zeros((nbatch, nstate))
    for b in range(nbatch):
        data = mujoco.MjData(model)
        data.qvel[:] = 0.05 * b * np.sin(np.arange(model.nv) + 1.0)  # distinct trajectories
        mujoco.mj_getState(model, data, initial[b], spec)
    control = np.zeros((nbatch, nstep, model.nu))
    sequential = np.zeros((nbatch, nstep, nstate))
    for b in range(nbatch):
        data = mujoco.MjData(model)
        mujoco.mj_setState(model, data, initial[b], spec)
        for k in range(nstep):
            mujoco.mj_step(model, data)
            mujoco.mj_getState(model, data, sequential[b, k], spec)
    threaded, _ = rollout.rollout(model, [mujoco.MjData(model) for _ in range(2)], initial,
                                  control, nstep=nstep)
    assert not np.array_equal(sequential[0], sequential[1])  # the comparison is not vacuous
    np.testing.assert_array_equal(threaded, sequential)


def test_run_columns_are_cusp_sims_csv_columns(tmp_path):
    scene = REPO / "mjcf" / "push_stick.xml"
    csv_path = tmp_path / "run.csv"
    subprocess.run([str(REPO / "build" / "cusp-sim"), str(scene), "--seconds", "0.05", "--csv",
                    str(csv_path)], check=True, capture_output=True)
    header = csv_path.read_text().splitlines()[0].split(",")
    summary, series = cusp.run(scene, seconds=0.05)
    assert list(series) == header
    assert summary["steps"] == 50 and len(series["time"]) == 50


@pytest.mark.parametrize("scene", ["inverse_lean.xml", "push_slide.xml", "grasp_pinch2.xml"])
def test_rollout_does_not_depend_on_what_the_data_did_before(scene):
    """mujoco.rollout from one initial state: twice in one call on one MjData, on an MjData that
    had stepped 200 steps of another history, on a fresh one, on 1 and on 2 threads, and by hand
    with mj_step: every trajectory bitwise the same (what cusp carries between steps is either
    in the plugin state or dropped when the state is set from outside)."""
    cusp.load()
    model = mujoco.MjModel.from_xml_path(str(REPO / "mjcf" / scene))
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    nstate = mujoco.mj_stateSize(model, spec)
    nstep = 60
    used = mujoco.MjData(model)
    if model.nkey:
        mujoco.mj_resetDataKeyframe(model, used, 0)
    control = np.tile(used.ctrl, (2, nstep, 1))
    start = np.zeros(nstate)
    mujoco.mj_getState(model, used, start, spec)
    mujoco.mj_step(model, used, 200)  # another history: warm starts, counters
    twice, _ = rollout.rollout(model, used, np.stack([start, start]), control, nstep=nstep)
    fresh, _ = rollout.rollout(model, mujoco.MjData(model), start[None], control[:1], nstep=nstep)
    threads, _ = rollout.rollout(model, [mujoco.MjData(model) for _ in range(2)],
                                 np.stack([start, start]), control, nstep=nstep)
    hand = np.zeros((nstep, nstate))
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, start, spec)
    data.ctrl[:] = control[0, 0]
    for k in range(nstep):
        mujoco.mj_step(model, data)
        mujoco.mj_getState(model, data, hand[k], spec)
    assert not np.array_equal(hand[0], hand[-1])  # it moves: the comparison is not vacuous
    for trajectory in (twice[0], twice[1], fresh[0], threads[0], threads[1]):
        np.testing.assert_array_equal(trajectory, hand)
