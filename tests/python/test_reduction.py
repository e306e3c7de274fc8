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
    snap, basis = tmp_path / "snap.npz", tmp_path / "basis.npz"
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
