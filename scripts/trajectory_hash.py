"""Hash of every mjcf/ scene's trajectory: sha256 over qpos, qvel, act, ctrl, actuator_force and
plugin_state after each of N steps (default 2000), one line per run. Used to show that a change
which must not change results (a code move) leaves every trajectory bitwise identical: run before
and after, diff.

Besides the scenes as they load (`mjcf`), `--runs control` adds the controller runs of
tests/python/test_control_plugins.py (scripted targets, contact on and ignored, the sticking
modes, the held parcel with its shelf lowered), long enough that the controllers' contact rows are
in use, and `--runs cli` the cusp-sim loop (sim_loop.c) on a few scenes, cusp and stock: its CSV
and its JSON summary but the wall-clock fields.

    PYTHONPATH=python CUSP_PLUGIN=build/libcusp.so .venv/bin/python scripts/trajectory_hash.py
"""
import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import cusp  # noqa: F401  registers the plugin library
import mujoco

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MJCF = os.path.join(ROOT, "mjcf")
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
from scene_util import with_config  # noqa: E402  the tests' one config-key editor


def update(h, m, d):
    for field in (d.qpos, d.qvel, d.act, d.ctrl, d.actuator_force, d.plugin_state):
        h.update(field.tobytes())


def run_hash(m, steps, before_step=None):
    d = mujoco.MjData(m)
    h = hashlib.sha256()
    for i in range(steps):
        if before_step:
            before_step(m, d, i)
        mujoco.mj_step(m, d)
        update(h, m, d)
    return h.hexdigest()[:16]


def scene_hash(path, steps):
    return run_hash(mujoco.MjModel.from_xml_path(path), steps)


def with_keys(path, anchor, **config):
    """The scene's model with config keys replaced, or added before the key `anchor`."""
    with open(os.path.join(MJCF, path)) as f:
        return mujoco.MjModel.from_xml_string(with_config(f.read(), anchor, **config))


# ---- controller runs (the paths of tests/python/test_control_plugins.py) ---------------------

ARM7_PATH = np.array([[0.55, -0.2, 0.35], [0.55, 0.45, 0.35], [0.3, 0.45, 0.5],
                      [0.35, -0.35, 0.3], [0.6, -0.3, 0.1], [0.55, -0.2, 0.35]])


def arm7_target(m, d, i):
    t, leg = i * m.opt.timestep, 1.5
    k = min(int(t / leg), len(ARM7_PATH) - 2)
    s = min(t / leg - k, 1.0)
    d.mocap_pos[0] = ARM7_PATH[k] + (ARM7_PATH[k + 1] - ARM7_PATH[k]) * s


def push_target(m, d, i):
    way = np.array([[-0.3, 0, 0.025], [-0.07, 0, 0.025], [0.1, 0, 0.025]])
    t = i * m.opt.timestep
    s = min(t / 2.0, 1.0) if t < 2.0 else min((t - 2.0) / 3.0, 1.0)
    d.mocap_pos[0] = way[0] + (way[1] - way[0]) * s if t < 2.0 else way[1] + (way[2] - way[1]) * s


def lower_shelf(m, d, i):
    shelf = m.body("shelf").mocapid[0]
    if i == 0:
        lower_shelf.s0 = d.mocap_pos[shelf].copy()
    d.mocap_pos[shelf] = lower_shelf.s0 - [0, 0, 0.05 * max(0.0, d.time - 0.6)]


def control_runs():
    """(name, model, steps, before_step) of every controller run."""
    runs = [
        ("avoid_arm7 path", with_keys("avoid_arm7.xml", "tool"), 4000, arm7_target),
        ("avoid_arm7 path floor-only", with_keys("avoid_arm7.xml", "tool", obstacles="floor"),
         2000, arm7_target),
        ("avoid_push path", with_keys("avoid_push.xml", "tool"), 5500, push_target),
    ]
    for contact in ("cusp", "ignore"):
        runs.append((f"inverse_lean contact={contact}",
                     with_keys("inverse_lean.xml", "targets", contact=contact), 6000, None))
        runs.append((f"inverse_lean_loaded contact={contact}",
                     with_keys("inverse_lean_loaded.xml", "targets", contact=contact), 4000, None))
        runs.append((f"inverse_hold contact={contact} shelf lowered",
                     with_keys("inverse_hold.xml", "targets", contact=contact), 9000,
                     lower_shelf))
    for sticking in ("off", "all"):
        runs.append((f"inverse_lean sticking={sticking}",
                     with_keys("inverse_lean.xml", "targets", sticking=sticking), 6000, None))
    return runs


# ---- the cusp-sim loop -----------------------------------------------------------------------

CLI_SCENES = ["push_slide.xml", "disk_drop.xml", "grasp_pinch1.xml", "arm3_hanging.xml",
              "avoid_push.xml"]
WALL_FIELDS = ("wall_seconds", "us_per_step")


def cli_hash(scene, stock):
    tool = os.path.join(ROOT, "build", "cusp-sim")
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "run.csv")
        args = [tool, os.path.join(MJCF, scene), "--seconds", "0.5", "--csv", csv]
        out = subprocess.run(args + (["--stock"] if stock else []), capture_output=True,
                             text=True, check=True).stdout
        summary = json.loads(out.strip().splitlines()[-1])
        for key in WALL_FIELDS:
            summary.pop(key, None)
        h = hashlib.sha256(json.dumps(summary, sort_keys=True).encode())
        with open(csv, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def report(name, compute):
    try:
        print(name, compute(), flush=True)
    except Exception as e:  # a run that fails is reported, not skipped silently
        print(name, "ERROR", str(e).splitlines()[0] if str(e) else type(e).__name__, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--runs", default="mjcf", help="comma-separated: mjcf, control, cli")
    ap.add_argument("scenes", nargs="*")
    args = ap.parse_args()
    kinds = args.runs.split(",")
    if "mjcf" in kinds:
        scenes = args.scenes or sorted(glob.glob(os.path.join(MJCF, "*.xml")))
        for path in scenes:
            if path.endswith(".cusp.xml"):
                continue  # generator sources, not scenes
            report(os.path.basename(path), lambda: scene_hash(path, args.steps))
    if "control" in kinds:
        for name, m, steps, before in control_runs():
            report(f"{name} ({steps} steps)", lambda: run_hash(m, steps, before))
    if "cli" in kinds:
        for scene in CLI_SCENES:
            for stock in (0, 1):
                report(f"cusp-sim {scene}{' --stock' if stock else ''}",
                       lambda: cli_hash(scene, stock))
    return 0


if __name__ == "__main__":
    sys.exit(main())
