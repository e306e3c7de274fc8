"""cusp in MuJoCo Studio (python/cusp/studio.py): the panel's numbers against the analytic ones of
a resting and a sliding box, the way they reach Studio's viewer (a copy of the mjData that never
steps), the markers from the simulation side to the viewer's extra geoms, and the native window
under Xvfb (`python -m cusp studio SCENE`): a screenshot with the stick-blue markers in the 3D view
and the panel drawn over it."""
import copy
import os
import pathlib
import shutil
import subprocess
import sys
import time
import types

import mujoco
import numpy as np
import pytest

import cusp
from cusp import studio
from cusp.visual import MODE_RGB, marker_pixels

REPO = pathlib.Path(__file__).resolve().parents[2]
XVFB = shutil.which("xvfb-run")
FFMPEG = shutil.which("ffmpeg")

G = 9.81  # m/s^2, MuJoCo's default gravity
H = 0.002  # s, MuJoCo's default time step
MU = 0.3  # friction of both geoms of BOX_XML (cusp takes the pair's larger one)
MASS = 1000.0 * 0.2 * 0.2 * 0.1  # kg, the box of BOX_XML at MuJoCo's default density

# a registered 0.2 x 0.2 x 0.1 m box on a floor; see-through, so that its ECP disc shows
BOX_XML = f"""<mujoco model="studio_box">
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="box"/>
  </instance></plugin></extension>
  <visual><headlight ambient="0.6 0.6 0.6"/></visual>
  <worldbody>
    <light pos="0 0 2"/>
    <geom name="floor" type="plane" size="2 2 0.1" friction="{MU}"/>
    <body name="box" pos="0 0 0.05">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.05" contype="0" conaffinity="0" friction="{MU}"
            rgba="0.8 0.8 0.8 0.3"/>
    </body>
  </worldbody>
</mujoco>
"""


def resting_box(steps: int = 200) -> tuple[mujoco.MjModel, mujoco.MjData]:
    model = mujoco.MjModel.from_xml_string(BOX_XML)
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, steps)
    return model, data


def test_panel_rows_of_a_resting_box():
    """At rest the patch sticks and its normal impulse carries the weight for one step:
    Ln = m g h (1e-9 N s: the solver's tolerance is 1e-10 on the conditioned problem), no friction
    impulse (1e-9 N s), ECP under the centre of the box (1e-9 m in x, y; z is the free step's
    fall -g h^2 below the floor, 1e-9 m)."""
    model, data = resting_box()
    (row,) = studio.panel_rows(model, data)
    assert row["name"] == "cusp" and row["status"] == "solved"
    assert row["solver_failures"] == 0 and row["steps"] == 200
    assert (row["ncontact"], row["nstick"], row["nslide"], row["nbreak"]) == (1, 1, 0, 0)
    (body,) = row["bodies"]
    assert body["name"] == "box" and body["mode"] == cusp.MODE_STICK
    assert body["mode_name"] == "stick"
    assert MASS == pytest.approx(model.body("box").mass[0], rel=1e-12)
    assert body["Ln"] == pytest.approx(MASS * G * H, abs=1e-9)
    assert body["normal_force"] == pytest.approx(MASS * G, abs=1e-9 / H)
    assert abs(body["Lt"]) < 1e-9 and abs(body["Lo"]) < 1e-9 and abs(body["Lr"]) < 1e-9
    box_xy = data.body("box").xpos[:2]
    assert np.allclose(body["ecp"][:2], box_xy, atol=1e-9)
    assert body["ecp"][2] == pytest.approx(-G * H * H, abs=1e-9)


