"""The two stages of the sphere task ([CUSP] Sec. IV-B) as stage-wise NLPs (plan/stagewise.py):
the interval function, the layout of the decision vector, the bounds, and one stage's solve
with the Scholtes homotopy."""
from __future__ import annotations

import time

import casadi as ca
import numpy as np

from cusp.plan.mpcc import StageReport
from cusp.plan.stagewise import StagewiseNLP


def state_size(n: int) -> int:
    """Size of one state (l (n), v (n), q (4), w (3))."""
    return 2 * n + 7


def _split_state(s, n):
    return s[:n], s[n:2 * n], s[2 * n:2 * n + 4], s[2 * n + 4:2 * n + 7]


def jquat(q, target):
    """The orientation cost of [CUSP] Sec. V-C, 1 - (q . q_target)^2."""
    return 1 - ca.dot(q, ca.DM(target)) ** 2


NPAR_HEAD = 5   # interval parameters before vec M: smoothing weight, target quaternion


def interval_function(sm, kinematic: bool) -> ca.Function:
    """Everything of interval k as one SX function of that interval's variables
    z = (state k, state k+1, f_k, beta_k, gamma_k, u_k, s_k, f_{k-1}) and parameters
    p = (smoothing weight, target quaternion (4), vec M(l_{k+1})): constraints c = (dynamics
    residuals; s_k - a(z) = 0; the products of the complementarity pairs of [CUSP] eq. (19)) and
    the running cost of [CUSP] eq. (20) times h. Every pair is of two variables under simple
    bounds >= 0: f _|_ s_gap, gamma _|_ s_cone, beta _|_ s_slip with the slacks s = (gap, mu f - e^T beta,
    D^T nu_t + gamma e) lifted into variables, so each product is bilinear in two variables and
    its nonnegativity is a bound IPOPT keeps by its barrier, not a constraint row. In the dynamic stage the inertia M(l_{k+1}) is a
    parameter, set from the current estimate of l_{k+1} and updated between solves (the lagged
    mass matrix). The target is a parameter so that one compiled function serves every axis of
    a scene."""
    arm, task, h = sm.arm, sm.task, sm.h
    n, d, ns = arm.n, task.directions, state_size(arm.n)
    z = ca.SX.sym("z", 2 * ns + 2 + d + n + 2 + d + 1)
    p = ca.SX.sym("p", NPAR_HEAD + n * n)
    l0, v0, q0, w0 = _split_state(z[:ns], n)
    l1, v1, q1, w1 = _split_state(z[ns:2 * ns], n)
    rest = z[2 * ns:]
    fn, beta, gam = rest[0], rest[1:1 + d], rest[1 + d]
    u, slack = rest[2 + d:2 + d + n], rest[2 + d + n:4 + 2 * d + n]
    fprev = rest[4 + 2 * d + n]
    smooth, target, mass = p[0], p[1:5], ca.reshape(p[NPAR_HEAD:], n, n)
    gap, slip, gen, torque = sm.contact(l1, v1, w1, fn, beta)[:4]
    eq = [l1 - l0 - h * v1,
          sm.sphere_residual(w0, w1, torque),
          q1 - sm.quat_step(q0, w1)]
    if not kinematic:
        eq.append(mass @ (v1 - v0) - h * (u - arm.K * (l1 - arm.L0) - arm.D * v1 -
                                          arm.gravity(l1) + gen))
    lifted = ca.vertcat(gap, task.mu * fn - ca.sum1(beta), slip + gam)
    paired = ca.vertcat(fn, gam, beta)
    run = (10 * (1 - ca.dot(q1, target) ** 2) - 1e-3 * fn + smooth * 0.2 * (fn - fprev) ** 2
           + 1e-3 * ca.sumsqr(v1 - v0) + 1e-3 * ca.sumsqr(w1 - w0)
           + 10 * (ca.sumsqr(q1) - 1) ** 2)
    if not kinematic:
        run += 1e-2 * ca.sumsqr(u)
    return ca.Function("interval", [z, p], [ca.vertcat(*eq, slack - lifted, slack * paired),
                                            h * run])


