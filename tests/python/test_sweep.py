"""python -m cusp sweep: the grid, and runs on a local Ray that give bench/ablation's
numbers for the same jobs (bench/ablation runs build/cusp-sim on a copy of the scene with the
integrator and time step substituted; the sweep sets them on the MjSpec in a Ray worker)."""
import importlib.machinery
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from cusp import sweep

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENES = [REPO / "mjcf" / "scenario_a_45_3.xml", REPO / "mjcf" / "scenario_a_60_3.xml"]


def ablation_module():
    loader = importlib.machinery.SourceFileLoader("ablation", str(REPO / "bench" / "ablation"))
    spec = importlib.util.spec_from_loader("ablation", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_grid_pairs_integrators_with_timesteps_and_crosses_the_rest():
    jobs = sweep.grid(SCENES, {"ruiz": ["true", "false"], "tikhonov": ["true", "false"]},
                      ["Euler", "implicitfast"], [1e-4, 1e-3], 0.1)
    assert len(jobs) == 2 * 4 * 2
    assert {(j.integrator, j.timestep) for j in jobs} == {("Euler", 1e-4), ("implicitfast", 1e-3)}
    assert len({(j.scene, j.overrides, j.integrator) for j in jobs}) == len(jobs)
    crossed = sweep.grid(SCENES[:1], {}, ["Euler", "implicitfast"], [1e-3], 0.1)
    assert [(j.integrator, j.timestep) for j in crossed] == [("Euler", 1e-3),
                                                            ("implicitfast", 1e-3)]


def test_sweep_on_local_ray_gives_bench_ablations_numbers():
    pytest.importorskip("ray")
    seconds = 0.05
    stages = {"rank_selection": ["true", "false"], "ruiz": ["true"], "tikhonov": ["false"]}
    jobs = sweep.grid(SCENES, stages, ["Euler", "implicitfast"], [1e-4, 1e-3], seconds)
    rows = sweep.run_grid(jobs, workers=2, progress=False)
    assert len({r["worker"] for r in rows}) >= 1
    ablation = ablation_module()
    with tempfile.TemporaryDirectory() as tmp:
        for k, (job, row) in enumerate(zip(jobs, rows)):
            angle = 45 if "45" in job.scene else 60
            integ = "euler_1e-4" if job.integrator == "Euler" else "implicitfast_1e-3"
            path = ablation.scene_variant(tmp, angle, 3, integ)
            on = frozenset(key for key, value in job.overrides if value == "true")
            bench = ablation.run((path, on, None, str(k)), seconds)
            assert bench["rc"] == 0
            assert row["solved"] == bench["solved"] and row["completion"] == bench["completion"]
            assert row["penetration_m"] == bench["pen"]  # both from the CSV's %.9g
            assert row["solver_failures"] == bench["failures"] and row["ok"] == bench["ok"]
            assert row["steps"] == round(seconds / job.timestep)


def test_sweep_command_line_errors_are_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    done = subprocess.run([sys.executable, "-m", "cusp", "sweep", str(SCENES[0]), "--set",
                           "ruiz", "--out", str(tmp_path)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--set: 'ruiz'" in lines[0], lines


def test_sweep_refuses_an_unknown_config_key_before_ray_starts(tmp_path):
    """One line on stderr, printed once, naming the key and every valid key; exit status 2; Ray
    never started (no session directory, nothing written to --out)."""
    import cusp

    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), RAY_TMPDIR=str(tmp_path / "ray"))
    done = subprocess.run([sys.executable, "-m", "cusp", "sweep", str(SCENES[0]), "--set",
                           "ruiz=true,false", "--set", "tikhonv=true,false", "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 2
    keys = ", ".join(cusp.config_keys())
    assert "tikhonov" in keys and "ruiz" in keys and "disks" in keys
    assert done.stderr == ("python -m cusp sweep: argument --set: cusp.contact: unknown config "
                           f"key 'tikhonv'; valid keys: {keys} (python -m cusp sweep --help for "
                           "usage)\n")
    assert done.stdout == ""
    assert not (tmp_path / "ray").exists() and not (tmp_path / "out").exists()


def test_sweep_help_is_complete_sentences():
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    done = subprocess.run([sys.executable, "-m", "cusp", "sweep", "--help"], capture_output=True,
                          text=True, env=env, timeout=120, check=True)
    text = " ".join(done.stdout.split())
    assert "and write the results to OUT/sweep.csv (one row per run) and OUT/sweep.png." in text
    assert text.rstrip().endswith("--out results/sweep")
    assert "time steps," not in text.split("positional arguments")[0][-20:]


def test_seed_batch_on_rollout_threads_matches_single_runs():
    """Seed 0 of a mujoco.rollout batch is the unperturbed scene: the same judgement as
    cusp.run's; the batch on 2 threads equals the batch on 1; perturbed seeds start elsewhere."""
    import cusp

    scene = REPO / "mjcf" / "push_slide.xml"
    (single,) = sweep.grid([scene], {}, [None], [None], 0.3)
    one = sweep.run_job(single)
    batch = [sweep.Job(**{**single.__dict__, "seeds": 3, "perturb": 0.002, "threads": t})
             for t in (1, 2)]
    rows1, rows2 = sweep.run_job(batch[0]), sweep.run_job(batch[1])
    drop = ("wall_s", "worker")
    assert [{k: v for k, v in r.items() if k not in drop} for r in rows1] == \
        [{k: v for k, v in r.items() if k not in drop} for r in rows2]
    seed0 = rows1[0]
    assert seed0["steps"] == one["steps"] == 300
    assert seed0["solved"] == one["solved"] and seed0["completion"] == one["completion"]
    assert seed0["solver_failures"] == one["solver_failures"]
    assert seed0["penetration_m"] == pytest.approx(one["penetration_m"], rel=1e-8, abs=1e-18)
    model = cusp.load_spec(scene).compile()
    states = sweep.initial_states(model, 3, 0.002)
    qpos = slice(1, 1 + model.nq)  # mjSTATE_FULLPHYSICS: time, then qpos
    block = model.jnt_qposadr[model.body("block").jntadr[0]]
    moved = states[1:, qpos][:, block:block + 3] - states[0, qpos][block:block + 3]
    assert np.all(np.abs(moved) > 0) and np.all(np.abs(moved) < 0.01)
    np.testing.assert_array_equal(states[1:, qpos][:, block + 3:], np.tile(
        states[0, qpos][block + 3:], (2, 1)))  # orientation and the tool untouched


def test_sweep_picture_shows_ok_runs_green_and_failures_red(tmp_path):
    import matplotlib.image

    jobs = sweep.grid(SCENES, {"ruiz": ["true"]}, [None], [1e-3], 0.1)
    rows = [dict(scene=j.scene, integrator="", timestep=1e-3, ruiz="true", solved=s,
                 penetration_m=p, ok=ok)
            for j, (s, p, ok) in zip(jobs, [(1.0, 1e-4, True), (0.5, 2e-2, False)])]
    image = matplotlib.image.imread(sweep.plot(rows, jobs, tmp_path / "s.png"))[..., :3]
    green = np.all(np.abs(image - np.array([44, 160, 44]) / 255) < 0.02, axis=-1)
    red = np.all(np.abs(image - np.array([214, 39, 40]) / 255) < 0.02, axis=-1)
    assert green.sum() > 500 and red.sum() > 500  # tab:green ok, tab:red not
