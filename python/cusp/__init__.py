"""cusp: complementarity contact for MuJoCo, from Python through the official bindings.

``load()`` registers the ``cusp.contact`` engine plugin (libcusp.so) with MuJoCo once;
``stock_twin(spec)`` turns a cusp scene into its stock-MuJoCo twin in memory; ``run(...)`` runs a
scene headless through the ``cusp-sim`` tool and returns its summary and time series.
"""
from __future__ import annotations

import csv
import io
import json
import os
import pathlib
import subprocess
import tempfile
import threading
from typing import Any

import mujoco

REPO = pathlib.Path(__file__).resolve().parents[2]
PLUGIN_NAME = "cusp.contact"
_load_lock = threading.Lock()
_loaded_path: str | None = None


def pinned_mujoco_version() -> str:
    """The MuJoCo version the project pins (the one line of MUJOCO_VERSION)."""
    return (REPO / "MUJOCO_VERSION").read_text().strip()


def plugin_path() -> pathlib.Path:
    """Where libcusp.so is: $CUSP_PLUGIN, next to this package, or the repository's build/."""
    env = os.environ.get("CUSP_PLUGIN")
    candidates = [pathlib.Path(env)] if env else []
    candidates += [pathlib.Path(__file__).parent / "libcusp.so", REPO / "build" / "libcusp.so"]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        "libcusp.so not found (looked at: " + ", ".join(map(str, candidates)) +
        "); build it with scripts/build or set CUSP_PLUGIN")


def build_dir() -> pathlib.Path:
    """The directory holding libcusp.so and the command line tools."""
    return plugin_path().parent


def load() -> str:
    """Load the plugin library into MuJoCo once per process; returns its path."""
    global _loaded_path
    with _load_lock:
        if _loaded_path is None:
            if mujoco.__version__ != pinned_mujoco_version():
                raise RuntimeError(
                    f"cusp was built for MuJoCo {pinned_mujoco_version()}, "
                    f"but this Python has mujoco {mujoco.__version__}")
            path = str(plugin_path())
            mujoco.mj_loadPluginLibrary(path)
            _loaded_path = path
        return _loaded_path


def _cusp_plugins(spec: mujoco.MjSpec) -> list:
    return [p for p in spec.plugins if p.plugin_name == PLUGIN_NAME]


def registered_geoms(spec: mujoco.MjSpec) -> list:
    """The geoms (MjsGeom) that the scene's cusp.contact instances register: the disks and
    every geom of the patch bodies."""
    geoms = []
    for plugin in _cusp_plugins(spec):
        config = plugin.config
        for name in config.get("disks", "").split():
            geom = spec.geom(name)
            if geom is None:
                raise ValueError(f"cusp.contact: config key 'disks' names no geom '{name}'")
            geoms.append(geom)
        for name in config.get("bodies", "").split():
            body = spec.body(name)
            if body is None:
                raise ValueError(f"cusp.contact: config key 'bodies' names no body '{name}'")
            geoms.extend(body.geoms)
    return geoms


def stock_twin(spec: mujoco.MjSpec) -> mujoco.MjSpec:
    """Edit ``spec`` in place into its stock twin and return it: every cusp.contact instance (and
    plugin sensor reading one) removed, every registered geom given contype = conaffinity = 1."""
    instances = {p.name for p in _cusp_plugins(spec)}
    for geom in registered_geoms(spec):
        geom.contype = 1
        geom.conaffinity = 1
    for sensor in list(spec.sensors):
        if sensor.type == mujoco.mjtSensor.mjSENS_PLUGIN and (
                sensor.plugin.plugin_name == PLUGIN_NAME or sensor.plugin.name in instances):
            spec.delete(sensor)
    for plugin in _cusp_plugins(spec):
        spec.delete(plugin)
    return spec


def load_spec(scene: str | os.PathLike, stock: bool = False, **overrides: Any) -> mujoco.MjSpec:
    """Parse a scene; apply config overrides (key=value) to its cusp.contact instance, or make
    its stock twin."""
    load()
    spec = mujoco.MjSpec.from_file(str(scene))
    if stock:
        return stock_twin(spec)
    for plugin in _cusp_plugins(spec):
        config = dict(plugin.config)
        config.update({k: str(v) for k, v in overrides.items()})
        plugin.config = config
    return spec


def sim_command(scene: str | os.PathLike, seconds: float | None = None, stock: bool = False,
                timestep: float | None = None, csv_path: str | None = None,
                solver: str | None = None, overrides: dict | None = None) -> list[str]:
    """The cusp-sim command line for these arguments."""
    cmd = [str(build_dir() / "cusp-sim"), str(scene)]
    if seconds is not None:
        cmd += ["--seconds", repr(float(seconds))]
    if timestep is not None:
        cmd += ["--timestep", repr(float(timestep))]
    if stock:
        cmd.append("--stock")
    if csv_path:
        cmd += ["--csv", csv_path]
    if solver:
        cmd += ["--solver", solver]
    for key, value in (overrides or {}).items():
        cmd += ["--set", f"{key}={value}"]
    return cmd


def run(scene: str | os.PathLike, seconds: float = 2.0, stock: bool = False,
        timestep: float | None = None, solver: str | None = None,
        **overrides: Any) -> tuple[dict, dict]:
    """Run a scene headless with cusp-sim. Returns (summary, series): the JSON summary and a dict
    of numpy arrays, one per CSV column (see README: time, kinetic_J, potential_J, ...)."""
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        csv_path = os.path.join(tmp, "run.csv")
        cmd = sim_command(scene, seconds, stock, timestep, csv_path, solver, overrides)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"cusp-sim failed ({done.returncode}): {done.stderr.strip()}")
        summary = json.loads(done.stdout.strip().splitlines()[-1])
        with open(csv_path) as f:
            text = f.read()
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    data = np.array(body, dtype=float).reshape(len(body), len(header))
    series = {name: data[:, i] for i, name in enumerate(header)}
    return summary, series


def compare(scene: str | os.PathLike, seconds: float = 2.0, **kwargs: Any) -> dict:
    """Run a scene with cusp and as its stock twin; returns {"cusp": (summary, series),
    "stock": (summary, series)}."""
    return {"cusp": run(scene, seconds, stock=False, **kwargs),
            "stock": run(scene, seconds, stock=True, **kwargs)}
