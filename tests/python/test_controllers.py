"""Controllers everywhere: a Python ctrl(model, data) drives cusp.run, python -m cusp
run --control, compare, render and a hand-written loop identically; the passive-viewer helper;
the command line's one-line errors."""
import csv
import importlib.util
import os
import pathlib
import subprocess
import sys
from contextlib import contextmanager

import mujoco
import numpy as np
import pytest

import cusp
from cusp import visual

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENE = REPO / "mjcf" / "finger_push.xml"
CONTROL = REPO / "mjcf" / "finger_push.py"
POSE = [f"box_{k}" for k in ("x", "y", "z", "qw", "qx", "qy", "qz")]
SECONDS = 1.0


def finger_push():
    spec = importlib.util.spec_from_file_location("finger_push", CONTROL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.push


def own_loop(model: mujoco.MjModel, steps: int) -> np.ndarray:
    """The loop a user writes: controller, then mj_step; the box pose after every step."""
    push = finger_push()
    data = mujoco.MjData(model)
    box = model.jnt_qposadr[model.body("box").jntadr[0]]
    poses = np.zeros((steps, 7))
    for k in range(steps):
        push(model, data)
        mujoco.mj_step(model, data)
        poses[k] = data.qpos[box:box + 7]
    return poses


def read_csv(path) -> dict:
    rows = list(csv.reader(open(path)))
    values = np.array(rows[1:], dtype=float)
    return {name: values[:, i] for i, name in enumerate(rows[0])}


def cli(*args, cwd=REPO):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    return subprocess.run([sys.executable, "-m", "cusp", *map(str, args)], capture_output=True,
                          text=True, timeout=300, env=env, cwd=cwd)


@pytest.mark.parametrize("stock", [False, True])
def test_controller_gives_bitwise_the_same_run_through_api_cli_and_own_loop(tmp_path, stock):
    cusp.load()
    steps = round(SECONDS / 0.001)
    _, api = cusp.run(SCENE, SECONDS, stock=stock, ctrl=finger_push())
    out = tmp_path / "cli.csv"
    done = cli("run", SCENE, "--seconds", SECONDS, "--control", f"{CONTROL}:push", "--csv", out,
               *(["--stock"] if stock else []))
    assert done.returncode == 0, done.stderr
    line = read_csv(out)
    model = cusp.load_spec(SCENE, stock=stock).compile() if stock else \
        mujoco.MjModel.from_xml_path(str(SCENE))
    own = own_loop(model, steps)
    api_pose = np.column_stack([api[k] for k in POSE])
    cli_pose = np.column_stack([line[k] for k in POSE])
    assert api_pose.shape == own.shape == cli_pose.shape == (steps, 7)
    np.testing.assert_array_equal(api_pose, own)
    np.testing.assert_array_equal(cli_pose, own)
    assert own[-1, 0] > 0.03  # the finger pushed the box forward (m)
    if not stock:
        assert np.any(api["box_mode"] == cusp.MODE_SLIDE)  # cusp saw it slide


def test_module_form_of_control_is_found_from_the_current_directory(tmp_path):
    (tmp_path / "my_ctrl.py").write_text(CONTROL.read_text())
    done = cli("run", SCENE, "--seconds", 0.6, "--control", "my_ctrl:push", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert '"steps": 600' in done.stdout


def test_compare_applies_the_controller_to_cusp_and_stock():
    runs = cusp.compare(SCENE, SECONDS, ctrl=finger_push())
    for label in ("cusp", "stock"):
        _, series = runs[label]
        assert series["box_x"][-1] > 0.03, label


def test_one_loop_reads_cusp_and_stock_contacts():
    """cusp.contacts on the cusp model and on its stock twin in the same loop: the box rests on
    the floor in both (normal forces sum to m g before the finger arrives)."""
    cusp.load()
    push = finger_push()
    weight = 0.5 * 9.81  # N
    for model in (mujoco.MjModel.from_xml_path(str(SCENE)),
                  cusp.load_spec(SCENE, stock=True).compile()):
        data = mujoco.MjData(model)
        cusp.step(model, data, 200, push)
        c = cusp.contacts(model, data)
        box = model.body("box").id
        on_box = (c.body[:, 0] == box) | (c.body[:, 1] == box)
        assert c.force[on_box, 0].sum() == pytest.approx(weight, rel=1e-3)
        assert np.all(np.abs(c.normal[on_box, 2]) == pytest.approx(1.0))


def test_render_calls_the_controller_before_every_step(tmp_path):
    calls = []
    push = finger_push()

    def counting(model, data):
        calls.append(data.time)
        push(model, data)

    frames = list(visual.frames(SCENE, 0.2, fps=10, width=64, height=48, ctrl=counting))
    assert [round(t, 6) for t, _ in frames] == [0.0, 0.1, 0.2]
    assert len(calls) == 200 and calls == sorted(calls)
    out = visual.render(SCENE, tmp_path / "f.png", seconds=0.2, fps=10, width=160, height=120,
                        progress=False, ctrl=push)
    assert out.is_file()


def test_annotate_writes_time_and_mode_legend():
    image = np.full((120, 160, 3), 128, dtype=np.uint8)
    stamped = visual.annotate(image, 1.25, legend=True)
    corner = stamped[:70, :95]
    assert np.count_nonzero(np.all(corner > 240, axis=-1)) > 20  # white text
    for mode in (cusp.MODE_STICK, cusp.MODE_SLIDE, cusp.MODE_BREAK):
        assert visual.marker_pixels(corner, mode) >= 40  # the legend's colour squares
    assert visual.marker_pixels(visual.annotate(image, 1.25, legend=False), cusp.MODE_SLIDE) == 0
    np.testing.assert_array_equal(stamped[80:], image[80:])  # the rest of the frame untouched


class FakePassiveViewer:
    """What cusp.sync_viewer uses of mujoco.viewer.launch_passive's handle."""

    def __init__(self, model):
        self.opt = mujoco.MjvOption()
        self.user_scn = mujoco.MjvScene(model, 100)
        self.synced = 0

    @contextmanager
    def lock(self):
        yield

    def sync(self):
        self.synced += 1


def test_sync_viewer_puts_cusp_markers_in_the_user_scene():
    cusp.load()
    model = mujoco.MjModel.from_xml_path(str(REPO / "mjcf" / "push_slide.xml"))
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, 300)  # sliding: one patch
    viewer = FakePassiveViewer(model)
    cusp.show_contacts(viewer.opt)
    n = cusp.sync_viewer(viewer, model, data)
    assert n >= 2 and viewer.user_scn.ngeom == n and viewer.synced == 1  # ECP disc + arrow
    discs = [viewer.user_scn.geoms[i] for i in range(n)
             if viewer.user_scn.geoms[i].type == mujoco.mjtGeom.mjGEOM_ELLIPSOID]
    np.testing.assert_allclose(discs[0].pos, cusp.contacts(model, data).ecp[0], atol=1e-6)
    twin = cusp.load_spec(REPO / "mjcf" / "push_slide.xml", stock=True).compile()
    twin_data = mujoco.MjData(twin)
    mujoco.mj_step(twin, twin_data, 300)
    assert cusp.sync_viewer(viewer, twin, twin_data) == 0 and viewer.user_scn.ngeom == 0


@pytest.mark.parametrize("args,status,text", [
    (["run", "nothing.xml"], 1, "python -m cusp run: cannot open scene 'nothing.xml'"),
    (["render", "nothing.xml", "--out", "x.png"], 1,
     "python -m cusp render: cannot open scene 'nothing.xml'"),
    (["compare", "nothing.xml", "--out", "x"], 1,
     "python -m cusp compare: cannot open scene 'nothing.xml'"),
    (["view", "nothing.xml"], 1, "python -m cusp view: cannot open scene 'nothing.xml'"),
    (["run", "mjcf/push_slide.xml", "--seconds", "-2"], 2, "--seconds: '-2'"),
    (["compare", "mjcf/push_slide.xml", "--out", "x", "--seconds", "abc"], 2, "'abc'"),
    (["run", "mjcf/push_slide.xml", "--set", "margin"], 2, "--set: 'margin'"),
    (["run", "mjcf/push_slide.xml", "--set", "margin=-1"], 1,
     "config key 'margin' has value '-1': out of range"),
    (["run", "mjcf/push_slide.xml", "--control", "no_such_module:f"], 2,
     "--control: 'no_such_module:f': cannot import no_such_module"),
    (["render", "mjcf/push_slide.xml", "--out", "x.png", "--size", "big"], 2, "--size: 'big'"),
])
def test_command_line_errors_are_one_line(args, status, text):
    done = cli(*args)
    assert done.returncode == status, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], lines
    assert "Traceback" not in done.stderr


