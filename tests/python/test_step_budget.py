"""The work budget of a step (config key `step_work_budget`, plugin/solver/lcp.h): the backend runs
of one step's disk-island solves spend at most that many work units together, and a solve the
budget cuts short is a failed solve, counted in `solver_failures`. Measured on a rod lying on the
floor (21 disks, 20-60 disk contacts in one island), with warm starts off so that the backends
run every step. The work is the plugin's own count (cusp_contacts_solve_work: iterations at the
cost model of lcp.h), not wall time."""
import ctypes

import mujoco
import numpy as np
import pytest

import cusp
from cusp import mjcf_gen
from cusp.state import state

ROD_FLOOR = """<mujoco model="rod_floor">
  <option timestep="0.001" gravity="0 0 -9.81" integrator="implicitfast"/>
  <cusp instance="cusp">
    <config key="environment" value="floor"/>
    <config key="warm_start" value="false"/>
    {extra}
  </cusp>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.05" friction="0.6"/>
    <rod name="rod" base="free" pos="-0.25 0 0.011" zaxis="1 0 0" length="0.5" mass="0.05"
         segments="20" disk_radius="0.01" disk_thickness="0.004" bend_stiffness="0.002"
         damping="0.002"/>
  </worldbody>
</mujoco>"""


def _solve_work(model, data):
    lib = cusp._library()
    fn = lib.cusp_contacts_solve_work
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    fn.restype = ctypes.c_double
    return fn(ctypes.c_void_p(model._address), ctypes.c_void_p(data._address), 0)


def _run(budget, nstep):
    """(work of each step, failed steps by their status, solver_failures, lowest disk centre z,
    largest contact count) over nstep steps of the rod on the floor."""
    extra = f'<config key="step_work_budget" value="{budget}"/>' if budget is not None else ""
    model = mujoco.MjModel.from_xml_string(mjcf_gen.expand_string(ROD_FLOOR.format(extra=extra)))
    data = mujoco.MjData(model)
    work, failed, ncontact = [], 0, 0
    for _ in range(nstep):
        mujoco.mj_step(model, data)
        s = state(model, data)
        work.append(_solve_work(model, data))
        failed += s["status"] != 0
        ncontact = max(ncontact, int(s["ncontact"]))
        assert np.all(np.isfinite(data.qvel))
    disks = [g for g in range(model.ngeom) if model.geom(g).name.startswith("rod_disk")]
    lowest = min(data.geom_xpos[g][2] for g in disks)
    return np.array(work), failed, int(state(model, data)["solver_failures"]), lowest, ncontact


DEFAULT_BUDGET = 3e7  # mjcf/README.md: step_work_budget


def test_default_step_budget_bounds_every_step_of_a_rod_on_the_floor():
    """Measured: 9e6 units a step on average, 1.9e7 at most (more than one backend run), no
    failed step in 1000."""
    work, failed, counted, lowest, ncontact = _run(None, 300)
    assert ncontact >= 20, ncontact
    assert work.max() > 0, "the backends never ran: warm starts are off, they should"
    assert work.max() <= DEFAULT_BUDGET, work.max()
    assert failed == 0
    assert counted == failed  # every step the budget (or anything) cut short is counted
    assert lowest > 0.01 - 1e-3, lowest  # disk radius 0.01 m: resting on the floor within 1 mm


@pytest.mark.parametrize("budget", [0, 1e6])
def test_a_small_step_budget_cuts_the_solves_and_counts_them(budget):
    """A budget below what the rod's steps need (measured with the default: 9e6 units a step on
    average, 1.9e7 at most, no failure in 1000 steps): no step spends more, the cut steps are
    counted failures (measured: 959 of 1000 steps with 1e6; from the first contacts at
    t = 0.014 s), the state stays finite."""
    work, failed, counted, _, _ = _run(budget, 100)
    assert work.max() <= budget, work.max()
    assert failed >= 50, failed
    assert counted == failed
