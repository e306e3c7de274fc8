"""Hash of every mjcf/ scene's trajectory: sha256 over qpos, qvel and plugin_state after each of
N steps (default 2000), one line per scene. Used to show that a change which must not change
results (a code move) leaves every trajectory bitwise identical: run before and after, diff.

    PYTHONPATH=python CUSP_PLUGIN=build/libcusp.so .venv/bin/python scripts/trajectory_hash.py
"""
import argparse
import glob
import hashlib
import os
import sys

import cusp  # noqa: F401  registers the plugin library
import mujoco


def scene_hash(path, steps):
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    h = hashlib.sha256()
    for _ in range(steps):
        mujoco.mj_step(m, d)
        h.update(d.qpos.tobytes())
        h.update(d.qvel.tobytes())
        h.update(d.plugin_state.tobytes())
    return h.hexdigest()[:16]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("scenes", nargs="*")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    scenes = args.scenes or sorted(glob.glob(os.path.join(root, "mjcf", "*.xml")))
    for path in scenes:
        if path.endswith(".cusp.xml"):
            continue  # generator sources, not scenes
        try:
            print(os.path.basename(path), scene_hash(path, args.steps), flush=True)
        except Exception as e:  # a scene that does not load is reported, not skipped silently
            print(os.path.basename(path), "ERROR", str(e).splitlines()[0], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
