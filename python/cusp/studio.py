"""cusp in MuJoCo Studio (``mujoco-studio``, the viewer of the mujoco 4.0 wheel): contact markers
and a "cusp" panel with the per-body contact results, live.

Studio runs the physics on the simulation side and renders a copy of the mjData on the viewer
side (set from the simulation's state after every step, then ``mj_forward``); the copy's
cusp.contact instance never steps. So :class:`CuspMarkers` (simulation side) reads the stepping
mjData after every step and sends a :class:`CuspSnapshot` to :class:`CuspPanel` (viewer side):

- the markers (contact points and ECP discs coloured by mode, normal force arrows; see
  plugin/visualize.h), drawn as Studio's extra geoms, switched by the viewer's contact point and
  contact force flags (keys C and F; both on at start, with transparency, key T);
- the panel's numbers from the published plugin state (:func:`panel_rows`): solver status,
  iterations and failures, contact counts, and per registered body its mode, normal and friction
  impulses and ECP.

Launch: ``python -m cusp studio SCENE.xml [--gfx MODE]``, or Studio's own command with this file
as a plugin file: ``mujoco-studio SCENE.xml --plugins "$(python -m cusp studio --plugin-file)"``.

Studio's native window renders with Filament, whose Python wrapper imports
``collections.abc.Buffer`` (Python >= 3.12, used there for type checks only). Importing this
module on an older Python defines that name (:func:`provide_buffer_abc`), so the native window
opens on 3.11 too; ``--gfx=web`` serves the same viewer to a browser and needs nothing of that.
"""
from __future__ import annotations

import abc
import collections.abc
import ctypes
import dataclasses
import glob
import os
from typing import Any


def provide_buffer_abc() -> bool:
    """Define ``collections.abc.Buffer`` when Python (< 3.12) lacks it, in this process only: an
    ABC whose instances are the objects ``memoryview`` accepts (the buffer protocol, as 3.12's
    ``isinstance(x, Buffer)``). Returns True if it had to be defined."""
    if hasattr(collections.abc, "Buffer"):
        return False

    class _BufferMeta(abc.ABCMeta):
        def __instancecheck__(cls, obj: Any) -> bool:
            try:
                memoryview(obj).release()
            except TypeError:
                return False
            return True

    class Buffer(metaclass=_BufferMeta):
        """Objects with the buffer protocol (collections.abc.Buffer of Python 3.12)."""

        __slots__ = ()

    Buffer.__module__ = "collections.abc"
    collections.abc.Buffer = Buffer
    return True


provide_buffer_abc()  # before mujoco.studio loads its native window (on first launch)

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
from mujoco.studio import messages, plugin  # noqa: E402

import cusp  # noqa: E402  (registers cusp.contact when running from a checkout)

#: names of the solve status slot (cuspLcpStatus, plugin/solver/lcp.h)
STATUS_NAMES = ("solved", "max_iter", "no_solution", "numerical", "bad_input")


# ------------------------------------ the panel's numbers ----------------------------------------

def registered_body_names(model: mujoco.MjModel, instance: int) -> list[str]:
    """Names in the config key ``bodies`` of plugin instance ``instance`` (its per-body slots
    follow this order), read from the compiled model."""
    lib = cusp._library()
    get = lib.mj_getPluginConfig  # libmujoco's, found through libcusp's dependencies
    get.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p]
    get.restype = ctypes.c_char_p
    value = get(ctypes.c_void_p(model._address), instance, b"bodies")
    return value.decode().split() if value else []


def panel_rows(model: mujoco.MjModel, data: mujoco.MjData) -> list[dict]:
    """What the cusp panel shows for ``data`` (the last step's published state), one dict per
    cusp.contact instance: ``name``, ``status`` (a name of :data:`STATUS_NAMES`), ``iterations``,
    ``solver_failures``, ``steps``, ``ncontact``, ``nkept``, ``nstick``, ``nslide``, ``nbreak``,
    ``max_penetration`` (m), and ``bodies``: per registered body ``name``, ``mode`` (0 break or
    no contact, 1 stick, 2 slide), ``mode_name``, ``Ln`` (N s, normal impulse), ``Lt``, ``Lo``
    (N s, friction impulse along the patch's t and o), ``Lr`` (N m s, torsional impulse),
    ``normal_force`` (N, Ln / timestep), ``ecp`` (m, world, 3 floats)."""
    rows = []
    for instance in cusp.instances(model, data):
        s = cusp.state(model, data, instance)
        names = registered_body_names(model, instance)
        status = int(s["status"])
        row = {key: int(s[key]) for key in ("iterations", "solver_failures", "steps", "ncontact",
                                            "nkept", "nstick", "nslide", "nbreak")}
        row.update(name=mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_PLUGIN, instance) or
                   f"instance {instance}",
                   status=STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else str(status),
                   max_penetration=s["max_penetration"], bodies=[])
        for k, body in enumerate(s["bodies"]):
            mode = int(body["mode"])
            row["bodies"].append(dict(
                name=names[k] if k < len(names) else f"body {k}", mode=mode,
                mode_name=cusp.MODE_NAMES.get(mode, str(mode)), Ln=body["Ln"], Lt=body["Lt"],
                Lo=body["Lo"], Lr=body["Lr"], normal_force=body["Ln"] / model.opt.timestep,
                ecp=(body["ecp_x"], body["ecp_y"], body["ecp_z"])))
        rows.append(row)
    return rows


