"""cusp: complementarity contact for MuJoCo, from Python through the official bindings.

``import cusp`` registers the ``cusp.contact`` engine plugin (libcusp.so) with MuJoCo (so does
``import mujoco`` once cusp is pip-installed, through the ``mujoco.plugins`` entry point);
``load()`` does it explicitly and raises :class:`PluginError` if it cannot;
``stock_twin(spec)`` turns a cusp scene into its stock-MuJoCo twin in memory; ``run(...)`` runs a
scene headless with ``cusp-sim``'s own loop, in this process, and returns its summary and time
series; ``compare(...)`` runs a scene and its stock twin; ``run``, ``compare``, ``render``,
``view`` and ``step`` take a controller ``ctrl(model, data)``; ``contacts(model, data)`` returns
the contact results of the last step as numpy arrays (MuJoCo's own for a stock twin);
``sync_viewer`` draws cusp's markers in your own passive-viewer loop.

The plugin keeps its state per ``MjData``: several ``MjData`` of one model can be stepped in
parallel threads (for example by ``mujoco.rollout``) and give the same results as one after the
other. Copies of an ``MjData`` (``copy.copy``, ``copy.deepcopy``, ``mujoco.mj_copyData``,
pickling) each get their own plugin instance; unpickling in a fresh process needs ``load()`` first.
"""
from __future__ import annotations

import collections
import copyreg
import ctypes
import csv
import dataclasses
import io
import json
import os
import pathlib
import tempfile
import warnings
from typing import Any, Callable

from cusp._plugin import (PLUGIN_NAME, REPO, PluginError, build_dir, config_keys,  # noqa: F401
                          load, pinned_mujoco_version, plugin_path, registered_path,
                          unknown_key_message)
from cusp._plugin import headless_gl as _headless_gl
from cusp._plugin import reduce_with_cusp as _reduce_with_cusp

_headless_gl()

import mujoco  # noqa: E402
import numpy as np  # noqa: E402


# import cusp registers cusp.contact (pip install does it already at import mujoco, through the
# mujoco.plugins entry point), so MuJoCo parses cusp scenes right away. A failure is kept for
# load() to raise when cusp is used: importing must not fail on a machine without the library.
try:
    load()
except PluginError:
    pass

# a pickled MjModel / MjData of a cusp scene registers cusp when it is loaded (see
# _plugin.restore); without it, MuJoCo dereferences the unknown plugin and the process crashes
copyreg.pickle(mujoco.MjModel, _reduce_with_cusp)
copyreg.pickle(mujoco.MjData, _reduce_with_cusp)


def _cusp_plugins(spec: mujoco.MjSpec) -> list:
    return [p for p in spec.plugins if p.plugin_name == PLUGIN_NAME]


def registered_geoms(spec: mujoco.MjSpec) -> list:
    """The geoms (MjsGeom) that the scene's cusp.contact instances register: the disks and
    every geom of the patch bodies and of the bodies welded to them (no joint in between) but
    those listed in ``visual_geoms``."""
    geoms = []
    for plugin in _cusp_plugins(spec):
        config = plugin.config
        for name in config.get("disks", "").split():
            geom = spec.geom(name)
            if geom is None:
                raise ValueError(f"cusp.contact: config key 'disks' names no geom '{name}'")
            geoms.append(geom)
        visual = set(config.get("visual_geoms", "").split())
        for name in config.get("bodies", "").split():
            body = spec.body(name)
            if body is None:
                raise ValueError(f"cusp.contact: config key 'bodies' names no body '{name}'")
            geoms.extend(g for g in _welded_geoms(body) if g.name not in visual)
    return geoms


def _welded_geoms(body: Any) -> list:
    """The geoms of ``body`` (MjsBody) and of its descendants welded to it."""
    geoms = list(body.geoms)
    for child in body.bodies:
        if not len(child.joints):
            geoms.extend(_welded_geoms(child))
    return geoms