def test_panel_rows_of_a_sliding_box():
    """A box pushed off at 1 m/s slides: Coulomb's law |(Lt, Lo)| = mu Ln (1e-6 relative), the
    friction impulse against the velocity (cosine -1 within 1e-9), and it takes mu g h of speed
    per step (1e-9 m/s over 10 steps)."""
    model, data = resting_box(100)
    data.qvel[0] = 1.0
    mujoco.mj_step(model, data, 10)
    speed_before = data.qvel[0]
    mujoco.mj_step(model, data, 10)
    assert data.qvel[0] == pytest.approx(speed_before - 10 * MU * G * H, abs=1e-9)
    body = studio.panel_rows(model, data)[0]["bodies"][0]
    assert body["mode"] == cusp.MODE_SLIDE and body["mode_name"] == "slide"
    assert body["Ln"] == pytest.approx(MASS * G * H, abs=1e-9)
    friction = np.hypot(body["Lt"], body["Lo"])
    assert friction == pytest.approx(MU * body["Ln"], rel=1e-6)
    frame = cusp.contacts(model, data).frame[0]  # rows t, o, n
    world = body["Lt"] * frame[0] + body["Lo"] * frame[1]
    velocity = data.qvel[:3]
    cosine = world @ velocity / (np.linalg.norm(world) * np.linalg.norm(velocity))
    assert cosine == pytest.approx(-1.0, abs=1e-9)


def test_studios_viewer_copy_has_the_state_but_no_markers():
    """Studio's viewer renders a deep copy of the model with its own mjData, set from the
    simulation's state (mjSTATE_INTEGRATION, plugin state included) then mj_forward: the copy
    carries the published state (the same rows) but no contacts to draw, which is why the
    markers are sent from the simulation side."""
    model, data = resting_box()
    signature = int(mujoco.mjtState.mjSTATE_INTEGRATION)
    state = np.empty(mujoco.mj_stateSize(model, signature))
    mujoco.mj_getState(model, data, state, signature)
    viewer_model = copy.deepcopy(model)
    viewer_data = mujoco.MjData(viewer_model)
    mujoco.mj_setState(viewer_model, viewer_data, state, signature)
    mujoco.mj_forward(viewer_model, viewer_data)
    assert studio.panel_rows(viewer_model, viewer_data) == studio.panel_rows(model, data)
    assert len(studio.Markers.export(viewer_model, viewer_data, True, True)) == 0


def test_markers_go_from_the_simulation_to_the_viewers_extra_geoms():
    """CuspMarkers (simulation side) sends the resting box's ECP disc (stick blue, at the ECP),
    its force arrow (force_scale 0.01 m/N x m g long, 1e-5 m) and the panel's rows; CuspPanel
    (viewer side) puts the markers among the viewer's extra geoms as its contact point / force
    flags say, leaves other plugins' extra geoms alone, and shows the rows."""
    model, data = resting_box()
    sent = []
    sim_side = studio.CuspMarkers()
    sim_side.handle = types.SimpleNamespace(send_to_viewer=sent.append)
    sim_side._on_post_step(studio.messages.PostStepEvent(model=model, data=data))
    (snapshot,) = sent
    (disc,) = snapshot.points.geoms()
    (arrow,) = snapshot.forces.geoms()
    assert snapshot.rows == studio.panel_rows(model, data)
    ecp = studio.panel_rows(model, data)[0]["bodies"][0]["ecp"]
    assert disc.type == mujoco.mjtGeom.mjGEOM_ELLIPSOID
    assert np.allclose(disc.pos, ecp, atol=1e-6)  # float32 positions
    assert np.allclose(disc.rgba, (*MODE_RGB[cusp.MODE_STICK], 1.0))
    assert arrow.type == mujoco.mjtGeom.mjGEOM_ARROW
    assert arrow.size[2] == pytest.approx(0.01 * MASS * G, abs=1e-5)

    others = mujoco.MjvGeom()
    viewer = types.SimpleNamespace(vis_options=mujoco.MjvOption(), extra_geoms=[others])
    panel = studio.CuspPanel()
    panel.viewer = viewer
    panel._on_init(studio.plugin.ViewerInitEvent(viewer=viewer))  # markers on at start
    assert panel.rows == []
    panel._on_snapshot(snapshot)
    assert panel.rows == snapshot.rows
    # the first SETTLE_FRAMES frames of a model are drawn without markers (Filament's set-up)
    for _ in range(studio.CuspPanel.SETTLE_FRAMES):
        panel._on_update(studio.messages.UpdateEvent())
        assert viewer.extra_geoms == [others]
    panel._on_update(studio.messages.UpdateEvent())
    types_drawn = [g.type for g in viewer.extra_geoms]
    assert viewer.extra_geoms[0] is others
    assert types_drawn[1:] == [mujoco.mjtGeom.mjGEOM_ELLIPSOID, mujoco.mjtGeom.mjGEOM_ARROW]
    viewer.vis_options.flags[mujoco.mjtVisFlag.mjVIS_CONTACTFORCE] = 0  # key F
    panel._on_update(studio.messages.UpdateEvent())
    assert [g.type for g in viewer.extra_geoms][1:] == [mujoco.mjtGeom.mjGEOM_ELLIPSOID]
    viewer.vis_options.flags[mujoco.mjtVisFlag.mjVIS_CONTACTPOINT] = 0  # key C
    panel._on_update(studio.messages.UpdateEvent())
    assert viewer.extra_geoms == [others]


