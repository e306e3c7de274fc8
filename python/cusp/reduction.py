"""Contact-space model order reduction, offline part: snapshots of contact impulses from scripted
runs, and a non-negative basis learned from them by NNMF (the online part, the LCP solved for the
basis coefficients with the full problem as fallback, is plugin/solver/reduction.c).

Snapshot: a matrix X (n x s) of normal impulses (N s), one row per disk pair that ever carried
load in the runs (the pair's geom names are kept, so the rows can be matched to a step's
contacts), one column per recorded step with load. Basis: B (n x k) >= 0 with X ~= B H, H >= 0.

Commands (docs/reduction.md):
    python -m cusp reduction snapshot SCENE.xml [SCENE.xml ...] --out SNAP.npz [--seconds S]
        [--every N] [--set KEY=VALUE ...]
    python -m cusp reduction basis SNAP.npz --modes K --out BASIS.txt [--iterations N]
        [--seed S]
    python -m cusp reduction error SNAP.npz [--modes 1,2,5,10,25]
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np


# ---- NNMF by alternating least squares -------------------------------------------------------

def nnmf(X: np.ndarray, k: int, iterations: int = 500, seed: int = 0, tol: float = 1e-10,
         restarts: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """NNMF (see _nnmf_once) from `restarts` random starts (seeds seed, seed + 1, ...), keeping
    the best fit: one start may stop in a local minimum (a planted exact rank-6 factorisation
    was refit to 8 % from one start, to 1e-6 from the others)."""
    best = None
    for r in range(max(1, restarts)):
        B, H = _nnmf_once(X, k, iterations, seed + r, tol)
        err = np.linalg.norm(np.asarray(X, dtype=float) - B @ H)
        if best is None or err < best[0]:
            best = (err, B, H)
    return best[1], best[2]


def _nnmf_once(X: np.ndarray, k: int, iterations: int, seed: int,
               tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Non-negative factorisation X ~= B H (B (n x k) >= 0, H (k x s) >= 0) by alternating least
    squares with non-negativity: a few plain ALS passes (each factor by unconstrained least
    squares with the other fixed, negative entries set to 0) start it, then hierarchical ALS
    (one row of H or column of B at a time, each the exact non-negative least-squares update with
    the others fixed) refines it. Deterministic for a given seed; stops when the relative change
    of ||X - B H||_F falls below tol. Columns of B are scaled to unit maximum (the scale goes to
    H)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or (X < 0).any():
        raise ValueError("nnmf: X must be a 2-D non-negative matrix")
    n, s = X.shape
    if not 1 <= k <= min(n, s):
        raise ValueError(f"nnmf: modes k = {k} must be in [1, min(n, s) = {min(n, s)}]")
    rng = np.random.default_rng(seed)
    B = rng.random((n, k)) * (X.mean() + 1e-12)
    # least squares by lstsq: a factor whose clipped columns vanish makes the normal equations
    # singular
    H = np.linalg.lstsq(B, X, rcond=None)[0].clip(min=0)
    for _ in range(5):
        B = np.linalg.lstsq(H.T, X.T, rcond=None)[0].T.clip(min=0)
        H = np.linalg.lstsq(B, X, rcond=None)[0].clip(min=0)
    last = np.inf
    for _ in range(iterations):
        BtX, BtB = B.T @ X, B.T @ B
        for j in range(k):
            if BtB[j, j] > 0:
                H[j] = np.maximum(0.0, H[j] + (BtX[j] - BtB[j] @ H) / BtB[j, j])
        XHt, HHt = X @ H.T, H @ H.T
        for j in range(k):
            if HHt[j, j] > 0:
                B[:, j] = np.maximum(0.0, B[:, j] + (XHt[:, j] - B @ HHt[:, j]) / HHt[j, j])
        err = np.linalg.norm(X - B @ H)
        if abs(last - err) <= tol * max(err, 1e-300):
            break
        last = err
    scale = B.max(axis=0)
    scale[scale == 0] = 1
    return B / scale, H * scale[:, None]


def project(B: np.ndarray, X: np.ndarray, iterations: int = 500) -> np.ndarray:
    """Coefficients A >= 0 minimising ||X - B A|| column by column (X (n) or (n x s); projected
    Gauss-Seidel on the normal equations, all columns at once; B's columns non-negative)."""
    X = np.asarray(X, dtype=float)
    single = X.ndim == 1
    X2 = X[:, None] if single else X
    G = B.T @ B
    g = B.T @ X2
    A = np.zeros((B.shape[1], X2.shape[1]))
    for _ in range(iterations):
        for j in range(A.shape[0]):
            if G[j, j] > 0:
                A[j] = np.maximum(0.0, A[j] + (g[j] - G[j] @ A) / G[j, j])
    return A[:, 0] if single else A


def relative_error(B: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Per snapshot column: ||x - B a|| / ||x|| with a >= 0 the best non-negative fit (0 for a
    zero column)."""
    A = project(B, X)
    nx = np.linalg.norm(X, axis=0)
    res = np.linalg.norm(X - B @ A, axis=0)
    return np.where(nx > 0, res / np.where(nx > 0, nx, 1), 0.0)


# ---- snapshots --------------------------------------------------------------------------------

def snapshot(scenes, seconds: float = 2.0, every: int = 10, overrides: dict | None = None):
    """Run each scene (its own scripted actuation) for `seconds`, recording every `every` steps
    the normal impulse of each disk-disk and disk-environment pair (summed over the pair's
    contact points). Every pair detected in the runs has a row (a potential contact, even if it
    never carried load); a step without load adds no column. Returns (X (pairs x snapshots),
    pair names [(geom, geom)])."""
    import mujoco

    import cusp

    columns, index = [], {}
    for scene in scenes:
        model = cusp.compile_spec(cusp.load_spec(scene, **(overrides or {})), scene)
        data = mujoco.MjData(model)
        nstep = int(round(seconds / model.opt.timestep))
        for k in range(nstep):
            mujoco.mj_step(model, data)
            if k % every != every - 1:
                continue
            c = cusp.contacts(model, data)
            col = {}
            for (g1, g2), fn, kind in zip(c.geom, c.impulse[:, 0], c.kind):
                if kind != cusp.KIND_DISK:
                    continue
                key = (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, int(g1)) or str(g1),
                       mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, int(g2)) or str(g2))
                # every detected pair gets a row (a potential contact, possibly never loaded)
                index.setdefault(key, len(index))
                col[key] = col.get(key, 0.0) + max(float(fn), 0.0)
            if any(v > 0 for v in col.values()):
                columns.append(col)
    X = np.zeros((len(index), len(columns)))
    for j, col in enumerate(columns):
        for key, fn in col.items():
            X[index[key], j] = fn
    pairs = sorted(index, key=index.get)
    return X, pairs


def save_snapshot(path, X, pairs) -> None:
    np.savez(path, X=X, pairs=np.array(pairs, dtype=str).reshape(-1, 2))


def load_snapshot(path):
    with np.load(path) as f:
        return f["X"], [tuple(p) for p in f["pairs"]]


def save_basis(path, B, pairs) -> None:
    """The basis as the text file the `reduction_basis` config key reads
    (plugin/reduction_basis.h): a header 'cusp-reduction-basis NPAIR K', then per contact pair
    its two geom names and its K entries (>= 0)."""
    B = np.asarray(B, dtype=float)
    if B.ndim != 2 or B.shape[0] != len(pairs) or (B < 0).any() or not np.isfinite(B).all():
        raise ValueError("save_basis: B must be a finite non-negative (pairs x modes) matrix")
    lines = ["# contact-space basis: python -m cusp reduction basis (NNMF of a snapshot)",
             f"cusp-reduction-basis {B.shape[0]} {B.shape[1]}"]
    for (g1, g2), row in zip(pairs, B):
        lines.append(f"{g1} {g2} " + " ".join(f"{v:.17g}" for v in row))
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


def load_basis(path):
    """(B (pairs x modes), [(geom, geom)]) from a basis text file (see save_basis)."""
    rows, pairs, header = [], [], None
    for line in pathlib.Path(path).read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if header is None:
            if len(parts) != 3 or parts[0] != "cusp-reduction-basis":
                raise ValueError(f"{path}: expected 'cusp-reduction-basis NPAIR K'")
            header = (int(parts[1]), int(parts[2]))
            continue
        pairs.append((parts[0], parts[1]))
        rows.append([float(v) for v in parts[2:]])
    B = np.array(rows)
    if header is None or B.shape != header or (B < 0).any():
        raise ValueError(f"{path}: malformed basis (header {header}, rows {B.shape})")
    return B, pairs


# ---- command line -----------------------------------------------------------------------------

def _modes(text: str) -> list[int]:
    try:
        out = [int(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected integers like 1,2,5") from None
    if any(k < 1 for k in out):
        raise argparse.ArgumentTypeError(f"'{text}': modes must be >= 1")
    return out


def main(argv: list[str], parser_class=argparse.ArgumentParser) -> int:
    parser = parser_class(prog="python -m cusp reduction",
                          description="contact-space reduction: snapshots and NNMF bases")
    sub = parser.add_subparsers(dest="what", required=True)
    sn = sub.add_parser("snapshot", help="record normal impulses of scripted runs")
    sn.add_argument("scenes", nargs="+")
    sn.add_argument("--out", required=True)
    sn.add_argument("--seconds", type=float, default=2.0)
    sn.add_argument("--every", type=int, default=10, help="record every N steps")
    sn.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ba = sub.add_parser("basis", help="NNMF basis of a snapshot")
    ba.add_argument("snapshot")
    ba.add_argument("--modes", type=int, required=True)
    ba.add_argument("--out", required=True)
    ba.add_argument("--iterations", type=int, default=500)
    ba.add_argument("--seed", type=int, default=0)
    er = sub.add_parser("error", help="relative fit error of the snapshot vs basis size")
    er.add_argument("snapshot")
    er.add_argument("--modes", type=_modes, default=[1, 2, 5, 10, 25])
    args = parser.parse_args(argv)
    if args.what == "snapshot":
        overrides = {}
        for item in args.set:
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"--set '{item}': expected KEY=VALUE")
            overrides[key] = value
        X, pairs = snapshot(args.scenes, args.seconds, args.every, overrides)
        save_snapshot(args.out, X, pairs)
        print(f"{args.out}: {X.shape[0]} contact pairs x {X.shape[1]} snapshots")
        return 0
    X, pairs = load_snapshot(args.snapshot)
    if args.what == "basis":
        B, _ = nnmf(X, args.modes, args.iterations, args.seed)
        save_basis(args.out, B, pairs)
        err = relative_error(B, X)
        print(f"{args.out}: basis {B.shape[0]} x {B.shape[1]}; snapshot fit error "
              f"median {np.median(err):.3g}, max {err.max():.3g}")
        return 0
    print("modes  median_rel_error  max_rel_error")
    for k in args.modes:
        if k > min(X.shape):
            break
        B, _ = nnmf(X, k)
        err = relative_error(B, X)
        print(f"{k:5d}  {np.median(err):16.3g}  {err.max():13.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
