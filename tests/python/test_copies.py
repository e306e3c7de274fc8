"""Copies of a cusp MjData: copy.copy, copy.deepcopy, mj_copyData and pickle.

MuJoCo's bindings copy d.plugin_data, the raw pointer to the plugin's per-mjData instance, as bytes:
unpickling writes the original's pointer (or another process's) over the instance mj_makeData had
made. Every copy must still get its own instance (no sharing, no double free, no crash when loaded
in another process), and a copy must step exactly like its original: the same configuration and the
same warm start, so bitwise equal states for the same inputs.
"""
import copy
import ctypes
import pathlib
import pickle
import subprocess
import sys

import mujoco
import numpy as np
import pytest

import cusp

REPO = pathlib.Path(__file__).resolve().parents[2]
# a disk scene (the LCP path) and a patch scene (the MCP path), both in contact after the settle
SCENES = {"disk_drop": (REPO / "mjcf" / "disk_drop.xml", 300),
          "push_slide": (REPO / "mjcf" / "push_slide.xml", 200)}


def load(name):
    cusp.load()
    path, settle = SCENES[name]
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    for _ in range(settle):
        mujoco.mj_step(m, d)
    # the copies below are taken in contact, with a warm start that changes the next answers
    assert d.plugin_state[0] > 0, "no contact at the copy point: the test would show nothing"
    return m, d


def state(d):
    return np.concatenate([d.qpos, d.qvel, d.plugin_state, [d.time]])


def step(m, d, n, push=0.0):
    out = []
    for _ in range(n):
        if push:
            d.qfrc_applied[:] = push
        mujoco.mj_step(m, d)
        out.append(state(d))
    return np.array(out)


def instance_count():
    lib = ctypes.CDLL(cusp.load())
    lib.cusp_instance_count.restype = ctypes.c_int
    return lib.cusp_instance_count()


def copies(m, d):
    """Every way to copy an MjData, each with the model it steps with."""
    into = mujoco.MjData(m)
    mujoco.mj_step(m, into)  # an existing data with history of its own, overwritten
    mujoco.mj_copyData(into, m, d)
    deep = copy.deepcopy(d)
    return {"copy.copy": (m, copy.copy(d)), "copy.deepcopy": (deep.model, deep),
            "mj_copyData": (m, into), "pickle": (m, pickle.loads(pickle.dumps(d)))}


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_copies_own_their_instance_and_step_like_the_original(scene):
    m, d = load(scene)
    made = copies(m, d)
    for how, (mc, c) in made.items():
        assert c.plugin_data[0] != 0, how
        # the results API finds each copy's own instance, never through the copied pointer
        assert len(cusp.contacts(mc, c)) == (0 if how == "pickle" else len(cusp.contacts(m, d)))
    ref = step(m, d, 100)
    # after one step every copy uses its own instance (pickle's plugin_data is repaired then)
    for how, (mc, c) in made.items():
        got = step(mc, c, 100)
        if how == "pickle":
            # a pickle cannot carry the instance's memory: it restarts cold (like mj_setState),
            # so it matches the original to solver tolerance, not bitwise
            np.testing.assert_allclose(got[:, :m.nq + m.nv], ref[:, :m.nq + m.nv], atol=1e-6,
                                       err_msg=how)
        else:
            assert np.array_equal(got, ref), (how, np.abs(got - ref).max())
    pointers = {int(d.plugin_data[0])} | {int(c.plugin_data[0]) for _, c in made.values()}
    assert len(pointers) == 1 + len(made), "two MjData share an instance"


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_warm_start_is_what_the_copy_carries(scene):
    """The bitwise test above has teeth: a copy that starts cold does not match bitwise."""
    m, d = load(scene)
    c = copy.copy(d)
    # a state set from outside (time moved by one ulp) drops the copy's warm start
    c.time = np.nextafter(c.time, 1.0)
    ref = step(m, d, 50)
    got = step(m, c, 50)
    assert not np.array_equal(got[:, :m.nq + m.nv], ref[:, :m.nq + m.nv])
    np.testing.assert_allclose(got[:, :m.nq + m.nv], ref[:, :m.nq + m.nv], atol=1e-6)


def test_copies_step_independently():
    m, d = load("disk_drop")
    before = state(d)
    made = copies(m, d)
    ref = copy.copy(d)
    for how, (mc, c) in made.items():
        step(mc, c, 50, push=0.3)  # different inputs: the copy moves, the original must not
        assert np.array_equal(state(d), before), how
        assert not np.array_equal(state(c)[:m.nq], before[:m.nq]), how
    # and the original then steps as if no copy had been made or stepped
    assert np.array_equal(step(m, d, 50), step(m, ref, 50))


def test_no_instance_leaked_or_freed_twice():
    m, d = load("push_slide")
    base = instance_count()
    for _ in range(5):
        made = copies(m, d)
        for mc, c in made.values():
            step(mc, c, 2)
        assert instance_count() == base + 4  # copy.copy, deepcopy, mj_copyData into, pickle
        del made, mc, c
    assert instance_count() == base
    step(m, d, 10)  # the original's instance is intact
    assert np.all(np.isfinite(state(d)))


CHILD = r"""
import pickle, sys
sys.path.insert(0, {python!r})
import cusp, mujoco, numpy as np
cusp.load()  # the plugin must be registered before the model inside the pickle is compiled
d = pickle.loads(open({path!r}, "rb").read())
m = d.model
out = []
for _ in range(100):
    mujoco.mj_step(m, d)
    out.append(np.concatenate([d.qpos, d.qvel, d.plugin_state, [d.time]]))
np.save({out!r}, np.array(out))
print("ok", flush=True)
"""


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_pickle_loads_and_steps_in_a_fresh_process(scene, tmp_path):
    m, d = load(scene)
    blob = tmp_path / "data.pkl"
    blob.write_bytes(pickle.dumps(d))
    out = tmp_path / "states.npy"
    code = CHILD.format(python=str(REPO / "python"), path=str(blob), out=str(out))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"child died ({proc.returncode}): {proc.stderr[-2000:]}"
    assert proc.stdout.strip().endswith("ok")
    child = np.load(out)
    # the same pickle loaded here steps bitwise alike: the load depends on the bytes alone
    here = pickle.loads(blob.read_bytes())
    assert np.array_equal(step(here.model, here, 100), child)
    # and like the original to solver tolerance (the pickle restarts without warm start)
    ref = step(m, d, 100)
    np.testing.assert_allclose(child[:, :m.nq + m.nv], ref[:, :m.nq + m.nv], atol=1e-6)
    assert child[-1, m.nq + m.nv + 9] == ref[-1, m.nq + m.nv + 9]  # steps counted on


def test_pickle_before_the_first_step_is_bitwise():
    cusp.load()
    path, _ = SCENES["push_slide"]
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    p = pickle.loads(pickle.dumps(d))
    assert np.array_equal(step(m, d, 300), step(p.model, p, 300))
