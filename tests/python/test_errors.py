"""Every entry point says a refusal in one line, once: the cusp line (key, value, reason, fix)
without MuJoCo's "plugin->init failed" and without the copy MuJoCo 4.0.0 appends to a failed
compile's error; failed contact solves are summarised once per run (cusp-sim, python -m cusp run,
cusp.run) or, for an MjData nobody ran that way, once when it is freed; a pickled cusp model or
data loads in a process that has not imported cusp, or says why it cannot."""
import os
import pathlib
import pickle
import re
import subprocess
import sys
import warnings

import mujoco
import pytest

import cusp

REPO = pathlib.Path(__file__).resolve().parents[2]
SIM = REPO / "build" / "cusp-sim"
SCENE = "mjcf/push_slide.xml"
BAD_FRICTION = ("cusp.contact: config key 'friction' has value '-3': out of range [-1, 100]; "
                "write a value within it")
# every solve fails: one iteration (five Newton steps on a small rigid island) from a cold start
# towards a tolerance no backend meets in so few, no fallback, no finish
FAILING = ["--set", "max_iterations=1", "--set", "tolerance=1e-16", "--set", "fallback=false",
           "--set", "warm_start=false", "--set", "finish=false"]
FAILING_KW = dict(max_iterations=1, tolerance=1e-16, fallback="false", warm_start="false",
                  finish="false")
ENV = dict(os.environ, PYTHONPATH=str(REPO / "python"))


def run(*args, env=ENV, cwd=REPO):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def bad_scene(tmp_path, key, value):
    """push_slide.xml with config key = value (set, or added)."""
    xml = (REPO / SCENE).read_text()
    if f'key="{key}"' in xml:
        xml = re.sub(f'key="{key}" value="[^"]*"', f'key="{key}" value="{value}"', xml)
    else:
        xml = xml.replace('<config key="bodies"', f'<config key="{key}" value="{value}"/>'
                          '<config key="bodies"', 1)
    path = tmp_path / "bad.xml"
    path.write_text(xml)
    return path


# ---- refusals -----------------------------------------------------------------------------------

def test_cusp_sim_refusal_is_the_cusp_line_once():
    done = run(SIM, SCENE, "--seconds", "0.01", "--set", "friction=-3")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"cusp-sim: {SCENE}: {BAD_FRICTION}\n"


def test_python_run_command_refusal_is_the_cusp_line_once():
    done = run(sys.executable, "-m", "cusp", "run", SCENE, "--seconds", "0.01", "--set",
               "friction=-3")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"python -m cusp run: {SCENE}: {BAD_FRICTION}\n"


def test_python_api_raises_the_cusp_line_once(tmp_path):
    with pytest.raises(cusp.SceneError) as err:
        cusp.run(REPO / SCENE, 0.01, friction=-3)
    assert str(err.value) == f"{REPO / SCENE}: {BAD_FRICTION}"
    # the same refusal written in the scene
    path = bad_scene(tmp_path, "friction", "-3")
    with pytest.raises(cusp.SceneError) as err:
        cusp.compile_spec(cusp.load_spec(path), path)
    assert str(err.value) == f"{path}: {BAD_FRICTION}"
    # MuJoCo's own error, for comparison: its generic line, then the cusp line twice
    with pytest.raises(ValueError) as raw:
        mujoco.MjModel.from_xml_path(str(path))
    assert "plugin->init failed" in str(raw.value) and str(raw.value).count(BAD_FRICTION) == 2


def test_undeclared_key_is_named_once_with_the_valid_keys(tmp_path):
    path = bad_scene(tmp_path, "frictoin", "0.5")
    keys = ", ".join(cusp.config_keys())
    done = run(SIM, path, "--seconds", "0.01")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].count("unrecognized attribute 'plugin:frictoin'") == 1
    assert lines[0].endswith(f"; valid cusp.contact config keys: {keys}")
    with pytest.raises(cusp.SceneError) as err:
        cusp.run(path, 0.01)
    assert str(err.value) == lines[0][len("cusp-sim: "):]


def test_unknown_override_key_names_the_valid_keys():
    keys = ", ".join(cusp.config_keys())
    done = run(SIM, SCENE, "--set", "frictoin=0.5")
    assert done.returncode == 2
    assert done.stderr == f"cusp-sim: cusp.contact: unknown config key 'frictoin'; valid keys: {keys}\n"


def test_sweep_refuses_a_bad_value_before_ray_starts(tmp_path):
    env = dict(ENV, RAY_TMPDIR=str(tmp_path / "ray"))
    done = run(sys.executable, "-m", "cusp", "sweep", SCENE, "--set", "friction=0.3,-3",
               "--out", tmp_path / "out", env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"python -m cusp sweep: push_slide.xml: {BAD_FRICTION} (python -m cusp "
                           "sweep --help for usage)\n")
    assert not (tmp_path / "ray").exists() and not (tmp_path / "out").exists()


