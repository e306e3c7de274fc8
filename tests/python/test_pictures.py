"""Pictures: cusp's markers follow MuJoCo's visual flags, the offscreen renderer and the
real viewer (under Xvfb) show them in their colours, and `python -m cusp compare|render` write
their files. Screenshots are kept in build/test-artifacts/."""
import os
import pathlib
import shutil
import subprocess
import sys
import time

import matplotlib.image
import mujoco
import numpy as np
import pytest

import cusp
from cusp import visual

REPO = pathlib.Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "build" / "test-artifacts"
FLAGS = mujoco.mjtVisFlag


def scene_geoms(model, data, option):
    scene = mujoco.MjvScene(model, 2000)
    mujoco.mjv_updateScene(model, data, option, None, mujoco.MjvCamera(),
                           mujoco.mjtCatBit.mjCAT_ALL, scene)
    return [scene.geoms[i] for i in range(scene.ngeom)]


def test_markers_follow_the_contact_point_and_force_flags():
    cusp.load()
    model = mujoco.MjModel.from_xml_path(str(REPO / "mjcf" / "push_slide.xml"))
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, 300)  # sliding: one patch
    option = mujoco.MjvOption()
    base = len(scene_geoms(model, data, option))  # defaults: both flags off, no markers
    cusp.show_contacts(option, points=True, forces=False)
    geoms = scene_geoms(model, data, option)
    discs = [g for g in geoms if g.type == mujoco.mjtGeom.mjGEOM_ELLIPSOID]
    assert len(geoms) == base + 1 and len(discs) == 1
    ecp = cusp.contacts(model, data).ecp[0]
    np.testing.assert_allclose(discs[0].pos, ecp, atol=1e-6)  # the disc sits at the ECP
    np.testing.assert_allclose(discs[0].rgba[:3], [1.0, 0.1, 0.1], atol=1e-6)  # slide: red
    cusp.show_contacts(option, points=True, forces=True)
    arrows = [g for g in scene_geoms(model, data, option) if g.type == mujoco.mjtGeom.mjGEOM_ARROW]
    assert len(arrows) == 1
    force = cusp.contacts(model, data).force[0, 0]
    assert arrows[0].size[2] == pytest.approx(0.01 * force, rel=1e-5)  # force_scale 0.01 m/N
    cusp.show_contacts(option, points=False, forces=False)
    assert len(scene_geoms(model, data, option)) == base