# ------------------------------------ markers ----------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Markers:
    """Marker geoms as plain arrays (n markers): ``type`` (n,) mjtGeom, ``size`` (n, 3),
    ``pos`` (n, 3), ``mat`` (n, 9), ``rgba`` (n, 4), float32 as in mjvGeom."""

    type: np.ndarray
    size: np.ndarray
    pos: np.ndarray
    mat: np.ndarray
    rgba: np.ndarray

    @staticmethod
    def export(model: mujoco.MjModel, data: mujoco.MjData, points: bool,
               forces: bool) -> "Markers":
        """The markers cusp's visualize callback draws for ``data`` (a stepping mjData): contact
        points and ECP discs if ``points``, force arrows if ``forces``. Sized from the number of
        contact records (at most a point and an arrow each), grown if ever short: never
        truncated."""
        lib = cusp._library()
        m, d = ctypes.c_void_p(model._address), ctypes.c_void_p(data._address)
        records = sum(max(lib.cusp_contacts_count(m, d, i), 0) for i in range(model.nplugin))
        cap = 2 * records + 8
        fp, ip = ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int)
        while True:
            kind = np.zeros(cap, np.int32)
            size, pos = np.zeros((cap, 3), np.float32), np.zeros((cap, 3), np.float32)
            mat, rgba = np.zeros((cap, 9), np.float32), np.zeros((cap, 4), np.float32)
            n = lib.cusp_visualize_export(m, d, int(points), int(forces), cap,
                                          kind.ctypes.data_as(ip), size.ctypes.data_as(fp),
                                          pos.ctypes.data_as(fp), mat.ctypes.data_as(fp),
                                          rgba.ctypes.data_as(fp))
            if n < 0:
                raise MemoryError("cusp_visualize_export: out of memory")
            if n < cap:
                return Markers(kind[:n], size[:n], pos[:n], mat[:n], rgba[:n])
            cap *= 2  # full: there may be more

    def __len__(self) -> int:
        return len(self.type)

    def geoms(self, into: list[mujoco.MjvGeom] | None = None) -> list[mujoco.MjvGeom]:
        """The markers as MjvGeoms (category decor), for a viewer's extra geoms: written into
        the first geoms of ``into`` (grown as needed, never shrunk), or new ones."""
        pool = [] if into is None else into
        while len(pool) < len(self):
            pool.append(mujoco.MjvGeom())
        for k in range(len(self)):
            geom = pool[k]
            mujoco.mjv_initGeom(geom, int(self.type[k]), self.size[k].astype(float),
                                self.pos[k].astype(float), self.mat[k].astype(float),
                                self.rgba[k])
            geom.category = mujoco.mjtCatBit.mjCAT_DECOR
        return pool[:len(self)]


_NO_MARKERS = Markers(np.zeros(0, np.int32), np.zeros((0, 3), np.float32),
                      np.zeros((0, 3), np.float32), np.zeros((0, 9), np.float32),
                      np.zeros((0, 4), np.float32))


@dataclasses.dataclass(frozen=True)
class CuspSnapshot(messages.Snapshot):
    """What the viewer shows of the last step, simulation side to viewer side (latest wins):
    ``points`` (the contact points and ECP discs), ``forces`` (the normal force arrows) and
    ``rows`` (:func:`panel_rows`)."""

    points: Markers
    forces: Markers
    rows: list


# ------------------------------------ Studio plugins ---------------------------------------------

class CuspMarkers(plugin.SimPlugin):
    """Simulation side: after every step, the markers of the stepping mjData and the panel's
    numbers go to the viewer (a model without cusp.contact, such as a stock twin, sends none:
    MuJoCo draws its own contacts). libcusp is called here, on the simulation thread, never
    on the viewer's."""

    @messages.handler
    def _on_post_step(self, event: messages.PostStepEvent) -> None:
        model, data = event.model, event.data
        if cusp.instances(model, data):
            snapshot = CuspSnapshot(Markers.export(model, data, True, False),
                                    Markers.export(model, data, False, True),
                                    panel_rows(model, data))
        else:
            snapshot = CuspSnapshot(_NO_MARKERS, _NO_MARKERS, [])
        self.handle.send_to_viewer(snapshot)


