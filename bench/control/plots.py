#!/usr/bin/env python3
"""Time series and plots of the controller plugins (bench/results/control/):

  avoid_push    cusp.avoid pushing a block around a pole, with and without the pole in the
                controller: tool-pole distance (mj_geomDistance), target error, block position,
                actuator forces, active separation rows.
  inverse_lean  cusp.inverse reaching while leaning, the contact model against contact ignored:
                tip and middle errors, predicted and applied normal force, contacts and their
                modes, chamber forces (slow: about 2 minutes per 5 s run on 2 CPUs).

Usage: CUSP_PLUGIN=build/libcusp.so .venv/bin/python bench/control/plots.py [avoid_push]
       [inverse_lean] [--seconds T]
"""
import argparse
import ctypes
import os
import pathlib
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import mujoco  # noqa: E402
import numpy as np  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "results" / "control"


def load(path, **config):
    xml = path.read_text()
    for key, value in config.items():
        if f'key="{key}"' in xml:
            xml = re.sub(f'key="{key}" value="[^"]*"', f'key="{key}" value="{value}"', xml)
        else:  # cusp.inverse keys not in the scene
            xml = xml.replace('<config key="targets"',
                              f'<config key="{key}" value="{value}" /><config key="targets"', 1)
    m = mujoco.MjModel.from_xml_string(xml)
    return m, mujoco.MjData(m)


def instance_of(m, name):
    for i in range(m.nplugin):
        if mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_PLUGIN, i) == name:
            return i
    raise KeyError(name)


def avoid_push(seconds):
    way = np.array([[-0.3, 0, 0.025], [-0.07, 0, 0.025], [0.1, 0, 0.025]])
    runs = {}
    for label, cfg in (("avoidance", {}),
                       ("pole not in the controller",
                        {"obstacles": "floor", "clearance": "0", "influence": "0.001"})):
        m, d = load(REPO / "mjcf" / "avoid_push.xml", **cfg)
        adr = m.plugin_stateadr[instance_of(m, "avoid")]
        tool, pole, ft = m.geom("tool").id, m.geom("pole").id, np.zeros(6)
        rows = []
        for i in range(int(seconds / m.opt.timestep)):
            t = i * m.opt.timestep
            x = (way[0] + (way[1] - way[0]) * min(t / 2, 1) if t < 2
                 else way[1] + (way[2] - way[1]) * min((t - 2) / 3, 1))
            d.mocap_pos[0] = x
            mujoco.mj_step(m, d)
            rows.append([d.time, mujoco.mj_geomDistance(m, d, tool, pole, 1.0, ft),
                         np.linalg.norm(d.site_xpos[m.site("tool_centre").id] - x),
                         d.xpos[m.body("block").id][0], *d.actuator_force,
                         d.plugin_state[adr + 4]])
        runs[label] = np.array(rows)
    OUT.mkdir(parents=True, exist_ok=True)
    for label, a in runs.items():
        np.savetxt(OUT / f"avoid_push_{label.split()[0]}.csv", a, delimiter=",",
                   header="t,pole_distance_m,target_error_m,block_x_m,fx,fy,fz,active_rows")
    fig, ax = plt.subplots(4, 1, figsize=(7, 9), sharex=True)
    for label, a in runs.items():
        ax[0].plot(a[:, 0], a[:, 1] * 1e3, label=label)
        ax[1].plot(a[:, 0], a[:, 2] * 1e3, label=label)
        ax[2].plot(a[:, 0], a[:, 3], label=label)
    a = runs["avoidance"]
    for k, name in enumerate("xyz"):
        ax[3].plot(a[:, 0], a[:, 4 + k], label=f"f{name}")
    ax[3].plot(a[:, 0], a[:, 7], "k:", label="active rows")
    ax[0].axhline(10, color="gray", ls="--", label="clearance")
    ax[0].set_ylabel("tool-pole distance (mm)")
    ax[1].set_ylabel("target error (mm)")
    ax[2].set_ylabel("block x (m)")
    ax[3].set_ylabel("actuator force (N)")
    ax[3].set_xlabel("t (s)")
    for a_ in ax:
        a_.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "avoid_push.png", dpi=110)
    print("wrote", OUT / "avoid_push.png")


