"""The MPCC layer: a direct transcription in CasADi's Opti, complementarity pairs under Scholtes'
relaxation (a >= 0, b >= 0, a * b <= eps) and IPOPT's result turned into a report.

CasADi (pinned in scripts/bootstrap) bundles IPOPT and gives exact first and second derivatives
of the transcription; the per-step physics is built as SX functions (plan/arm.py) and called
from Opti's MX graph, which IPOPT then sees with its exact Hessian of the Lagrangian.
"""
from __future__ import annotations

import dataclasses
import math
import os
import time

import casadi as ca
import numpy as np

SCHOLTES_EPS = 1e-7  # relaxation of a * b = 0 (units of a times units of b)


class PlanError(ValueError):
    """A task that cannot be planned (bad input, unreachable target, infeasible horizon); the
    message is one line and names what was wrong."""


@dataclasses.dataclass
class StageReport:
    """What one NLP solve did. cost: the objective at the returned point; complementarity:
    max over pairs of a * b (with a, b clipped at 0 below: a negative factor is a constraint
    violation, counted there); constraint: IPOPT's largest violation of the constraints
    (dynamics, bounds, a * b <= eps) at the returned point; status: IPOPT's return status."""
    name: str
    success: bool
    status: str
    iterations: int
    seconds: float
    cost: float
    complementarity: float
    constraint: float
    quat_error: float | None = None   # task error at the end, where the task has one

    def line(self) -> str:
        extra = "" if self.quat_error is None else f", quaternion error {self.quat_error:.2e}"
        return (f"{self.name}: {self.status}, {self.iterations} iterations, {self.seconds:.2f} s, "
                f"cost {self.cost:.6g}, max(a*b) {self.complementarity:.2e}, "
                f"constraint violation {self.constraint:.2e}{extra}")


class Transcription:
    """An Opti problem with bookkeeping of its complementarity pairs."""

    def __init__(self, eps: float = SCHOLTES_EPS):
        if not (eps > 0 and math.isfinite(eps)):
            raise PlanError(f"eps = {eps!r}: the Scholtes relaxation must be a positive number")
        self.opti = ca.Opti()
        self.eps = eps
        self.eps_param = self.opti.parameter()  # the relaxation actually imposed (homotopy)
        self.opti.set_value(self.eps_param, eps)
        self.pairs: list[tuple[ca.MX, ca.MX]] = []
        self.cost = 0

    def variable(self, *shape) -> ca.MX:
        return self.opti.variable(*shape)

    def subject_to(self, constraint) -> None:
        self.opti.subject_to(constraint)

    def complementarity(self, a, b, product=None) -> None:
        """0 <= a  _|_  b >= 0, elementwise, relaxed to a * b <= eps; product: a * b if the
        caller computed it already (inside a per-step function)."""
        self.opti.subject_to(ca.vec(a) >= 0)
        self.opti.subject_to(ca.vec(b) >= 0)
        self.opti.subject_to(ca.vec(a * b if product is None else product) <= self.eps_param)
        self.pairs.append((a, b))

    def solve(self, name: str, initial: dict | None = None, max_iter: int = 3000,
              max_seconds: float = 600.0, print_level: int = 0, tol: float = 1e-8,
              options: dict | None = None, homotopy: tuple = (), expand: bool = True):
        """Solve with IPOPT; initial maps Opti variables to starting values. homotopy: larger
        relaxations solved first, each run starting from the previous one's primal and dual
        point, the last run at eps. Returns (values: callable expr -> numpy, StageReport)
        (iterations and seconds summed over the runs). IPOPT stops at max_iter iterations or
        max_seconds of wall time per run: a solve never hangs; a failed solve is reported
        (success False, IPOPT's status), its last iterate returned. expand: IPOPT sees one SX
        graph (fast evaluation, slow set-up for large problems) or the MX graph of the per-step
        functions (set-up in seconds)."""
        opti = self.opti
        opti.minimize(self.cost)
        for var, value in (initial or {}).items():
            opti.set_initial(var, value)
        ipopt = {"max_iter": max_iter, "max_wall_time": float(max_seconds),
                 "print_level": print_level, "tol": tol, "acceptable_tol": 1e-6,
                 "acceptable_iter": 15, "mu_strategy": "adaptive",
                 "nlp_scaling_method": "gradient-based", "sb": "yes"}
        ipopt.update(options or {})
        schedule = [e for e in homotopy if e > self.eps] + [self.eps]
        start = time.perf_counter()
        iterations = 0
        for run, eps in enumerate(schedule):
            opti.set_value(self.eps_param, eps)
            opts = dict(ipopt)
            if run > 0:
                opts.update({"warm_start_init_point": "yes", "mu_init": 1e-6,
                             "warm_start_bound_push": 1e-9, "warm_start_mult_bound_push": 1e-9,
                             "mu_strategy": "monotone"})
            opti.solver("ipopt", {"expand": expand, "print_time": False}, opts)
            try:
                sol = opti.solve()
                value = sol.value
                stats = sol.stats()
            except RuntimeError:
                value = opti.debug.value
                stats = opti.stats()
            iterations += int(stats.get("iter_count", 0))
            if os.environ.get("CUSP_PLAN_DEBUG"):
                print(f"  {name} eps {eps:g}: {stats.get('iter_count')} it, ipopt "
                      f"{stats.get('t_wall_total', 0):.2f} s, hess "
                      f"{stats.get('t_wall_nlp_hess_l', 0):.2f} s, since start "
                      f"{time.perf_counter() - start:.2f} s")
            if run + 1 < len(schedule):
                opti.set_initial(opti.x, value(opti.x))
                opti.set_initial(opti.lam_g, value(opti.lam_g))
        seconds = time.perf_counter() - start
        status = str(stats.get("return_status", "unknown"))
        success = bool(stats.get("success", False)) or status == "Solved_To_Acceptable_Level"

        def values(expr):
            return np.asarray(value(expr), dtype=float)

        comp = 0.0
        for a, b in self.pairs:
            av = np.maximum(values(a), 0.0)
            bv = np.maximum(values(b), 0.0)
            comp = max(comp, float(np.max(av * bv)) if av.size else 0.0)
        constraint = _constraint_violation(opti, value)
        report = StageReport(name=name, success=success, status=status, iterations=iterations,
                             seconds=seconds, cost=float(value(self.cost)), complementarity=comp,
                             constraint=constraint)
        return values, report


def _constraint_violation(opti: ca.Opti, value) -> float:
    """Largest violation of g's bounds at the returned point (same scale as IPOPT's)."""
    g = np.asarray(value(opti.g), dtype=float).ravel()
    lo = np.asarray(value(opti.lbg), dtype=float).ravel()
    hi = np.asarray(value(opti.ubg), dtype=float).ravel()
    if g.size == 0:
        return 0.0
    below = np.where(np.isfinite(lo), lo - g, 0.0)
    above = np.where(np.isfinite(hi), g - hi, 0.0)
    return float(max(0.0, below.max(), above.max()))


def friction_directions(d: int) -> np.ndarray:
    """The d unit directions of the friction pyramid in a contact's tangent plane (2 x d), at
    angles 2 pi i / d; d = 2 in a plane problem gives +t and -t."""
    if d < 2:
        raise PlanError(f"friction directions d = {d}: need at least 2")
    ang = 2 * np.pi * np.arange(d) / d
    return np.vstack([np.cos(ang), np.sin(ang)])
