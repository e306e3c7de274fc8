"""solver = ncpsmooth (the smoothed-NCP Newton backend) in the plugin, alone (fallback
off): every contact step solved, and the same motion as FB Newton, which solves the same
conditioned LCPs to the same tolerance (1e-10): free-body positions within 1e-6 m, the same
maximum penetration within 1e-9 m, no one-step energy gain above 1e-9 J (both measured at about
5e-12 J on disk_drop)."""
import pathlib

import numpy as np
import pytest

import cusp

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("scene", ["disk_drop.xml", "disk_slide_spin.xml"])
def test_ncpsmooth_matches_fbnewton(scene):
    runs = {s: cusp.run(REPO / "mjcf" / scene, seconds=1.0, solver=s, fallback="false")
            for s in ("ncpsmooth", "fbnewton")}
    (sn, ncp), (sf, fb) = runs["ncpsmooth"], runs["fbnewton"]
    assert sn["solver_failures"] == 0 and sf["solver_failures"] == 0
    assert (ncp["solver_status"][ncp["ncontact"] > 0] == 0).all()
    assert ncp["ncontact"].max() > 0  # contact happened
    cols = [c for c in ncp if c.endswith(("_x", "_y", "_z"))]
    assert cols
    for c in cols:
        assert np.abs(ncp[c] - fb[c]).max() < 1e-6, c
    assert abs(sn["max_penetration_m"] - sf["max_penetration_m"]) < 1e-9
    assert sn["energy_max_step_increase_J"] < 1e-9


def test_ncpsmooth_holds_the_arm_on_the_incline():
    # scenario A (3 disks, Euler 1e-4): the arm falls onto the incline; every contact step
    # solved by ncpsmooth alone, no energy gained, penetration as with the default chain
    scene = REPO / "mjcf" / "scenario_a_45_3.xml"
    s, series = cusp.run(scene, seconds=0.5, solver="ncpsmooth", fallback="false")
    ref, _ = cusp.run(scene, seconds=0.5)
    assert series["ncontact"].max() >= 4
    assert s["solver_failures"] == 0 and not s["diverged"]
    assert s["energy_max_step_increase_J"] < 1e-9
    assert abs(s["max_penetration_m"] - ref["max_penetration_m"]) < 1e-7