def test_cusp_plugin_missing_in_the_checkout_is_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), CUSP_PLUGIN=str(tmp_path / "no.so"))
    done = subprocess.run([sys.executable, "-m", "cusp", "run", str(SCENE)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"python -m cusp run: CUSP_PLUGIN={tmp_path / 'no.so'} names no file; point it at a "
        "built libcusp.so or unset it to use the installed one"]


class FakeLaunchPassive:
    """mujoco.viewer.launch_passive for cusp.visual.view without a display: runs `frames`
    iterations of the caller's loop; keeps the model, data and the key callback."""

    def __init__(self, frames: int):
        self.frames = frames

    def __call__(self, model, data, key_callback=None, **_):
        self.model, self.data, self.key = model, data, key_callback
        self.viewer = FakePassiveViewer(model)
        self.viewer.cam = mujoco.MjvCamera()
        left = [self.frames]

        def is_running():
            left[0] -= 1
            return left[0] >= 0

        self.viewer.is_running = is_running
        self.viewer.close = lambda: None
        viewer = self.viewer

        class Context:
            def __enter__(self):
                return viewer

            def __exit__(self, *exc):
                return False

        return Context()


@pytest.mark.parametrize("paused", [True, False])
def test_view_steps_with_the_controller_unless_paused_and_follows_the_box(monkeypatch, paused):
    import mujoco.viewer

    fake = FakeLaunchPassive(frames=40)
    monkeypatch.setattr(mujoco.viewer, "launch_passive", fake)
    calls = []
    push = finger_push()

    def counting(model, data):
        calls.append(data.time)
        push(model, data)

    cusp.view(SCENE, ctrl=counting, paused=paused)
    box = fake.model.body("box").id
    if paused:
        assert fake.data.time == 0 and not calls
    else:
        assert fake.data.time > 0.05 and len(calls) == round(fake.data.time / 0.001)
    np.testing.assert_allclose(fake.viewer.cam.lookat, fake.data.xpos[box], atol=1e-12)
    assert fake.viewer.synced == 40 and fake.key is not None
