"""Foundation: the plugin loads from Python, bad config fails with key and value, the stock twin
is real, cusp-sim keeps its JSON/CSV contract."""
import json
import pathlib
import subprocess

import mujoco
import numpy as np
import pytest

import cusp

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENE = REPO / "mjcf" / "disk_drop.xml"
SIM = REPO / "build" / "cusp-sim"

CSV_COLUMNS = ["time", "kinetic_J", "potential_J", "max_penetration_m", "ncontact", "nstick",
               "nslide", "nbreak", "solver_iterations", "solver_status", "normal_force_N"]
JSON_FIELDS = ["scene", "mode", "steps", "sim_seconds", "wall_seconds", "us_per_step",
               "max_penetration_m", "contacts_max", "solver_failures", "energy_initial_J",
               "energy_final_J", "energy_max_increase_J", "diverged", "diverged_at_s"]


def test_pinned_version_is_the_one_running():
    assert mujoco.__version__ == cusp.pinned_mujoco_version()


def test_plugin_loads_and_registers():
    cusp.load()
    cusp.load()  # idempotent
    model = mujoco.MjModel.from_xml_path(str(SCENE))
    assert model.nplugin == 1
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, 5)
    assert cusp.state(model, data)["steps"] == 5


@pytest.mark.parametrize("key,value,expect", [
    ("margin", "abc", "not a number"),
    ("margin", "-1", "out of range"),
    ("solver", "magic", "expected one of"),
    ("disks", "disk_a nothing", "no geom named 'nothing'"),
])
def test_bad_config_names_key_and_value(key, value, expect):
    cusp.load()
    spec = cusp.load_spec(SCENE, **{key: value})
    with pytest.raises(ValueError) as err:
        spec.compile()
    text = str(err.value)
    assert f"'{key}'" in text and f"'{value}'" in text and expect in text


def test_unknown_key_fails_naming_it():
    cusp.load()
    # an override: refused by load_spec, naming the key and every valid one
    with pytest.raises(ValueError, match="not_a_key") as err:
        cusp.load_spec(SCENE, not_a_key="7")
    assert str(err.value) == ("cusp.contact: unknown config key 'not_a_key'; valid keys: "
                              + ", ".join(cusp.config_keys()))
    # written in the MJCF: MuJoCo's compiler refuses it naming the key; compile_spec adds the list
    spec = mujoco.MjSpec.from_file(str(SCENE))
    (instance,) = [p for p in spec.plugins if p.plugin_name == cusp.PLUGIN_NAME]
    instance.config = dict(instance.config, not_a_key="7")
    with pytest.raises(ValueError, match="not_a_key") as err:
        spec.compile()
    with pytest.raises(cusp.SceneError) as err:
        cusp.compile_spec(spec, SCENE)
    assert "not_a_key" in str(err.value) and str(err.value).endswith(", ".join(cusp.config_keys()))
    assert "\n" not in str(err.value)


def test_config_keys_are_the_documented_ones():
    """cusp.config_keys() (read from MuJoCo's plugin table) = the keys of mjcf/README.md's table."""
    text = (REPO / "mjcf" / "README.md").read_text()
    table = text[text.index("| key | type | unit | default | range | meaning |"):]
    table = table[:table.index("\n\n")]
    documented = [row.split("`")[1] for row in table.splitlines()[2:]]
    assert list(cusp.config_keys()) == documented


def test_stock_twin_in_python():
    cusp.load()
    spec = cusp.stock_twin(mujoco.MjSpec.from_file(str(SCENE)))
    model = spec.compile()
    assert model.nplugin == 0
    for name in ("disk_a", "disk_b"):
        g = model.geom(name)
        assert g.contype[0] == 1 and g.conaffinity[0] == 1
    assert model.geom("rod").contype[0] == 0


def run_sim(*args):
    done = subprocess.run([str(SIM), *map(str, args)], capture_output=True, text=True)
    return done


