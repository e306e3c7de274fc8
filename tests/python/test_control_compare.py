"""Controller plugins with cusp contact against the same controllers with stock MuJoCo contact
(bench/control/plots.py's comparison, on its scenes and scripted targets, short horizons).

avoid_push (cusp.avoid pushes a 0.8 kg block around a pole, 6 s at h = 1e-3 s) runs whole: the
stock twin loads and runs with cusp.avoid, the block ends pushed in front of the tool in both, and
the differences are those of the contact models: cusp's complementarity contact leaves no
penetration and no creep under a push below the friction limit; MuJoCo's soft contact sinks and
creeps. inverse_lean (h = 1e-4 s) only up to and just past the first contact. Geometry is read
from the kinematics of the current state (plots.py: after mj_step, d's own xpos is at another
configuration, not the same one with cusp and stock).
"""
import importlib.util
import pathlib
import sys

import mujoco
import numpy as np
import pytest

import cusp

REPO = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("control_plots", REPO / "bench" / "control" / "plots.py")
plots = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = plots  # its dataclasses look their module up
_spec.loader.exec_module(plots)

CLEARANCE = 0.01  # m, avoid_push's clearance key


@pytest.fixture(scope="module")
def push_runs():
    scene = plots.avoid_push_scene()
    runs, summary = plots.run_scene(scene, keys={"cusp", "stock"}, write=False)
    return {k: cols for k, (_v, cols, _m) in runs.items()}, {r["variant"]: r for r in summary}


def test_stock_twin_of_avoid_push_keeps_the_controller():
    spec = cusp.load_spec(REPO / "mjcf" / "avoid_push.xml", stock=True)
    assert [p.plugin_name for p in spec.plugins] == ["cusp.avoid"]
    m = cusp.compile_spec(spec)
    block = m.geom("block").id
    assert m.geom_contype[block] == 1 and m.geom_conaffinity[block] == 1


def test_same_tool_motion_until_the_block(push_runs):
    """Before the tool reaches the block (t < 2.3 s; first touch at 2.4 s) the tool meets only the
    pole's MuJoCo contact in both runs, so the two are the same controlled system: the tracking
    errors agree to rounding (1e-12 m; they are bitwise equal today)."""
    cols, _ = push_runs
    early = cols["cusp"]["t"] < 2.3
    assert np.allclose(cols["cusp"]["target_error_m"][early],
                       cols["stock"]["target_error_m"][early], rtol=0, atol=1e-12)
    assert cols["cusp"]["tool_block_distance_m"][early].min() > 0.01  # really not touching


def test_avoidance_and_push_under_both_contacts(push_runs):
    """The pole stays clear (0.5 mm below the clearance allowed: the rows hold for the servo's
    reference, the joints lag it), and the block ends pushed: the tool within 1 mm of its last
    target (x = 0.1 m), the block just ahead of it (tool-block distance from -1.5 mm, the soft
    contact lets the tool in by up to 1.3 mm, to 3 mm: the block may slide on after the last
    push, by 1.6 mm with stock contact) and its centre past x = 0.14 m (0.165 m if pushed
    square)."""
    cols, summary = push_runs
    for key in ("cusp", "stock"):
        c = cols[key]
        assert c["pole_clearance_m"].min() >= CLEARANCE - 5e-4, key
        assert c["target_error_m"][-1] < 1e-3, key
        assert -1.5e-3 < c["tool_block_distance_m"][-1] < 3e-3, key
        assert c["block_x_m"][-1] > 0.14, key
        assert summary[key]["controller_failures"] == 0, key


def test_cusp_contact_does_not_sink_stock_does(push_runs):
    """Penetration, from mj_geomDistance (tool-block) and the box corners (block-floor): cusp's
    rigid complementarity contact holds both at zero to 1 micrometre (measured 3e-13 m and 3e-8
    m), MuJoCo's soft contact lets the block sink by more than 20 micrometres while pushed
    (measured 0.16 mm) and the tool enter the block by more than 0.2 mm (measured 1.3 mm)."""
    cols, _ = push_runs
    cusp_c, stock_c = cols["cusp"], cols["stock"]
    assert cusp_c["block_floor_penetration_m"].max() < 1e-6
    assert -cusp_c["tool_block_distance_m"].min() < 1e-6
    assert stock_c["block_floor_penetration_m"].max() > 2e-5
    assert -stock_c["tool_block_distance_m"].min() > 2e-4