#: where the panel opens, in pixels from the top left of the Studio window (over the 3D view,
#: right of the Options pane); it can be dragged, and Studio remembers where
PANEL_POS = (250.0, 40.0)


class CuspPanel(plugin.ViewerPlugin):
    """Viewer side: the "cusp" panel (solver status and, per registered body, mode, impulses and
    ECP of the shown state) and the markers received from :class:`CuspMarkers`, drawn as extra
    geoms. Turns the contact point and force flags on at start (and transparency, so that an ECP
    under a body shows through it), as ``python -m cusp view`` does."""

    def __init__(self) -> None:
        self._snapshot: CuspSnapshot | None = None
        self._drawn: list[mujoco.MjvGeom] = []  # our geoms in viewer.extra_geoms
        # the MjvGeoms handed to the renderer are reused, never freed while the viewer runs
        self._point_geoms: list[mujoco.MjvGeom] = []
        self._force_geoms: list[mujoco.MjvGeom] = []

    @messages.handler
    def _on_init(self, event: plugin.ViewerInitEvent) -> None:
        cusp.show_contacts(event.viewer.vis_options)

    @messages.handler
    def _on_snapshot(self, snapshot: CuspSnapshot) -> None:
        self._snapshot = snapshot

    @messages.handler
    def _on_model(self, _: messages.PostModelEvent) -> None:
        self._snapshot = None  # the viewer cleared its extra geoms; old markers are stale
        self._drawn = []

    #: frames a model is drawn without markers after it is loaded: Studio's Filament renderer
    #: (4.0, Mesa's software OpenGL) crashed (SIGSEGV in render) at its third frame when the
    #: markers were drawn from the first; held back this long, no such crash was seen
    #: (docs/studio.md)
    SETTLE_FRAMES = 60

    @property
    def rows(self) -> list[dict]:
        """The numbers the panel shows (:func:`panel_rows` of the last step received)."""
        return self._snapshot.rows if self._snapshot is not None else []

    @messages.handler
    def _on_update(self, _: messages.UpdateEvent) -> None:
        viewer = self.viewer
        flags = viewer.vis_options.flags
        geoms: list[mujoco.MjvGeom] = []
        # frames since the viewer's model object last changed (Studio sends PostModelEvent more
        # often than it loads a model, so that event does not restart the count)
        model_id = id(getattr(viewer, "model", None))
        if model_id != getattr(self, "_model_id", None):
            self._model_id, self._frames = model_id, 0
        self._frames += 1
        if self._snapshot is not None and self._frames > self.SETTLE_FRAMES:
            if flags[mujoco.mjtVisFlag.mjVIS_CONTACTPOINT]:
                geoms += self._snapshot.points.geoms(self._point_geoms)
            if flags[mujoco.mjtVisFlag.mjVIS_CONTACTFORCE]:
                geoms += self._snapshot.forces.geoms(self._force_geoms)
        mine = {id(g) for g in self._drawn}
        viewer.extra_geoms[:] = [g for g in viewer.extra_geoms if id(g) not in mine] + geoms
        self._drawn = geoms

    @messages.handler  # after Studio's App (priority CRITICAL) has laid out its panes
    def _on_build_gui(self, _: messages.BuildGuiEvent) -> None:
        from mujoco.studio.dear_imgui import dear_imgui as imgui

        imgui.SetNextWindowPos(imgui.Vec2(*PANEL_POS), int(imgui.Cond.FirstUseEver))
        flags = (int(imgui.WindowFlags.AlwaysAutoResize) | int(imgui.WindowFlags.NoDocking) |
                 int(imgui.WindowFlags.NoTitleBar))
        visible, _ = imgui.Begin("cusp", None, flags)
        if visible:
            # Studio 4.0's Filament UI renderer drops the background (and title bar) of floating
            # windows (seen on Mesa's llvmpipe): the panel paints its own, under its text
            top_left, size = imgui.GetWindowPos(), imgui.GetWindowSize()
            bottom_right = imgui.Vec2(top_left.x + size.x, top_left.y + size.y)
            imgui.GetWindowDrawList().AddRectFilled(top_left, bottom_right,
                                                    imgui.GetColorU32(int(imgui.Col.WindowBg)))
            _panel_gui(imgui, self.rows)
        imgui.End()


#: pixels from the panel's left edge to its value column
VALUE_X = 44.0


def _mode_colour(imgui: Any, mode: int) -> Any:
    """The marker colour of a mode (plugin/publish/visualize.c): stick blue, slide red, break green."""
    from cusp.visual import MODE_RGB

    r, g, b = MODE_RGB.get(mode, MODE_RGB[cusp.MODE_BREAK])
    return imgui.Vec4(r, g, b, 1.0)


