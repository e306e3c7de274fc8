#!/usr/bin/env python3
"""Random piles against stock MuJoCo: tests/python/rigid_scenes.py's random_pile (the pile's ten
shapes dropped into the bin in a seeded random order and pose) under implicitfast at 2 ms, Euler at
1 ms and RK4 at 2 ms, each with cusp and as its stock twin, one after the other (CPU time of the
stepping thread, least of --repeat runs). Prints and writes bench/rigid/piles.md (+ piles.json):
us per step, cusp / stock, cusp's failed solves and largest published penetration, and the totals.

    PYTHONPATH=python CUSP_PLUGIN=build/libcusp.so .venv/bin/python bench/rigid/piles.py [--seeds N]
"""
import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys

import mujoco
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from run import REPO, key_ctrl, rs, timed  # noqa: E402

INTEGRATORS = [("implicitfast", 0.002), ("Euler", 0.001), ("RK4", 0.002)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=6, help="piles per integrator (seeds 0..N-1)")
    ap.add_argument("--seconds", type=float, default=1.5, help="simulated time per pile")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each pile (the least counts)")
    ap.add_argument("--out", default=str(REPO / "bench" / "rigid"))
    args = ap.parse_args()
    rows = []
    for seed in range(args.seeds):
        for integrator, h in INTEGRATORS:
            xml = rs.random_pile(seed, integrator, h)
            steps = int(round(args.seconds / h))
            c_us = s_us = float("inf")
            for _ in range(args.repeat):
                c, fails, pen = timed(xml, steps, False, key_ctrl)
                s, _, _ = timed(xml, steps, True, key_ctrl)
                c_us, s_us = min(c_us, c), min(s_us, s)
            rows.append(dict(seed=seed, integrator=integrator, h=h, steps=steps, cusp_us=c_us,
                             stock_us=s_us, ratio=c_us / s_us, failures=fails,
                             max_penetration_m=pen))
            print(f"seed {seed} {integrator:12s} h={h:g}  cusp {c_us:8.1f} us  stock {s_us:6.1f} us"
                  f"  ratio {c_us / s_us:6.2f}  failures {fails:4d}  max pen {pen:.1e} m",
                  flush=True)
    ratios = np.array([r["ratio"] for r in rows])
    steps = sum(r["steps"] for r in rows)
    fails = sum(r["failures"] for r in rows)
    total = sum(r["cusp_us"] * r["steps"] for r in rows) / sum(r["stock_us"] * r["steps"] for r in rows)
    meta = dict(date=datetime.date.today().isoformat(), load=os.getloadavg()[0],
                mujoco=mujoco.__version__,
                commit=subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                      capture_output=True, text=True).stdout.strip())
    lines = [f"Random piles, cusp vs stock MuJoCo per mj_step ({args.seconds:g} s each, CPU time, "
             f"least of {args.repeat}): {meta['date']}, load {meta['load']:.1f}, MuJoCo "
             f"{meta['mujoco']}, commit {meta['commit']}.", "",
             "| seed | integrator, h | cusp us/step | stock us/step | cusp/stock | failed solves "
             "| max pen. (m) |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['seed']} | {r['integrator']}, {r['h'] * 1e3:g} ms | {r['cusp_us']:.1f} "
                     f"| {r['stock_us']:.1f} | {r['ratio']:.2f} | {r['failures']} "
                     f"| {r['max_penetration_m']:.1e} |")
    lines += ["", f"Failed solves {fails} of {steps} steps ({100 * fails / steps:.2f} %); total "
              f"time cusp / stock {total:.1f}; geometric mean of the ratios "
              f"{np.exp(np.log(ratios).mean()):.2f}, worst {ratios.max():.1f}."]
    out = pathlib.Path(args.out)
    (out / "piles.json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    (out / "piles.md").write_text("\n".join(lines) + "\n")
    print(lines[-1])


if __name__ == "__main__":
    main()
