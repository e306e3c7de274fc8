"""cusp: complementarity contact for MuJoCo, from Python through the official bindings.

``load()`` registers the ``cusp.contact`` engine plugin (libcusp.so) with MuJoCo once;
``stock_twin(spec)`` turns a cusp scene into its stock-MuJoCo twin in memory; ``run(...)`` runs a
scene headless through the ``cusp-sim`` tool and returns its summary and time series;
``compare(...)`` runs a scene and its stock twin; ``contacts(model, data)`` returns the contact
results of the last step as numpy arrays.

The plugin keeps its state per ``MjData``: several ``MjData`` of one model can be stepped in
parallel threads (for example by ``mujoco.rollout``) and give the same results as one after the
other. Copies of an ``MjData`` (``copy.copy``, ``copy.deepcopy``, ``mujoco.mj_copyData``,
pickling) each get their own plugin instance; unpickling in a fresh process needs ``load()`` first.
"""
from __future__ import annotations

import ctypes
import csv
import dataclasses
import io
import json
import os
import pathlib
import subprocess
import tempfile
import threading
from typing import Any

# Headless machines: MuJoCo's offscreen renderer through EGL (Mesa) unless told otherwise; must be
# set before mujoco is imported. With a display (or under Xvfb) MuJoCo's default (GLFW) is kept.
if "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY"):
    os.environ["MUJOCO_GL"] = "egl"

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

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
        timestep: float | None = None, solver: str | None = None, progress: bool = False,
        **overrides: Any) -> tuple[dict, dict[str, np.ndarray]]:
    """Run a scene headless with cusp-sim (``stock=True``: its stock twin).

    Returns (summary, series): cusp-sim's JSON summary (dict) and its CSV as a dict of numpy
    arrays, one per column in CSV order: time (s), kinetic_J, potential_J, max_penetration_m,
    ncontact, nstick, nslide, nbreak, solver_iterations, solver_status, normal_force_N, then
    ``<body>_x, _y, _z, _qw, _qx, _qy, _qz`` for every free body (see README). ``overrides`` are
    config keys of the cusp.contact instance (``--set key=value``). ``progress``: a text progress
    bar on stderr while it runs."""
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = os.path.join(tmp, "run.csv")
        cmd = sim_command(scene, seconds, stock, timestep, csv_path, solver, overrides)
        if progress:
            from cusp.progress import run_with_progress

            label = f"{pathlib.Path(scene).name} {'stock' if stock else 'cusp'}"
            returncode, stdout, stderr = run_with_progress(cmd, csv_path, seconds, label)
        else:
            done = subprocess.run(cmd, capture_output=True, text=True)
            returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
        if returncode != 0:
            raise RuntimeError(f"cusp-sim failed ({returncode}): {stderr.strip()}")
        summary = json.loads(stdout.strip().splitlines()[-1])
        with open(csv_path) as f:
            text = f.read()
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    data = np.array(body, dtype=float).reshape(len(body), len(header))
    series = {name: data[:, i] for i, name in enumerate(header)}
    return summary, series


def compare(scene: str | os.PathLike, seconds: float = 2.0,
            **kwargs: Any) -> dict[str, tuple[dict, dict[str, np.ndarray]]]:
    """Run a scene with cusp and as its stock twin (same arguments as :func:`run`); returns
    ``{"cusp": (summary, series), "stock": (summary, series)}``."""
    return {"cusp": run(scene, seconds, stock=False, **kwargs),
            "stock": run(scene, seconds, stock=True, **kwargs)}


# ---- contact results of the last step (through libcusp.so's contacts_api.h) --------------------

#: record kinds of :class:`Contacts` (``kind`` column)
KIND_DISK, KIND_PATCH, KIND_POINT = 0, 1, 2
#: contact modes (``mode`` column; also the state counters nstick/nslide/nbreak)
MODE_BREAK, MODE_STICK, MODE_SLIDE = 0, 1, 2
MODE_NAMES = {MODE_BREAK: "break", MODE_STICK: "stick", MODE_SLIDE: "slide"}

_lib: ctypes.CDLL | None = None


