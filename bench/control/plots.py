#!/usr/bin/env python3
"""Controller plugins against stock MuJoCo contact: time series, plots and a summary per scene
(bench/results/control/).

Every scene runs its controller over the same scripted targets in three variants:

  cusp    cusp contact in the simulation; the controller as configured (cusp.inverse with
          contact="cusp": cusp's contacts in its model; cusp.avoid with its obstacles)
  ignore  cusp contact in the simulation; the controller blind to the contact (cusp.inverse with
          contact="ignore"; cusp.avoid without the pole)
  stock   the stock twin (cusp.stock_twin: cusp.contact removed, its geoms given MuJoCo contact);
          the same controller (cusp.inverse must then ignore contact: it refuses contact="cusp"
          in a model without cusp.contact)

Per scene: <scene>_<variant>.csv (one row per recorded step), <scene>_summary.csv (one row per
variant) and <scene>.png: target error, contact counts (cusp: sticking / sliding records; every
run: MuJoCo's d.ncon and how many of those carry force), actuation per variant, and the scene's
own panels (avoid_push: block position, tool-pole clearance from mj_geomDistance, penetrations).

A scene is one entry of SCENES: a function returning a Scene (file, controller plugin, variants,
target script, extra columns, extra panels). inverse_scene(...) makes one for any cusp.inverse
scene from its effectors and targets; a holding scene adds its object with
make_extra=body_positions("object"), panels=body_position_panels("object").

Usage: CUSP_PLUGIN=build/libcusp.so PYTHONPATH=python .venv/bin/python bench/control/plots.py
       [avoid_push] [inverse_lean] [inverse_lean_loaded] [inverse_hold] [--seconds T]
       [--variants cusp,ignore,stock] [--replot]
The inverse scenes are slower (Euler, h = 1e-4 s: 0.26-0.42 ms per step, so 3-4 s of wall time
per simulated second and variant on an idle AMD EPYC; several times that under load): --seconds
shortens them.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import os
import pathlib
import sys
import time
from typing import Callable

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
os.environ.setdefault("CUSP_PLUGIN", str(REPO / "build" / "libcusp.so"))

import matplotlib  # noqa: E402
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402

import cusp  # noqa: E402

OUT = REPO / "bench" / "results" / "control"

# state slots (plugin/control/avoid.h, plugin/control/inverse.h)
AVOID_FAILURES, AVOID_ACTIVE = 2, 4
INVERSE_FAILURES, INVERSE_CONTACTS, INVERSE_NORMAL_FORCE = 1, 2, 3


@dataclasses.dataclass
class Variant:
    key: str                       # file suffix: cusp, ignore, stock
    label: str                     # legend
    stock: bool                    # the stock twin instead of cusp contact
    controller: dict               # config overrides of the controller's instance


@dataclasses.dataclass
class Scene:
    name: str
    path: pathlib.Path
    controller: str                # plugin name: cusp.avoid or cusp.inverse
    seconds: float                 # default horizon (s)
    variants: list                 # [Variant]
    script: Callable               # script(m, d, t): move the targets before the step at time t
    target_error: Callable         # target_error(m, k) -> m, k: kinematics of the state (below)
    record_every: int = 1          # steps between recorded rows
    # extra(m, d, k) -> {column: value}; built per model by make_extra(m). Geometry is read from
    # k, an MjData whose kinematics are those of d's current qpos and mocap poses: after mj_step
    # d's own xpos/geom_xpos are those of a different configuration, and not the same one in
    # every variant (stock MuJoCo: the state before the step's integration; cusp.contact: the
    # free configuration q* of the step, where it ran its detection)
    make_extra: Callable | None = None
    # panels: [(ylabel, column, scale, ylim)], one axis each, every variant drawn; ylim: None
    # (automatic), (low, high) or "symlog" (forces whose impacts dwarf the resting values)
    panels: list = dataclasses.field(default_factory=list)
    # summary(columns, m) -> {name: value}, scene-specific numbers
    summary: Callable | None = None


# ---- running one variant -------------------------------------------------------------------

def controller_plugin(spec, name):
    for p in spec.plugins:
        if p.plugin_name == name:
            return p
    raise KeyError(f"{spec.modelname}: no {name} instance")


def compile_variant(scene, variant):
    """The scene's model for a variant: the stock twin or cusp contact, the controller's config
    overrides applied."""
    spec = cusp.load_spec(scene.path, stock=variant.stock)
    plugin = controller_plugin(spec, scene.controller)
    config = dict(plugin.config)
    config.update(variant.controller)
    plugin.config = config
    m = cusp.compile_spec(spec, scene.path)
    return m, mujoco.MjData(m)


def scene_instance(m, scene):
    """Index of the controller's plugin instance (the scenes name it 'avoid' or 'inverse')."""
    want = scene.controller.split(".")[1]
    for i in range(m.nplugin):
        if mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_PLUGIN, i) == want:
            return i
    raise KeyError(f"{scene.name}: no plugin instance named '{want}'")