def test_no_creep_below_the_friction_limit_with_cusp(push_runs):
    """While the tool presses on the block with a force below 0.9 mu m g (after each slip has
    stopped) the block stays put with cusp's sticking contact (median speed < 1 micrometre/s,
    measured 3e-11 m/s) and creeps with MuJoCo's regularised friction (> 0.1 mm/s, measured 1.4
    mm/s). Each run spends at least 1 s in that state, so the check is not vacuous."""
    _, summary = push_runs
    for key in ("cusp", "stock"):
        assert summary[key]["subfriction_pressed_s"] > 1.0, key
    assert summary["cusp"]["subfriction_median_block_speed_mm_s"] < 1e-3
    assert summary["stock"]["subfriction_median_block_speed_mm_s"] > 0.1


def test_contact_modes_and_counts(push_runs):
    """cusp reports its block-floor patch and the tool contact, sticking and sliding during the
    stick-slip push; the stock run has MuJoCo's four block corners on the floor, all loaded at
    rest, and the tool contact while pushing."""
    cols, _ = push_runs
    c, s = cols["cusp"], cols["stock"]
    assert c["sticking"].max() == 2 and c["sliding"].max() >= 1
    assert c["mujoco_ncon"].max() == 0  # the tool never touches the pole
    assert s["cusp_records"].max() == 0 and s["mujoco_ncon"].max() == 5
    rest = (s["t"] > 0.1) & (s["t"] < 1.0)  # block settled, tool far away
    assert s["mujoco_active"][rest].min() == 4


def test_inverse_stock_twin_needs_contact_ignored():
    with pytest.raises(cusp.SceneError, match="'contact' has value 'cusp'"):
        cusp.compile_spec(cusp.load_spec(REPO / "mjcf" / "inverse_lean.xml", stock=True))


@pytest.fixture(scope="module")
def lean_runs():
    """inverse_lean for 0.3 s (first contact at about 0.2 s): the controller with cusp's contacts
    in its model on cusp contact, and the same controller (contact ignored) on the stock twin."""
    scene = plots.SCENES["inverse_lean"]()
    runs, _ = plots.run_scene(scene, seconds=0.3, keys={"cusp", "stock"}, write=False)
    return {k: cols for k, (_v, cols, _m) in runs.items()}


def test_inverse_same_arm_until_the_box(lean_runs):
    """Until the arm reaches the box (closer than 1 mm from 0.2 s on) both runs are the same
    controlled arm (an empty contact model is no model): tip and middle errors agree to 1e-12 m
    (bitwise equal today)."""
    c, s = lean_runs["cusp"], lean_runs["stock"]
    early = c["t"] < 0.15
    assert c["min_distance_to_environment_m"][early].min() > 1e-3
    for name in ("target_error_m", "error_arm_disk14_c0_m"):
        assert np.allclose(c[name][early], s[name][early], rtol=0, atol=1e-12), name


def test_inverse_arm_does_not_enter_the_box_with_cusp(lean_runs):
    """Disk-box penetration from mj_geomDistance over the impact: under 1 micrometre with cusp
    (measured 2.6e-8 m), over 0.3 mm with MuJoCo's soft contact (measured 0.98 mm at 0.24 s);
    the stock twin's disks do not touch one another (its contacts are with the box)."""
    c, s = lean_runs["cusp"], lean_runs["stock"]
    assert c["min_distance_to_environment_m"].min() > -1e-6
    assert s["min_distance_to_environment_m"].min() < -3e-4
    assert s["mujoco_ncon"].max() >= 1 and s["mujoco_self_contacts"].max() == 0
