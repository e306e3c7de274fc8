"""Outcome columns of sweep and compare: per free body the final position, the displacement, the
slip relative to a named body and the shares of steps sticking / sliding / without load. A block
on a 20 deg incline slides when mu < tan 20 deg = 0.364 (a = g (sin 20 - mu cos 20) down the
slope) and sticks otherwise: friction 0.3 and 0.6 must read differently, by those numbers."""
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import cusp
from cusp import plots, sweep

REPO = pathlib.Path(__file__).resolve().parents[2]
INCLINE = REPO / "mjcf" / "block_incline.xml"
G, ALPHA, H = 9.81, math.radians(20.0), 1e-3  # m/s^2, incline, the scene's time step (s)
DOWNHILL = np.array([math.cos(ALPHA), 0.0, -math.sin(ALPHA)])  # the incline's x axis, world


def slid(a, seconds):
    """Distance from the first CSV row (after one step) to the last, from rest, at a (m/s^2)."""
    return 0.5 * a * (seconds ** 2 - H ** 2)


def incline_rows(seconds, frictions, control=None):
    jobs = sweep.grid([INCLINE], {"friction": frictions}, [None], [None], seconds,
                      control=control)
    return {row["friction"]: row for row in map(sweep.run_job, jobs)}


def test_incline_sweep_slides_below_tan_alpha_and_sticks_above():
    seconds = 1.0
    rows = incline_rows(seconds, ["0.3", "0.6"])
    low, high = rows["0.3"], rows["0.6"]
    a = G * (math.sin(ALPHA) - 0.3 * math.cos(ALPHA))  # 0.590 m/s^2
    # sliding: the analytic distance within 1 %, every step sliding
    assert low["block_displacement_m"] == pytest.approx(slid(a, seconds), rel=0.01)
    assert low["block_slide"] >= 0.99 and low["block_stick"] <= 0.01
    # sticking: no motion at the micrometre level, every step sticking
    assert high["block_displacement_m"] < 1e-6
    assert high["block_stick"] >= 0.99 and high["block_slide"] <= 0.01
    # the final positions: down the slope by the displacement, or where it started
    start = np.array([0.02 * math.sin(ALPHA), 0.0, 0.02 * math.cos(ALPHA)])
    end = np.array([low[f"block_{k}_m"] for k in "xyz"])
    assert np.allclose(end, start + slid(a, seconds) * DOWNHILL, atol=2e-3 * slid(a, seconds))
    assert np.allclose([high[f"block_{k}_m"] for k in "xyz"], start, atol=1e-6)


def test_sweep_control_pushes_a_sticking_block_down_the_slope(tmp_path):
    """--control: a controller pushing the block downhill with 10 N makes the mu = 0.6 block
    slide at a = (10 N + m g (sin 20 - 0.6 cos 20)) / m."""
    push = tmp_path / "push.py"
    push.write_text("import numpy as np\n"
                    f"F = 10.0 * np.array({DOWNHILL.tolist()})\n"
                    "def ctrl(model, data):\n"
                    "    data.xfrc_applied[model.body('block').id, :3] = F\n")
    seconds, mass = 0.5, 0.8
    rows = incline_rows(seconds, ["0.6"], control=f"{push}:ctrl")
    a = 10.0 / mass + G * (math.sin(ALPHA) - 0.6 * math.cos(ALPHA))  # 10.3 m/s^2
    assert rows["0.6"]["block_displacement_m"] == pytest.approx(slid(a, seconds), rel=0.01)
    assert rows["0.6"]["block_slide"] >= 0.99