def contact_columns(m, d, has_cusp):
    """Contact counts of the last step: cusp's records by mode (cusp runs), MuJoCo's d.ncon and
    the MuJoCo contacts in the constraint set that carry normal force (every run), and the total
    normal force of each (N)."""
    row = {}
    if has_cusp:
        c = cusp.contacts(m, d)
        row["cusp_records"] = len(c)
        row["sticking"] = int(np.sum(c.mode == cusp.MODE_STICK))
        row["sliding"] = int(np.sum(c.mode == cusp.MODE_SLIDE))
        row["cusp_normal_N"] = float(c.force[:, 0].sum()) if len(c) else 0.0
    else:
        row.update(cusp_records=0, sticking=0, sliding=0, cusp_normal_N=0.0)
    s = cusp.stock_contacts(m, d)
    row["mujoco_ncon"] = d.ncon
    row["mujoco_active"] = int(np.sum(s.force[:, 0] > 1e-9)) if len(s) else 0
    row["mujoco_normal_N"] = float(s.force[:, 0].sum()) if len(s) else 0.0
    return row


def run_variant(scene, variant, seconds):
    m, d = compile_variant(scene, variant)
    has_cusp = bool(cusp.instances(m, d))
    inst = scene_instance(m, scene)
    adr = m.plugin_stateadr[inst]
    failures_slot = AVOID_FAILURES if scene.controller == "cusp.avoid" else INVERSE_FAILURES
    extra = scene.make_extra(m) if scene.make_extra else None
    kin = mujoco.MjData(m)  # kinematics of the current state (see Scene.make_extra)
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"a{a}" for a in range(m.nu)]
    cols: dict = {}
    nstep = int(round(seconds / m.opt.timestep))
    start = time.perf_counter()
    for i in range(nstep):
        scene.script(m, d, d.time)
        mujoco.mj_step(m, d)
        if (i + 1) % scene.record_every and i + 1 != nstep:
            continue
        kin.qpos[:], kin.mocap_pos[:], kin.mocap_quat[:] = d.qpos, d.mocap_pos, d.mocap_quat
        mujoco.mj_kinematics(m, kin)
        row = {"t": d.time, "target_error_m": scene.target_error(m, kin)}
        row.update(contact_columns(m, d, has_cusp))
        row["controller_failures"] = d.plugin_state[adr + failures_slot]
        if extra:
            row.update(extra(m, d, kin))
        row.update({f"u_{n}": f for n, f in zip(names, d.actuator_force)})
        for k, v in row.items():
            cols.setdefault(k, []).append(v)
    wall = time.perf_counter() - start
    cols = {k: np.asarray(v, dtype=float) for k, v in cols.items()}
    return cols, m, wall / nstep


def write_csv(path, cols):
    names = list(cols)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(names)
        for row in zip(*(cols[n] for n in names)):
            w.writerow([f"{v:.9g}" for v in row])


def tail(cols, name, seconds):
    """The values of a column over the last `seconds` of the run."""
    t = cols["t"]
    return cols[name][t >= t[-1] - seconds + 1e-12]


def common_summary(cols, step_s):
    err = cols["target_error_m"]
    return {"final_target_error_mm": 1e3 * err[-1],
            "rest_target_error_mm": 1e3 * tail(cols, "target_error_m", 0.5).mean(),
            "max_sticking": cols["sticking"].max(), "max_sliding": cols["sliding"].max(),
            "max_mujoco_ncon": cols["mujoco_ncon"].max(),
            "controller_failures": cols["controller_failures"][-1],
            "wall_ms_per_step": 1e3 * step_s}


# ---- plotting ------------------------------------------------------------------------------

STYLE = {"cusp": dict(color="C0"), "ignore": dict(color="C1"), "stock": dict(color="C2")}