def inverse_lean(seconds):
    lib = ctypes.CDLL(os.environ["CUSP_PLUGIN"])
    lib.cusp_contacts_copy.restype = ctypes.c_int
    runs = {}
    for label, cfg in (("cusp contacts", {}), ("contact ignored", {"contact": "ignore"})):
        m, d = load(REPO / "mjcf" / "inverse_lean.xml", **cfg)
        inv, con = instance_of(m, "inverse"), instance_of(m, "cusp")
        adr = m.plugin_stateadr[inv]
        tip, mid = m.site("arm_disk21_c0").id, m.site("arm_disk14_c0").id
        rows = []
        imp, mode = np.zeros(4 * 256), np.zeros(256, dtype=np.int32)
        for i in range(int(seconds / m.opt.timestep)):
            mujoco.mj_step(m, d)
            if i % 20:
                continue
            n = lib.cusp_contacts_copy(ctypes.c_void_p(m._address), ctypes.c_void_p(d._address),
                                       con, 256, None, None, imp.ctypes.data_as(ctypes.c_void_p),
                                       None, mode.ctypes.data_as(ctypes.c_void_p), None, None,
                                       None)
            st = d.plugin_state[adr:adr + 9]
            rows.append([d.time, np.linalg.norm(d.site_xpos[tip] - d.mocap_pos[0]),
                         np.linalg.norm(d.site_xpos[mid] - d.mocap_pos[1]), st[3],
                         imp[0:4 * n:4].sum() / m.opt.timestep, np.sum(mode[:n] == 1),
                         np.sum(mode[:n] == 2), *d.actuator_force])
        runs[label] = np.array(rows)
        print(label, "tip error at the end (mm):", 1e3 * runs[label][-1, 1])
    OUT.mkdir(parents=True, exist_ok=True)
    for label, a in runs.items():
        np.savetxt(OUT / f"inverse_lean_{label.split()[0]}.csv", a, delimiter=",",
                   header="t,tip_error_m,mid_error_m,predicted_normal_N,applied_normal_N,"
                          "sticking,sliding,u0..u8")
    fig, ax = plt.subplots(4, 1, figsize=(7, 10), sharex=True)
    for label, a in runs.items():
        ax[0].semilogy(a[:, 0], np.maximum(a[:, 1], 1e-6) * 1e3, label=f"tip, {label}")
        ax[0].semilogy(a[:, 0], np.maximum(a[:, 2], 1e-6) * 1e3, ls=":", label=f"middle, {label}")
    a = runs["cusp contacts"]
    ax[1].plot(a[:, 0], a[:, 3], label="predicted (controller)")
    ax[1].plot(a[:, 0], a[:, 4], label="applied (cusp.contact)", alpha=0.7)
    ax[2].plot(a[:, 0], a[:, 5], label="sticking contacts")
    ax[2].plot(a[:, 0], a[:, 6], label="sliding contacts")
    for k in range(9):
        ax[3].plot(a[:, 0], a[:, 7 + k], lw=0.8)
    ax[0].set_ylabel("effector error (mm)")
    ax[1].set_ylabel("normal force (N)")
    ax[2].set_ylabel("contacts")
    ax[3].set_ylabel("chamber force (N)")
    ax[3].set_xlabel("t (s)")
    for a_ in ax[:3]:
        a_.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "inverse_lean.png", dpi=110)
    print("wrote", OUT / "inverse_lean.png")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", nargs="*", default=["avoid_push"])
    ap.add_argument("--seconds", type=float, default=None)
    args = ap.parse_args()
    mujoco.mj_loadPluginLibrary(os.environ.get("CUSP_PLUGIN", str(REPO / "build" / "libcusp.so")))
    if "avoid_push" in args.which:
        avoid_push(args.seconds or 5.5)
    if "inverse_lean" in args.which:
        inverse_lean(args.seconds or 5.0)


if __name__ == "__main__":
    main()
