"""Replay a sphere plan in MuJoCo: the planned chamber forces, held over each planning interval,
drive the scene with cusp (open loop, or with feedback on the planned chamber lengths and rates)
and its stock twin; the sphere's orientation, the arm's chamber lengths and the tip disk's
normal contact force are recorded for comparison with the plan."""
from __future__ import annotations

import dataclasses
import pathlib

import mujoco
import numpy as np

import cusp
from cusp.plan.arm import ArmModel
from cusp.plan.mpcc import PlanError
from cusp.plan.sphere import Plan, angle_between, quat_cost

FEEDBACK_KP = 400.0   # chamber-length gain of the feedback (N/m)
FEEDBACK_KD = 40.0    # chamber-rate gain (N s/m)


@dataclasses.dataclass
class Replay:
    mode: str             # "cusp" or "stock"
    feedback: bool
    time: np.ndarray      # (S,) s, after each simulation step
    quat: np.ndarray      # (S, 4) sphere orientation
    lengths: np.ndarray   # (S, n) chamber lengths (m)
    normal: np.ndarray    # (S,) normal force between tip disk and sphere (N)
    final_quat_error: float
    final_angle_deg: float   # rotation between the final and the target orientation (deg)
    solver_failures: int
    replan_at: tuple = ()    # interval boundaries (s) where the rest of the plan was re-solved
    replans: list = dataclasses.field(default_factory=list)   # StageReport per re-plan

    @property
    def control(self) -> str:
        return "re-planning" if self.replan_at else "feedback" if self.feedback else "open loop"

    def at_plan_times(self, h: float, steps: int) -> np.ndarray:
        """Indices of the recorded steps at t = h, 2h, ..., steps h."""
        return np.searchsorted(self.time, h * np.arange(1, steps + 1) - 1e-9)


def scene_expansion(plan: Plan) -> pathlib.Path:
    """The generated MJCF of the plan's scene (x.cusp.xml -> x.xml next to it)."""
    from cusp import mjcf_gen

    p = pathlib.Path(plan.task.scene)
    return mjcf_gen.default_output(p) if p.name.endswith(".cusp.xml") else p


def replay(plan: Plan, stock: bool = False, feedback: bool = False,
           timestep: float | None = None, replan_at=()) -> Replay:
    """Run the plan in the scene (cusp, or its stock twin with stock=True) for the plan's
    horizon; feedback adds KP (l_plan - l) + KD (v_plan - v) to the planned forces, with the
    plan's states interpolated linearly over each interval (clipped to the motors' range).
    replan_at: times (s, rounded to interval boundaries) at which the rest of the plan is
    re-solved from the simulated state (plan/replan.py); the replay then follows the new
    plan (with the feedback, if on, on its chamber lengths)."""
    cusp.load()
    path = scene_expansion(plan)
    if not path.is_file():
        raise PlanError(f"scene = '{path}': no such file (expand the description first)")
    spec = mujoco.MjSpec.from_file(str(path))
    if stock:
        spec = cusp.stock_twin(spec)
    if timestep is not None:
        spec.option.timestep = timestep
    model = spec.compile()
    data = mujoco.MjData(model)
    arm = ArmModel(model, plan.task.arm)
    ball = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, plan.task.sphere)
    ball_geom = [g for g in range(model.ngeom) if model.geom_bodyid[g] == ball and
                 model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE][0]
    qadr = model.jnt_qposadr[model.body_jntadr[ball]]
    arm.qpos_from(data.qpos, plan.l[0])
    data.qpos[qadr:qadr + 4] = plan.q[0]
    mujoco.mj_forward(model, data)
    h, steps = plan.h, len(plan.u)
    dt = model.opt.timestep
    nsim = int(round(plan.h * steps / dt))
    time = np.zeros(nsim)
    quat = np.zeros((nsim, 4))
    lengths = np.zeros((nsim, arm.n))
    normal = np.zeros(nsim)
    failures = 0
    pending = replan_intervals(replan_at, h, steps)
    replans = []
    for i in range(nsim):
        t = data.time
        k = min(int(t / h + 1e-9), steps - 1)
        if pending and k >= pending[0]:
            from cusp.plan import replan as _replan

            k0 = pending.pop(0)
            state = _replan.simulated_state(arm, model, data, model.body_jntadr[ball], plan.q[k0])
            plan, report = _replan.replan(plan, k0, state)
            replans.append(report)
        u = plan.u[k].copy()
        if feedback:
            s = (t - k * h) / h
            l_ref = (1 - s) * plan.l[k] + s * plan.l[k + 1]
            v_ref = plan.v[k + 1]
            l_now, v_now = arm.lengths_from(data)
            u += FEEDBACK_KP * (l_ref - l_now) + FEEDBACK_KD * (v_ref - v_now)
        data.ctrl[arm.actuators] = np.clip(u, arm.ctrl_lo, arm.ctrl_hi)
        mujoco.mj_step(model, data)
        mujoco.mj_fwdPosition(model, data)
        mujoco.mj_fwdVelocity(model, data)
        time[i] = data.time
        quat[i] = data.qpos[qadr:qadr + 4]
        lengths[i] = arm.lengths_from(data)[0]
        rec = cusp.contacts(model, data)
        on_ball = (rec.geom[:, 0] == ball_geom) | (rec.geom[:, 1] == ball_geom)
        normal[i] = float(np.sum(rec.force[on_ball, 0]))
    if not stock:
        failures = int(cusp.state(model, data).get("solver_failures", 0))
    return Replay(mode="stock" if stock else "cusp", feedback=feedback, time=time, quat=quat,
                  lengths=lengths, normal=normal,
                  final_quat_error=quat_cost(quat[-1], plan.target),
                  final_angle_deg=angle_between(quat[-1], plan.target),
                  solver_failures=failures, replans=replans,
                  replan_at=tuple(k * h for k in replan_intervals(replan_at, h, steps)))


def replan_intervals(times, h: float, steps: int) -> list:
    """The interval boundaries k (sorted, unique) of times (s) where a re-plan has at least two
    intervals left."""
    return sorted({int(round(t / h)) for t in times if 0 < round(t / h) <= steps - 2})


def agreement(plan: Plan, rep: Replay) -> dict:
    """Plan vs simulation at the plan's times: largest orientation gap (deg), chamber-length
    gap (m), and the normal force gap (N, simulation averaged over each interval)."""
    idx = rep.at_plan_times(plan.h, len(plan.u))
    ang = max(angle_between(rep.quat[i], plan.q[k + 1] / np.linalg.norm(plan.q[k + 1]))
              for k, i in enumerate(idx))
    dl = float(np.max(np.abs(rep.lengths[idx] - plan.l[1:])))
    per = len(rep.time) // len(plan.u)
    fsim = rep.normal[:per * len(plan.u)].reshape(len(plan.u), per).mean(axis=1)
    return {"orientation_gap_deg": ang, "length_gap_m": dl,
            "normal_force_gap_N": float(np.max(np.abs(fsim - plan.fn))),
            "normal_force_plan_mean_N": float(np.mean(plan.fn)),
            "normal_force_sim_mean_N": float(np.mean(fsim))}
