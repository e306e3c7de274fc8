"""Small planning problems through contact whose optimum is known in closed form, transcribed
with the same MPCC layer and the same gap-force complementarity ([CUSP] eq. (19)) as the arm: they
check the machinery (tests/python/test_plan.py).

Time stepping as in the arm's planner: implicit Euler, v_{k+1} = v_k + h/m (forces at k+1 and the
contact impulse of interval k), x_{k+1} = x_k + h v_{k+1}; the gap is evaluated at x_{k+1}.
"""
from __future__ import annotations

import dataclasses

import casadi as ca
import numpy as np

from cusp.plan.mpcc import SCHOLTES_EPS, PlanError, StageReport, Transcription


@dataclasses.dataclass
class ToyPlan:
    x: np.ndarray          # positions (N+1,) or (N+1, 2) (m)
    v: np.ndarray          # velocities, same shape (m/s)
    u: np.ndarray          # pushing force per interval (N,) (N)
    normal: np.ndarray     # normal contact force per interval (N,) (N)
    friction: np.ndarray   # friction force along x per interval (N,) (N); zeros without friction
    cost: float            # sum h u_k^2 (N^2 s)
    report: StageReport


def _check(name, value, positive=True):
    if not np.isfinite(value) or (positive and not value > 0):
        raise PlanError(f"{name} = {value!r}: must be a positive finite number")


def point_mass_wall(n: int = 20, h: float = 0.05, mass: float = 1.0, x0: float = 0.0,
                    wall: float = 0.5, eps: float = SCHOLTES_EPS, u_max: float | None = None,
                    max_seconds: float = 60.0) -> ToyPlan:
    """A point mass on a line starts at rest at x0 and must end at rest at the wall x = wall
    in n steps of h, minimising sum h u^2. The wall (gap wall - x >= 0 _|_ normal force >= 0)
    may stop it, so the optimum accelerates all the way and lets the wall take the momentum.
    u_max bounds |u| (N): too small for the horizon, the task is infeasible and the report
    says so (success False, IPOPT's status)."""
    for key, val in (("h", h), ("mass", mass)):
        _check(key, val)
    if n < 3:
        raise PlanError(f"n = {n}: need at least 3 steps")
    if not wall > x0:
        raise PlanError(f"wall = {wall!r}: must be beyond the start x0 = {x0!r}")
    tr = Transcription(eps)
    x, v = tr.variable(n + 1), tr.variable(n + 1)
    u, lam = tr.variable(n), tr.variable(n)
    tr.subject_to(x[0] == x0)
    tr.subject_to(v[0] == 0)
    for k in range(n):
        tr.subject_to(mass * (v[k + 1] - v[k]) == h * (u[k] - lam[k]))
        tr.subject_to(x[k + 1] == x[k] + h * v[k + 1])
        tr.complementarity(wall - x[k + 1], lam[k])
    tr.subject_to(x[n] == wall)
    tr.subject_to(v[n] == 0)
    if u_max is not None:
        _check("u_max", u_max)
        tr.subject_to(tr.opti.bounded(-u_max, u, u_max))
    tr.cost = h * ca.sumsqr(u)
    ramp = np.linspace(x0, wall, n + 1)
    values, report = tr.solve("point mass vs wall",
                              {x: ramp, v: np.full(n + 1, (wall - x0) / (n * h))},
                              max_seconds=max_seconds)
    return ToyPlan(values(x), values(v), values(u), values(lam), np.zeros(n),
                   float(values(tr.cost)), report)


def point_mass_wall_optimum(n, h, mass, x0, wall):
    """The exact optimum of point_mass_wall: the wall takes the momentum at the last step, so
    u_{n-1} = 0 and u_0..u_{n-2} are the least-norm inputs that bring x_{n-1} to the wall:
    x_{n-1} = x0 + h^2/m sum_k (n-1-k) u_k. Returns (u (n,), cost)."""
    a = h * h / mass * (n - 1 - np.arange(n - 1))
    u = np.append(a * (wall - x0) / (a @ a), 0.0)
    return u, h * float(u @ u)


def box_push(n: int = 20, h: float = 0.05, mass: float = 1.0, mu: float = 0.3,
             gravity: float = 9.81, target: float = 0.4, eps: float = SCHOLTES_EPS) -> ToyPlan:
    """A box of mass `mass` rests on a floor (z >= 0 _|_ normal force, Coulomb friction mu as a
    2-direction pyramid along x with its slack, [CUSP] eq. (19)); a horizontal force u (either sign)
    must bring it from rest at x = 0 to rest at x = target in n steps of h, minimising
    sum h u^2."""
    for key, val in (("h", h), ("mass", mass), ("gravity", gravity)):
        _check(key, val)
    _check("mu", mu, positive=False)
    if mu < 0:
        raise PlanError(f"mu = {mu!r}: must be >= 0")
    if n < 3:
        raise PlanError(f"n = {n}: need at least 3 steps")
    tr = Transcription(eps)
    x, z = tr.variable(n + 1), tr.variable(n + 1)
    vx, vz = tr.variable(n + 1), tr.variable(n + 1)
    u, fn, gam = tr.variable(n), tr.variable(n), tr.variable(n)
    beta = tr.variable(2, n)  # friction along +x and -x (N)
    for var in (x, z, vx, vz):
        tr.subject_to(var[0] == 0)
    for k in range(n):
        fx = beta[0, k] - beta[1, k]
        tr.subject_to(mass * (vx[k + 1] - vx[k]) == h * (u[k] + fx))
        tr.subject_to(mass * (vz[k + 1] - vz[k]) == h * (fn[k] - mass * gravity))
        tr.subject_to(x[k + 1] == x[k] + h * vx[k + 1])
        tr.subject_to(z[k + 1] == z[k] + h * vz[k + 1])
        tr.complementarity(z[k + 1], fn[k])
        tr.complementarity(mu * fn[k] - beta[0, k] - beta[1, k], gam[k])
        tr.complementarity(beta[0, k], vx[k + 1] + gam[k])
        tr.complementarity(beta[1, k], -vx[k + 1] + gam[k])
    tr.subject_to(x[n] == target)
    tr.subject_to(vx[n] == 0)
    tr.cost = h * ca.sumsqr(u)
    init = {x: np.linspace(0, target, n + 1), vx: np.full(n + 1, target / (n * h)),
            fn: np.full(n, mass * gravity), beta: np.vstack([np.zeros(n),
                                                             np.full(n, mu * mass * gravity)])}
    values, report = tr.solve("box with friction", init)
    b = values(beta)
    return ToyPlan(values(x), values(vx), values(u), values(fn), b[0] - b[1],
                   float(values(tr.cost)), report)
