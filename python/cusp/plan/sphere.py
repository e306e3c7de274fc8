"""The sphere-turning task of [CUSP] Sec. IV and V-C (docs/references.md): the soft arm turns
a sphere held at a fixed centre by a given angle about a given axis through its tip disk,
planned as an MPCC on the arm of the scene (plan/arm.py) and solved in two stages: a kinematic
stage (arm kinematic, sphere dynamic, every contact constraint kept) that finds a contact sequence, then the dynamic MPCC
started from it with the inputs of the arm's inverse dynamics along that motion.

Transcription (N intervals of h = T / N, implicit Euler as [CUSP] eqs. (17)-(18)): states l_k, v_k
(chamber lengths and rates), q_k, w_k (sphere orientation, world angular velocity); inputs u_k
(chamber motor forces, N) and contact forces of interval k: normal f_k, friction beta_k along d
pyramid directions, slack gamma_k (N), all evaluated at the end of the interval:
    M(l_{k+1}) (v_{k+1} - v_k) = h (u_k - K (l_{k+1} - L0) - D v_{k+1} - G(l_{k+1}) + J^T F_k)
    l_{k+1} = l_k + h v_{k+1}
    I (w_{k+1} - w_k) = h ((p_k - c) x (-F_k) - D_s w_{k+1}),  q_{k+1} = exp(h w_{k+1}) q_k
    0 <= phi(l_{k+1}) _|_ f_k >= 0
    0 <= mu f_k - e^T beta_k _|_ gamma_k >= 0                               [CUSP] eq. (19)
    0 <= beta_k _|_ D^T nu_t(k+1) + gamma_k e >= 0
with F_k = f_k n + sum_i beta_ki t_i the force on the disk at its point p_k nearest the sphere,
phi the distance from the tip disk (a cylinder, as cusp's disk-sphere detection) to the sphere
with smooth min/max (eps_sdf), nu_t the disk's velocity at p_k relative to the sphere's surface.
The cost is [CUSP] eq. (20).
"""
from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import time

import casadi as ca
import mujoco
import numpy as np

from cusp import mjcf_gen
from cusp.plan.arm import ArmModel
from cusp.plan import stages
from cusp.plan.mpcc import SCHOLTES_EPS, PlanError, StageReport

REPO = pathlib.Path(__file__).resolve().parents[3]
SCENE = REPO / "mjcf" / "plan_sphere.cusp.xml"
EPS_SDF = 1e-8   # smoothing of min / max / norm in the gap (m^2): edges rounded over ~0.1 mm
AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


@dataclasses.dataclass
class SphereTask:
    """The task; defaults are those of [CUSP] Sec. V-C."""
    axis: str | tuple = "x"        # "x", "y", "z" or a 3-vector (normalised)
    angle_deg: float = 90.0        # rotation of the sphere (deg)
    steps: int = 100               # N
    horizon: float = 4.0           # T (s)
    mu: float = 0.6                # friction coefficient
    directions: int = 10           # d, friction pyramid directions
    eps: float = SCHOLTES_EPS      # Scholtes relaxation
    # weight of the terminal orientation cost J_quat(q_N) ([CUSP] eq. (20): 100). With the chamber
    # forces in N the effort term 1e-2 sum h u^2 outweighs a last degree of turn on some axes
    # (z ends 1.2 deg short at 100, a local optimum of (20)); 1e4 finishes it
    terminal_weight: float = 100.0
    scene: str = str(SCENE)        # generated scene (description or expansion)
    arm: str = "arm"
    sphere: str = "ball"           # body with the ball joint and the sphere geom
    kinematic_force_max: float = 5.0   # bound on the normal force in the kinematic stage (N)
    kinematic_speed_max: float = 0.2   # bound on chamber rates in the kinematic stage (m/s)
    max_seconds: float = 300.0     # wall-time limit of each stage's IPOPT run (s)
    max_iter: int = 3000
    compile: bool = True           # interval derivatives compiled by the C compiler (cached)

    def validate(self) -> np.ndarray:
        """The unit rotation axis; raises PlanError naming a bad value."""
        if isinstance(self.axis, str):
            if self.axis not in AXES:
                raise PlanError(f"axis = '{self.axis}': expected x, y, z or three numbers")
            axis = np.array(AXES[self.axis])
        else:
            axis = np.asarray(self.axis, dtype=float).ravel()
            if axis.size != 3 or not np.all(np.isfinite(axis)) or np.linalg.norm(axis) == 0:
                raise PlanError(f"axis = {self.axis!r}: expected a non-zero 3-vector")
            axis = axis / np.linalg.norm(axis)
        checks = (("angle_deg", self.angle_deg, abs(self.angle_deg) <= 360),
                  ("horizon", self.horizon, self.horizon > 0),
                  ("mu", self.mu, self.mu >= 0),
                  ("eps", self.eps, self.eps > 0),
                  ("terminal_weight", self.terminal_weight, self.terminal_weight > 0),
                  ("kinematic_force_max", self.kinematic_force_max,
                   self.kinematic_force_max > 0),
                  ("kinematic_speed_max", self.kinematic_speed_max,
                   self.kinematic_speed_max > 0),
                  ("max_seconds", self.max_seconds, self.max_seconds > 0))
        for key, value, ok in checks:
            if not (math.isfinite(value) and ok):
                raise PlanError(f"{key} = {value!r}: out of range")
        if not (isinstance(self.steps, int) and self.steps >= 2):
            raise PlanError(f"steps = {self.steps!r}: need an integer >= 2")
        if not (isinstance(self.directions, int) and self.directions >= 3):
            raise PlanError(f"directions = {self.directions!r}: need an integer >= 3")
        return axis