class SceneError(ValueError):
    """A scene that cannot be opened, parsed or compiled; the message is one line."""


class SolveWarning(UserWarning):
    """Contact solves failed in a run (:func:`run`): one line with their count, the first one's
    time and status and the worst status."""


def one_line(message: str) -> str:
    """MuJoCo's multi-line load / compile error as one line: each line once, in order (MuJoCo
    4.0.0 appends a plugin's warnings to a failed compile's error twice), MuJoCo's generic
    "plugin->init failed" dropped when the plugin said why, the valid keys named for an unknown
    cusp.contact config key (libcusp.so's cusp_error_line, as cusp-sim prints it), and how to
    register cusp when MuJoCo did not find it."""
    out = ctypes.create_string_buffer(8192)
    _library().cusp_error_line(out, len(out), message.encode())
    line = out.value.decode()
    if f"plugin {PLUGIN_NAME} not found" in line:
        line += (f"; {PLUGIN_NAME} is not registered in this process: import cusp first, or "
                 "pip install the cusp checkout so that import mujoco registers it")
    return line


def stock_twin(spec: mujoco.MjSpec) -> mujoco.MjSpec:
    """Edit ``spec`` in place into its stock twin and return it: every cusp.contact instance (and
    plugin sensor reading one) removed, every registered geom given contype = conaffinity = 1.
    The same C code as ``cusp-sim --stock`` and ``cusp-mjcf expand --stock`` (cusp_stock_twin in
    libcusp.so, on the spec's mjSpec)."""
    lib = _library()
    err = ctypes.create_string_buffer(2048)
    if lib.cusp_stock_twin(ctypes.c_void_p(spec._address), err, len(err)) < 0:
        raise SceneError(one_line(err.value.decode()))
    return spec


def scene_name(scene: Any) -> str:
    """A scene's name for messages and summaries: the path, or an MjSpec's model name."""
    return scene.modelname if isinstance(scene, mujoco.MjSpec) else str(scene)


def _copy_spec(spec: mujoco.MjSpec) -> mujoco.MjSpec:
    """``spec.copy()`` with all its plugin instances: MuJoCo 4.0's copy leaves them out, or
    keeps only the first (a controller beside cusp.contact: the contact instance was lost)."""
    copy = spec.copy()
    kept = collections.Counter((p.name, p.plugin_name) for p in copy.plugins)
    for plugin in spec.plugins:
        key = (plugin.name, plugin.plugin_name)
        if kept[key]:
            kept[key] -= 1
            continue
        added = copy.add_plugin(name=plugin.name, plugin_name=plugin.plugin_name,
                                active=plugin.active)
        added.config = dict(plugin.config)
    return copy


def check_config_keys(keys: Any) -> None:
    """Raise :class:`SceneError` (one line: the key and every valid key) for the first of
    ``keys`` that cusp.contact does not have."""
    valid = config_keys()
    for key in keys:
        if key not in valid:
            raise SceneError(unknown_key_message(key))


def load_spec(scene: Any, stock: bool = False, **overrides: Any) -> mujoco.MjSpec:
    """Parse a scene (or copy an MjSpec); apply config overrides (key=value) to its
    cusp.contact instance, or make its stock twin (overrides are then ignored, as by ``cusp-sim --stock``). Raises
    :class:`SceneError` (one line) for a missing or unparsable file, or an override key that
    cusp.contact does not have (naming the valid keys)."""
    load()
    if isinstance(scene, mujoco.MjSpec):
        spec = _copy_spec(scene)  # the caller's spec stays as it is
    elif not pathlib.Path(scene).is_file():
        raise SceneError(f"cannot open scene '{scene}'")
    else:
        try:
            spec = mujoco.MjSpec.from_file(str(scene))
        except ValueError as err:
            raise SceneError(f"cannot load {scene}: {one_line(str(err))}") from None
    if stock:
        return stock_twin(spec)
    check_config_keys(overrides)
    for plugin in _cusp_plugins(spec):
        config = dict(plugin.config)
        config.update({k: str(v) for k, v in overrides.items()})
        plugin.config = config
    return spec


