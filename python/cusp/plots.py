"""Cusp-vs-stock comparison pictures and summary (``python -m cusp compare``): penetration,
kinetic + potential energy, total normal contact force, the stick/slide/break timeline as coloured
bands, and the trajectories of the free bodies, cusp and stock on the same axes."""
from __future__ import annotations

import os
import pathlib
from typing import Any

import numpy as np

import cusp

Series = dict[str, np.ndarray]
RUN_STYLE = {"cusp": dict(color="tab:blue", lw=1.6), "stock": dict(color="tab:orange", lw=1.2,
                                                                    ls="--")}
#: trajectories: one colour per axis (none of them a mode colour), the run by line style
AXIS_COLOURS = {"x": "tab:purple", "y": "tab:olive", "z": "tab:cyan"}
#: timeline colours: the viewer's marker colours, grey for "in contact" without modes (stock)
BAND_COLOURS = {"stick": (0.1, 0.3, 1.0), "slide": (1.0, 0.1, 0.1), "break": (0.1, 0.8, 0.1),
                "contact": (0.55, 0.55, 0.55)}
PLOTS = ("penetration", "energy", "contact_force", "modes", "trajectory")


def timeline(series: Series) -> np.ndarray:
    """Per step: the contact state as a label, '' for no contact. cusp: 'slide' if any kept
    contact slides, else 'stick' if any sticks, else 'break' (contacts without impulse); per-body
    ``<body>_mode`` columns (if the CSV has them) are used the same way. Stock MuJoCo has no modes:
    'contact' while it has contacts on registered geoms."""
    n = len(series["time"])
    mode_cols = [k for k in series if k.endswith("_mode")]
    nstick = series["nstick"].copy()
    nslide = series["nslide"].copy()
    nbreak = series["nbreak"].copy()
    for col in mode_cols:
        nstick += series[col] == cusp.MODE_STICK
        nslide += series[col] == cusp.MODE_SLIDE
    labels = np.full(n, "", dtype=object)
    contact = series["ncontact"] > 0
    has_modes = (nstick + nslide + nbreak) > 0
    labels[contact & ~has_modes] = "contact"
    labels[contact & (nbreak > 0)] = "break"
    labels[nstick > 0] = "stick"
    labels[nslide > 0] = "slide"
    return labels


def _bands(ax: Any, time: np.ndarray, labels: np.ndarray, y: float, height: float) -> None:
    start = 0
    for i in range(1, len(labels) + 1):
        if i == len(labels) or labels[i] != labels[start]:
            if labels[start]:
                t0 = time[start - 1] if start else 0.0
                ax.broken_barh([(t0, time[i - 1] - t0)], (y, height),
                               facecolors=[BAND_COLOURS[labels[start]]])
            start = i


def free_bodies(series: Series) -> list[str]:
    """Names of the free bodies whose poses the CSV carries (``<body>_x`` columns)."""
    return [k[:-2] for k in series if k.endswith("_x") and k[:-2] + "_qw" in series]


