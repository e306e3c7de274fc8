"""A stage-wise NLP for IPOPT with the Hessian of the Lagrangian assembled from one interval's.

A transcription over N intervals is one SX function of an interval's variables z_k (gathered
from the decision vector x by an index table, so neighbouring intervals share state
variables) returning its constraints c_k and running cost; plus a terminal cost. The Hessian
of the Lagrangian is then sum_k S_k^T H_k S_k with H_k the exact Hessian of
sigma * cost_k + lam_k^T c_k in z_k: built symbolically once for one interval (not N times, as
CasADi does when the whole graph is expanded) and evaluated by the SX virtual machine for every
interval (not by directional derivatives through a map, as it does without expansion). The
assembly is a constant sparse matrix from the intervals' nonzeros to the global upper triangle.
Constraint bounds, parameters and starting points change between solves without rebuilding
(the Scholtes homotopy, the lagged mass matrix).
"""
from __future__ import annotations

import os
import time

import casadi as ca
import numpy as np

from cusp.plan.compiled import compile_function
from cusp.plan.mpcc import PlanError


def threads() -> int:
    """Threads that evaluate the intervals ($CUSP_PLAN_THREADS, default the machine's cores)."""
    value = os.environ.get("CUSP_PLAN_THREADS")
    if not value:
        return max(1, os.cpu_count() or 1)
    if not value.strip().isdigit() or int(value) < 1:
        raise PlanError(f"CUSP_PLAN_THREADS = '{value}': expected a positive integer")
    return int(value)


def _map(fn: ca.Function, N: int, n: int) -> ca.Function:
    """fn over N intervals, split between n threads: each interval's outputs are written by one
    thread and assembled after, so the result does not depend on the thread count."""
    return fn.map(N, "thread", n) if n > 1 else fn.map(N)