@dataclasses.dataclass
class Plan:
    """A plan: arrays over the horizon (k = 0..N for states, 0..N-1 for inputs and forces)."""
    task: SphereTask
    h: float
    l: np.ndarray        # (N+1, n) chamber lengths (m)
    v: np.ndarray        # (N+1, n) chamber rates (m/s)
    q: np.ndarray        # (N+1, 4) sphere orientation (w, x, y, z)
    w: np.ndarray        # (N+1, 3) sphere angular velocity, world (rad/s)
    u: np.ndarray        # (N, n) chamber motor forces (N)
    fn: np.ndarray       # (N,) normal force (N)
    beta: np.ndarray     # (N, d) friction along the pyramid directions (N)
    gap: np.ndarray      # (N,) gap at the end of each interval (m)
    target: np.ndarray   # (4,) target orientation
    stages: list         # StageReport per stage

    @property
    def quat_error(self) -> float:
        """1 - (q_N . q_target)^2, [CUSP]'s J_quat at the end."""
        return quat_cost(self.q[-1], self.target)

    @property
    def angle_error_deg(self) -> float:
        return angle_between(self.q[-1], self.target)

    def save(self, path) -> None:
        """An .npz with the arrays, the task and the stage reports (as JSON text)."""
        arrays = {k: getattr(self, k) for k in ARRAYS}
        np.savez(path, h=self.h, task=json.dumps(dataclasses.asdict(self.task)),
                 stages=json.dumps([dataclasses.asdict(r) for r in self.stages]), **arrays)

    @staticmethod
    def load(path) -> "Plan":
        with np.load(path) as f:
            task = json.loads(str(f["task"]))
            if isinstance(task["axis"], list):
                task["axis"] = tuple(task["axis"])
            stages = [StageReport(**r) for r in json.loads(str(f["stages"]))]
            return Plan(task=SphereTask(**task), h=float(f["h"]), stages=stages,
                        **{k: f[k] for k in ARRAYS})


ARRAYS = ("l", "v", "q", "w", "u", "fn", "beta", "gap", "target")


def quat_cost(q, target) -> float:
    q = np.asarray(q, dtype=float)
    return float(1 - (q @ target / np.linalg.norm(q)) ** 2)


def angle_between(q, target) -> float:
    """Angle (deg) of the rotation from target to q."""
    c = abs(float(np.asarray(q) @ target)) / np.linalg.norm(q)
    return math.degrees(2 * math.acos(min(1.0, c)))


def target_quaternion(axis: np.ndarray, angle_deg: float) -> np.ndarray:
    half = math.radians(angle_deg) / 2
    return np.concatenate([[math.cos(half)], math.sin(half) * axis])


# ---- the model: scene, arm, sphere, contact ---------------------------------------------------

def load_scene(path: str) -> mujoco.MjModel:
    """The scene's MjModel without the cusp plugin (the planner needs only its geometry and
    inertia); a description (.cusp.xml) is expanded first."""
    p = pathlib.Path(path)
    if not p.is_file():
        raise PlanError(f"scene = '{path}': no such file")
    try:
        if p.name.endswith(".cusp.xml"):
            xml = mjcf_gen.expand_file(p, plugin=False)
            return mujoco.MjModel.from_xml_string(xml)
        spec = mujoco.MjSpec.from_file(str(p))
        for plugin in list(spec.plugins):
            spec.delete(plugin)
        return spec.compile()
    except (ValueError, mjcf_gen.DescriptionError) as err:
        raise PlanError(f"scene = '{path}': {str(err).splitlines()[0]}") from None