class Layout:
    """Where each variable sits in the decision vector x: states k = 0..N, then per interval
    (f, beta (d), gamma, u (n), slacks (2 + d): gap, cone, slip)."""

    def __init__(self, n: int, d: int, N: int):
        self.n, self.d, self.N = n, d, N
        self.ns, self.ni = state_size(n), 4 + 2 * d + n
        self.nx = self.ns * (N + 1) + self.ni * N

    def state(self, k):
        return k * self.ns + np.arange(self.ns)

    def interval(self, k):
        return self.ns * (self.N + 1) + k * self.ni + np.arange(self.ni)

    def index(self) -> np.ndarray:
        """(nz x N) positions in x of every interval's z."""
        cols = []
        for k in range(self.N):
            prev = self.interval(max(k - 1, 0))[0]
            cols.append(np.concatenate([self.state(k), self.state(k + 1), self.interval(k),
                                        [prev]]))
        return np.array(cols).T

    def pack(self, L, V, Q, W, FN, B, G, U, S=None) -> np.ndarray:
        """x from the arrays (columns k); S (2 + d x N) the slacks, zero if not given (
        Stage.lift sets them from the other variables)."""
        x = np.zeros(self.nx)
        S = np.zeros((2 + self.d, self.N)) if S is None else S
        for k in range(self.N + 1):
            x[self.state(k)] = np.concatenate([L[:, k], V[:, k], Q[:, k], W[:, k]])
        for k in range(self.N):
            x[self.interval(k)] = np.concatenate([[FN[k]], B[:, k], [G[k]], U[:, k], S[:, k]])
        return x

    def unpack(self, x) -> dict:
        n, d = self.n, self.d
        S = np.array([x[self.state(k)] for k in range(self.N + 1)]).T
        Iv = np.array([x[self.interval(k)] for k in range(self.N)]).T
        return {"L": S[:n], "V": S[n:2 * n], "Q": S[2 * n:2 * n + 4], "W": S[2 * n + 4:],
                "FN": Iv[0], "B": Iv[1:1 + d], "G": Iv[1 + d], "U": Iv[2 + d:2 + d + n],
                "S": Iv[2 + d + n:]}


def masses(sm, L: np.ndarray) -> np.ndarray:
    """M(l_{k+1}) for every interval, column k = vec(M) (n*n x N)."""
    return np.hstack([np.asarray(sm.arm.mass(L[:, k + 1])).reshape(-1, 1, order="F")
                      for k in range(L.shape[1] - 1)])


FINAL_TOL = 1e-6   # IPOPT's tol (scaled KKT error) of the solve at the task's eps