def plot(scene, runs):
    nvar = len(runs)
    naxes = 2 + len(scene.panels) + nvar
    fig, ax = plt.subplots(naxes, 1, figsize=(8, 2.1 * naxes), sharex=True)
    for key, (variant, cols, _m) in runs.items():
        st = STYLE.get(key, {})
        t = cols["t"]
        ax[0].semilogy(t, np.maximum(cols["target_error_m"], 1e-7) * 1e3, label=variant.label,
                       **st)
        if cols["cusp_records"].any():
            ax[1].plot(t, cols["sticking"], ls="-", label=f"{key}: cusp sticking", **st)
            ax[1].plot(t, cols["sliding"], ls="--", label=f"{key}: cusp sliding", **st)
        ax[1].plot(t, cols["mujoco_ncon"], ls=":", label=f"{key}: MuJoCo ncon", **st)
        ax[1].plot(t, cols["mujoco_active"], ls="-.", lw=0.8,
                   label=f"{key}: MuJoCo with force", **st)
        for k, (ylabel, column, scale, _ylim) in enumerate(scene.panels):
            if column in cols:
                ax[2 + k].plot(t, cols[column] * scale, label=variant.label, **st)
    for j, (key, (variant, cols, _m)) in enumerate(runs.items()):
        a = ax[2 + len(scene.panels) + j]
        for name in cols:
            if name.startswith("u_"):
                a.plot(cols["t"], cols[name], lw=0.8, label=name[2:])
        a.set_ylabel(f"actuation (N)\n{key}")
        if j == 0:
            a.legend(fontsize=6, ncol=5)
    ax[0].set_ylabel("target error (mm)")
    ax[1].set_ylabel("contacts")
    for k, (ylabel, _c, _s, ylim) in enumerate(scene.panels):
        ax[2 + k].set_ylabel(ylabel)
        if ylim == "symlog":
            ax[2 + k].set_yscale("symlog", linthresh=1.0)
        elif ylim:
            ax[2 + k].set_ylim(*ylim)
    ax[-1].set_xlabel("t (s)")
    ax[0].legend(fontsize=7)
    ax[1].legend(fontsize=6, ncol=2)
    for a in ax[2:2 + len(scene.panels)]:
        a.legend(fontsize=6)
    fig.suptitle(f"{scene.name}: {scene.controller}, cusp contact against stock MuJoCo contact",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    path = OUT / f"{scene.name}.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def run_scene(scene, seconds=None, keys=None, write=True):
    """Run a scene's variants; write CSVs, summary and PNG; return {key: (variant, cols, m)} and
    the summary rows."""
    seconds = seconds or scene.seconds
    runs, summary = {}, []
    for variant in scene.variants:
        if keys and variant.key not in keys:
            continue
        cols, m, step_s = run_variant(scene, variant, seconds)
        runs[variant.key] = (variant, cols, m)
        row = {"variant": variant.key, "seconds": seconds}
        row.update(common_summary(cols, step_s))
        if scene.summary:
            row.update(scene.summary(cols, m))
        summary.append(row)
        print(scene.name, variant.key, ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else
                                                 f"{k}={v}" for k, v in row.items()), flush=True)
        if write:
            OUT.mkdir(parents=True, exist_ok=True)
            write_csv(OUT / f"{scene.name}_{variant.key}.csv", cols)
    if write and runs:
        with open(OUT / f"{scene.name}_summary.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(summary[0]))
            w.writeheader()
            for row in summary:
                w.writerow({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()})
        print("wrote", plot(scene, runs))
    return runs, summary


def replot(scene):
    """The scene's PNG again from its CSVs (no simulation)."""
    runs = {}
    for variant in scene.variants:
        path = OUT / f"{scene.name}_{variant.key}.csv"
        if path.is_file():
            with open(path) as f:
                rows = list(csv.reader(f))
            a = np.array(rows[1:], dtype=float)
            runs[variant.key] = (variant, {n: a[:, j] for j, n in enumerate(rows[0])}, None)
    if not runs:
        raise SystemExit(f"{scene.name}: no series in {OUT}")
    print("wrote", plot(scene, runs))


# ---- scenes --------------------------------------------------------------------------------

# avoid_push: the tool goes from behind the pole to the back of the block in 2 s, then pushes it
# for 3 s to x = 0.1 m and holds there (the block's back face ends at 0.1 - 0.015 m).
PUSH_PATH = np.array([[-0.3, 0, 0.025], [-0.07, 0, 0.025], [0.1, 0, 0.025]])
PUSH_APPROACH, PUSH_DRIVE = 2.0, 3.0  # s
PUSH_FRICTION, PUSH_BLOCK_MASS = 0.5, 0.8  # the scene's block-floor friction and block mass (kg)


def push_target(t):
    if t < PUSH_APPROACH:
        return PUSH_PATH[0] + (PUSH_PATH[1] - PUSH_PATH[0]) * (t / PUSH_APPROACH)
    s = min((t - PUSH_APPROACH) / PUSH_DRIVE, 1.0)
    return PUSH_PATH[1] + (PUSH_PATH[2] - PUSH_PATH[1]) * s


def box_floor_penetration(m, d, geom):
    """m, how far the lowest corner of a box geom is below the floor plane z = 0 (0 if above)."""
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    local = corners * m.geom_size[geom]
    world = d.geom_xpos[geom] + local @ d.geom_xmat[geom].reshape(3, 3).T
    return max(0.0, -world[:, 2].min())


def avoid_push_extra(m):
    tool, pole, block = m.geom("tool").id, m.geom("pole").id, m.geom("block").id
    body = m.body("block").id
    adr = m.plugin_stateadr[[i for i in range(m.nplugin)
                             if mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_PLUGIN, i) == "avoid"][0]]
    ft = np.zeros(6)

    def extra(m, d, k):
        q = k.xquat[body]
        yaw = np.arctan2(2 * (q[0] * q[3] + q[1] * q[2]), 1 - 2 * (q[2] ** 2 + q[3] ** 2))
        return {"pole_clearance_m": mujoco.mj_geomDistance(m, k, tool, pole, 1.0, ft),
                "tool_block_distance_m": mujoco.mj_geomDistance(m, k, tool, block, 1.0, ft),
                "block_floor_penetration_m": box_floor_penetration(m, k, block),
                "block_x_m": k.xpos[body][0], "block_y_m": k.xpos[body][1],
                "block_z_m": k.xpos[body][2], "block_yaw_rad": yaw,
                "block_vx_m_s": d.qvel[m.jnt_dofadr[m.body_jntadr[body]]],
                "active_rows": d.plugin_state[adr + AVOID_ACTIVE]}
    return extra


