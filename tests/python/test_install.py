"""cusp as a MuJoCo user installs it: `pip install <checkout>` into a fresh venv outside
the repository (pip reaches PyPI for mujoco, numpy, matplotlib and the build backend), then plain
`import mujoco` finds cusp.contact through the `mujoco.plugins` entry point, from any directory,
in either import order, headless rendering included; `python -m mujoco.viewer` (a screenshot)
and `mujoco-studio` open a cusp scene with no extra step; libcusp.so has no path into the
checkout; scripts/wheel's wheel carries the libraries libcusp.so needs."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
XVFB = shutil.which("xvfb-run")
# one worker of a parallel run (scripts/test: pytest -n, --dist loadgroup) runs the whole module:
# its venv fixture is built once, and its viewer test's xvfb-run -a (whose free-display choice
# races with another xvfb-run -a) runs beside no other one
pytestmark = pytest.mark.xdist_group("xvfb-run")
FFMPEG = shutil.which("ffmpeg")

# a registered box in pure magenta on a floor: nothing else in a MuJoCo picture has that colour
MAGENTA_SCENE = """<mujoco model="magenta_box">
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="box"/>
  </instance></plugin></extension>
  <visual><headlight ambient="0.6 0.6 0.6"/></visual>
  <worldbody>
    <light pos="0 0 2"/>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="box" pos="0 0 0.1">
      <freejoint/>
      <geom type="box" size="0.15 0.15 0.1" contype="0" conaffinity="0" rgba="1 0 1 1"/>
    </body>
  </worldbody>
</mujoco>
"""


def clean_env(**extra: str) -> dict:
    """The environment of a user's shell: none of the test suite's cusp or GL settings."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUSP_PLUGIN", "PYTHONPATH", "MUJOCO_GL", "PYOPENGL_PLATFORM", "DISPLAY")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> pathlib.Path:
    """A fresh venv outside the checkout with `pip install <checkout>`."""
    root = tmp_path_factory.mktemp("user")
    assert REPO not in root.parents
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, timeout=120)
    python = root / "venv" / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", str(REPO)],
                          capture_output=True, text=True, timeout=900, env=clean_env(), cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def user_python(venv: pathlib.Path, code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "venv" / "bin" / "python"), "-c", code], cwd=venv,
                          capture_output=True, text=True, timeout=300, env=clean_env(**env))


USER_SCRIPT = """
import json, pathlib
{imports}
path_at_import = cusp.registered_path()  # before any cusp call: registered by import mujoco
model = mujoco.MjModel.from_xml_path({scene!r})
data = mujoco.MjData(model)
mujoco.mj_step(model, data, 300)
c = cusp.contacts(model, data)
with mujoco.Renderer(model, 48, 64) as renderer:
    renderer.update_scene(data)
    image = renderer.render()
print(json.dumps(dict(path_at_import=path_at_import, load=cusp.load(), cusp=cusp.__file__,
                      kinds=c.kind.tolist(), force=c.force.tolist(),
                      mass=float(model.body("block").mass[0]), image_std=float(image.std()))))
"""


@pytest.mark.parametrize("imports", ["import mujoco, cusp", "import cusp, mujoco",
                                     "import mujoco\nimport cusp"])
def test_import_mujoco_registers_cusp_steps_and_reads_contacts(venv, imports):
    code = USER_SCRIPT.format(imports=imports, scene=str(REPO / "mjcf" / "push_slide.xml"))
    done = user_python(venv, code)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no warning of any kind
    out = json.loads(done.stdout)
    site = venv / "venv" / "lib"
    installed = pathlib.Path(out["path_at_import"])
    assert installed.name == "libcusp.so" and site in installed.parents
    assert out["load"] == out["path_at_import"]  # cusp.load(): a no-op, same library
    assert site in pathlib.Path(out["cusp"]).parents  # the installed package, not the checkout
    # the block rests on the floor (patch record, normal force = m g) and the tool pushes it
    assert 1 in out["kinds"]
    patch = out["kinds"].index(1)
    assert out["force"][patch][0] == pytest.approx(out["mass"] * 9.81, rel=1e-6)
    assert out["image_std"] > 5  # the headless renderer (EGL, no display) drew a scene