def _panel_gui(imgui: Any, rows: list[dict]) -> None:
    """The panel's lines, narrow enough for a side pane: the instance's counters, then per
    registered body its mode (in its marker colour) and its quantities, one per line."""
    if not rows:
        imgui.TextUnformatted("no cusp.contact instance")
        return
    for row in rows:
        imgui.SeparatorText(f"cusp.contact {row['name']}")
        imgui.TextUnformatted(f"solve: {row['status']} ({row['iterations']} iterations)")
        imgui.TextUnformatted(f"failed steps: {row['solver_failures']} of {row['steps']}")
        imgui.TextUnformatted(f"contacts: {row['ncontact']} ({row['nkept']} kept)")
        imgui.TextUnformatted(f"stick {row['nstick']}, slide {row['nslide']}, "
                              f"break {row['nbreak']}")
        imgui.TextUnformatted(f"max penetration: {row['max_penetration'] * 1e3:.3f} mm")
        for body in row["bodies"]:
            colour = _mode_colour(imgui, body["mode"])
            imgui.ColorButton(f"##mode_{row['name']}_{body['name']}", colour, 0,
                              imgui.Vec2(12, 12))
            imgui.SameLine()
            imgui.TextColored(colour, f"{body['name']}: {body['mode_name']}")
            # label | value lines aligned by SameLine, not an ImGui table: Studio 4.0's UI
            # renderer (Filament, Mesa's software OpenGL) crashed (SIGSEGV in render, after
            # 100 to 180 s) with this panel's tables under its own background rectangle
            ecp = "{:+.4f} {:+.4f} {:+.4f}".format(*body["ecp"])
            for label, value in (("Ln", f"{body['Ln']:.4g} N s"),
                                 ("Lt", f"{body['Lt']:.3g} N s"),
                                 ("Lo", f"{body['Lo']:.3g} N s"),
                                 ("Lr", f"{body['Lr']:.3g} N m s"),
                                 ("Fn", f"{body['normal_force']:.4g} N"),
                                 ("ECP", f"{ecp} m")):
                imgui.TextUnformatted(label)
                imgui.SameLine(VALUE_X)
                imgui.TextUnformatted(value)


# ------------------------------------ launching --------------------------------------------------

def has_gpu() -> bool:
    """Whether this machine has a GPU device that OpenGL can render on: a DRM render node
    (/dev/dri/renderD*, Mesa's hardware drivers) or NVIDIA's device (/dev/nvidiactl)."""
    return bool(glob.glob("/dev/dri/renderD*")) or os.path.exists("/dev/nvidiactl")


def default_gfx(gfx: str) -> str:
    """Studio's graphics mode for a request: ``gfx`` if given; without a GPU
    ('opengl_software', Mesa's software OpenGL: Studio's default mode aborts there, "Target not
    found" and then "Engine::shutdown() called from the wrong thread"); else Studio's default
    ('')."""
    if gfx:
        return gfx
    return "" if has_gpu() else "opengl_software"


def _software_gl_by_default() -> None:
    """``mujoco-studio --plugins`` this file: Studio has made its configuration before it
    imports plugin files, so the default graphics mode is chosen where Studio launches its
    native window (mujoco.studio.launch_native.launch), with :func:`default_gfx`."""
    from mujoco.studio import launch_native

    launch = launch_native.launch
    if getattr(launch, "cusp_default_gfx", False):
        return

    def launch_with_gfx(config, *args, **kwargs):
        config.gfx = default_gfx(config.gfx)
        return launch(config, *args, **kwargs)

    launch_with_gfx.cusp_default_gfx = True  # type: ignore[attr-defined]
    launch_native.launch = launch_with_gfx


_software_gl_by_default()


def plugins() -> list:
    """Studio's default plugins (its App, stepping and history) plus cusp's two."""
    from mujoco.studio import app as studio_app

    return [studio_app.App(), *studio_app.SIM_PLUGINS, CuspMarkers(), CuspPanel()]


def run(scene: str, gfx: str = "", width: int = 1200, height: int = 800, port: int = 0) -> None:
    """Open ``scene`` in MuJoCo Studio with cusp's markers and panel (blocks until the window
    closes). ``gfx``: Studio's graphics mode ('' :func:`default_gfx`: Studio's default with a
    GPU, 'opengl_software' without; 'web', 'opengl', ...)."""
    from mujoco.studio import launch_passive, viewer_protocol

    config = viewer_protocol.ViewerConfig(width=width, height=height, gfx=default_gfx(gfx),
                                          http_port=port)
    launch_passive.run(config, model_path=scene, plugins=plugins())