def compile_spec(spec: mujoco.MjSpec, scene: Any = "scene") -> mujoco.MjModel:
    """``spec.compile()`` with MuJoCo's error as a one-line :class:`SceneError` naming the
    scene (a bad config key: key, value and reason)."""
    try:
        return spec.compile()
    except ValueError as err:
        raise SceneError(f"{scene_name(scene)}: {one_line(str(err))}") from None


#: a controller: called as ``ctrl(model, data)`` before every ``mj_step``
Controller = Callable[[mujoco.MjModel, mujoco.MjData], None]


def step(model: mujoco.MjModel, data: mujoco.MjData, nstep: int = 1,
         ctrl: Controller | None = None) -> None:
    """``nstep`` steps, calling ``ctrl(model, data)`` before each ``mj_step`` (the loop that
    :func:`run`, ``cusp-sim``, :func:`compare`, ``render`` and ``view`` all use)."""
    if ctrl is None:
        mujoco.mj_step(model, data, nstep)
        return
    for _ in range(nstep):
        ctrl(model, data)
        mujoco.mj_step(model, data)


_SIM_HOOK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)


def run(scene: Any, seconds: float = 2.0, stock: bool = False,
        timestep: float | None = None, solver: str | None = None, progress: bool = False,
        ctrl: Controller | None = None, csv_path: str | os.PathLike | None = None,
        **overrides: Any) -> tuple[dict, dict[str, np.ndarray]]:
    """Run a scene (an MJCF file or an MjSpec) headless, exactly as ``cusp-sim`` does (its loop,
    in libcusp.so, in this process); ``stock=True``: its stock twin.

    ``ctrl(model, data)``, if given, is called before every step (set ``data.ctrl``, or anything
    else); the same controller on the cusp scene and on its stock twin is a fair comparison.
    Returns (summary, series): cusp-sim's JSON summary (dict) and its CSV as a dict of numpy
    arrays, one per column in CSV order: time (s), kinetic_J, potential_J, max_penetration_m,
    ncontact, nstick, nslide, nbreak, solver_iterations, solver_status, normal_force_N, then
    ``<body>_x, _y, _z, _qw, _qx, _qy, _qz`` for every free body (docs/running.md); ``csv_path``
    also keeps the CSV. ``overrides`` are config keys of the cusp.contact instance (``--set
    key=value``; ``solver`` is one). ``progress``: a text progress bar on stderr.

    Failed contact solves are counted in the summary (``solver_failures``, ``first_failure_s``,
    ``first_failure_status``, ``worst_failure_status``) and summarised in one
    :class:`SolveWarning` at the end of the run (the line ``cusp-sim`` prints)."""
    if solver:
        overrides["solver"] = solver
    text, table, failures = _simulate(scene, seconds, stock, timestep, progress, ctrl, csv_path,
                                      overrides)
    if failures:
        warnings.warn(failures, SolveWarning, stacklevel=2)
    rows = list(csv.reader(io.StringIO(table)))
    header, body = rows[0], rows[1:]
    values = np.array(body, dtype=float).reshape(len(body), len(header))
    return json.loads(text), {name: values[:, i] for i, name in enumerate(header)}