def _library() -> ctypes.CDLL:
    """libcusp.so through ctypes (the same file MuJoCo loaded, so the same code)."""
    global _lib
    load()
    if _lib is None:
        lib = ctypes.CDLL(str(plugin_path()))
        vp, ip, dp = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_double)
        ipp = ctypes.POINTER(ctypes.c_int)
        lib.cusp_contacts_count.argtypes = [vp, vp, ip]
        lib.cusp_contacts_count.restype = ip
        lib.cusp_contacts_copy.argtypes = [vp, vp, ip, ip, dp, dp, dp, dp, ipp, ipp, ipp, ipp]
        lib.cusp_contacts_copy.restype = ip
        fp = ctypes.POINTER(ctypes.c_float)
        lib.cusp_visualize_export.argtypes = [vp, vp, ip, ip, ip, ipp, fp, fp, fp, fp]
        lib.cusp_visualize_export.restype = ip
        lib.cusp_contacts_normal_force.argtypes = [vp, vp, ip]
        lib.cusp_contacts_normal_force.restype = ctypes.c_double
        _lib = lib
    return _lib


@dataclasses.dataclass(frozen=True)
class Contacts:
    """Contact results of one cusp.contact instance after the last step (copies, SI units).

    One row per contact record: a disk contact (``kind`` 0), a surface patch of a registered
    rigid body reported at its equivalent contact point (ECP, ``kind`` 1), or a rigid point
    contact (``kind`` 2). ``n`` records:

    - ``pos`` (n, 3) m: contact point, for patches the ECP (world frame)
    - ``frame`` (n, 3, 3): rows t, o, n of the contact frame; ``normal`` = ``frame[:, 2]`` points
      from the touched geom towards the registered one
    - ``impulse`` (n, 3) N s: normal, along t, along o; ``torsion`` (n,) N m s about n (patches)
    - ``force`` (n, 3) N: ``impulse`` / time step
    - ``gap`` (n,) m: signed gap at the free configuration (< 0: penetration)
    - ``mode`` (n,) int: 0 break, 1 stick, 2 slide; ``kind`` (n,) int: 0 disk, 1 patch, 2 point
    - ``geom``, ``body`` (n, 2) int: the registered geom/body first, the one it touches second
    """

    pos: np.ndarray
    frame: np.ndarray
    impulse: np.ndarray
    torsion: np.ndarray
    force: np.ndarray
    gap: np.ndarray
    mode: np.ndarray
    kind: np.ndarray
    geom: np.ndarray
    body: np.ndarray

    @property
    def normal(self) -> np.ndarray:
        """(n, 3) unit contact normals."""
        return self.frame[:, 2, :]

    @property
    def ecp(self) -> np.ndarray:
        """(n, 3) m: the ECPs of the patch records (rows of ``pos`` with ``kind`` 1)."""
        return self.pos[self.kind == KIND_PATCH]

    def __len__(self) -> int:
        return len(self.mode)


def instances(model: mujoco.MjModel, data: mujoco.MjData) -> list[int]:
    """Indices of the model's plugin instances that are cusp.contact (with state in ``data``)."""
    lib = _library()
    m, d = ctypes.c_void_p(model._address), ctypes.c_void_p(data._address)
    return [i for i in range(model.nplugin) if lib.cusp_contacts_count(m, d, i) >= 0]


def _instance(model: mujoco.MjModel, data: mujoco.MjData, instance: int | None) -> int:
    found = instances(model, data)
    if instance is None:
        if not found:
            raise ValueError("the model has no cusp.contact instance (a stock twin?)")
        return found[0]
    if instance not in found:
        raise ValueError(f"plugin instance {instance} is not a cusp.contact instance "
                         f"(cusp.contact instances: {found})")
    return instance