def test_library_in_mujocos_plugin_directory_is_used_not_registered_twice(venv):
    """The MuJoCo way of installing a plugin (the library in site-packages/mujoco/plugin/, loaded
    by import mujoco before any entry point): cusp finds and uses that copy; cusp.load() is a
    no-op instead of MuJoCo's "already registered" error."""
    site = next((venv / "venv" / "lib").glob("python3*/site-packages"))
    copy = site / "mujoco" / "plugin" / "libcusp.so"
    shutil.copy(site / "cusp" / "libcusp.so", copy)
    try:
        code = USER_SCRIPT.format(imports="import mujoco, cusp",
                                  scene=str(REPO / "mjcf" / "push_slide.xml"))
        done = user_python(venv, code)
    finally:
        copy.unlink()
    assert done.returncode == 0 and done.stderr == "", done.stderr
    out = json.loads(done.stdout)
    assert out["path_at_import"] == out["load"] == str(copy)
    assert 1 in out["kinds"]


def test_installed_library_needs_nothing_from_the_checkout(venv):
    lib = next((venv / "venv" / "lib").glob("python3*/site-packages/cusp/libcusp.so"))
    dynamic = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True,
                             check=True).stdout
    assert "$ORIGIN/../mujoco" in dynamic and str(REPO) not in dynamic
    ldd = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, check=True).stdout
    assert "not found" not in ldd and str(REPO) not in ldd
    mujoco_line = next(line for line in ldd.splitlines() if "libmujoco" in line)
    assert str(venv / "venv") in mujoco_line  # the venv's own mujoco wheel


def test_cusp_plugin_naming_a_missing_file_is_one_line_error(venv):
    missing = str(venv / "nothing" / "libcusp.so")
    done = user_python(venv, "import mujoco", CUSP_PLUGIN=missing)
    assert done.returncode == 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"CUSP_PLUGIN={missing} names no file" in lines[0], done.stderr
    # no fallback to the installed library: cusp scenes do not load, cusp.load() raises
    done = user_python(venv, "import mujoco, cusp\ntry:\n    cusp.load()\nexcept cusp.PluginError "
                       "as e:\n    print('raised', e)", CUSP_PLUGIN=missing)
    assert "raised CUSP_PLUGIN=" in done.stdout