def _simulate(scene: Any, seconds: float, stock: bool, timestep: float | None,
              progress: bool, ctrl: Controller | None, csv_path: str | os.PathLike | None,
              overrides: dict) -> tuple[str, str, str]:
    """cusp_sim_run on a model compiled here: (the JSON summary line, the CSV text, the one-line
    summary of the failed contact solves or "")."""
    lib = _library()
    original = compile_spec(load_spec(scene, **({} if stock else overrides)), scene)
    registered = np.zeros(original.ngeom + 1, dtype=np.int8)
    if lib.cusp_sim_registered_geoms(registered.ctypes.data_as(ctypes.c_char_p),
                                     ctypes.c_void_p(original._address)):
        raise SceneError(f"{scene_name(scene)}: bad cusp.contact config")
    model = compile_spec(load_spec(scene, stock=True), scene) if stock else original
    lib.cusp_sim_prepare_model(ctypes.c_void_p(model._address), float(timestep or 0.0))
    data = mujoco.MjData(model)
    bar = None
    if progress:
        from cusp.progress import Progress

        label = pathlib.Path(scene_name(scene)).name
        bar = Progress(seconds, f"{label} {'stock' if stock else 'cusp'}")
    raised: list[BaseException] = []

    def before_step(_: Any) -> int:
        try:
            if ctrl is not None:
                ctrl(model, data)
            if bar is not None:
                bar.update(data.time)
            return 0
        except BaseException as err:  # noqa: B036 (re-raised below, with KeyboardInterrupt)
            raised.append(err)
            return 1

    hook = _SIM_HOOK(before_step) if (ctrl is not None or bar is not None) else _SIM_HOOK()
    json_buf = ctypes.create_string_buffer(4096)
    err = ctypes.create_string_buffer(2048)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(csv_path) if csv_path else os.path.join(tmp, "run.csv")
        if bar is not None:
            bar.__enter__()
        try:
            status = lib.cusp_sim_run(json_buf, len(json_buf), err, len(err),
                                      ctypes.c_void_p(model._address),
                                      ctypes.c_void_p(data._address),
                                      registered.ctypes.data_as(ctypes.c_char_p), int(stock),
                                      scene_name(scene).encode(), float(seconds),
                                      path.encode(), hook, None)
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
        if raised:
            raise raised[0]
        if status:
            raise SceneError(f"{scene_name(scene)}: {err.value.decode()}")
        lib.cusp_sim_failure_line(err, len(err))
        with open(path) as f:
            return json_buf.value.decode(), f.read(), err.value.decode()


def compare(scene: Any, seconds: float = 2.0,
            **kwargs: Any) -> dict[str, tuple[dict, dict[str, np.ndarray]]]:
    """Run a scene with cusp and as its stock twin (same arguments as :func:`run`, the same
    controller ``ctrl`` for both); returns ``{"cusp": (summary, series), "stock": (summary,
    series)}``."""
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
    path = load()
    if _lib is None:
        lib = ctypes.CDLL(path)
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
        cp = ctypes.c_char_p
        lib.cusp_stock_twin.argtypes = [vp, cp, ip]
        lib.cusp_stock_twin.restype = ip
        lib.cusp_sim_registered_geoms.argtypes = [cp, vp]
        lib.cusp_sim_registered_geoms.restype = ip
        lib.cusp_sim_prepare_model.argtypes = [vp, ctypes.c_double]
        lib.cusp_sim_prepare_model.restype = None
        lib.cusp_sim_run.argtypes = [cp, ip, cp, ip, vp, vp, cp, ip, cp, ctypes.c_double, cp,
                                     _SIM_HOOK, vp]
        lib.cusp_sim_run.restype = ip
        lib.cusp_sim_failure_line.argtypes = [cp, ip]
        lib.cusp_sim_failure_line.restype = ip
        lib.cusp_error_line.argtypes = [cp, ip, cp]
        lib.cusp_error_line.restype = None
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
      (two disks: the one earlier in the ``disks`` key first)
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

    ``instance``: plugin instance index (default: the first cusp.contact instance). A model
    without a cusp.contact instance (the stock twin) gives MuJoCo's own contacts in the same
    format (see :func:`stock_contacts`), so one loop reads both. Raises ValueError if
    ``instance`` names a plugin instance that is not cusp.contact."""
    lib = _library()
    if instance is None and not instances(model, data):
        return stock_contacts(model, data)
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


def stock_contacts(model: mujoco.MjModel, data: mujoco.MjData) -> Contacts:
    """MuJoCo's contacts of ``data`` (every ``data.contact``) as :class:`Contacts` records: kind
    2 (point), mode 0 (MuJoCo has no contact modes), ``force`` and ``torsion`` from
    ``mj_contactForce`` (zero for contacts outside the constraint set), ``impulse`` = force x
    time step. ``geom`` is (MuJoCo's geom2, geom1) so that ``normal`` (MuJoCo's, from geom1 to
    geom2) points from the second geom towards the first, as in cusp's records; ``frame`` rows
    are MuJoCo's two tangents then the normal."""
    n = data.ncon
    pos, frame = np.zeros((n, 3)), np.zeros((n, 3, 3))
    force, torsion, gap = np.zeros((n, 3)), np.zeros(n), np.zeros(n)
    geom = np.zeros((n, 2), dtype=np.int32)
    wrench = np.zeros(6)
    for i in range(n):
        c = data.contact[i]
        pos[i] = c.pos
        mujoco_frame = np.asarray(c.frame).reshape(3, 3)  # rows: normal, tangent 1, tangent 2
        frame[i] = mujoco_frame[[1, 2, 0]]
        gap[i] = c.dist
        geom[i] = (c.geom[1], c.geom[0])
        if c.efc_address >= 0:
            mujoco.mj_contactForce(model, data, i, wrench)
            force[i] = wrench[:3]
            torsion[i] = wrench[3] * model.opt.timestep if c.dim >= 4 else 0.0
    h = model.opt.timestep
    return Contacts(pos=pos, frame=frame, impulse=force * h, torsion=torsion, force=force,
                    gap=gap, mode=np.zeros(n, dtype=np.int32),
                    kind=np.full(n, KIND_POINT, dtype=np.int32), geom=geom,
                    body=model.geom_bodyid[geom].astype(np.int32).reshape(n, 2))


