#!/usr/bin/env python3
"""Cost of cusp against stock MuJoCo on third-party task-suite scenes, per step, in one run: the
scripted picks of tests/python/test_fetch_scene.py (Gymnasium-Robotics' Fetch PickAndPlace) and
tests/python/test_metaworld_scene.py (Meta-World's sawyer pick-place), each with cusp and as its
stock twin, the same script. The CPU time of mj_step (time.process_time around each call) over the
whole pick, the least of `--repeat` runs; cusp's failed solves and largest published penetration.
Prints and writes bench/rigid/suites.md (+ suites.json).

    PYTHONPATH=python CUSP_PLUGIN=build/libcusp.so .venv/bin/python bench/rigid/suites.py
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "python"))
import test_fetch_scene as fetch  # noqa: E402
import test_metaworld_scene as metaworld  # noqa: E402


def fetch_case(integrator):
    def run(stock):
        r = fetch.pick.__wrapped__(integrator, stock)
        return r["cpu"], r["failures"], r["max_pen"]
    return f"Fetch PickAndPlace, {integrator}, 2 ms", run


def metaworld_case(integrator, timestep):
    def run(stock):
        r = metaworld.pick.__wrapped__(integrator, timestep, stock)
        return r["per_step"], None if stock else len(r["failures"]), None if stock else r["max_pen"]
    return f"Meta-World pick-place, {integrator}, {(timestep or 0.0025) * 1e3:g} ms", run


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "bench" / "rigid"))
    ap.add_argument("--repeat", type=int, default=2, help="runs of each case (the least counts)")
    args = ap.parse_args()
    cases = [fetch_case(i) for i in fetch.INTEGRATORS]
    cases += [metaworld_case(i, h) for i, h in metaworld.CASES]
    rows = []
    for name, run in cases:
        best = {}
        for _ in range(args.repeat):
            for stock in (False, True):
                cpu, fails, pen = run(stock)
                if stock not in best or cpu < best[stock][0]:
                    best[stock] = (cpu, fails, pen)
        c, s = best[False], best[True]
        row = dict(scene=name, cusp_us=1e6 * c[0], stock_us=1e6 * s[0], ratio=c[0] / s[0],
                   failed_solves=c[1], max_penetration=c[2])
        rows.append(row)
        print(f"{name}: cusp {row['cusp_us']:.1f} us, stock {row['stock_us']:.1f} us, "
              f"x{row['ratio']:.2f}, failed solves {c[1]}, max pen {c[2]:.1e} m", flush=True)
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "?"
    cpu_name = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                     if ln.startswith("model name")), platform.processor())
    import mujoco
    head = (f"Third-party task-suite scenes, cusp vs stock MuJoCo per mj_step (the whole scripted "
            f"pick, CPU time, least of {args.repeat} runs): {datetime.date.today()}, {cpu_name}, "
            f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, MuJoCo {mujoco.__version__}, "
            f"commit {commit}.")
    lines = [head, "", "| scene | cusp us/step | stock us/step | cusp/stock | failed solves | "
             "max pen. (m) |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['scene']} | {r['cusp_us']:.1f} | {r['stock_us']:.1f} | "
                     f"{r['ratio']:.2f} | {r['failed_solves']} | {r['max_penetration']:.1e} |")
    out = pathlib.Path(args.out)
    (out / "suites.md").write_text("\n".join(lines) + "\n")
    (out / "suites.json").write_text(json.dumps(dict(header=head, rows=rows), indent=1) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