def avoid_push_summary(cols, m):
    t = cols["t"]
    x = cols["block_x_m"]
    contact = cols["tool_block_distance_m"]
    # creep: the block's speed while the tool presses on it (within 0.1 mm) with a force below
    # 0.9 of the floor's friction limit mu m g, so that sticking should hold it (rigid friction:
    # no motion once the block has stopped; regularised friction: it creeps)
    limit = 0.9 * PUSH_FRICTION * PUSH_BLOCK_MASS * 9.81
    pressed = (contact < 1e-4) & (np.abs(cols["u_ax"]) < limit) & (np.abs(cols["u_ax"]) > 0.5)
    speed = np.abs(cols["block_vx_m_s"][pressed])
    last = t >= t[-1] - 0.5
    return {"min_pole_clearance_mm": 1e3 * cols["pole_clearance_m"].min(),
            "block_final_x_mm": 1e3 * x[-1], "block_final_y_mm": 1e3 * cols["block_y_m"][-1],
            "block_final_yaw_deg": np.degrees(cols["block_yaw_rad"][-1]),
            "block_moved_last_0.5s_mm": 1e3 * (x[last][-1] - x[last][0]),
            "subfriction_pressed_s": pressed.sum() * (t[1] - t[0]),
            "subfriction_median_block_speed_mm_s": 1e3 * np.median(speed) if len(speed) else np.nan,
            "max_block_floor_penetration_mm": 1e3 * cols["block_floor_penetration_m"].max(),
            "rest_block_floor_penetration_mm":
                1e3 * tail(cols, "block_floor_penetration_m", 0.5).mean(),
            "max_tool_block_penetration_mm": 1e3 * max(0.0, -contact.min()),
            "rest_tool_block_distance_mm": 1e3 * tail(cols, "tool_block_distance_m", 0.5).mean()}