class Stage:
    """One stage's NLP (kinematic or dynamic) over the task's horizon, with its bounds."""

    def __init__(self, sm, kinematic: bool, compile: bool = False, initial_state=None):
        """initial_state: state 0 (l, v, q, w; state_size(n)), default the arm at rest and the
        sphere at identity, both still."""
        task, arm = sm.task, sm.arm
        n, N, d = arm.n, task.steps, task.directions
        self.sm, self.kinematic = sm, kinematic
        self.lay = lay = Layout(n, d, N)
        interval = interval_function(sm, kinematic)
        y = ca.SX.sym("y", 4)
        terminal = ca.Function("terminal", [y], [task.terminal_weight * jquat(y, sm.target)])
        qN = lay.state(N)[2 * n:2 * n + 4]
        self.nlp = StagewiseNLP(interval, lay.index(), lay.nx, NPAR_HEAD + n * n, terminal, qN,
                                compile=compile)
        self.rest = arm.rest()
        lbx, ubx = np.full(lay.nx, -np.inf), np.full(lay.nx, np.inf)
        s0 = (np.concatenate([self.rest, np.zeros(n), [1, 0, 0, 0], np.zeros(3)])
              if initial_state is None else np.asarray(initial_state, dtype=float))
        lbx[lay.state(0)] = ubx[lay.state(0)] = s0
        # chamber lengths within what the motors can hold against the springs (m)
        span = np.maximum(np.abs(arm.ctrl_lo), np.abs(arm.ctrl_hi)) / arm.K
        for k in range(1, N + 1):
            idx = lay.state(k)
            lbx[idx[:n]], ubx[idx[:n]] = arm.L0 - span, arm.L0 + span
            if kinematic:
                lbx[idx[n:2 * n]] = -task.kinematic_speed_max
                ubx[idx[n:2 * n]] = task.kinematic_speed_max
        for k in range(N):
            idx = lay.interval(k)
            lbx[idx[:2 + d]] = 0.0                      # f, beta, gamma >= 0
            lbx[idx[2 + d + n:]] = 0.0                  # slacks: gap, cone, slip >= 0
            u = idx[2 + d:2 + d + n]
            if kinematic:
                ubx[idx[0]] = task.kinematic_force_max
                lbx[u] = ubx[u] = 0.0                   # no inputs: the arm is kinematic
            else:
                lbx[u], ubx[u] = arm.ctrl_lo, arm.ctrl_hi
        self.lbx, self.ubx = lbx, ubx
        self.neq = n + 3 + 4 + (0 if kinematic else n)
        self.npair = 2 + d
        self.nc = self.neq + 2 * self.npair

    def bounds_g(self, eps: float):
        lo = np.concatenate([np.zeros(self.neq + self.npair), np.full(self.npair, -np.inf)])
        hi = np.concatenate([np.zeros(self.neq + self.npair), np.full(self.npair, eps)])
        return np.tile(lo, self.sm.task.steps), np.tile(hi, self.sm.task.steps)

    def lift(self, x: np.ndarray) -> np.ndarray:
        """x with its slacks set to the values of what they lift (clipped at 0: a negative gap
        or cone is a violation IPOPT's restoration starts from)."""
        x = np.array(x, dtype=float)
        N, n, d = self.sm.task.steps, self.sm.arm.n, self.sm.task.directions
        p = self.params(self.lay.unpack(x)["L"])
        g = np.asarray(self.nlp.functions["g"](x, p)).ravel().reshape(N, -1)
        for k in range(N):
            idx = self.lay.interval(k)[2 + d + n:]
            lifted = x[idx] - g[k, self.neq:self.neq + self.npair]
            x[idx] = np.maximum(lifted, 0.0)
        return x

    def params(self, L) -> np.ndarray:
        n, N = self.sm.arm.n, self.sm.task.steps
        P = np.zeros((NPAR_HEAD + n * n, N))
        P[0, 1:] = 1.0                                  # no force-smoothing term at k = 0
        P[1:5] = np.asarray(self.sm.target)[:, None]
        if not self.kinematic:
            P[NPAR_HEAD:] = masses(self.sm, L)
        return P.reshape(-1, order="F")

    def solve(self, name, x0, L_for_mass, homotopy=(), warm_from=None, max_iter=3000,
              max_seconds=300.0, tol=FINAL_TOL, eps=None):
        """IPOPT runs for the relaxations in homotopy ((eps, tol) pairs, those with eps larger
        than the task's) then the task's eps at tol, each from the previous one's primal-dual
        point. The intermediate relaxations only guide the path to the last one: solving them
        loosely (their tol) saves most of the iterations a tight solve spends polishing a
        point that is moved on from. Returns (x, (x, lam_x, lam_g), report)."""
        task = self.sm.task
        eps = task.eps if eps is None else eps
        schedule = [(e, t) for e, t in homotopy if e > eps] + [(eps, tol)]
        base = {"max_iter": max_iter, "max_cpu_time": float(max_seconds),
                "max_wall_time": 4.0 * float(max_seconds), "print_level": 0,
                "acceptable_tol": 1e-6, "acceptable_iter": 15,
                "mu_strategy": "adaptive", "nlp_scaling_method": "gradient-based",
                "sb": "yes"}
        p = self.params(L_for_mass)
        start = time.perf_counter()
        iterations, warm, x = 0, warm_from, x0
        for eps, step_tol in schedule:
            lbg, ubg = self.bounds_g(eps)
            ipopt = dict(base, tol=step_tol)
            res, stats = self.nlp.solve(x, p, self.lbx, self.ubx, lbg, ubg, ipopt, warm)
            iterations += int(stats.get("iter_count", 0))
            x = np.asarray(res["x"]).ravel()
            warm = (x, np.asarray(res["lam_x"]).ravel(), np.asarray(res["lam_g"]).ravel())
        seconds = time.perf_counter() - start
        status = str(stats.get("return_status", "unknown"))
        success = bool(stats.get("success", False)) or status == "Solved_To_Acceptable_Level"
        g = np.asarray(self.nlp.functions["g"](x, p)).ravel()
        sol = self.lay.unpack(x)
        lifted = sol["S"] - g.reshape(-1, self.nc)[:, self.neq:self.neq + self.npair].T
        a = np.maximum(lifted, 0)
        b = np.maximum(np.vstack([sol["FN"], sol["G"], sol["B"]]), 0)
        lbg, ubg = self.bounds_g(eps)
        viol = max(0.0, float(np.max(np.where(np.isfinite(lbg), lbg - g, 0))),
                   float(np.max(np.where(np.isfinite(ubg), g - ubg, 0))),
                   float(np.max(np.where(np.isfinite(self.lbx), self.lbx - x, 0))),
                   float(np.max(np.where(np.isfinite(self.ubx), x - self.ubx, 0))))
        report = StageReport(name=name, success=success, status=status, iterations=iterations,
                             seconds=seconds, cost=float(self.nlp.functions["f"](x, p)),
                             complementarity=float(np.max(a * b)), constraint=viol)
        return x, warm, report