def _quat_rotate_inv(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """v expressed in the frame of unit quaternion q (w, x, y, z): R(q)^T v."""
    w, u = q[0], -np.asarray(q[1:4])
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def outcomes(series: Series, relative_to: str | None = None) -> dict[str, float]:
    """What happened to every free body of a run (the CSV's ``<body>_x`` ... columns): its final
    position ``<body>_x_m``, ``_y_m``, ``_z_m``; ``<body>_displacement_m``, the distance from
    its first row (after the first step) to its last; with ``relative_to`` (another free body),
    ``<body>_slip_m``: how far it moved in that body's frame (the change of their relative
    position expressed in ``relative_to``'s orientation; 0 for two bodies moving as one); and for
    a body registered with cusp (``<body>_mode`` columns) the shares of steps its largest patch
    sticks (``<body>_stick``), slides (``_slide``) or carries no load (``_break``: contact without
    impulse, or none), each in [0, 1] (NaN in a stock run, where MuJoCo has no modes). Raises
    ValueError for a ``relative_to`` that is not a free body of the run."""
    bodies = free_bodies(series)
    if relative_to is not None and relative_to not in bodies:
        raise ValueError(f"--relative-to '{relative_to}': not a free body of the run; free "
                         f"bodies: {', '.join(bodies) or 'none'}")
    out: dict[str, float] = {}

    def position(body: str, i: int) -> np.ndarray:
        return np.array([series[f"{body}_{a}"][i] for a in "xyz"])

    def quat(body: str, i: int) -> np.ndarray:
        return np.array([series[f"{body}_{a}"][i] for a in ("qw", "qx", "qy", "qz")])

    for body in bodies:
        if relative_to is not None and body == relative_to:
            continue
        first, last = position(body, 0), position(body, -1)
        for a, value in zip("xyz", last):
            out[f"{body}_{a}_m"] = float(value)
        out[f"{body}_displacement_m"] = float(np.linalg.norm(last - first))
        if relative_to is not None:
            before = _quat_rotate_inv(quat(relative_to, 0), first - position(relative_to, 0))
            after = _quat_rotate_inv(quat(relative_to, -1), last - position(relative_to, -1))
            out[f"{body}_slip_m"] = float(np.linalg.norm(after - before))
        mode = series.get(f"{body}_mode")
        n = len(series["time"])
        for name, value in (("stick", cusp.MODE_STICK), ("slide", cusp.MODE_SLIDE),
                            ("break", cusp.MODE_BREAK)):
            out[f"{body}_{name}"] = (float(np.count_nonzero(mode == value)) / n
                                     if mode is not None and n else float("nan"))
    return out


def _draw(name: str, ax: Any, runs: dict[str, tuple[dict, Series]]) -> None:
    if name == "modes":
        for row, (label, (_, s)) in enumerate(runs.items()):
            _bands(ax, s["time"], timeline(s), row + 0.1, 0.8)
        ax.set_yticks([0.5 + i for i in range(len(runs))], list(runs))
        ax.set_ylim(0, len(runs) + 0.9)  # headroom for the legend
        from matplotlib.patches import Patch

        ax.legend(handles=[Patch(color=c, label=k) for k, c in BAND_COLOURS.items()],
                  loc="upper right", ncol=4, fontsize=7, framealpha=0.8)
        ax.set_title("contact mode timeline")
        return
    for label, (_, s) in runs.items():
        t = s["time"]
        style = RUN_STYLE.get(label, {})
        if name == "penetration":
            ax.plot(t, 1e3 * s["max_penetration_m"], label=label, **style)
            ax.set_ylabel("max penetration (mm)")
        elif name == "energy":
            ax.plot(t, s["kinetic_J"] + s["potential_J"], label=f"{label} KE+PE", **style)
            ax.plot(t, s["kinetic_J"], label=f"{label} KE", alpha=0.6,
                    **{**style, "lw": 0.8, "ls": ":"})
            ax.set_ylabel("energy (J)")
        elif name == "contact_force":
            if "normal_force_N" in s:
                ax.plot(t, s["normal_force_N"], label=label, **style)
            ax.set_ylabel("total normal force (N)")
        elif name == "trajectory":
            bodies = free_bodies(s)
            for k, body in enumerate(bodies):
                for axis in "xyz":
                    ax.plot(t, s[f"{body}_{axis}"], label=f"{label} {body}.{axis}",
                            **{**style, "color": AXIS_COLOURS[axis],
                               "alpha": 1.0 - 0.5 * k / max(len(bodies), 1)})
            ax.set_ylabel("position (m)")
    ax.set_title({"penetration": "penetration of registered contacts",
                  "energy": "kinetic + potential energy", "contact_force": "contact force",
                  "trajectory": "free-body trajectories"}[name])
    ax.legend(fontsize=7, loc="best")


def figure(runs: dict[str, tuple[dict, Series]], which: tuple[str, ...] = PLOTS,
           title: str = "") -> Any:
    """The stacked comparison as a matplotlib Figure (overview.png; in a notebook it shows
    inline): one panel per plot in ``which`` (no trajectory panel without free bodies), cusp
    solid, stock dashed."""
    import matplotlib.pyplot as plt

    if not any(free_bodies(series) for _, series in runs.values()):
        which = tuple(name for name in which if name != "trajectory")
    heights = [0.6 if n == "modes" else 1.0 for n in which]
    fig, axes = plt.subplots(len(which), 1, figsize=(7, 2.3 * sum(heights) + 0.6),
                             sharex=True, gridspec_kw=dict(height_ratios=heights))
    for name, ax in zip(which, np.atleast_1d(axes)):
        _draw(name, ax, runs)
    np.atleast_1d(axes)[-1].set_xlabel("time (s)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def plot(runs: dict[str, tuple[dict, Series]], out_dir: str | os.PathLike, title: str = "",
         which: tuple[str, ...] = PLOTS, singles: bool = True, overview: bool = True,
         dpi: int = 90) -> list[pathlib.Path]:
    """Write one PNG per plot in ``which`` (``<name>.png``) if ``singles`` and, if ``overview``,
    all of them stacked in ``overview.png``. ``runs``: {"cusp": (summary, series), "stock": ...} as returned
    by :func:`cusp.compare`. A scene without free bodies gets no trajectory plot. Returns the
    files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if not any(free_bodies(series) for _, series in runs.values()):
        which = tuple(name for name in which if name != "trajectory")  # nothing to draw there
    written = []
    for name in which if singles else ():
        fig, ax = plt.subplots(figsize=(7, 3.2 if name != "modes" else 1.8))
        _draw(name, ax, runs)
        ax.set_xlabel("time (s)")
        fig.suptitle(title, fontsize=9)
        fig.tight_layout()
        path = out / f"{name}.png"
        fig.savefig(path, dpi=dpi)
        plt.close(fig)
        written.append(path)
    if overview:
        fig = figure(runs, which, title)
        path = out / "overview.png"
        fig.savefig(path, dpi=dpi)
        plt.close(fig)
        written.append(path)
    return written


def metrics(summary: dict, series: Series, relative_to: str | None = None) -> dict[str, Any]:
    """Numbers of one run for the summary table (the outcomes of :func:`outcomes` per body)."""
    labels = timeline(series)
    n = max(len(labels), 1)
    row = {
        "max penetration (mm)": 1e3 * summary["max_penetration_m"],
        "energy max increase (J)": summary["energy_max_increase_J"],
        "largest one-step energy gain (J)": summary.get("energy_max_step_increase_J",
                                                        float("nan")),
        "energy final (J)": summary["energy_final_J"],
        "mean normal force (N)": float(np.mean(series["normal_force_N"]))
        if "normal_force_N" in series else float("nan"),
        "steps stick / slide / break / contact without mode / none (%)": " / ".join(
            f"{100 * np.count_nonzero(labels == k) / n:.0f}"
            for k in ("stick", "slide", "break", "contact", "")),
        "solver failures": summary["solver_failures"],
        "us per step": summary["us_per_step"],
    }
    out = outcomes(series, relative_to)
    for body in free_bodies(series):
        if f"{body}_displacement_m" not in out:
            continue  # the reference body itself
        row[f"{body} final x, y, z (m)"] = ", ".join(f"{out[f'{body}_{a}_m']:.4f}" for a in "xyz")
        row[f"{body} displacement (mm)"] = 1e3 * out[f"{body}_displacement_m"]
        if relative_to is not None:
            row[f"{body} slip relative to {relative_to} (mm)"] = 1e3 * out[f"{body}_slip_m"]
        if not np.isnan(out[f"{body}_stick"]):
            row[f"{body} stick / slide / break (% of steps)"] = " / ".join(
                f"{100 * out[f'{body}_{k}']:.0f}" for k in ("stick", "slide", "break"))
    return row


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def summary_table(runs: dict[str, tuple[dict, Series]], relative_to: str | None = None) -> str:
    """A Markdown table: one row per metric, one column per run."""
    rows = {label: metrics(*run, relative_to=relative_to) for label, run in runs.items()}
    keys = list(dict.fromkeys(k for r in rows.values() for k in r))
    lines = ["| | " + " | ".join(rows) + " |", "|---|" + "---|" * len(rows)]
    for key in keys:
        lines.append(f"| {key} | " + " | ".join(_fmt(r.get(key, "")) for r in rows.values()) + " |")
    return "\n".join(lines)


def write_summary(runs: dict[str, tuple[dict, Series]], scene: str | os.PathLike,
                  seconds: float, out_dir: str | os.PathLike,
                  pictures: list[pathlib.Path], relative_to: str | None = None) -> pathlib.Path:
    """Write ``summary.md`` in out_dir: the table and links to the pictures."""
    out = pathlib.Path(out_dir)
    name = pathlib.Path(cusp.scene_name(scene)).name
    text = [f"# {name}: cusp vs stock MuJoCo, {seconds:g} s", "",
            summary_table(runs, relative_to), ""]
    text += [f"![{p.stem}]({p.name})" for p in pictures]
    path = out / "summary.md"
    path.write_text("\n".join(text) + "\n")
    return path


def compare_to_dir(scene: str | os.PathLike, out_dir: str | os.PathLike, seconds: float = 2.0,
                   progress: bool = True, overview_only: bool = False,
                   relative_to: str | None = None,
                   **kwargs: Any) -> dict[str, tuple[dict, Series]]:
    """Run a scene with cusp and stock (:func:`cusp.compare`), write the PNGs and summary.md to
    out_dir (outcomes per body, slip relative to ``relative_to``); returns the runs."""
    runs = cusp.compare(scene, seconds, progress=progress, **kwargs)
    for _, series in runs.values():
        outcomes(series, relative_to)  # a bad relative_to: one line, before any picture
    title = f"{pathlib.Path(cusp.scene_name(scene)).name}: cusp (solid) vs stock (dashed)"
    pictures = plot(runs, out_dir, title=title, singles=not overview_only)
    write_summary(runs, scene, seconds, out_dir, pictures, relative_to)
    return runs


# ---- a plan against its replays (python -m cusp plan) ------------------------------------------

#: replays by line colour; the plan is dashed black, replays solid
REPLAY_COLOURS = {("cusp", "open loop"): "tab:blue", ("cusp", "feedback"): "tab:green",
                  ("cusp", "re-planning"): "tab:purple",
                  ("stock", "open loop"): "tab:orange", ("stock", "feedback"): "tab:red",
                  ("stock", "re-planning"): "tab:brown"}


def _rotation_about(quat: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Signed rotation angle (deg) of unit quaternions (rows) about axis: 2 atan2(v . a, w)."""
    q = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    return np.degrees(2 * np.arctan2(q[:, 1:] @ axis, q[:, 0]))


def plan_figure(plan: Any, replays: list) -> Any:
    """Plan (dashed) against its MuJoCo replays (solid): the sphere's rotation about the task
    axis, its orientation error to the target, the normal force between tip disk and sphere,
    and the nine chamber lengths (plan and the first replay)."""
    import matplotlib.pyplot as plt

    axis = plan.target[1:] / max(np.linalg.norm(plan.target[1:]), 1e-12)
    tp = plan.h * np.arange(len(plan.q))
    fig, axes = plt.subplots(4, 1, figsize=(7.5, 11), sharex=True)
    ax = axes[0]
    ax.plot(tp, _rotation_about(plan.q, axis), "k--", lw=1.6, label="plan")
    for r in replays:
        ax.plot(r.time, _rotation_about(r.quat, axis), color=REPLAY_COLOURS[(r.mode, r.control)],
                lw=1.2, label=f"{r.mode}, {r.control}")
    ax.axhline(np.degrees(2 * np.arctan2(plan.target[1:] @ axis, plan.target[0])), color="grey",
               lw=0.8, ls=":")
    ax.set_ylabel("rotation about axis (deg)")
    ax.legend(fontsize=8)
    ax = axes[1]
    from cusp.plan.sphere import angle_between

    ax.semilogy(tp, [max(angle_between(q, plan.target), 1e-6) for q in plan.q], "k--", lw=1.6)
    for r in replays:
        err = [max(angle_between(q, plan.target), 1e-6) for q in r.quat[::10]]
        ax.semilogy(r.time[::10], err, color=REPLAY_COLOURS[(r.mode, r.control)], lw=1.2)
    ax.set_ylabel("error to target (deg)")
    ax = axes[2]
    ax.step(plan.h * np.arange(1, len(plan.fn) + 1), plan.fn, "k--", where="pre", lw=1.6)
    for r in replays:
        ax.plot(r.time, r.normal, color=REPLAY_COLOURS[(r.mode, r.control)], lw=0.8)
    ax.set_ylabel("normal force (N)")
    ax = axes[3]
    if replays:
        for j in range(plan.l.shape[1]):
            colour = f"C{j}"
            ax.plot(tp, 1000 * plan.l[:, j], "--", color=colour, lw=1.2)
            ax.plot(replays[0].time, 1000 * replays[0].lengths[:, j], color=colour, lw=0.8)
    ax.set_ylabel(f"chamber lengths (mm)\n({replays[0].mode if replays else ''} solid)")
    ax.set_xlabel("time (s)")
    fig.tight_layout()
    return fig


def plan_plot(plan: Any, replays: list, path: str | os.PathLike, dpi: int = 110) -> pathlib.Path:
    """plan_figure written as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = plan_figure(plan, replays)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