def test_cusp_command_line_is_installed(venv, tmp_path):
    scene = REPO / "mjcf" / "disk_drop.xml"
    done = subprocess.run([str(venv / "venv" / "bin" / "cusp-sim"), str(scene), "--seconds",
                           "0.05"], capture_output=True, text=True, timeout=300, env=clean_env(),
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["mode"] == "cusp" and summary["steps"] == 50


OWN_LOOP = """
import csv, importlib.util, sys
import mujoco, numpy as np
spec = importlib.util.spec_from_file_location("finger_push", sys.argv[2])
control = importlib.util.module_from_spec(spec); spec.loader.exec_module(control)
model = mujoco.MjModel.from_xml_path(sys.argv[1]); data = mujoco.MjData(model)
adr = model.jnt_qposadr[model.body("box").jntadr[0]]
own = []
for _ in range(1000):
    control.push(model, data)
    mujoco.mj_step(model, data)
    own.append(data.qpos[adr:adr + 7].copy())
rows = list(csv.DictReader(open(sys.argv[3])))
pose = ("x", "y", "z", "qw", "qx", "qy", "qz")
cli = np.array([[float(r[f"box_{k}"]) for k in pose] for r in rows])
print("bitwise" if np.array_equal(cli, np.array(own)) else "differ", float(cli[-1, 0]))
"""


def test_installed_cusp_sim_control_equals_own_loop(venv, tmp_path):
    """The installed `cusp-sim --control MODULE:FUNCTION` and a hand-written loop in the same venv:
    bitwise the same box trajectory."""
    scene, control = REPO / "mjcf" / "finger_push.xml", REPO / "mjcf" / "finger_push.py"
    out = tmp_path / "run.csv"
    done = subprocess.run([str(venv / "venv" / "bin" / "cusp-sim"), str(scene), "--seconds", "1",
                           "--control", f"{control}:push", "--csv", str(out)], capture_output=True,
                          text=True, timeout=300, env=clean_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    check = subprocess.run([str(venv / "venv" / "bin" / "python"), "-c", OWN_LOOP, str(scene),
                            str(control), str(out)], capture_output=True, text=True, timeout=300,
                           env=clean_env(), cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    verdict, box_x = check.stdout.split()
    assert verdict == "bitwise" and float(box_x) > 0.03


@pytest.mark.skipif(not (XVFB and FFMPEG), reason="needs xvfb-run and ffmpeg (scripts/bootstrap)")
def test_mujoco_viewer_opens_a_cusp_scene_with_no_extra_step(venv, tmp_path):
    """`python -m mujoco.viewer --mjcf=SCENE` (MuJoCo's own viewer, nothing of cusp named): the
    process maps the installed libcusp.so and the screenshot shows the scene's magenta box (a
    failed load shows an empty scene and an error text instead)."""
    scene = tmp_path / "magenta_box.xml"
    scene.write_text(MAGENTA_SCENE)
    shot, maps = tmp_path / "viewer.png", tmp_path / "maps.txt"
    script = tmp_path / "viewer.sh"
    script.write_text(
        'set -u\n'
        f'"{venv}/venv/bin/python" -m mujoco.viewer --mjcf="{scene}" > "{tmp_path}/log" 2>&1 &\n'
        'pid=$!\n'
        'sleep 10\n'
        f'cp /proc/$pid/maps "{maps}"\n'
        f'ffmpeg -y -loglevel error -f x11grab -video_size 1280x1024 -i "$DISPLAY" -frames:v 1 '
        f'"{shot}"\n'
        'echo "grab=$?"\n'
        'kill $pid\n')
    done = subprocess.run([XVFB, "-a", "-s", "-screen 0 1280x1024x24", "bash", str(script)],
                          env=clean_env(), capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert "grab=0" in done.stdout, (done.stdout, done.stderr, (tmp_path / "log").read_text())
    assert f"{venv}/venv/lib/" in maps.read_text() and "cusp/libcusp.so" in maps.read_text()
    import matplotlib.image

    image = matplotlib.image.imread(shot)[..., :3]
    magenta = (image[..., 0] > 0.5) & (image[..., 2] > 0.5) & (image[..., 1] < 0.3)
    assert np.count_nonzero(magenta) > 2000, np.count_nonzero(magenta)


def test_mujoco_studio_loads_a_cusp_scene_with_no_extra_step(venv, tmp_path):
    """`mujoco-studio SCENE --gfx=web` (the 4.0 wheel's viewer; its native window needs Python >=
    3.12 for the Filament renderer, so the web viewer's server is what runs here): the simulation
    side compiles the cusp scene (a missing plugin is a traceback in its log) with the installed
    libcusp.so mapped."""
    scene = tmp_path / "magenta_box.xml"
    scene.write_text(MAGENTA_SCENE)
    log = tmp_path / "studio.log"
    with open(log, "w") as out:
        studio = subprocess.Popen([str(venv / "venv" / "bin" / "mujoco-studio"), str(scene),
                                   "--gfx=web", "--port=0"], stdout=out, stderr=subprocess.STDOUT,
                                  env=clean_env(), cwd=tmp_path)
    try:
        text = ""
        for _ in range(60):  # up to 30 s for the model to load
            time.sleep(0.5)
            text = log.read_text()
            if "Model changed" in text or "Traceback" in text or studio.poll() is not None:
                break
        maps = pathlib.Path(f"/proc/{studio.pid}/maps").read_text() if studio.poll() is None \
            else ""
    finally:
        studio.terminate()
        studio.wait(timeout=30)
    assert "Traceback" not in text and "Model changed" in text, text
    assert f"{venv}/venv/lib/" in maps and "cusp/libcusp.so" in maps


@pytest.mark.skipif(not (XVFB and FFMPEG), reason="needs xvfb-run and ffmpeg (scripts/bootstrap)")
def test_mujoco_studio_native_window_with_the_installed_cusp_panel(venv, tmp_path):
    """`mujoco-studio SCENE --plugins "$(python -m cusp studio --plugin-file)"` in the fresh venv
    (Python 3.11 here: the plugin file provides what Studio's Filament renderer needs of 3.12):
    the native window shows the installed package's markers and panel (test_studio.py's
    screenshot checks) and maps the installed libcusp.so."""
    from test_studio import BOX_XML, check_studio_screenshot, studio_screenshot_relaunched

    python = venv / "venv" / "bin" / "python"
    done = subprocess.run([str(python), "-m", "cusp", "studio", "--plugin-file"], text=True,
                          capture_output=True, timeout=120, env=clean_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plugin_file = pathlib.Path(done.stdout.strip())
    assert venv / "venv" / "lib" in plugin_file.parents and plugin_file.name == "studio.py"
    scene = tmp_path / "box.xml"
    scene.write_text(BOX_XML)
    image, workdir = studio_screenshot_relaunched(
        [str(venv / "venv" / "bin" / "mujoco-studio"), str(scene), "--gfx=opengl_software",
         f"--plugins={plugin_file}"], tmp_path, clean_env())
    check_studio_screenshot(image)
    assert "cusp/libcusp.so" in (workdir / "maps.txt").read_text()


def test_pyproject_pins_the_mujoco_of_mujoco_version():
    pinned = (REPO / "MUJOCO_VERSION").read_text().strip()
    text = (REPO / "pyproject.toml").read_text()
    pins = [part.split('"')[0] for part in text.split('"mujoco==')[1:]]
    assert pins == [pinned, pinned]  # build requirement and run-time dependency


def test_portable_wheel_ships_its_libraries_and_runs(venv, tmp_path):
    """scripts/wheel (pip wheel, then auditwheel repair): libcusp.so with libccd, LAPACK, BLAS and
    their Fortran runtime in cusp.libs/ (not libmujoco: the mujoco wheel brings it), the entry
    point and the pinned mujoco; installed over the venv's cusp, it runs with those copies.
    Last in this file: it replaces the venv's cusp."""
    done = subprocess.run(["bash", str(REPO / "scripts" / "wheel"), str(tmp_path)],
                          capture_output=True, text=True, timeout=900, env=clean_env())
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("cusp-*manylinux*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        entry_points = next(z.read(n).decode() for n in names if n.endswith("entry_points.txt"))
        metadata = next(z.read(n).decode() for n in names if n.endswith("METADATA"))
    assert {"cusp/libcusp.so", "cusp/__init__.py", "cusp/_plugin.py", "cusp/MUJOCO_VERSION"} <= set(
        names)
    vendored = [n.split("/")[1].split("-")[0] for n in names if n.startswith("cusp.libs/") and
                n != "cusp.libs/"]
    assert {"libccd", "liblapack", "libblas", "libgfortran"} <= set(vendored), vendored
    assert not any("mujoco" in n for n in vendored)
    assert "[mujoco.plugins]" in entry_points and "cusp._plugin:entry_point" in entry_points
    pinned = (REPO / "MUJOCO_VERSION").read_text().strip()
    assert f"Requires-Dist: mujoco=={pinned}" in metadata
    python = venv / "venv" / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps",
                           "--force-reinstall", str(wheel)], capture_output=True, text=True,
                          timeout=300, env=clean_env(), cwd=venv)
    assert done.returncode == 0, done.stderr
    lib = next((venv / "venv" / "lib").glob("python3*/site-packages/cusp/libcusp.so"))
    ldd = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, check=True).stdout
    ccd = next(line for line in ldd.splitlines() if "libccd" in line)
    assert "cusp.libs" in ccd and "not found" not in ldd
    code = USER_SCRIPT.format(imports="import mujoco, cusp",
                              scene=str(REPO / "mjcf" / "push_slide.xml"))
    run = user_python(venv, code)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert 1 in json.loads(run.stdout)["kinds"]
