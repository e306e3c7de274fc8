"""cusp.plan: trajectory optimisation through contact on cusp's contact model ([CUSP] Sec. IV;
references in docs/references.md).

A plan is a direct transcription of the soft arm of a generated scene (the same PCC arm that
cusp-mjcf writes to MJCF, read from the compiled model: plan/arm.py) and a rigid object over N
steps, with states, inputs and contact forces as decision variables and contact by the
gap-force complementarity of [CUSP] eq. (19) under [Scholtes]' relaxation, solved by IPOPT through
CasADi (plan/mpcc.py). The task of [CUSP] Sec. V-C, turning a sphere held at a fixed centre, is
plan/sphere.py (two stages: kinematic, then dynamic); plan/playback.py runs a plan in MuJoCo with
cusp and with the stock twin; plan/toy.py holds small problems with known optima.

    import cusp.plan
    result = cusp.plan.plan(cusp.plan.SphereTask(axis="x"))     # stages in result.stages
    rep = cusp.plan.replay(result, feedback=True)                # cusp in MuJoCo
    summary = cusp.plan.plan_and_replay(cusp.plan.SphereTask(axis="z"), "results/plan_z")

Command line: ``python -m cusp plan --axis x --out results/plan_x`` (docs/planning.md).
"""
from __future__ import annotations

import json
import os
import pathlib

# IPOPT's linear solver (MUMPS) calls CasADi's bundled OpenBLAS, whose worker threads spin on
# KKT systems this small: on a shared 2-core machine one thread halves the wall time. Read when
# CasADi loads the library, i.e. only if cusp.plan is imported before casadi.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from cusp.plan.mpcc import SCHOLTES_EPS, PlanError, StageReport  # noqa: F401
from cusp.plan.sphere import Plan, SphereTask, plan  # noqa: F401


def replay(result, stock: bool = False, feedback: bool = False, timestep: float | None = None,
           replan_at=()):
    """cusp.plan.playback.replay (imported on use: it loads the cusp plugin)."""
    from cusp.plan import playback as _replay

    return _replay.replay(result, stock=stock, feedback=feedback, timestep=timestep,
                          replan_at=replan_at)


# period (s) of the re-planning replay: the rest of the plan is re-solved from the simulated
# state at every multiple of it before the horizon's end (the sphere task: 9 re-plans in 4 s;
# 5 at 0.4, 0.8, 1.2, 2, 3 s left up to 3 deg to the open-loop tail after 3 s)
REPLAN_PERIOD = 0.4


def replan_times(horizon: float, period: float = REPLAN_PERIOD) -> tuple:
    """The re-planning times (s) of a horizon: period, 2 period, ... before horizon."""
    return tuple(period * k for k in range(1, int(horizon / period + 1e-9) + 1)
                 if period * k < horizon - 1e-9)


def plan_and_replay(task: SphereTask, out: str | pathlib.Path, replays: bool = True,
                    progress=None, replan: bool = True) -> dict:
    """Plan the task, replay it (cusp and stock: open loop, with feedback on the chamber
    lengths, and with re-planning every REPLAN_PERIOD unless replan is False), write into out:
    plan.npz, summary.json and plan.png (plan dashed, simulations solid). Returns the summary:
    per stage its report, the plan's final quaternion error, per replay its final orientation
    error (deg) and its gaps to the plan."""
    from cusp import plots
    from cusp.plan import playback as _replay

    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = plan(task, progress=progress)
    result.save(out / "plan.npz")
    summary = {"task": {"axis": task.axis, "angle_deg": task.angle_deg, "steps": task.steps,
                        "horizon_s": task.horizon, "mu": task.mu, "directions": task.directions,
                        "eps": task.eps, "terminal_weight": task.terminal_weight},
               "stages": [vars(r) for r in result.stages],
               "plan_quat_error": result.quat_error,
               "plan_angle_error_deg": result.angle_error_deg,
               "seconds_total": sum(r.seconds for r in result.stages),
               "replays": []}
    runs = []
    if replays:
        schedule = replan_times(task.horizon)
        replan_at = schedule if replan and _replay.replan_intervals(
            schedule, result.h, len(result.u)) else ()
        controls = [(False, ()), (True, ())] + ([(False, replan_at)] if replan_at else [])
        for stock in (False, True):
            for feedback, times in controls:
                rep = _replay.replay(result, stock=stock, feedback=feedback, replan_at=times)
                runs.append(rep)
                entry = {"mode": rep.mode, "feedback": feedback, "control": rep.control,
                         "final_angle_error_deg": rep.final_angle_deg,
                         "final_quat_error": rep.final_quat_error,
                         "solver_failures": rep.solver_failures,
                         "replans": [vars(r) for r in rep.replans]}
                entry.update(_replay.agreement(result, rep))
                summary["replays"].append(entry)
                if progress:
                    progress(f"replay {rep.mode} {rep.control}: "
                             f"final orientation error {rep.final_angle_deg:.3f} deg")
        plots.plan_plot(result, runs, out / "plan.png")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
