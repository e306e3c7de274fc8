"""Shrinking-horizon re-planning: the feedback that closes the loop on the task.

A plan replayed open loop (or with feedback on the arm's chamber lengths alone) is at the mercy
of how the simulated contact differs from the planned one: the sphere's orientation drifts and
nothing in the replay sees it. Here, at chosen interval boundaries k0, the simulated state (arm
chamber lengths and rates, sphere orientation and angular velocity) becomes state 0 of the
dynamic MPCC over the remaining intervals k0..N-1 (same step h, same cost terms: the tail of
[CUSP] eq. (20)), warm-started from the current plan's tail; its inputs replace the plan's from k0
on.
The interval function and its compiled derivatives do not depend on the number of intervals,
so a re-plan reuses the scene's compiled code.
"""
from __future__ import annotations

import dataclasses
import time

import mujoco
import numpy as np

from cusp.plan import stages
from cusp.plan.sphere import Plan, SphereModel, _gaps, dynamic_stage

# relaxations before the task's eps: the tail starts near a solution at eps, off only where the
# simulation left the plan
REPLAN_HOMOTOPY = ((1e-5, 1e-5),)


def simulated_state(arm, model: mujoco.MjModel, data: mujoco.MjData, sphere_joint: int,
                    q_near: np.ndarray) -> np.ndarray:
    """The planner's state (l, v, q, w) of a simulation: chamber tendon lengths and rates
    (data.ten_length / ten_velocity up to date), the ball joint's quaternion (sign chosen
    nearest q_near) and its angular velocity in world axes (MuJoCo's ball-joint qvel is in the
    body's own axes)."""
    l, v = arm.lengths_from(data)
    qadr, dadr = model.jnt_qposadr[sphere_joint], model.jnt_dofadr[sphere_joint]
    q = data.qpos[qadr:qadr + 4].copy()
    if q @ q_near < 0:
        q = -q
    w = np.zeros(3)
    mujoco.mju_rotVecQuat(w, data.qvel[dadr:dadr + 3], data.qpos[qadr:qadr + 4])
    return np.concatenate([l, v, q, w])


def replan(plan: Plan, k0: int, state: np.ndarray) -> tuple[Plan, object]:
    """The plan with intervals k0..N-1 re-solved from state at t = k0 h. Returns (the spliced
    plan over the whole horizon, the re-plan's StageReport). The spliced plan keeps the old
    intervals before k0; a failed re-plan keeps the old plan (the report says it failed)."""
    N = len(plan.u)
    rest = N - k0
    if rest < 2:
        raise ValueError(f"replan at interval {k0} of {N}: needs two intervals left")
    task = dataclasses.replace(plan.task, steps=rest, horizon=rest * plan.h)
    sm = SphereModel(task)
    stage = stages.Stage(sm, kinematic=False, compile=task.compile, initial_state=state)
    lay = stage.lay
    n = sm.arm.n
    L, V = plan.l[k0:].T.copy(), plan.v[k0:].T.copy()
    Q, W = plan.q[k0:].T.copy(), plan.w[k0:].T.copy()
    L[:, 0], V[:, 0], Q[:, 0], W[:, 0] = state[:n], state[n:2 * n], state[2 * n:2 * n + 4], \
        state[2 * n + 4:]
    gam = np.zeros(rest)
    x = stage.lift(lay.pack(L, V, Q, W, plan.fn[k0:], plan.beta[k0:].T, gam, plan.u[k0:].T))
    start = time.perf_counter()
    sol, report = dynamic_stage(sm, stage, lay.unpack(x), REPLAN_HOMOTOPY)
    report.name = f"replan at t = {k0 * plan.h:.2f} s"
    report.seconds = time.perf_counter() - start
    if not report.success:
        return plan, report
    new = dataclasses.replace(plan, stages=list(plan.stages))
    for name, key in (("l", "L"), ("v", "V"), ("q", "Q"), ("w", "W")):
        arr = getattr(plan, name).copy()
        arr[k0:] = sol[key].T
        setattr(new, name, arr)
    for name, key in (("u", "U"), ("fn", "FN"), ("beta", "B")):
        arr = getattr(plan, name).copy()
        arr[k0:] = sol[key].T if sol[key].ndim == 2 else sol[key]
        setattr(new, name, arr)
    gap = plan.gap.copy()
    gap[k0:] = _gaps(sm, sol)
    new.gap = gap
    return new, report