def test_offscreen_render_shows_the_mode_colours():
    """disk_drop at rest: stick-blue markers only when markers are on (the scene is grey);
    push_slide while sliding: the slide-red ECP disc."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for scene, seconds, mode in (("disk_drop.xml", 1.0, cusp.MODE_STICK),
                                 ("push_slide.xml", 0.3, cusp.MODE_SLIDE)):
        counts = {}
        for markers in (True, False):
            *_, (t, image) = visual.frames(REPO / "mjcf" / scene, seconds, fps=10,
                                           markers=markers)
            counts[markers] = visual.marker_pixels(image, mode)
            visual.save_png(image, ARTIFACTS / f"render_{pathlib.Path(scene).stem}_{markers}.png")
        assert counts[True] >= 50, counts
        assert counts[False] == 0, counts


XVFB = shutil.which("xvfb-run")
FFMPEG = shutil.which("ffmpeg")


@pytest.mark.xdist_group("xvfb-run")  # xvfb-run -a: one at a time (see scripts/test)
@pytest.mark.skipif(not (XVFB and FFMPEG), reason="needs xvfb-run and ffmpeg (scripts/bootstrap)")
def test_viewer_under_xvfb_shows_the_markers(tmp_path):
    """`python -m cusp view` in MuJoCo's real viewer under Xvfb; a screenshot of the X screen
    (ffmpeg x11grab) must contain the stick-blue and break-green markers of the resting disk_drop
    (nothing else in that grey scene has those hues); with --hide-contacts it must not."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "shot.sh"
    script.write_text(
        'set -u\n'
        f'"{sys.executable}" -m cusp view "{REPO}/mjcf/disk_drop.xml" --seconds 14 --hide-ui $VIEW_ARGS '
        '> "$LOG" 2>&1 &\n'
        'pid=$!\n'
        'sleep 9\n'
        'ffmpeg -y -loglevel error -f x11grab -video_size 1280x1024 -i "$DISPLAY" '
        '-frames:v 1 "$SHOT"\n'
        'grab=$?\n'
        'wait $pid\n'
        'view=$?\n'
        'echo "grab=$grab view=$view"\n')
    counts = {}
    for markers in (True, False):
        shot = ARTIFACTS / f"viewer_disk_drop_{'markers' if markers else 'hidden'}.png"
        log = tmp_path / f"view_{markers}.log"
        env = dict(os.environ, PYTHONPATH=str(REPO / "python"), SHOT=str(shot), LOG=str(log),
                   VIEW_ARGS="" if markers else "--hide-contacts")
        env.pop("MUJOCO_GL", None)
        done = subprocess.run([XVFB, "-a", "-s", "-screen 0 1280x1024x24", "bash", str(script)],
                              env=env, capture_output=True, text=True, timeout=120)
        assert "grab=0 view=0" in done.stdout, (done.stdout, done.stderr, log.read_text())
        image = (matplotlib.image.imread(shot)[..., :3] * 255).astype(np.uint8)
        counts[markers] = (visual.marker_pixels(image, cusp.MODE_STICK),
                           visual.marker_pixels(image, cusp.MODE_BREAK))
    assert counts[True][0] >= 30 and counts[True][1] >= 10, counts
    assert counts[False] == (0, 0), counts


def test_compare_cli_writes_plots_and_summary(tmp_path):
    out = tmp_path / "cmp"
    done = subprocess.run([sys.executable, "-m", "cusp", "compare", str(REPO / "mjcf" /
                           "push_stick.xml"), "--out", str(out), "--seconds", "0.5"],
                          env=dict(os.environ, PYTHONPATH=str(REPO / "python")),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in ("penetration", "energy", "contact_force", "modes", "trajectory", "overview"):
        image = matplotlib.image.imread(out / f"{name}.png")
        assert image.shape[0] > 100 and image.std() > 0.01  # a real picture, not blank
    summary = (out / "summary.md").read_text()
    assert "| max penetration (mm) |" in summary and "cusp | stock" in summary
    assert "100%" in done.stderr  # the progress bar ran to the end
    assert "\r" not in done.stderr  # stderr is a pipe here: plain lines, no redrawing
    assert any(line.startswith("push_stick.xml cusp 100%") for line in done.stderr.splitlines())


def test_render_cli_writes_png_and_mp4(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    png = tmp_path / "frame.png"
    subprocess.run([sys.executable, "-m", "cusp", "render", str(REPO / "mjcf" / "disk_drop.xml"),
                    "--out", str(png), "--seconds", "0.5", "--size", "320x240", "--quiet"],
                   env=env, check=True, timeout=300)
    assert matplotlib.image.imread(png).shape[:2] == (240, 320)
    if FFMPEG:
        mp4 = tmp_path / "clip.mp4"
        subprocess.run([sys.executable, "-m", "cusp", "render", str(REPO / "mjcf" /
                        "disk_drop.xml"), "--out", str(mp4), "--seconds", "0.5", "--fps", "10",
                        "--size", "320x240", "--quiet"], env=env, check=True, timeout=300)
        probe = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-show_entries",
                                "stream=nb_read_frames,width,height", "-of", "csv=p=0",
                                str(mp4)], capture_output=True, text=True, check=True)
        assert probe.stdout.strip() == "320,240,6"  # 0.5 s at 10 fps: frames at 0, 0.1, ..., 0.5