def test_cusp_sim_json_and_csv(tmp_path):
    csv_path = tmp_path / "out.csv"
    done = run_sim(SCENE, "--seconds", "0.05", "--csv", csv_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    for field in JSON_FIELDS:
        assert field in summary
    assert summary["mode"] == "cusp" and summary["steps"] == 50
    header = csv_path.read_text().splitlines()[0].split(",")
    free = [f"carrier_{s}" for s in ("x", "y", "z", "qw", "qx", "qy", "qz")]
    assert header == CSV_COLUMNS + free
    data = np.loadtxt(csv_path, delimiter=",", skiprows=1)
    assert data.shape == (50, len(header))
    np.testing.assert_allclose(data[:, 0], 0.001 * np.arange(1, 51), atol=1e-12)
    # energy columns are real: free fall converts potential into kinetic energy
    total = data[:, 1] + data[:, 2]
    assert data[-1, 1] > data[0, 1]
    assert np.isclose(total[-1], summary["energy_final_J"])


def test_cusp_sim_stock_mode_collides(tmp_path):
    done = run_sim(SCENE, "--seconds", "1", "--stock")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["mode"] == "stock"
    assert summary["contacts_max"] >= 2
    assert summary["max_penetration_m"] > 0


def test_cusp_sim_timestep_and_set(tmp_path):
    done = run_sim(SCENE, "--seconds", "0.01", "--timestep", "0.0005", "--set", "margin=0.02",
                   "--solver", "lemke")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1])["steps"] == 20
    bad = run_sim(SCENE, "--seconds", "0.01", "--set", "margin=huge")
    assert bad.returncode != 0 and "'margin'" in bad.stderr and "'huge'" in bad.stderr


def test_cusp_sim_reports_divergence():
    # scenario A at h = 0.05 s (500 x its own step) blows up within a few steps: MuJoCo resets the
    # data (bad qacc) and would go on from t = 0; cusp-sim stops there and reports the failure,
    # its sim_seconds being the time the failing step started, not the time after the reset
    scene = REPO / "mjcf" / "scenario_a_45_3.xml"
    done = run_sim(scene, "--seconds", "2", "--timestep", "0.05")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["diverged"] is True
    assert 0 < summary["diverged_at_s"] < 2
    assert summary["sim_seconds"] == summary["diverged_at_s"]
    assert summary["steps"] == round(summary["diverged_at_s"] / 0.05)
    ok = json.loads(run_sim(SCENE, "--seconds", "0.01").stdout.strip().splitlines()[-1])
    assert ok["diverged"] is False and ok["diverged_at_s"] is None


@pytest.mark.parametrize("args,named", [
    ([], "no scene given"), (["--seconds"], "--seconds needs a value"),
    (["--seconds", "-1", "x.xml"], "--seconds '-1'"), (["x.xml", "--seconds", "abc"], "'abc'"),
    (["x.xml", "--wat"], "'--wat'"), (["x.xml", "--set", "novalue"], "--set 'novalue'"),
    (["x.xml", "--control", "m:f"], "python -m cusp run")])
def test_cusp_sim_wrong_arguments_name_argument_and_value(args, named):
    """One line naming the argument and its value (and where the usage is), exit status 2."""
    done = run_sim(*args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cusp-sim: ") and named in lines[0], lines
    assert "--help" in lines[0]
    usage = run_sim("--help")
    assert usage.returncode == 0 and "usage: cusp-sim" in usage.stdout


def test_cusp_sim_missing_scene_is_one_line(tmp_path):
    done = run_sim(tmp_path / "nothing.xml")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"cusp-sim: cannot open scene "
                                                f"'{tmp_path / 'nothing.xml'}'"]


def test_python_run_matches_cusp_sim():
    summary, series = cusp.run(SCENE, seconds=0.02)
    assert summary["steps"] == 20
    assert set(CSV_COLUMNS) <= set(series)
    assert len(series["time"]) == 20


def test_load_spec_of_an_mjspec_keeps_every_plugin_instance():
    """An MjSpec with a controller beside cusp.contact (mjcf/inverse_lean.xml): load_spec's copy
    keeps both instances (MuJoCo 4.0's spec.copy() keeps only the first, and the controller then
    refused the model for want of its contact instance); the copy steps as the file does, bitwise."""
    cusp.load()
    path = REPO / "mjcf" / "inverse_lean.xml"
    spec = mujoco.MjSpec.from_file(str(path))
    assert [p.plugin_name for p in spec.plugins] == ["cusp.inverse", cusp.PLUGIN_NAME]
    copied = cusp.load_spec(spec).compile()
    direct = mujoco.MjModel.from_xml_path(str(path))
    assert list(copied.plugin) == list(direct.plugin)
    assert len(spec.plugins) == 2  # the caller's spec is left as it was
    a, b = mujoco.MjData(copied), mujoco.MjData(direct)
    for _ in range(300):
        mujoco.mj_step(copied, a)
        mujoco.mj_step(direct, b)
    assert np.array_equal(a.qpos, b.qpos)