def avoid_push_scene():
    return Scene(
        name="avoid_push", path=REPO / "mjcf" / "avoid_push.xml", controller="cusp.avoid",
        seconds=6.0,
        variants=[
            Variant("cusp", "cusp patch contact, avoidance of the pole", False, {}),
            Variant("ignore", "cusp patch contact, pole not in the controller", False,
                    {"obstacles": "floor", "clearance": "0", "influence": "0.001"}),
            Variant("stock", "stock MuJoCo contact, avoidance of the pole", True, {}),
        ],
        script=lambda m, d, t: d.mocap_pos.__setitem__(0, push_target(t)),
        target_error=lambda m, k: float(np.linalg.norm(
            k.site_xpos[m.site("tool_centre").id] - k.mocap_pos[0])),
        make_extra=avoid_push_extra,
        panels=[("block x (m)", "block_x_m", 1.0, None),
                ("block yaw (rad)", "block_yaw_rad", 1.0, None),
                ("tool-pole\nclearance (mm)", "pole_clearance_m", 1e3, (-10, 40)),
                ("block-floor\npenetration (mm)", "block_floor_penetration_m", 1e3, None),
                ("tool-block\ndistance (mm)", "tool_block_distance_m", 1e3, (-1.5, 3))],
        summary=avoid_push_summary)


def inverse_scene(name, path, seconds, script=None, record_every=20, make_extra=None,
                  panels=(), summary=None):
    """A cusp.inverse scene: the effectors and targets of its instance, the first effector's
    error as the target error (the others as columns), the smallest distance (mj_geomDistance;
    < 0: penetration) of the registered disks to the environment geoms and the patch bodies'
    geoms, and of those to the environment, the controller's predicted normal force against the
    applied one. ``script(m, d, t)`` moves the targets (default: they stay); ``make_extra``,
    ``panels`` and ``summary`` (as in Scene) add the scene's own columns, panels and numbers
    (an object's pose for a holding scene)."""
    spec = cusp.load_spec(path)
    config = controller_plugin(spec, "cusp.inverse").config
    effectors, targets = config["effectors"].split(), config["targets"].split()
    contact = controller_plugin(spec, "cusp.contact").config
    disks = contact.get("disks", "").split()
    environment = contact.get("environment", "").split()
    objects = [g.name for b in contact.get("bodies", "").split() for g in spec.body(b).geoms]
    if not environment or any(not n for n in objects):
        raise ValueError(f"{name}: inverse_scene needs the cusp.contact key 'environment' and "
                         "named geoms on the patch bodies")

    def make_columns(m):
        sites = [m.site(s).id for s in effectors]
        bodies = [m.body(b).id for b in targets]
        inst = [i for i in range(m.nplugin)
                if mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_PLUGIN, i) == "inverse"][0]
        adr = m.plugin_stateadr[inst]
        pairs = ([(m.geom(g).id, m.geom(e).id) for g in disks for e in environment + objects]
                 + [(m.geom(g).id, m.geom(e).id) for g in objects for e in environment])
        own = make_extra(m) if make_extra else None
        ft = np.zeros(6)

        envs = {m.geom(e).id for e in environment}

        def extra(m, d, k):
            row = {f"error_{s}_m": float(np.linalg.norm(k.site_xpos[i] - k.xpos[b]))
                   for s, i, b in zip(effectors, sites, bodies)}
            dist = min((mujoco.mj_geomDistance(m, k, g, e, 0.05, ft) for g, e in pairs),
                       default=0.05)
            # MuJoCo contacts not with the environment (the stock twin's disks among themselves)
            row["mujoco_self_contacts"] = sum(1 for c in d.contact[:d.ncon]
                                              if not envs & {c.geom[0], c.geom[1]})
            row["min_distance_to_environment_m"] = dist
            row["applied_normal_N"] = cusp.normal_force(m, d)  # cusp's, or MuJoCo's (stock)
            row["predicted_normal_N"] = d.plugin_state[adr + INVERSE_NORMAL_FORCE]
            row["model_contacts"] = d.plugin_state[adr + INVERSE_CONTACTS]
            if own:
                row.update(own(m, d, k))
            return row
        return extra

    def first_error(m, k):
        return float(np.linalg.norm(k.site_xpos[m.site(effectors[0]).id]
                                    - k.xpos[m.body(targets[0]).id]))

    def summary_all(cols, m):
        pen = np.maximum(0.0, -cols["min_distance_to_environment_m"])
        row = {f"rest_error_{s}_mm": 1e3 * tail(cols, f"error_{s}_m", 0.5).mean()
               for s in effectors}
        row["max_penetration_mm"] = 1e3 * pen.max()
        row["max_mujoco_self_contacts"] = cols["mujoco_self_contacts"].max()
        row["rest_penetration_mm"] = 1e3 * np.maximum(
            0.0, -tail(cols, "min_distance_to_environment_m", 0.5)).mean()
        row["rest_applied_normal_N"] = tail(cols, "applied_normal_N", 0.5).mean()
        row["rest_predicted_normal_N"] = tail(cols, "predicted_normal_N", 0.5).mean()
        applied = row["rest_applied_normal_N"]  # predicted against applied, if loaded (> 0.05 N)
        row["rest_force_difference_pct"] = (
            100 * abs(row["rest_predicted_normal_N"] - applied) / applied if applied > 0.05
            else np.nan)
        if summary:
            row.update(summary(cols, m))
        return row

    return Scene(
        name=name, path=path, controller="cusp.inverse", seconds=seconds,
        variants=[
            Variant("cusp", "cusp contact, cusp's contacts in the controller", False, {}),
            Variant("ignore", "cusp contact, controller ignores contact", False,
                    {"contact": "ignore"}),
            Variant("stock", "stock MuJoCo contact, controller ignores contact", True,
                    {"contact": "ignore"}),
        ],
        script=script or (lambda m, d, t: None), target_error=first_error,
        record_every=record_every, make_extra=make_columns,
        panels=[("min distance of\ndisks, objects (mm)", "min_distance_to_environment_m", 1e3,
                 (-2, 10)),
                ("applied normal\nforce (N)", "applied_normal_N", 1.0, "symlog"),
                ("predicted\nnormal force (N)", "predicted_normal_N", 1.0, "symlog"), *panels],
        summary=summary_all)


