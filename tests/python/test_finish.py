"""The active-set finish of the contact LCP (key `finish`): a backend that stops short of the
tolerance has its answer finished by one active-set solve, kept only if it meets the tolerance.
PGS without fallback on a rod lying across a cylinder (mjcf/rod_over_cylinder.xml, 1000 steps),
limited to 100 sweeps: its sweeps converge linearly and stop short on some steps (211; with the
default 200 sweeps none since the disks read mj_geomDistance at the cylinder's rim); finished,
they solve every step, and the rod ends where the default chain puts it. PGS runs from cold starts (warm_start false): with warm
starts the warm path's own active-set rounds answer every step of this scene before any backend
runs."""
import pathlib

import mujoco
import numpy as np

import cusp

REPO = pathlib.Path(__file__).resolve().parents[2]
SCENE = REPO / "mjcf" / "rod_over_cylinder.xml"


def run(**keys):
    m = cusp.load_spec(SCENE, **keys).compile()
    d = mujoco.MjData(m)
    failures = cusp.slot_names().index("solver_failures")
    for _ in range(1000):
        mujoco.mj_step(m, d)
    return d.plugin_state[failures], d.qpos.copy()


def test_pgs_finished_by_an_active_set_solve_solves_every_step():
    chain_failures, q_chain = run()
    assert chain_failures == 0
    raw_failures, _ = run(solver="pgs", fallback="false", finish="false", warm_start="false",
                          max_iterations="100")
    failures, q = run(solver="pgs", fallback="false", warm_start="false", max_iterations="100")
    assert raw_failures >= 1, "the premise: PGS alone stops short on some steps"
    assert failures == 0
    # the same contact answer as the chain's, to the solvers' tolerance integrated over 1 s
    assert np.max(np.abs(q - q_chain)) <= 1e-6


def test_finish_lowers_the_failures_of_a_short_pgs_budget():
    raw_failures, _ = run(solver="pgs", fallback="false", finish="false", max_iterations="20",
                          warm_start="false")
    failures, _ = run(solver="pgs", fallback="false", max_iterations="20", warm_start="false")
    assert failures < raw_failures