def contacts(model: mujoco.MjModel, data: mujoco.MjData, instance: int | None = None) -> Contacts:
    """The contact results of the last ``mj_step`` of ``data`` (see :class:`Contacts`).

    ``instance``: plugin instance index (default: the first cusp.contact instance). Raises
    ValueError if the model has no such instance."""
    lib = _library()
    index = _instance(model, data, instance)
    m, d = ctypes.c_void_p(model._address), ctypes.c_void_p(data._address)
    n = lib.cusp_contacts_count(m, d, index)
    pos = np.zeros((n, 3))
    frame = np.zeros((n, 3, 3))
    impulse = np.zeros((n, 4))
    gap = np.zeros(n)
    mode = np.zeros(n, dtype=np.int32)
    kind = np.zeros(n, dtype=np.int32)
    geom = np.zeros((n, 2), dtype=np.int32)
    body = np.zeros((n, 2), dtype=np.int32)

    def ptr(a: np.ndarray, ctype: Any) -> Any:
        return a.ctypes.data_as(ctypes.POINTER(ctype))

    dbl = ctypes.c_double
    written = lib.cusp_contacts_copy(m, d, index, n, ptr(pos, dbl), ptr(frame, dbl),
                                     ptr(impulse, dbl), ptr(gap, dbl), ptr(mode, ctypes.c_int),
                                     ptr(kind, ctypes.c_int), ptr(geom, ctypes.c_int),
                                     ptr(body, ctypes.c_int))
    if written != n:
        raise RuntimeError(f"cusp_contacts_copy wrote {written} of {n} records")
    return Contacts(pos=pos, frame=frame, impulse=impulse[:, :3].copy(), torsion=impulse[:, 3].copy(),
                    force=impulse[:, :3] / model.opt.timestep, gap=gap, mode=mode, kind=kind,
                    geom=geom, body=body)


def normal_force(model: mujoco.MjModel, data: mujoco.MjData, instance: int | None = None) -> float:
    """N, the total normal contact force of the last step (the CSV column normal_force_N)."""
    lib = _library()
    index = _instance(model, data, instance)
    return float(lib.cusp_contacts_normal_force(ctypes.c_void_p(model._address),
                                                ctypes.c_void_p(data._address), index))


def show_contacts(option: mujoco.MjvOption, points: bool = True, forces: bool = True,
                  transparent: bool | None = None) -> None:
    """Switch cusp's markers in a viewer or renderer option: contact points and ECPs follow
    MuJoCo's mjVIS_CONTACTPOINT flag, force arrows mjVIS_CONTACTFORCE (keys C and F in the
    viewer). ``transparent`` (default: on when any marker is) sets mjVIS_TRANSPARENT (key T), so
    that markers under a body (the ECP of a patch) show through it."""
    option.flags[mujoco.mjtVisFlag.mjVIS_CONTACTPOINT] = int(points)
    option.flags[mujoco.mjtVisFlag.mjVIS_CONTACTFORCE] = int(forces)
    if transparent is None:
        transparent = points or forces
    option.flags[mujoco.mjtVisFlag.mjVIS_TRANSPARENT] = int(transparent)


def draw_markers(model: mujoco.MjModel, data: mujoco.MjData, option: mujoco.MjvOption,
                 scene: mujoco.MjvScene) -> int:
    """Put the markers cusp's visualize callback draws for ``data`` into ``scene`` (replacing
    its geoms), switched by ``option``'s contact flags like the callback. For viewers that render
    a copy of the mjData (MuJoCo's passive viewer: pass ``viewer.user_scn``), whose plugin
    instances never step. Returns the number of markers."""
    lib = _library()
    cap = scene.maxgeom
    kind = np.zeros(cap, dtype=np.int32)
    size, pos = np.zeros((cap, 3), np.float32), np.zeros((cap, 3), np.float32)
    mat, rgba = np.zeros((cap, 9), np.float32), np.zeros((cap, 4), np.float32)
    flags = option.flags
    fp = ctypes.POINTER(ctypes.c_float)
    n = lib.cusp_visualize_export(
        ctypes.c_void_p(model._address), ctypes.c_void_p(data._address),
        int(flags[mujoco.mjtVisFlag.mjVIS_CONTACTPOINT]),
        int(flags[mujoco.mjtVisFlag.mjVIS_CONTACTFORCE]), cap,
        kind.ctypes.data_as(ctypes.POINTER(ctypes.c_int)), size.ctypes.data_as(fp),
        pos.ctypes.data_as(fp), mat.ctypes.data_as(fp), rgba.ctypes.data_as(fp))
    if n < 0:
        raise MemoryError("cusp_visualize_export: out of memory")
    scene.ngeom = 0
    for k in range(n):
        geom = scene.geoms[k]
        mujoco.mjv_initGeom(geom, int(kind[k]), size[k].astype(float), pos[k].astype(float),
                            mat[k].astype(float), rgba[k])
        geom.category = mujoco.mjtCatBit.mjCAT_DECOR
    scene.ngeom = n
    return n

from .state import body_slot_names, slot_names, state  # noqa: E402,F401  (needs _library)