def body_positions(*bodies):
    """make_extra for a scene's own bodies (an object held or pushed): their positions (m) and
    their distance from where they started (m), as columns <body>_x_m ... <body>_moved_m; the
    matching panels are body_position_panels(*bodies)."""
    def make(m):
        ids = [m.body(b).id for b in bodies]
        start = {}

        def extra(m, d, k):
            row = {}
            for b, i in zip(bodies, ids):
                start.setdefault(b, k.xpos[i].copy())
                row.update({f"{b}_{a}_m": k.xpos[i][j] for j, a in enumerate("xyz")})
                row[f"{b}_moved_m"] = float(np.linalg.norm(k.xpos[i] - start[b]))
            return row
        return extra
    return make


def body_position_panels(*bodies):
    return [(f"{b} moved (mm)", f"{b}_moved_m", 1e3, None) for b in bodies]


def lower_shelf(release=0.6, speed=0.05):
    """script for inverse_hold: the shelf (mocap) moves down at `speed` (m/s) from `release` (s),
    leaving the parcel to the arm's grip"""
    def script(m, d, t):
        b = m.body("shelf")
        d.mocap_pos[b.mocapid[0]] = m.body_pos[b.id] - [0, 0, speed * max(0.0, t - release)]
    return script


# name -> function returning the Scene (built on demand: building reads the scene file)
SCENES = {
    "avoid_push": avoid_push_scene,
    "inverse_lean": lambda: inverse_scene("inverse_lean", REPO / "mjcf" / "inverse_lean.xml",
                                          seconds=5.0),
    "inverse_lean_loaded": lambda: inverse_scene(
        "inverse_lean_loaded", REPO / "mjcf" / "inverse_lean_loaded.xml", seconds=5.0),
    "inverse_hold": lambda: inverse_scene(
        "inverse_hold", REPO / "mjcf" / "inverse_hold.xml", seconds=2.0, script=lower_shelf(),
        make_extra=body_positions("parcel"), panels=body_position_panels("parcel")),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", nargs="*", default=["avoid_push"], help=" ".join(SCENES))
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--variants", default=None, help="comma-separated: cusp,ignore,stock")
    ap.add_argument("--replot", action="store_true", help="plots from the CSVs, no runs")
    args = ap.parse_args()
    cusp.load()
    keys = args.variants.split(",") if args.variants else None
    unknown = [n for n in args.which if n not in SCENES]
    if unknown:
        ap.error(f"unknown scene '{unknown[0]}' (scenes: {', '.join(SCENES)})")
    for name in args.which:
        if args.replot:
            replot(SCENES[name]())
        else:
            run_scene(SCENES[name](), args.seconds, keys)


if __name__ == "__main__":
    main()