def _smin(a, b):
    return 0.5 * (a + b - ca.sqrt((a - b) ** 2 + EPS_SDF))


def _smax(a, b):
    return 0.5 * (a + b + ca.sqrt((a - b) ** 2 + EPS_SDF))


def quat_mul(a, b):
    return ca.vertcat(a[0] * b[0] - ca.dot(a[1:], b[1:]),
                      a[0] * b[1:] + b[0] * a[1:] + ca.cross(a[1:], b[1:]))


def quat_exp(rotvec):
    """Unit quaternion of the rotation vector (rad), as even power series of the half angle
    (smooth at zero; exact to (|rotvec|/2)^8, |rotvec| = h |w| is small here)."""
    half = rotvec / 2
    x2 = ca.dot(half, half)
    c = 1 - x2 / 2 + x2 ** 2 / 24 - x2 ** 3 / 720 + x2 ** 4 / 40320
    s = 1 - x2 / 6 + x2 ** 2 / 120 - x2 ** 3 / 5040 + x2 ** 4 / 362880
    return ca.vertcat(c, s * half)


class SphereModel:
    """Arm + sphere + tip-disk contact of a scene as CasADi functions."""

    def __init__(self, task: SphereTask):
        self.task = task
        self.axis = task.validate()
        model = load_scene(task.scene)
        self.model = model
        self.arm = ArmModel(model, task.arm)
        bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, task.sphere)
        if bid < 0:
            raise PlanError(f"sphere = '{task.sphere}': no such body in {task.scene}")
        jnt = model.body_jntadr[bid]
        if model.body_jntnum[bid] != 1 or model.jnt_type[jnt] != mujoco.mjtJoint.mjJNT_BALL:
            raise PlanError(f"sphere = '{task.sphere}': needs exactly one ball joint (a sphere "
                            "held at a fixed centre)")
        geoms = [g for g in range(model.ngeom) if model.geom_bodyid[g] == bid and
                 model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE]
        if len(geoms) != 1:
            raise PlanError(f"sphere = '{task.sphere}': needs exactly one sphere geom")
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        self.sphere_body, self.sphere_joint, self.sphere_geom = bid, jnt, geoms[0]
        self.centre = data.geom_xpos[geoms[0]].copy()
        self.radius = float(model.geom_size[geoms[0], 0])
        inertia = model.body_inertia[bid]
        if np.ptp(inertia) > 1e-9 * inertia.max():
            raise PlanError(f"sphere = '{task.sphere}': inertia {inertia} is not isotropic")
        self.inertia = float(inertia[0])
        self.damping = float(model.dof_damping[model.jnt_dofadr[jnt]])
        self.h = task.horizon / task.steps
        self.target = target_quaternion(self.axis, task.angle_deg)
        self._build()

    def _build(self):
        arm, n, d = self.arm, self.arm.n, self.task.directions
        l, v, w = ca.SX.sym("l", n), ca.SX.sym("v", n), ca.SX.sym("w", 3)
        fn, beta = ca.SX.sym("fn"), ca.SX.sym("beta", d)
        c = ca.SX(self.centre)
        pos, rot = arm.tip(l)
        radius_disk, half = (float(x) for x in self.model.geom_size[arm.tip_geom, :2])
        local = rot.T @ (c - pos)
        rho = ca.sqrt(local[0] ** 2 + local[1] ** 2 + EPS_SDF)
        scale = _smin(rho, radius_disk) / rho
        axial = _smax(_smin(local[2], half), -half)
        near_local = ca.vertcat(local[0] * scale, local[1] * scale, axial)
        near = pos + rot @ near_local
        diff = near - c
        dist = ca.sqrt(ca.dot(diff, diff) + EPS_SDF)
        gap = dist - self.radius
        normal = diff / dist                       # from the sphere towards the disk
        jac = arm.tip_point_jac(l, near_local)     # (3 x n) velocity of the disk point
        rel = jac @ v - ca.cross(w, diff)          # disk relative to the sphere's surface
        ex = rot[:, 0]
        t1 = ex - ca.dot(ex, normal) * normal
        t1 = t1 / ca.sqrt(ca.dot(t1, t1))
        t2 = ca.cross(normal, t1)
        ang = 2 * np.pi * np.arange(d) / d
        dirs = ca.horzcat(*[math.cos(a) * t1 + math.sin(a) * t2 for a in ang])  # (3 x d)
        slip = dirs.T @ rel
        force = normal * fn + dirs @ beta          # on the disk (N)
        self.contact = ca.Function(
            "contact", [l, v, w, fn, beta],
            [gap, slip, jac.T @ force, ca.cross(diff, -force), near, force],
            ["l", "v", "w", "fn", "beta"], ["gap", "slip", "gen", "torque", "point", "force"])
        l0, v0 = ca.SX.sym("l0", n), ca.SX.sym("v0", n)
        u, gen = ca.SX.sym("u", n), ca.SX.sym("gen", n)
        h = self.h
        resid = arm.mass(l) @ (v - v0) - h * (u - arm.K * (l - arm.L0) - arm.D * v -
                                               arm.gravity(l) + gen)
        self.arm_residual = ca.Function("arm_residual", [v0, l, v, u, gen], [resid])
        self.inverse_dynamics = ca.Function(
            "inverse_dynamics", [v0, l, v, gen],
            [arm.mass(l) @ (v - v0) / h + arm.K * (l - arm.L0) + arm.D * v + arm.gravity(l) - gen])
        q0, tq = ca.SX.sym("q0", 4), ca.SX.sym("torque", 3)
        w0 = ca.SX.sym("w0", 3)
        self.sphere_residual = ca.Function(
            "sphere_residual", [w0, w, tq], [self.inertia * (w - w0) - h * (tq - self.damping * w)])
        self.quat_step = ca.Function("quat_step", [q0, w], [quat_mul(quat_exp(h * w), q0)])