def test_buffer_abc_of_python_312_is_provided_on_older_pythons():
    """Studio's Filament renderer imports collections.abc.Buffer (Python >= 3.12); importing
    cusp.studio provides it when missing, with 3.12's meaning: objects with the buffer
    protocol."""
    import collections.abc

    Buffer = collections.abc.Buffer
    assert isinstance(np.zeros(3), Buffer) and isinstance(b"x", Buffer)
    assert not isinstance("text", Buffer) and not isinstance(3, Buffer)
    assert studio.provide_buffer_abc() is False  # there now: never defined twice


def test_cli_errors_are_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    for args, expected in ((["studio"], "a SCENE.xml is needed"),
                           (["studio", str(tmp_path / "none.xml")], "no file"),
                           (["studio", str(REPO / "mjcf" / "push_slide.xml"), "--gfx=glide"],
                            "argument --gfx: 'glide'")):
        done = subprocess.run([sys.executable, "-m", "cusp", *args], capture_output=True,
                              text=True, timeout=120, env=env)
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], done.stderr
    done = subprocess.run([sys.executable, "-m", "cusp", "studio", "--plugin-file"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0
    assert pathlib.Path(done.stdout.strip()) == REPO / "python" / "cusp" / "studio.py"


# ------------------------------------ the native window ------------------------------------------

SCREEN = (1280, 1024)  # Xvfb screen; Studio's window is 1200 x 800, centred
XVFB_BIN = shutil.which("Xvfb")


class StudioDied(AssertionError):
    """Studio ended by a signal (its return code is minus the signal's number)."""

    def __init__(self, returncode: int, log: str, seconds: float):
        super().__init__(f"Studio exited with {returncode} {seconds:.0f} s after its launch: {log}")
        self.returncode = returncode
        self.seconds = seconds  # s from the launch to the death seen
        self.last_line = (log.strip().splitlines() or [""])[-1][-200:]


def studio_screenshot(command: list[str], workdir: pathlib.Path, env: dict, check=None,
                      timeout: float = 480.0, survive: float = 0.0) -> np.ndarray:
    """Run ``command`` (a Studio launch) on its own Xvfb screen and grab the screen every second
    until a picture passes ``check`` (default :func:`check_studio_screenshot`): the wait ends
    when the window shows what is checked, however slow the machine, and fails after
    ``timeout`` s with the last reason. Then Studio must keep running ``survive`` more seconds.
    Returns that RGB uint8 picture (the process's memory map is left in workdir/maps.txt). HOME
    is workdir, so no saved Studio layout moves the panel."""
    import matplotlib.image

    check = check or check_studio_screenshot
    xvfb = subprocess.Popen([XVFB_BIN, "-displayfd", "1", "-nolisten", "tcp", "-screen", "0",
                             f"{SCREEN[0]}x{SCREEN[1]}x24"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    display = ":" + xvfb.stdout.readline().strip()
    log_path, shot = workdir / "studio.log", workdir / "studio.png"
    env = {k: v for k, v in env.items() if k not in ("DISPLAY", "MUJOCO_GL")}
    env.update(DISPLAY=display, HOME=str(workdir))
    with open(log_path, "w") as log:
        proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                                cwd=workdir)
    try:
        start, last = time.monotonic(), "no picture yet"
        image = None
        while time.monotonic() - start < timeout:
            if proc.poll() is not None:
                log_tail = log_path.read_text()[-3000:]
                if proc.returncode < 0:
                    raise StudioDied(proc.returncode, log_tail, time.monotonic() - start)
                raise AssertionError(f"Studio exited with {proc.returncode}: {log_tail}")
            grab = subprocess.run([FFMPEG, "-y", "-loglevel", "error", "-f", "x11grab",
                                   "-video_size", f"{SCREEN[0]}x{SCREEN[1]}", "-i", display,
                                   "-frames:v", "1", str(shot)], capture_output=True, text=True)
            if grab.returncode == 0:
                picture = (matplotlib.image.imread(shot)[..., :3] * 255).round().astype(np.uint8)
                try:
                    check(picture)
                except AssertionError as err:
                    last = str(err) or repr(err)
                else:
                    image = picture
                    break
            time.sleep(1.0)
        assert image is not None, (f"no picture passed in {timeout:g} s: {last}; log: "
                                   f"{log_path.read_text()[-3000:]}")
        maps = pathlib.Path(f"/proc/{proc.pid}/maps").read_text()
        if not maps:
            # an empty map is a process that has let go of its memory: it is dying, and may not
            # be reaped yet when the map is read (poll() still None: seen under a loaded CI run).
            # Died by a signal just after the picture: the crash before the picture.
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            if proc.returncode is not None and proc.returncode < 0:
                raise StudioDied(proc.returncode, log_path.read_text()[-3000:],
                                 time.monotonic() - start)
        (workdir / "maps.txt").write_text(maps)
        end = time.monotonic() + survive
        while time.monotonic() < end:
            assert proc.poll() is None, (f"Studio exited with {proc.returncode} after the "
                                         f"picture: {log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        text = log_path.read_text()
        assert "Traceback" not in text and "not found" not in text, text
        return image
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        xvfb.terminate()
        xvfb.wait(timeout=30)


def check_studio_screenshot(image: np.ndarray) -> None:
    """Studio's window with cusp: the panel at studio.PANEL_POS (light background, dark text, the
    stick colour of the box's mode) and the stick-blue ECP disc and force arrow in the 3D view
    (Studio's own UI has no such blue there: 0 pixels without cusp's plugins)."""
    lit = np.argwhere(image.max(axis=2) > 5)  # the root window around Studio's is black
    (y0, x0), (y1, x1) = lit.min(axis=0), lit.max(axis=0) + 1
    assert (x1 - x0, y1 - y0) == (1200, 800)
    window = image[y0:y1, x0:x1]
    px, py = (int(v) for v in studio.PANEL_POS)
    panel = window[py:py + 200, px:px + 150]
    background = np.all(np.abs(panel.astype(int) - (245, 245, 247)) <= 8, axis=2).mean()
    assert background > 0.5, background  # the 3D view behind it is dark grey
    assert np.count_nonzero(panel.max(axis=2) < 110) > 300  # text
    assert marker_pixels(panel, cusp.MODE_STICK) >= 100  # the mode's colour swatch and name
    view = window[150:760, 480:860]  # right of the panel, under the axis gizmo
    assert marker_pixels(view, cusp.MODE_STICK) > 1500, marker_pixels(view, cusp.MODE_STICK)
    assert marker_pixels(view, cusp.MODE_SLIDE) == 0 and marker_pixels(view, cusp.MODE_BREAK) == 0


def studio_commands(scene: pathlib.Path) -> dict[str, list[str]]:
    """The two ways to open a scene in Studio with cusp, without any graphics flag."""
    return {"python -m cusp studio": [sys.executable, "-m", "cusp", "studio", str(scene)],
            "mujoco-studio --plugins": [str(pathlib.Path(sys.executable).parent / "mujoco-studio"),
                                        str(scene), f"--plugins={studio.__file__}"]}


def studio_env() -> dict:
    return dict(os.environ, PYTHONPATH=str(REPO / "python"))


NEEDS_X = pytest.mark.skipif(not (XVFB_BIN and FFMPEG),
                             reason="needs Xvfb and ffmpeg (scripts/bootstrap)")
# the tests that open Studio's native window run in test_install.py's worker of a parallel run
# (scripts/test: --dist loadgroup), one Studio at a time: two at once on the 2 cores, one of them
# died by SIGSEGV around its picture in 1 of 2 trials (2026-12-06)
ONE_STUDIO_AT_A_TIME = pytest.mark.xdist_group("xvfb-run")


# launches of the resting box before its picture counts as missing: in two runs of the whole suite
# (2026-12-06: a clean-clone CI run here and the project's CI) Studio died by SIGSEGV in all of 3
# launches, while 4 runs of this test alone beside two busy loops and three more runs of the
# whole suite saw no death
STUDIO_CRASH_LAUNCHES = 6


def studio_screenshot_relaunched(command: list[str], tmp_path: pathlib.Path, env: dict):
    """studio_screenshot of the resting box, relaunched when Studio dies by a signal (its own heap
    corruption on software OpenGL, docs/studio.md), at most STUDIO_CRASH_LAUNCHES launches, every
    death reported. Returns the picture and the launch's work folder (its maps.txt)."""
    deaths = []
    for launch in range(STUDIO_CRASH_LAUNCHES):
        workdir = tmp_path / f"launch{launch}"
        workdir.mkdir()
        try:
            image = studio_screenshot(command, workdir, env)
            break
        except StudioDied as died:
            deaths.append(f"{died.returncode} after {died.seconds:.0f} s ({died.last_line!r})")
    else:
        pytest.fail(f"Studio died by a signal in all {STUDIO_CRASH_LAUNCHES} launches: {deaths}")
    if deaths:
        print(f"Studio died around the picture in {len(deaths)} launch(es): {deaths}")
    return image, workdir


@ONE_STUDIO_AT_A_TIME
@NEEDS_X
@pytest.mark.parametrize("how", ["python -m cusp studio"])
def test_studio_shows_markers_and_panel_without_flags(tmp_path, how):
    """Studio's native window on a machine without a GPU, no --gfx given: cusp chooses Mesa's
    software OpenGL (Studio's default mode aborts there) and the resting box's markers and the
    cusp panel show. Studio 4.0 itself corrupts its heap when contact markers are drawn on
    software OpenGL (docs/studio.md: a stock box with MuJoCo's own contact flags aborts too), in
    1 of 5 measured runs before this picture: a launch that dies by a signal before the picture
    is relaunched, at most STUDIO_CRASH_LAUNCHES times, and every death is reported."""
    if studio.has_gpu():
        pytest.skip("a GPU: Studio's default graphics mode is used")
    scene = tmp_path / "box.xml"
    scene.write_text(BOX_XML)
    image, workdir = studio_screenshot_relaunched(studio_commands(scene)[how], tmp_path,
                                                  studio_env())
    check_studio_screenshot(image)
    assert str(REPO / "build" / "libcusp.so") in (workdir / "maps.txt").read_text()


@ONE_STUDIO_AT_A_TIME
@NEEDS_X
@pytest.mark.skipif(not os.environ.get("CUSP_STUDIO_LONG"),
                    reason="a measurement of Studio's own crash (docs/studio.md): CUSP_STUDIO_LONG=1")
@pytest.mark.xfail(reason="Studio 4.0 corrupts its heap drawing contact markers on software "
                          "OpenGL, cusp's or MuJoCo's own (docs/studio.md)", strict=False)
def test_studio_keeps_a_resting_box_with_markers_running_60_s(tmp_path):
    """The resting box's markers and panel, then Studio alive 60 s more (1 of 5 runs measured)."""
    scene = tmp_path / "box.xml"
    scene.write_text(BOX_XML)
    studio_screenshot(studio_commands(scene)["python -m cusp studio"], tmp_path, studio_env(),
                      survive=60.0)


def sliding_markers(image: np.ndarray) -> None:
    """push_slide in Studio: the window is there and the pushed block's slide-red ECP disc shows
    in the 3D view (Studio draws nothing of that red itself)."""
    lit = np.argwhere(image.max(axis=2) > 5)
    (y0, x0), (y1, x1) = lit.min(axis=0), lit.max(axis=0) + 1
    assert (x1 - x0, y1 - y0) == (1200, 800)
    window = image[y0:y1, x0:x1]
    assert marker_pixels(window[:, 250:], cusp.MODE_SLIDE) > 50, marker_pixels(
        window[:, 250:], cusp.MODE_SLIDE)


@ONE_STUDIO_AT_A_TIME
@NEEDS_X
@pytest.mark.parametrize("how", ["python -m cusp studio", "mujoco-studio --plugins"])
def test_studio_runs_push_slide_without_crashing(tmp_path, how):
    """mjcf/push_slide.xml in Studio without flags: the sliding block's markers show and Studio
    keeps running 10 s more (Filament crashed in 2 to 4 of 4 runs when the markers arrived while
    it set up the model's scene: studio.CuspPanel.SETTLE_FRAMES). CUSP_STUDIO_RUNS repeats it
    (10 when measured: docs/studio.md)."""
    if studio.has_gpu():
        pytest.skip("a GPU: Studio's default graphics mode is used")
    for run in range(int(os.environ.get("CUSP_STUDIO_RUNS", "1"))):
        workdir = tmp_path / f"run{run}"
        workdir.mkdir()
        studio_screenshot(studio_commands(REPO / "mjcf" / "push_slide.xml")[how], workdir,
                          studio_env(), check=sliding_markers, survive=10.0)


def test_gfx_default_is_software_without_a_gpu(monkeypatch):
    monkeypatch.setattr(studio, "has_gpu", lambda: False)
    assert studio.default_gfx("") == "opengl_software"
    assert studio.default_gfx("web") == "web"
    monkeypatch.setattr(studio, "has_gpu", lambda: True)
    assert studio.default_gfx("") == ""
    from mujoco.studio import launch_native
    assert getattr(launch_native.launch, "cusp_default_gfx", False)  # mujoco-studio --plugins


def test_markers_scale_with_the_models_size_and_visual_scales():
    """ECP discs (flat ellipsoids), contact spheres and force arrows are sized like MuJoCo's own
    contact markers: by stat.meansize and vis.scale.contactwidth / contactheight / forcewidth
    (plugin/publish/visualize.h: disc radius 0.9 cw ms, half thickness 0.3 ch ms, arrow width
    0.45 fw ms); 1e-6 relative (float32 geoms)."""
    model, data = resting_box()

    def disc_and_arrow():
        points = studio.Markers.export(model, data, True, False)
        forces = studio.Markers.export(model, data, False, True)
        assert list(points.type) == [mujoco.mjtGeom.mjGEOM_ELLIPSOID]
        assert list(forces.type) == [mujoco.mjtGeom.mjGEOM_ARROW]
        return points.size[0].astype(float), forces.size[0].astype(float)

    def expected():
        ms, scale = model.stat.meansize, model.vis.scale
        return (np.array([0.9 * scale.contactwidth * ms] * 2 + [0.3 * scale.contactheight * ms]),
                0.45 * scale.forcewidth * ms)

    for change in (None, ("contactwidth", 2.0), ("contactheight", 3.0), ("forcewidth", 0.5),
                   ("meansize", 0.25)):
        if change == ("meansize", 0.25):
            model.stat.meansize *= 0.25
        elif change:
            setattr(model.vis.scale, change[0], getattr(model.vis.scale, change[0]) * change[1])
        disc, arrow = disc_and_arrow()
        want_disc, want_width = expected()
        assert np.allclose(disc, want_disc, rtol=1e-6), (change, disc, want_disc)
        assert np.allclose(arrow[:2], want_width, rtol=1e-6), (change, arrow, want_width)
