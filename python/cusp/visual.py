"""Pictures of contact: a camera framed on the registered bodies, offscreen rendering of a scene
with cusp's contact markers (MuJoCo's Renderer; EGL or OSMesa on headless machines), PNG and MP4
output (MP4 through Debian's ffmpeg)."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
from typing import Any, Iterator

import mujoco
import numpy as np

import cusp
from cusp.progress import Progress


def registered_bodies(model: mujoco.MjModel, spec: mujoco.MjSpec) -> list[int]:
    """Body ids of the geoms a scene registers with cusp (empty for a model without cusp)."""
    ids = []
    for geom in cusp.registered_geoms(spec):
        body = model.geom(geom.name).bodyid[0] if geom.name else None
        if body is not None and body not in ids:
            ids.append(int(body))
    return ids


def frame_camera(model: mujoco.MjModel, data: mujoco.MjData, bodies: list[int],
                 camera: mujoco.MjvCamera) -> None:
    """Point a free camera at the bodies (all bodies if empty), from above at an angle, far enough
    to hold them: lookat = their centroid, distance = 3.5 x (their spread + largest geom)."""
    mujoco.mjv_defaultFreeCamera(model, camera)
    mujoco.mj_forward(model, data)
    ids = bodies or list(range(1, model.nbody))
    if not ids:
        return
    points = data.xpos[ids]
    centre = points.mean(axis=0)
    spread = float(np.max(np.linalg.norm(points - centre, axis=1)))
    size = max([float(model.geom_rbound[g]) for g in range(model.ngeom)
                if model.geom_bodyid[g] in ids] + [0.02])
    camera.lookat[:] = centre
    camera.distance = 3.5 * (spread + size)
    camera.azimuth = 135.0
    camera.elevation = -30.0


def frames(scene: str | os.PathLike, seconds: float, fps: float = 30.0, width: int = 640,
           height: int = 480, stock: bool = False, markers: bool = True,
           progress: bool = False, ctrl: cusp.Controller | None = None
           ) -> Iterator[tuple[float, np.ndarray]]:
    """Simulate a scene and yield (time s, RGB image (height, width, 3) uint8) every 1/fps
    seconds of simulated time, from t = 0 to ``seconds``, with cusp's contact markers (points,
    ECPs, force arrows) unless ``markers`` is False or the scene is the stock twin (then MuJoCo's
    own contact points and forces are drawn). ``ctrl(model, data)`` is called before every step.
    The images are as rendered; :func:`annotate` adds the time stamp and the mode legend."""
    spec = cusp.load_spec(scene, stock=stock)
    bodies_spec = cusp.load_spec(scene)  # registered geoms are read from the cusp scene
    model = cusp.compile_spec(spec, scene)
    data = mujoco.MjData(model)
    if model.nkey:
        mujoco.mj_resetDataKeyframe(model, data, 0)  # as cusp-sim: the first keyframe
    camera = mujoco.MjvCamera()
    bodies = registered_bodies(model, bodies_spec)
    frame_camera(model, data, bodies, camera)
    option = mujoco.MjvOption()
    cusp.show_contacts(option, points=markers, forces=markers)
    steps_per_frame = max(1, int(round(1.0 / (fps * model.opt.timestep))))
    nframe = int(np.floor(seconds * fps + 1e-9)) + 1
    with mujoco.Renderer(model, height, width) as renderer:
        name = pathlib.Path(cusp.scene_name(scene)).name
        bar = Progress(nframe, f"render {name}") if progress else None
        try:
            if bar:
                bar.__enter__()
            for k in range(nframe):
                if k:
                    cusp.step(model, data, steps_per_frame, ctrl)
                if bodies:  # follow the registered bodies
                    camera.lookat[:] = data.xpos[bodies].mean(axis=0)
                renderer.update_scene(data, camera, option)
                yield data.time, renderer.render().copy()
                if bar:
                    bar.update(k + 1)
        finally:
            if bar:
                bar.__exit__(None, None, None)


def save_png(image: np.ndarray, path: str | os.PathLike) -> None:
    """Write an RGB uint8 image as PNG (matplotlib's writer, no other dependency)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image

    matplotlib.image.imsave(str(path), image)


def render(scene: str | os.PathLike, out: str | os.PathLike, seconds: float = 2.0,
           fps: float = 30.0, width: int = 640, height: int = 480, stock: bool = False,
           markers: bool = True, progress: bool = True, ctrl: cusp.Controller | None = None,
           stamp: bool = True) -> pathlib.Path:
    """Render a scene headless to ``out``: ``.png`` (the frame at ``seconds``) or ``.mp4``
    (every frame from 0 to ``seconds`` at ``fps``, H.264 through ffmpeg), each frame with its
    simulated time and (with markers on a cusp scene) the mode legend unless ``stamp`` is False.
    ``ctrl(model, data)`` is called before every step. Returns the path."""
    legend = markers and not stock

    def framed() -> Iterator[np.ndarray]:
        for t, image in frames(scene, seconds, fps, width, height, stock, markers, progress,
                               ctrl):
            yield annotate(image, t, legend) if stamp else image

    out = pathlib.Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".png":
        last = None
        for image in framed():
            last = image
        save_png(last, out)
        return out
    if out.suffix.lower() != ".mp4":
        raise ValueError(f"render: output '{out}' must end in .png or .mp4")
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise RuntimeError("render: writing .mp4 needs ffmpeg (Debian package ffmpeg, installed "
                           "by scripts/bootstrap); write .png instead")
    cmd = [ffmpeg, "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
           "-s", f"{width}x{height}", "-r", f"{fps:g}", "-i", "-", "-an", "-c:v", "libx264",
           "-pix_fmt", "yuv420p", str(out)]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for image in framed():
            proc.stdin.write(np.ascontiguousarray(image).tobytes())
    finally:
        proc.stdin.close()
        err = proc.stderr.read().decode()
        proc.wait()
    if proc.returncode != 0:
        raise RuntimeError(f"render: ffmpeg failed ({proc.returncode}): {err.strip()}")
    return out


#: the marker colours of the modes (visualize.c), for legends and pixel tests
MODE_RGB = {cusp.MODE_STICK: (0.1, 0.3, 1.0), cusp.MODE_SLIDE: (1.0, 0.1, 0.1),
            cusp.MODE_BREAK: (0.1, 0.8, 0.1)}


def annotate(image: np.ndarray, t: float, legend: bool = True) -> np.ndarray:
    """A copy of an RGB uint8 frame with its simulated time ("t = 1.234 s") in the top left
    corner and, if ``legend``, the marker colours of the modes (stick, slide, break) under it,
    on a dark box so that they read on any scene (Pillow's built-in font)."""
    from PIL import Image, ImageDraw

    picture = Image.fromarray(np.ascontiguousarray(image[..., :3]))
    draw = ImageDraw.Draw(picture)
    lines = 1 + (3 if legend else 0)
    draw.rectangle((4, 4, 92, 8 + 14 * lines), fill=(20, 20, 20))
    draw.text((9, 7), f"t = {t:.3f} s", fill=(255, 255, 255))
    if legend:
        for row, mode in enumerate((cusp.MODE_STICK, cusp.MODE_SLIDE, cusp.MODE_BREAK)):
            y = 7 + 14 * (row + 1)
            rgb = tuple(int(255 * c) for c in MODE_RGB[mode])
            draw.rectangle((9, y + 2, 17, y + 10), fill=rgb)
            draw.text((23, y), cusp.MODE_NAMES[mode], fill=(255, 255, 255))
    return np.asarray(picture).copy()


def marker_pixels(image: np.ndarray, mode: int, hue_tolerance: float = 15.0,
                  min_saturation: float = 0.45, min_value: float = 0.25) -> int:
    """Number of pixels that have the hue of a mode's marker (stick blue, slide red, break green)
    within ``hue_tolerance`` degrees, and are saturated and bright enough to be a marker rather
    than grey scenery (shading changes value, not hue). Used by tests to find markers in
    pictures."""
    rgb = MODE_RGB[mode]
    import matplotlib.colors

    want = float(matplotlib.colors.rgb_to_hsv(np.array(rgb))[0]) * 360.0
    hsv = matplotlib.colors.rgb_to_hsv(image[..., :3].astype(float) / 255.0)
    delta = np.abs((hsv[..., 0] * 360.0 - want + 180.0) % 360.0 - 180.0)
    hit = (delta <= hue_tolerance) & (hsv[..., 1] >= min_saturation) & (hsv[..., 2] >= min_value)
    return int(np.count_nonzero(hit))


def view(scene: Any, stock: bool = False, ctrl: cusp.Controller | None = None,
         seconds: float | None = None, paused: bool = False, follow: bool = True,
         markers: bool = True, ui: bool = True) -> None:
    """MuJoCo's viewer on a scene (an MJCF file or an MjSpec), in passive mode: this process
    steps the physics in real time, ``ctrl(model, data)`` before every step; cusp's markers
    switched on unless ``markers`` is False (keys C, F and T switch points, force arrows and
    transparency; space pauses and runs, ``paused`` starts paused), the camera kept on the
    registered bodies while ``follow``. The passive viewer renders its own copy of the mjData,
    whose plugin instance never steps, so the markers of the stepping mjData are handed to it
    through its user scene (:func:`cusp.sync_viewer`). ``seconds``: close after that much wall
    time (then the process ends at once: GLFW's teardown can race the viewer's render thread)."""
    import sys
    import time

    import mujoco.viewer

    model = cusp.compile_spec(cusp.load_spec(scene, stock=stock), cusp.scene_name(scene))
    data = mujoco.MjData(model)
    if model.nkey:
        mujoco.mj_resetDataKeyframe(model, data, 0)
    bodies = registered_bodies(model, cusp.load_spec(scene))
    state = {"paused": paused}

    def key(keycode: int) -> None:
        if keycode == 32:  # space
            state["paused"] = not state["paused"]

    with mujoco.viewer.launch_passive(model, data, show_left_ui=ui, show_right_ui=ui,
                                      key_callback=key) as viewer:
        with viewer.lock():
            cusp.show_contacts(viewer.opt, points=markers, forces=markers)
            frame_camera(model, data, bodies, viewer.cam)
        start = time.monotonic()
        sim_start, wall_start = data.time, 0.0
        while viewer.is_running():
            wall = time.monotonic() - start
            if seconds is not None and wall > seconds:
                break
            with viewer.lock():
                if state["paused"]:
                    sim_start, wall_start = data.time, wall
                while not state["paused"] and data.time - sim_start < wall - wall_start:
                    cusp.step(model, data, 1, ctrl)  # real time
                if bodies and follow:
                    viewer.cam.lookat[:] = data.xpos[bodies].mean(axis=0)
            cusp.sync_viewer(viewer, model, data)
            time.sleep(0.005)
        timed_out = viewer.is_running()
        viewer.close()
        while viewer.is_running():  # let the render thread finish before the window goes
            time.sleep(0.05)
    if timed_out:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