# ---- the two stages ----------------------------------------------------------------------------

def _slerp_guess(sm: SphereModel):
    N, h = sm.task.steps, sm.h
    angle = math.radians(sm.task.angle_deg)
    s = np.linspace(0, 1, N + 1)
    q = np.array([np.concatenate([[math.cos(a / 2)], math.sin(a / 2) * sm.axis])
                  for a in angle * s])
    w = np.tile(sm.axis * angle / (N * h), (N + 1, 1))
    w[0] = 0
    return q, w


def _gaps(sm, sol) -> np.ndarray:
    N = sm.task.steps
    return np.array([float(sm.contact(sol["L"][:, k + 1], sol["V"][:, k + 1],
                                      sol["W"][:, k + 1], sol["FN"][k], sol["B"][:, k])[0])
                     for k in range(N)])


def inverse_dynamics_inputs(sm: SphereModel, sol: dict) -> np.ndarray:
    """u_k (n x N) that make the arm's dynamics hold along a kinematic plan (clipped to the
    motors' range)."""
    arm, N = sm.arm, sm.task.steps
    U = np.zeros((arm.n, N))
    for k in range(N):
        gen = sm.contact(sol["L"][:, k + 1], sol["V"][:, k + 1], sol["W"][:, k + 1],
                         sol["FN"][k], sol["B"][:, k])[2]
        U[:, k] = np.asarray(sm.inverse_dynamics(sol["V"][:, k], sol["L"][:, k + 1],
                                                 sol["V"][:, k + 1], gen)).ravel()
    return np.clip(U, arm.ctrl_lo[:, None], arm.ctrl_hi[:, None])


def exact_residual(sm: SphereModel, sol: dict) -> float:
    """Largest residual of the arm's dynamics with the exact M(l_{k+1}) (N s)."""
    worst = 0.0
    for k in range(sm.task.steps):
        gen = sm.contact(sol["L"][:, k + 1], sol["V"][:, k + 1], sol["W"][:, k + 1],
                         sol["FN"][k], sol["B"][:, k])[2]
        r = sm.arm_residual(sol["V"][:, k], sol["L"][:, k + 1], sol["V"][:, k + 1],
                            sol["U"][:, k], gen)
        worst = max(worst, float(np.max(np.abs(np.asarray(r)))))
    return worst


# Scholtes relaxations of the dynamic stage solved before the task's eps, each warm-starting the
# next, with IPOPT's tol for each (loose: they only lead to the final solve at eps)
HOMOTOPY = ((1e-3, 1e-4), (1e-5, 1e-5))
# (eps, tol) the kinematic stage is solved at: it only seeds the dynamic stage, whose homotopy
# starts at this relaxation again, so tightening it further was work thrown away (measured:
# the same plans' accuracy, 12-20 s more per problem)
KINEMATIC_RELAXATION = (1e-3, 1e-4)
MASS_UPDATES = 3          # dynamic-stage re-solves with M updated at the new l


