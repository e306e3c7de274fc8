"""Benchmark of the planner on the seeds' task (CUSP V-C): the sphere turned by 90 deg about x, y
and z, N = 100, T = 4 s, mu = 0.6, d = 10, eps = 1e-7; each plan replayed in MuJoCo with cusp
and with the stock twin (open loop, with feedback, with re-planning every 0.4 s). Writes
<out>/<axis>/ (plan.npz, summary.json, plan.png; out defaults to bench/plan/results) and prints
one JSON line per axis.

    PYTHONPATH=python .venv/bin/python bench/plan/sphere_bench.py [--axes x,y,z]
        [--steps 100] [--max-seconds 100] [--terminal-weight 100] [--no-replay] [--out DIR]
"""
import argparse
import json
import os
import pathlib
import platform
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import cusp.plan  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--axes", default="x,y,z")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--max-seconds", type=float, default=100.0,
                    help="wall-time cap of each IPOPT run (s)")
    ap.add_argument("--terminal-weight", type=float, default=100.0,
                    help="weight of J_quat(q_N) (CUSP (20): 100)")
    ap.add_argument("--no-replay", action="store_true", help="plan only")
    ap.add_argument("--out", default=str(ROOT / "bench" / "plan" / "results"))
    args = ap.parse_args()
    machine = f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    for axis in args.axes.split(","):
        task = cusp.plan.SphereTask(axis=axis, steps=args.steps, max_seconds=args.max_seconds,
                                        terminal_weight=args.terminal_weight)
        start = time.perf_counter()
        summary = cusp.plan.plan_and_replay(task, pathlib.Path(args.out) / axis,
                                            progress=lambda t: print(t, file=sys.stderr),
                                            replays=not args.no_replay)
        summary["wall_seconds_with_replays"] = time.perf_counter() - start
        summary["machine"] = machine
        (pathlib.Path(args.out) / axis / "summary.json").write_text(
            json.dumps(summary, indent=2) + "\n")
        print(json.dumps({"axis": axis, "plan_seconds": summary["seconds_total"],
                          "stages": [{k: s[k] for k in ("name", "status", "iterations",
                                                        "seconds", "cost", "complementarity",
                                                        "constraint", "quat_error")}
                                     for s in summary["stages"]],
                          "replays": [{k: r[k] for k in ("mode", "control",
                                                         "final_angle_error_deg")}
                                      for r in summary["replays"]]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
