"""Comparison plots: trajectories told apart by axis colour (never a mode colour) and
by run line style; a scene without free bodies gets no empty trajectory panel and no warning;
the summary shows the largest one-step energy gain."""
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from cusp import plots  # noqa: E402

N = 50


def series(free_body: bool) -> dict:
    t = np.linspace(0.001, 0.05, N)
    s = {"time": t, "kinetic_J": t, "potential_J": -t, "max_penetration_m": 0 * t,
         "ncontact": np.ones(N), "nstick": np.ones(N), "nslide": 0 * t, "nbreak": 0 * t,
         "solver_iterations": 0 * t, "solver_status": 0 * t, "normal_force_N": 9.81 + 0 * t}
    if free_body:
        for k, axis in enumerate(("x", "y", "z", "qw", "qx", "qy", "qz")):
            s[f"box_{axis}"] = k + t
    return s


def runs(free_body: bool) -> dict:
    summary = {"max_penetration_m": 0.0, "energy_max_increase_J": 0.0, "energy_final_J": 0.0,
               "energy_max_step_increase_J": 1.5e-3, "solver_failures": 0, "us_per_step": 1.0}
    return {"cusp": (summary, series(free_body)), "stock": (summary, series(free_body))}


def hue(colour) -> float:
    return float(matplotlib.colors.rgb_to_hsv(matplotlib.colors.to_rgb(colour))[0]) * 360.0


def test_trajectory_axes_have_distinct_colours_none_a_mode_colour():
    fig, ax = plt.subplots()
    plots._draw("trajectory", ax, runs(True))
    lines = {line.get_label(): line for line in ax.lines}
    assert len(lines) == 6  # cusp and stock, x y z
    colours = {axis: lines[f"cusp box.{axis}"].get_color() for axis in "xyz"}
    hues = sorted(hue(c) for c in colours.values())
    assert min(np.diff(hues + [hues[0] + 360])) > 40  # three clearly different hues
    modes = [hue(c) for c in (plots.BAND_COLOURS["stick"], plots.BAND_COLOURS["slide"],
                              plots.BAND_COLOURS["break"])]
    for h in hues:
        assert min(abs((h - m + 180) % 360 - 180) for m in modes) > 20
    for axis in "xyz":  # the same axis has the same colour in both runs, solid vs dashed
        assert lines[f"stock box.{axis}"].get_color() == colours[axis]
        assert lines[f"cusp box.{axis}"].get_linestyle() == "-"
        assert lines[f"stock box.{axis}"].get_linestyle() == "--"
    plt.close(fig)


def test_scene_without_free_bodies_has_no_trajectory_panel_and_no_warning(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        written = plots.plot(runs(False), tmp_path)
    names = sorted(p.name for p in written)
    assert names == ["contact_force.png", "energy.png", "modes.png", "overview.png",
                     "penetration.png"]
    with_body = plots.plot(runs(True), tmp_path / "b", overview=False)
    assert "trajectory.png" in [p.name for p in with_body]


def test_summary_shows_the_largest_one_step_energy_gain():
    table = plots.summary_table(runs(True))
    assert "| largest one-step energy gain (J) | 0.0015 | 0.0015 |" in table
