"""Contact-space reduction, offline part (python/cusp/reduction.py): NNMF by alternating least
squares, the non-negative fit, the snapshot and basis commands."""
import numpy as np
import pytest

from cusp import reduction
from cusp.__main__ import main

from conftest import REPO


def _planted(n=30, s=80, k=4, seed=3):
    rng = np.random.default_rng(seed)
    B = rng.random((n, k)) * (rng.random((n, k)) < 0.4)  # sparse non-negative patterns
    H = rng.random((k, s)) * 2
    return B, H, B @ H


def test_nnmf_recovers_a_planted_nonnegative_factorisation():
    _, _, X = _planted()
    B, H = reduction.nnmf(X, 4, iterations=2000, seed=0)
    assert (B >= 0).all() and (H >= 0).all()
    # 1e-3 relative: an exact rank-4 non-negative X is refit to ALS's convergence, not exactly
    assert np.linalg.norm(X - B @ H) <= 1e-3 * np.linalg.norm(X)
    assert np.allclose(B.max(axis=0), 1)


def test_fit_error_falls_with_the_basis_size():
    _, _, X = _planted(k=6, seed=5)
    errs = [np.median(reduction.relative_error(reduction.nnmf(X, k, seed=0)[0], X))
            for k in (1, 3, 6)]
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 1e-2


def test_project_is_the_nonnegative_least_squares_fit():
    B = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    # x = B [2, 0] exactly; x2 = B [-1, 1] + noise would need a negative coefficient
    assert np.allclose(reduction.project(B, np.array([2.0, 2.0, 0.0])), [2, 0], atol=1e-9)
    a = reduction.project(B, np.array([-1.0, 0.0, 1.0]))
    assert (a >= 0).all()
    # independent check: the best fit with a >= 0 over a fine grid
    grid = np.linspace(0, 2, 401)
    best = min(np.linalg.norm(np.array([-1.0, 0.0, 1.0]) - B @ np.array([u, v]))
               for u in grid for v in grid)
    assert np.linalg.norm(np.array([-1.0, 0.0, 1.0]) - B @ a) <= best + 1e-6


def test_nnmf_refuses_bad_input():
    with pytest.raises(ValueError, match="non-negative"):
        reduction.nnmf(-np.ones((3, 3)), 1)
    with pytest.raises(ValueError, match="modes k = 5"):
        reduction.nnmf(np.ones((3, 4)), 5)


def test_snapshot_and_basis_commands(tmp_path, capsys):
    snap, basis = tmp_path / "snap.npz", tmp_path / "basis.txt"
    assert main(["reduction", "snapshot", str(REPO / "mjcf" / "arm_curl.xml"), "--seconds", "2",
                 "--every", "100", "--out", str(snap)]) == 0
    X, pairs = reduction.load_snapshot(snap)
    assert X.shape[0] == len(pairs) >= 1 and X.shape[1] >= 1 and (X >= 0).all()
    # the curl's self-contact is in the snapshot: a pair of two disks of the arm
    assert any(a.startswith("arm_disk") and b.startswith("arm_disk") for a, b in pairs), pairs
    k = min(2, *X.shape)
    assert main(["reduction", "basis", str(snap), "--modes", str(k), "--out", str(basis)]) == 0
    B, bpairs = reduction.load_basis(basis)
    assert B.shape == (len(pairs), k) and bpairs == pairs and (B >= 0).all()
    assert main(["reduction", "basis", str(snap), "--modes", "0", "--out", str(basis)]) == 1
    assert "modes k = 0" in capsys.readouterr().err


# ---- online: the plugin solving islands in the basis (config reduction_basis) -----------------

import mujoco  # noqa: E402

import cusp  # noqa: E402
from cusp import mjcf_gen  # noqa: E402
from cusp.state import state as cusp_state  # noqa: E402

CURL = REPO / "mjcf" / "arm_curl.xml"


@pytest.fixture(scope="module")
def curl_basis(tmp_path_factory):
    """A basis of at most 25 modes from a snapshot of the curl scene (its scripted ramps)."""
    d = tmp_path_factory.mktemp("reduction")
    snap, basis = d / "snap.npz", d / "basis.txt"
    assert main(["reduction", "snapshot", str(CURL), "--every", "20", "--out", str(snap)]) == 0
    X, _ = reduction.load_snapshot(snap)
    k = min(25, *X.shape)
    assert main(["reduction", "basis", str(snap), "--modes", str(k), "--out", str(basis)]) == 0
    return basis, k


