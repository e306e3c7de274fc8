"""Contact-space reduction bench: error of the distal disk against the full model and speed-up of
the contact solve as the basis grows (Goury et al.'s error-vs-k study), on the curl scene and on
CUSP scenario A (many disks on the incline).

For each case: a snapshot of normal impulses from the case's scripted runs (python -m cusp
reduction snapshot), the full model's run (distal disk trajectory, wall time of the disk islands'
solves from cusp_contacts_solve_seconds), then per basis size k an NNMF basis and the reduced run:
the largest distance of the distal disk from the full run over the run, islands solved in the
basis, fallbacks, solve time and its ratio to the full model's.

    CUSP_PLUGIN=build/libcusp.so PYTHONPATH=python .venv/bin/python bench/reduction/run.py \
        [--quick] [--json bench/reduction/results.json]
"""
from __future__ import annotations

import argparse
import ctypes
import json
import pathlib
import platform
import sys
import tempfile
import time

import mujoco
import numpy as np

import cusp
from cusp import mjcf_gen, reduction
from cusp.state import state as cusp_state

REPO = pathlib.Path(__file__).resolve().parents[2]


def _solve_seconds(model, data) -> float:
    lib = cusp._library()
    lib.cusp_contacts_solve_seconds.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    lib.cusp_contacts_solve_seconds.restype = ctypes.c_double
    return lib.cusp_contacts_solve_seconds(model._address, data._address, 0)


def run(scene, seconds, **overrides) -> dict:
    model = cusp.compile_spec(cusp.load_spec(scene, **overrides), scene)
    data = mujoco.MjData(model)
    tip = mjcf_gen.pcc_layout(model, "arm")[-1]["disks"][-1]
    n = int(round(seconds / model.opt.timestep))
    traj, contacts, reduced = np.zeros((n, 3)), 0, 0
    t0 = time.perf_counter()
    for k in range(n):
        mujoco.mj_step(model, data)
        traj[k] = data.geom_xpos[tip]
        st = cusp_state(model, data)
        contacts += st["ncontact"]
        reduced += st["reduced_islands"]
    wall = time.perf_counter() - t0
    st = cusp_state(model, data)
    return {"traj": traj, "wall": wall, "solve": _solve_seconds(model, data),
            "mean_contacts": contacts / n, "reduced": reduced,
            "fallbacks": st["reduction_fallbacks"], "failures": st["solver_failures"]}


def case(name, snapshot_scenes, target, seconds, modes, every, workdir) -> dict:
    X, pairs = reduction.snapshot(snapshot_scenes, seconds, every)
    snap = workdir / f"{name}.npz"
    reduction.save_snapshot(snap, X, pairs)
    full = run(target, seconds)
    rows = []
    for k in modes:
        if k > min(X.shape):
            break
        B, _ = reduction.nnmf(X, k)
        basis = workdir / f"{name}_k{k}.txt"
        reduction.save_basis(basis, B, pairs)
        red = run(target, seconds, reduction_basis=str(basis))
        err = np.linalg.norm(red["traj"] - full["traj"], axis=1)
        rows.append({"k": k, "fit_error_median": float(np.median(reduction.relative_error(B, X))),
                     "tip_error_max_mm": float(err.max() * 1e3),
                     "tip_error_final_mm": float(err[-1] * 1e3),
                     "reduced_islands": int(red["reduced"]), "fallbacks": int(red["fallbacks"]),
                     "solve_s": red["solve"], "speedup": full["solve"] / max(red["solve"], 1e-12),
                     "wall_s": red["wall"], "failures": int(red["failures"])})
        print(f"  {name} k={k}: tip {rows[-1]['tip_error_max_mm']:.3f} mm, solve "
              f"{red['solve']:.3f} s ({rows[-1]['speedup']:.1f}x), fallbacks {red['fallbacks']:.0f}",
              flush=True)
    return {"case": name, "pairs": len(pairs), "snapshots": int(X.shape[1]),
            "full_solve_s": full["solve"], "full_wall_s": full["wall"],
            "mean_contacts": full["mean_contacts"], "full_failures": int(full["failures"]),
            "rows": rows}


def dense_scenario_a(workdir: pathlib.Path, disks: int) -> list[pathlib.Path]:
    """Scenario A (45 and 60 deg) with `disks` interior disks per section: more disks touch."""
    out = []
    for angle in (45, 60):
        src = (REPO / "mjcf" / f"scenario_a_{angle}_6.cusp.xml").read_text()
        text = mjcf_gen.expand_string(src.replace('disks="6"', f'disks="{disks}"'))
        path = workdir / f"scenario_a_{angle}_{disks}.xml"
        path.write_text(text)
        out.append(path)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the curl case only")
    ap.add_argument("--json", default=str(REPO / "bench" / "reduction" / "results.json"))
    args = ap.parse_args()
    results = {"machine": f"{platform.processor() or platform.machine()}, "
                          f"{__import__('os').cpu_count()} CPUs",
               "cases": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        curl = REPO / "mjcf" / "arm_curl.xml"
        results["cases"].append(case("arm_curl", [curl], curl, 2.0, [1, 2, 3, 4, 6, 8], 10, work))
        if not args.quick:
            a6 = [REPO / "mjcf" / "scenario_a_45_6.xml", REPO / "mjcf" / "scenario_a_60_6.xml"]
            results["cases"].append(case("scenario_a_60_6", a6, a6[1], 2.0,
                                         [1, 2, 4, 6, 8, 10, 13], 10, work))
            a12 = dense_scenario_a(work, 12)
            results["cases"].append(case("scenario_a_60_12", a12, a12[1], 2.0,
                                         [2, 4, 8, 12, 16, 20, 25], 10, work))
    pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    for c in results["cases"]:
        print(f"\n{c['case']}: {c['pairs']} pairs x {c['snapshots']} snapshots; full model: "
              f"{c['mean_contacts']:.1f} contacts per step, solve {c['full_solve_s']:.3f} s, "
              f"wall {c['full_wall_s']:.1f} s, failed solves {c['full_failures']}")
        print("| k | fit error (median) | distal disk max / final (mm) | islands in basis | "
              "fallbacks | solve (s) | speed-up | failed |")
        print("|---|---|---|---|---|---|---|---|")
        for r in c["rows"]:
            print(f"| {r['k']} | {r['fit_error_median']:.2g} | {r['tip_error_max_mm']:.2f} / "
                  f"{r['tip_error_final_mm']:.2f} | {r['reduced_islands']} | {r['fallbacks']} | "
                  f"{r['solve_s']:.3f} | {r['speedup']:.1f}x | {r['failures']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
