"""Markdown tables of bench/plan/results/<axis>/summary.json (for bench/RESULTS.md); another
results directory (sphere_bench.py --out) as the first argument."""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent / "results"


def main() -> int:
    root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    rows, reps = [], []
    for axis in ("x", "y", "z"):
        path = root / axis / "summary.json"
        if not path.is_file():
            rows.append(f"| {axis} | (not run) | | | | | | |")
            continue
        s = json.loads(path.read_text())
        for st in s["stages"]:
            rows.append(f"| {axis} | {st['name']} | {st['status']} | {st['iterations']} | "
                        f"{st['seconds']:.0f} | {st['cost']:.4g} | {st['complementarity']:.1e} | "
                        f"{st['constraint']:.1e} | {st['quat_error']:.1e} |")
        for r in s["replays"]:
            control = r.get("control", "feedback" if r["feedback"] else "open loop")
            replans = r.get("replans", [])
            if replans:
                control += (f" ({len(replans)}, " +
                            "/".join(f"{p['seconds']:.1f}" for p in replans) + " s)")
            reps.append(f"| {axis} | {r['mode']} | {control} "
                        f"| {r['final_angle_error_deg']:.2f} | {r['orientation_gap_deg']:.2f} | "
                        f"{1000 * r['length_gap_m']:.2f} | {r['normal_force_plan_mean_N']:.2f} | "
                        f"{r['normal_force_sim_mean_N']:.2f} | {r['normal_force_gap_N']:.2f} |")
    print("| axis | stage | IPOPT status | iterations | wall s | cost | max(a b) | "
          "constraint viol. | quat. error 1-(q.qt)^2 |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("| axis | simulator | control | final error to target (deg) | max orientation gap to "
          "plan (deg) | max chamber-length gap (mm) | plan mean normal force (N) | sim mean "
          "(N) | max force gap per interval (N) |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(reps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
