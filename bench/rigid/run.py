#!/usr/bin/env python3
"""Cost of rigid-contact islands against stock MuJoCo, per step, in one run: the grasp, stack and
pile scenes of tests/python/rigid_scenes.py and stacks of 1-64 equal boxes, each with cusp and as
its stock twin (MuJoCo's own contact on the same geoms), on the same machine one after the other.
Prints and writes bench/rigid/results.md (+ results.json): microseconds per mj_step, the ratio
cusp / stock, cusp's failed solves and largest published penetration. A step's time is the CPU
time of the stepping thread (time.thread_time: what the step costs, not how long other processes
held the core), the least of `--repeat` runs, cusp and stock taking turns.

    PYTHONPATH=python CUSP_PLUGIN=build/libcusp.so .venv/bin/python bench/rigid/run.py [--quick]
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

import mujoco
import numpy as np

import cusp

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "python"))
import rigid_scenes as rs  # noqa: E402


def jaw_ctrl(d, i, h):
    d.ctrl[1] = d.ctrl[2] = 5.0
    d.ctrl[0] = 0.0 if i * h < 0.3 else 0.05


def jaw_mocap_ctrl(d, i, h):
    d.ctrl[0] = d.ctrl[1] = 5.0
    d.mocap_pos[0, 2] = 0.02 + 0.05 * min(max((i * h - 0.3) / 0.3, 0.0), 1.0)


def key_ctrl(d, i, h):
    pass


def timed(xml, steps, stock, ctrl):
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(xml)
        path = f.name
    try:
        m = cusp.load_spec(path, stock=stock).compile()
    finally:
        os.unlink(path)
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    names = cusp.slot_names()
    pen = 0.0
    h = m.opt.timestep
    t = 0.0
    for i in range(steps):
        ctrl(d, i, h)
        t0 = time.thread_time()
        mujoco.mj_step(m, d)
        t += time.thread_time() - t0
        if not stock:
            pen = max(pen, d.plugin_state[names.index("max_penetration")])
    fails = None if stock else int(d.plugin_state[names.index("solver_failures")])
    return 1e6 * t / steps, fails, pen


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer steps and stack heights")
    ap.add_argument("--out", default=str(REPO / "bench" / "rigid"))
    ap.add_argument("--repeat", type=int, default=3, help="runs of each scene (the least counts)")
    args = ap.parse_args()
    steps = 200 if args.quick else 1000
    scenes = [(n, make(), key_ctrl) for n, make in rs.SCENE_FILES.items() if n != "grasp_jaw_lift.xml"]
    scenes.append(("grasp_jaw_lift.xml", rs.jaw_lift(), jaw_ctrl))
    scenes.append(("grasp_jaw_mocap", rs.jaw_mocap(), jaw_mocap_ctrl))
    scenes.append(("grasp_pinch2h", rs.pinch("sphere2h"), key_ctrl))
    for n in ([1, 4, 16, 64] if args.quick else [1, 2, 4, 8, 16, 32, 64]):
        scenes.append((f"stack_{n}", rs.stack(n, taper=False), key_ctrl))
    rows = []
    for name, xml, ctrl in scenes:
        c_us = s_us = float("inf")
        for _ in range(args.repeat):
            c, fails, pen = timed(xml, steps, False, ctrl)
            s, _, _ = timed(xml, steps, True, ctrl)
            c_us, s_us = min(c_us, c), min(s_us, s)
        rows.append(dict(scene=name, cusp_us=c_us, stock_us=s_us, ratio=c_us / s_us,
                         failures=fails, max_penetration_m=pen, steps=steps))
        print(f"{name:26s} cusp {c_us:9.1f} us  stock {s_us:8.1f} us  ratio {c_us / s_us:6.2f}  "
              f"failures {fails:4d}  max pen {pen:.1e} m", flush=True)
    cpu = "unknown"
    try:
        cpu = [l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")][0]
    except (OSError, IndexError):
        pass
    meta = dict(date=datetime.date.today().isoformat(), cpu=cpu, cores=os.cpu_count(),
                load=os.getloadavg()[0], mujoco=mujoco.__version__, python=platform.python_version(),
                commit=subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                      capture_output=True, text=True).stdout.strip())
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    lines = [f"Rigid islands, cusp vs stock MuJoCo per mj_step ({steps} steps each, CPU time of the "
             f"stepping thread, least of {args.repeat} runs): "
             f"{meta['date']}, {cpu}, {meta['cores']} cores, load {meta['load']:.1f}, "
             f"MuJoCo {meta['mujoco']}, commit {meta['commit']}.", "",
             "| scene | cusp us/step | stock us/step | cusp/stock | failed solves | max pen. (m) |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['scene']} | {r['cusp_us']:.1f} | {r['stock_us']:.1f} | {r['ratio']:.2f} "
                     f"| {r['failures']} | {r['max_penetration_m']:.1e} |")
    ratios = np.array([r["ratio"] for r in rows])
    lines += ["", f"Geometric mean cusp/stock {np.exp(np.log(ratios).mean()):.2f}; worst "
              f"{ratios.max():.2f} ({rows[int(ratios.argmax())]['scene']})."]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-1:]))


if __name__ == "__main__":
    main()
