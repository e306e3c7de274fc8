"""Warm starts of disk contacts across steps (plugin/solver/condition.c, inherit_warm_start): a
20-segment rod lying on the floor keeps 21 of its 42 rim contacts (two per disk, dependent), and
rounding alternates which rim point of a disk is kept. A newly kept one inherits its dropped
twin's impulses, so the resting rod is solved by its warm start (or one active-set step) instead
of a backend run every step (22 Newton iterations a step without it)."""
import importlib.machinery
import importlib.util
import pathlib

import mujoco
import numpy as np

import cusp
from cusp import mjcf_gen

REPO = pathlib.Path(__file__).resolve().parents[2]


def rod_floor_xml():
    # the rod of bench/soft_cost (one owner of the scene)
    loader = importlib.machinery.SourceFileLoader("soft_cost", str(REPO / "bench" / "soft_cost"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mjcf_gen.expand_string(mod.ROD_FLOOR)


def test_resting_rod_is_solved_from_its_warm_start():
    m = mujoco.MjSpec.from_string(rod_floor_xml()).compile()
    d = mujoco.MjData(m)
    names = cusp.slot_names()
    it, fail, kept = (names.index(k) for k in ("iterations", "solver_failures", "nkept"))
    iterations = []
    for i in range(1000):
        mujoco.mj_step(m, d)
        if i >= 500:
            iterations.append(d.plugin_state[it])
            assert d.plugin_state[kept] >= 20  # the rod lies on the floor on all its disks
    assert d.plugin_state[fail] == 0
    # at rest: mostly the warm start alone (0) or its one active-set step (1); measured 0.7
    assert np.mean(iterations) <= 1.0