def _run(scene, seconds, arm, **overrides):
    model = cusp.compile_spec(cusp.load_spec(scene, **overrides), "arm_curl")
    data = mujoco.MjData(model)
    tip = mjcf_gen.pcc_layout(model, arm)[-1]["disks"][-1]
    traj, reduced = [], 0
    for _ in range(int(round(seconds / model.opt.timestep))):
        mujoco.mj_step(model, data)
        traj.append(data.geom_xpos[tip].copy())
        reduced += cusp_state(model, data)["reduced_islands"]
    return np.array(traj), reduced, cusp_state(model, data)


def test_curled_arm_in_the_basis_stays_within_5mm_of_the_full_model(curl_basis):
    basis, k = curl_basis
    assert k <= 25
    full, _, _ = _run(CURL, 2.0, "arm")
    red, reduced, st = _run(CURL, 2.0, "arm", reduction_basis=str(basis))
    # the islands with self-contact were solved in the basis, not by the fallback
    assert reduced >= 1000, reduced
    assert st["reduction_fallbacks"] <= 0.05 * reduced
    # 5 mm: the target for the distal disk (frictionless reduced vs frictional full model)
    err = np.linalg.norm(red - full, axis=1).max()
    assert err <= 5e-3, f"distal disk {err * 1e3:.2f} mm from the full model"


def _curl_harder(scale, **overrides):
    """The curl scene with its section-2 bending moment scaled: a tighter curl than the snapshot
    saw (other disks meet, with other load patterns)."""
    spec = cusp.load_spec(CURL, **overrides)
    for act in spec.actuators:
        if act.name.startswith("ramp_s1"):
            act.gainprm[0] *= scale
            act.forcerange = act.forcerange * scale
    return spec


def test_fallback_on_a_posture_outside_the_snapshot(curl_basis):
    """A curl 1.6 times harder than the snapshot's: most steps leave the basis (contact pairs it
    never saw, or patterns no non-negative combination fits) and fall back to the full problem;
    the result stays within the reduction target of the full model (distal disk within 5 mm over
    the run, no penetration)."""
    basis, _ = curl_basis
    out = {}
    for name, overrides in (("full", {}), ("reduced", {"reduction_basis": str(basis)})):
        spec = _curl_harder(1.6, **overrides)
        out[name] = _run(spec, 2.0, "arm")
    (full, _, _), (red, reduced, st) = out["full"], out["reduced"]
    assert st["reduction_fallbacks"] >= 1000, st["reduction_fallbacks"]
    assert reduced >= 1  # the basis still serves the steps it fits
    assert np.linalg.norm(red - full, axis=1).max() <= 5e-3  # the reduction target, 5 mm
    assert st["max_penetration"] <= 1e-4


def test_bad_basis_files_fail_the_load(tmp_path):
    cases = {
        "missing.txt": None,
        "negative.txt": "cusp-reduction-basis 1 2\narm_disk0 arm_disk20 0.5 -1\n",
        "unknown.txt": "cusp-reduction-basis 1 1\narm_disk0 no_such_geom 1\n",
        "short.txt": "cusp-reduction-basis 2 1\narm_disk0 arm_disk20 1\n",
        "header.txt": "basis 1 1\narm_disk0 arm_disk20 1\n",
    }
    why = {"missing.txt": "cannot open", "negative.txt": "expected a finite number >= 0",
           "unknown.txt": "'no_such_geom' is not a geom", "short.txt": "ends after 1 of 2",
           "header.txt": "expected 'cusp-reduction-basis NPAIR K'"}
    for name, text in cases.items():
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        with pytest.raises(cusp.SceneError) as err:
            cusp.compile_spec(cusp.load_spec(CURL, reduction_basis=str(path)), CURL)
        msg = str(err.value)
        assert "reduction_basis" in msg and str(path) in msg and why[name] in msg, msg


def test_reduced_runs_are_bitwise_repeatable(curl_basis):
    """Same inputs, same trajectory: two reduced runs of the curl (contact from t = 1.6 s)."""
    basis, _ = curl_basis
    runs = [_run(CURL, 2.0, "arm", reduction_basis=str(basis)) for _ in range(2)]
    assert runs[0][1] > 0  # islands were solved in the basis
    assert np.array_equal(runs[0][0], runs[1][0])