def test_sweep_command_line_writes_the_outcome_columns(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    done = subprocess.run([sys.executable, "-m", "cusp", "sweep", str(INCLINE), "--set",
                           "friction=0.3,0.6", "--seconds", "0.5", "--workers", "1", "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    import csv

    with open(tmp_path / "out" / "sweep.csv") as f:
        rows = {r["friction"]: r for r in csv.DictReader(f)}
    a = G * (math.sin(ALPHA) - 0.3 * math.cos(ALPHA))
    assert float(rows["0.3"]["block_displacement_m"]) == pytest.approx(slid(a, 0.5), rel=0.01)
    assert float(rows["0.6"]["block_displacement_m"]) < 1e-6
    assert float(rows["0.3"]["block_slide"]) >= 0.99 and float(rows["0.6"]["block_stick"]) >= 0.99
    assert "block moved 0.0 mm, stick/slide/break 100/0/0 %" in done.stderr


def test_sweep_refuses_an_unknown_relative_to_body_before_ray(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), RAY_TMPDIR=str(tmp_path / "ray"))
    done = subprocess.run([sys.executable, "-m", "cusp", "sweep", str(INCLINE),
                           "--relative-to", "table", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    assert done.stderr == ("python -m cusp sweep: --relative-to 'table': not a free body of "
                           "block_incline.xml; free bodies: block (python -m cusp sweep --help "
                           "for usage)\n")
    assert not (tmp_path / "ray").exists()


def _series(positions_a, quats_b, positions_b):
    """Two free bodies a and b over len(positions_a) rows, a with identity orientation."""
    n = len(positions_a)
    s = {"time": np.arange(1, n + 1) * H}
    for body, pos, quat in (("a", positions_a, [[1, 0, 0, 0]] * n), ("b", positions_b, quats_b)):
        pos, quat = np.asarray(pos, float), np.asarray(quat, float)
        for k, axis in enumerate("xyz"):
            s[f"{body}_{axis}"] = pos[:, k]
        for k, axis in enumerate(("qw", "qx", "qy", "qz")):
            s[f"{body}_{axis}"] = quat[:, k]
    return s


def test_slip_is_motion_in_the_reference_bodys_frame():
    # b turns 90 deg about z and moves; a rides on it (fixed in b's frame): slip 0, though a
    # moved 1.414 m
    c, s = math.cos(math.pi / 4), math.sin(math.pi / 4)
    quats_b = [[1, 0, 0, 0], [c, 0, 0, s]]
    pos_b = [[0, 0, 0], [2, 0, 0]]
    pos_a = [[1, 0, 0], [2, 1, 0]]  # b's +x axis is world +y after the turn
    out = plots.outcomes(_series(pos_a, quats_b, pos_b), relative_to="b")
    assert out["a_slip_m"] == pytest.approx(0.0, abs=1e-12)
    assert out["a_displacement_m"] == pytest.approx(math.sqrt(2.0))
    assert "b_displacement_m" not in out  # the reference itself
    # a slides 0.3 m along b's own x axis (world +y after the turn)
    out = plots.outcomes(_series([[1, 0, 0], [2, 1.3, 0]], quats_b, pos_b), relative_to="b")
    assert out["a_slip_m"] == pytest.approx(0.3)
    # no mode columns (a stock run): the shares are unknown, not 0
    assert math.isnan(out["a_stick"])
    with pytest.raises(ValueError, match="--relative-to 'c': not a free body of the run; free "
                                         "bodies: a, b"):
        plots.outcomes(_series(pos_a, quats_b, pos_b), relative_to="c")


def test_compare_summary_names_displacement_slip_and_modes(tmp_path):
    runs = plots.compare_to_dir(INCLINE, tmp_path, seconds=0.3, progress=False,
                                overview_only=True, friction=0.3)
    text = (tmp_path / "summary.md").read_text()
    a = G * (math.sin(ALPHA) - 0.3 * math.cos(ALPHA))
    row = next(line for line in text.splitlines() if line.startswith("| block displacement (mm)"))
    cusp_mm = float(row.split("|")[2])
    assert cusp_mm == pytest.approx(1e3 * slid(a, 0.3), rel=0.01)
    assert "| block stick / slide / break (% of steps) | 0 / 100 / 0 |" in text
    assert set(runs) == {"cusp", "stock"}
    with pytest.raises(ValueError, match="--relative-to 'floor'"):
        plots.compare_to_dir(INCLINE, tmp_path, seconds=0.01, progress=False, overview_only=True,
                             relative_to="floor")
    assert cusp.MODE_SLIDE == 2  # the mode the slide share counts