# ---- failed solves: summarised once -------------------------------------------------------------

SUMMARY_HEAD = "cusp.contact: 300 failed contact solves in 300 steps (solver_failures); the first"


def test_cusp_sim_summarises_failed_solves_once(tmp_path):
    done = run(SIM, REPO / SCENE, "--seconds", "0.3", *FAILING, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("cusp-sim: warning: cusp.contact: contact solve failed at t = ")
    assert lines[1] == (f"cusp-sim: {SUMMARY_HEAD} at t = 0.001 s (max_iter), the worst "
                        "max_iter")
    assert '"first_failure_status": "max_iter"' in done.stdout
    assert list(tmp_path.iterdir()) == []  # no MUJOCO_LOG.TXT in the working directory


def test_python_run_command_summarises_failed_solves_once():
    done = run(sys.executable, "-m", "cusp", "run", SCENE, "--seconds", "0.3", *FAILING)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("python -m cusp run: warning: cusp.contact: contact solve failed")
    assert lines[1].startswith(f"python -m cusp run: {SUMMARY_HEAD}")


def test_python_api_warns_the_summary_once():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        summary, _ = cusp.run(REPO / SCENE, 0.3, **FAILING_KW)
    solve = [w for w in seen if issubclass(w.category, cusp.SolveWarning)]
    assert len(solve) == 1 and str(solve[0].message).startswith(SUMMARY_HEAD)
    assert summary["solver_failures"] == 300 and summary["first_failure_s"] == pytest.approx(1e-3)
    assert summary["first_failure_status"] == summary["worst_failure_status"] == "max_iter"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        summary, _ = cusp.run(REPO / SCENE, 0.3)
    assert summary["solver_failures"] == 0 and summary["worst_failure_status"] is None
    assert not [w for w in seen if issubclass(w.category, cusp.SolveWarning)]


def test_freed_data_warns_the_summary_once(tmp_path):
    """Plain MuJoCo: the first failure warns when it happens, the summary when the MjData is
    freed; each once (MuJoCo's default handler prints a warning as "WARNING: ..." on stderr)."""
    script = ("import cusp, mujoco\n"
              f"spec = cusp.load_spec({str(REPO / SCENE)!r}, max_iterations=1, tolerance=1e-16, "
              "fallback='false', warm_start='false', finish='false')\n"
              "m = spec.compile()\nd = mujoco.MjData(m)\nmujoco.mj_step(m, d, 300)\n"
              "del d\nprint('freed', flush=True)\n")
    done = run(sys.executable, "-c", script, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("contact solve failed at t = ") == 1
    assert done.stderr.count("failed contact solves") == 1
    assert f"WARNING: {SUMMARY_HEAD} at t = 0.001 s (max_iter), the worst max_iter (summary at " \
           "mj_deleteData)" in done.stderr


# ---- pickles ------------------------------------------------------------------------------------

LOAD = ("import pickle, sys, mujoco\n"
        "m, d = pickle.load(open(sys.argv[1], 'rb'))\n"
        "mujoco.mj_step(m, d, 10)\n"
        "print(round(d.time, 6), flush=True)\n")


def test_pickled_model_and_data_load_where_cusp_was_not_imported(tmp_path):
    m = mujoco.MjModel.from_xml_path(str(REPO / SCENE))
    d = mujoco.MjData(m)
    mujoco.mj_step(m, d, 5)
    path = tmp_path / "scene.pkl"
    path.write_bytes(pickle.dumps((m, d)))
    done = run(sys.executable, "-c", LOAD, path)  # imports mujoco only: unpickling loads cusp
    assert done.returncode == 0, done.stderr
    assert done.stdout == "0.015\n"
    # where libcusp.so cannot be found: one line saying so, no crash
    done = run(sys.executable, "-c", LOAD, path, env=dict(ENV, CUSP_PLUGIN=str(tmp_path / "no.so")))
    assert done.returncode == 1 and done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert last == ("cusp._plugin.PluginError: this pickled mujoco.MjModel uses cusp's plugins, "
                    f"which do not load here: CUSP_PLUGIN={tmp_path / 'no.so'} names no file; "
                    "point it at a built libcusp.so or unset it to use the installed one")


def test_a_model_without_cusp_pickles_as_mujoco_does():
    m = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><geom type='sphere' size='0.1'/></worldbody></mujoco>")
    data = pickle.dumps((m, mujoco.MjData(m)))
    assert b"cusp" not in data
    m2, d2 = pickle.loads(data)
    assert m2.ngeom == 1 and d2.time == 0