class StagewiseNLP:
    """interval: SX Function (z (nz), p (np)) -> (c (nc), cost (1)); index: (nz x N) int table
    of z_k in x; params: (np x N) values; terminal: SX Function (y) -> cost with y = x[tidx].
    compile: the interval's function, Jacobian and Hessian compiled to machine code
    (plan/compiled.py, cached on disk) instead of run by the SX virtual machine."""

    def __init__(self, interval: ca.Function, index: np.ndarray, nx: int, npar: int,
                 terminal: ca.Function, tidx: np.ndarray, compile: bool = False):
        nz, N = index.shape
        self.nx, self.N, self.index = nx, N, index
        self.nc = interval.size1_out(0)
        z, p = ca.SX.sym("z", nz), ca.SX.sym("p", npar)
        sigma, lam = ca.SX.sym("sigma"), ca.SX.sym("lam", self.nc)
        c, cost = interval(z, p)
        hess = ca.hessian(sigma * cost + ca.dot(lam, c), z)[0]
        hsp = hess.sparsity()
        rows, cols = hsp.get_triplet()
        hnz = ca.Function("interval_hess", [z, p, sigma, lam], [ca.vertcat(*hess.nonzeros())])
        build = compile_function if compile else (lambda fn: fn)
        hnz = build(hnz)
        y = ca.SX.sym("y", len(tidx))
        tcost = terminal(y)
        th = ca.hessian(sigma * tcost, y)[0]
        trows, tcols = th.sparsity().get_triplet()
        tnz = ca.Function("terminal_hess", [y, sigma], [ca.vertcat(*th.nonzeros())])
        # global (I, J) of every interval nonzero, kept if I <= J (upper triangle)
        gi, gj, src = [], [], []
        nnz = len(rows)
        for k in range(N):
            I = index[rows, k]
            J = index[cols, k]
            keep = I <= J
            gi.append(I[keep])
            gj.append(J[keep])
            src.append(k * nnz + np.nonzero(keep)[0])
        I = tidx[np.asarray(trows)]
        J = tidx[np.asarray(tcols)]
        keep = I <= J
        gi.append(I[keep])
        gj.append(J[keep])
        src.append(N * nnz + np.nonzero(keep)[0])
        gi, gj, src = np.concatenate(gi), np.concatenate(gj), np.concatenate(src)
        # unique global positions, column-major as CasADi stores them
        key = gj.astype(np.int64) * nx + gi
        uniq, where = np.unique(key, return_inverse=True)
        target = ca.Sparsity.triplet(nx, nx, (uniq % nx).tolist(), (uniq // nx).tolist())
        ntot = N * nnz + len(trows)
        assemble = ca.DM(ca.Sparsity.triplet(len(uniq), ntot, where.tolist(), src.tolist()),
                         1.0)
        # the NLP in MX
        X, P = ca.MX.sym("x", nx), ca.MX.sym("p", npar * N)
        Z = ca.reshape(X[ca.DM(index.reshape(-1, order="F"))], nz, N)
        Pm = ca.reshape(P, npar, N)
        # (the NLP's own f and g stay SX: CasADi differentiates them once at set-up; IPOPT's
        # derivatives come from the functions below)
        nthreads = threads()
        fmap = _map(interval, N, nthreads)
        C, costs = fmap(Z, Pm)
        f = ca.sum2(costs) + terminal(X[ca.DM(tidx)])
        g = ca.vec(C)
        LF, LG = ca.MX.sym("lam_f"), ca.MX.sym("lam_g", g.numel())
        H = _map(hnz, N, nthreads)(Z, Pm, LF, ca.reshape(LG, self.nc, N))
        vals = ca.vertcat(ca.vec(H), tnz(X[ca.DM(tidx)], LF))
        hess_lag = ca.Function("nlp_hess_l", [X, P, LF, LG],
                               [ca.MX(target, ca.mtimes(assemble, vals))],
                               ["x", "p", "lam_f", "lam_g"], ["triu_hess_gamma_x_x"])
        # the constraints' Jacobian the same way: interval k's rows are k*nc + r, its columns
        # the positions of z_k in x (a repeated position sums)
        jac = ca.jacobian(c, z)
        jrows, jcols = jac.sparsity().get_triplet()
        jrows, jcols = np.asarray(jrows), np.asarray(jcols)
        jnz = build(ca.Function("interval_jac", [z, p], [ca.vertcat(*jac.nonzeros())]))
        nj = len(jrows)
        gr = np.concatenate([k * self.nc + jrows for k in range(N)])
        gc = np.concatenate([index[jcols, k] for k in range(N)])
        key = gc.astype(np.int64) * (self.nc * N) + gr
        juniq, jwhere = np.unique(key, return_inverse=True)
        jtarget = ca.Sparsity.triplet(self.nc * N, nx, (juniq % (self.nc * N)).tolist(),
                                      (juniq // (self.nc * N)).tolist())
        jassemble = ca.DM(ca.Sparsity.triplet(len(juniq), nj * N, jwhere.tolist(),
                                              list(range(nj * N))), 1.0)
        J = _map(jnz, N, nthreads)(Z, Pm)
        jac_g = ca.Function("nlp_jac_g", [X, P],
                            [g, ca.MX(jtarget, ca.mtimes(jassemble, ca.vec(J)))],
                            ["x", "p"], ["g", "jac_g_x"])
        # the objective's gradient: interval k's gradient scattered to the positions of z_k
        gnz = build(ca.Function("interval_grad", [z, p], [ca.gradient(cost, z)]))
        gassemble = ca.DM(ca.Sparsity.triplet(nx, nz * N, index.reshape(-1, order="F").tolist(),
                                              list(range(nz * N))), 1.0)
        tgrad = ca.Function("terminal_grad", [y], [ca.gradient(tcost, y)])
        tscatter = ca.DM(ca.Sparsity.triplet(nx, len(tidx), list(map(int, tidx)),
                                             list(range(len(tidx)))), 1.0)
        grad = (ca.mtimes(gassemble, ca.vec(_map(gnz, N, nthreads)(Z, Pm))) +
                ca.mtimes(tscatter, tgrad(X[ca.DM(tidx)])))
        grad_f = ca.Function("nlp_grad_f", [X, P], [f, grad], ["x", "p"], ["f", "grad_f_x"])
        self.nlp = {"x": X, "p": P, "f": f, "g": g}
        self.hess_lag = hess_lag
        self.jac_g = jac_g
        self.grad_f = grad_f
        self.functions = {"f": ca.Function("f", [X, P], [f]), "g": ca.Function("g", [X, P], [g])}
        self._solvers = {}

    def _solver(self, warm: bool, ipopt: dict, last: tuple = ()):
        """IPOPT for a cold or warm start; last: options applied after the warm-start ones."""
        key = (warm, tuple(sorted(ipopt.items())), last)
        if key not in self._solvers:
            opts = dict(ipopt)
            if warm:
                # MUMPS's own row and column scaling (8) instead of its automatic choice: at
                # the small barrier of a warm start the KKT matrix is badly scaled and the
                # automatic choice makes MUMPS pivot far more (y kinematic at eps 1e-7: 25.6 s
                # -> 4.5 s for the same iterate sequence, 134 -> 114 iterations)
                opts.update({"warm_start_init_point": "yes", "mu_init": 1e-6,
                             "warm_start_bound_push": 1e-9, "warm_start_mult_bound_push": 1e-9,
                             "mu_strategy": "monotone", "mumps_scaling": 8})
            opts.update(dict(last))
            self._solvers[key] = ca.nlpsol("stagewise", "ipopt", self.nlp,
                                           {"hess_lag": self.hess_lag, "jac_g": self.jac_g,
                                            "grad_f": self.grad_f, "calc_lam_p": False,
                                            "print_time": False,
                                            "ipopt": opts})
        return self._solvers[key]

    def solve(self, x0, p, lbx, ubx, lbg, ubg, ipopt: dict, warm_from=None):
        """One IPOPT run; warm_from: (x, lam_x, lam_g) of an earlier run to start from (primal
        and dual). A warm run whose linear algebra fails (Error_In_Step_Computation) is run
        again with MUMPS's automatic scaling. Returns (result dict, stats)."""
        args = dict(x0=x0, p=p, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg)
        if warm_from is not None:
            args.update(x0=warm_from[0], lam_x0=warm_from[1], lam_g0=warm_from[2])
        tries = [()] + ([(("mumps_scaling", 77),)] if warm_from is not None else [])
        spent = 0
        for last in tries:
            solver = self._solver(warm_from is not None, ipopt, last)
            start = time.perf_counter()
            res = solver(**args)
            stats = dict(solver.stats())
            spent += int(stats.get("iter_count", 0))
            stats["iter_count"] = spent        # the failed run's iterations count too
            if os.environ.get("CUSP_PLAN_DEBUG"):
                print(f"  ipopt {stats.get('iter_count')} it, {time.perf_counter() - start:.1f} s, "
                      f"{stats.get('return_status')}, " + ", ".join(
                    f"{k[7:]} {v:.2f}" for k, v in stats.items() if k.startswith("t_wall")))
            if stats.get("return_status") != "Error_In_Step_Computation":
                break
        return res, stats