def normal_force(model: mujoco.MjModel, data: mujoco.MjData, instance: int | None = None) -> float:
    """N, the total normal contact force of the last step (the CSV column normal_force_N; for a
    model without cusp.contact, of all of MuJoCo's contacts)."""
    if instance is None and not instances(model, data):
        return float(stock_contacts(model, data).force[:, 0].sum())
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


def sync_viewer(viewer: Any, model: mujoco.MjModel, data: mujoco.MjData) -> int:
    """``viewer.sync()`` for MuJoCo's passive viewer, with cusp's markers: in your own
    ``launch_passive`` loop call ``cusp.sync_viewer(viewer, model, data)`` where you would call
    ``viewer.sync()``. The passive viewer draws a copy of ``data`` whose plugin instance never
    steps, so the markers of ``data`` go into ``viewer.user_scn`` (its geoms are replaced; keys C,
    F, T switch points, forces, transparency, see :func:`show_contacts`). A model without a
    cusp.contact instance (the stock twin) gets none: MuJoCo draws its own contacts. Returns the
    number of markers."""
    with viewer.lock():
        n = draw_markers(model, data, viewer.opt, viewer.user_scn) if instances(model, data) else 0
        if not n:
            viewer.user_scn.ngeom = 0
    viewer.sync()
    return n


def render(scene: Any, out: str | os.PathLike, seconds: float = 2.0, **kwargs: Any) -> pathlib.Path:
    """Render a scene headless to a PNG or an MP4 (:func:`cusp.visual.render`; ``ctrl=`` a
    controller)."""
    from cusp import visual

    return visual.render(scene, out, seconds, **kwargs)


def view(scene: Any, **kwargs: Any) -> None:
    """Open a scene in MuJoCo's viewer with cusp's markers (:func:`cusp.visual.view`; ``ctrl=`` a
    controller, ``stock=True`` the twin, ``paused=True`` start paused)."""
    from cusp import visual

    visual.view(scene, **kwargs)


from .state import body_slot_names, slot_names, state  # noqa: E402,F401  (needs _library)