def plan(task: SphereTask | None = None, progress=None) -> Plan:
    """Plan the task in two stages; returns the Plan with both stages' reports. A stage that
    fails is reported (its StageReport.success False), never raised; bad input raises
    PlanError with one line.

    Dynamic stage: M(l_{k+1}) enters as a parameter evaluated at the current plan and the
    MPCC is re-solved from its own solution with M updated, until the exact dynamics hold to
    1e-8 N s or MASS_UPDATES re-solves are spent (M is a smooth function of l and changes
    little between solves; exact second derivatives of M cost more than all other terms of
    the Hessian together). The report's constraint violation includes the exact residual."""
    task = task or SphereTask()
    t0 = time.perf_counter()
    sm = SphereModel(task)
    say = progress or (lambda text: None)
    N, d, n = task.steps, task.directions, sm.arm.n
    # stage 1: kinematic arm, dynamic sphere
    kin_stage = stages.Stage(sm, kinematic=True, compile=task.compile)
    lay = kin_stage.lay
    q_guess, w_guess = _slerp_guess(sm)
    x0 = lay.pack(np.tile(kin_stage.rest[:, None], (1, N + 1)), np.zeros((n, N + 1)),
                  q_guess.T, w_guess.T, np.full(N, 0.5), np.full((d, N), 0.01),
                  np.full(N, 0.01), np.zeros((n, N)))
    x0 = kin_stage.lift(x0)
    eps, tol = KINEMATIC_RELAXATION
    x, _, rep1 = kin_stage.solve("kinematic", x0, None, eps=max(eps, task.eps), tol=tol,
                                 max_iter=task.max_iter, max_seconds=task.max_seconds)
    rep1.seconds = time.perf_counter() - t0
    kin = lay.unpack(x)
    rep1.quat_error = quat_cost(kin["Q"][:, -1], sm.target)
    say(rep1.line())
    # stage 2: the dynamic MPCC from the kinematic plan, inputs by inverse dynamics
    t1 = time.perf_counter()
    kin["U"] = inverse_dynamics_inputs(sm, kin)
    dyn_stage = stages.Stage(sm, kinematic=False, compile=task.compile)
    sol, rep2 = dynamic_stage(sm, dyn_stage, kin, HOMOTOPY)
    rep2.seconds = time.perf_counter() - t1
    say(rep2.line())
    return _plan_of(sm, sol, [rep1, rep2])


def dynamic_stage(sm: SphereModel, stage, start: dict, homotopy) -> tuple[dict, StageReport]:
    """The dynamic MPCC from the arrays of start (Layout.unpack form) through the relaxations
    of homotopy to the task's eps, then re-solved with M(l) updated (MASS_UPDATES). Returns
    the solution's arrays and the report (iterations of every solve; constraint violation
    including the exact-M residual)."""
    lay = stage.lay
    x = lay.pack(**{k: start[k] for k in ("L", "V", "Q", "W", "FN", "B", "G", "U", "S")})
    iterations, warm, sol = 0, None, start
    kept = None          # the last successful solve: (sol, report, exact residual)
    for update in range(MASS_UPDATES + 1):
        x, warm, rep = stage.solve("dynamic", x, sol["L"],
                                   homotopy=homotopy if update == 0 else (),
                                   warm_from=warm, max_iter=sm.task.max_iter,
                                   max_seconds=sm.task.max_seconds)
        iterations += rep.iterations
        if not rep.success:
            if kept is not None:
                # a re-solve with M updated failed: the plan is the last converged one, its
                # exact-M residual is reported as its constraint violation
                sol, rep, residual = kept
                rep.status += f" (M update {update} failed, plan of update {update - 1})"
            else:
                sol = lay.unpack(x)
                residual = exact_residual(sm, sol)
            break
        sol = lay.unpack(x)
        residual = exact_residual(sm, sol)
        kept = (sol, rep, residual)
        if residual < 1e-8:
            break
    rep.iterations = iterations
    rep.constraint = max(rep.constraint, residual)
    rep.quat_error = quat_cost(sol["Q"][:, -1], sm.target)
    return sol, rep


def _plan_of(sm: SphereModel, sol: dict, reports: list) -> "Plan":
    return Plan(task=sm.task, h=sm.h, l=sol["L"].T, v=sol["V"].T, q=sol["Q"].T, w=sol["W"].T,
                u=sol["U"].T, fn=sol["FN"], beta=sol["B"].T, gap=_gaps(sm, sol),
                target=sm.target, stages=reports)
