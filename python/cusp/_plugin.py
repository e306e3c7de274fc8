"""Finding and registering libcusp.so (the cusp.contact engine plugin) with MuJoCo.

Kept apart from the package's __init__ and free of a module-level ``import mujoco``: ``import
mujoco`` calls the ``mujoco.plugins`` entry point :func:`entry_point` while mujoco (and, when cusp
was imported first, cusp itself) is still being imported, so this module must be complete by
then."""
from __future__ import annotations

import ctypes
import os
import pathlib
import sys
import threading

PLUGIN_NAME = "cusp.contact"
_PACKAGE = pathlib.Path(__file__).resolve().parent
#: the checkout this package was imported from (python/cusp), when it was; see :func:`plugin_path`
REPO = _PACKAGE.parents[1]


class PluginError(RuntimeError):
    """libcusp.so cannot be found or registered; the message says how to fix it."""


def headless_gl() -> None:
    """Without a display, MuJoCo's offscreen renderer needs EGL (Mesa) instead of GLFW. MuJoCo
    picks its GL backend from MUJOCO_GL when it is imported, so set it before that; when mujoco
    was imported first (``import mujoco, cusp``, or through the ``mujoco.plugins`` entry point,
    which runs inside ``import mujoco``) and chose GLFW, switch its renderer's context class to
    EGL. An explicit MUJOCO_GL, a display or a PYOPENGL_PLATFORM other than egl is left alone."""
    if os.environ.get("MUJOCO_GL") or os.environ.get("DISPLAY") or os.environ.get(
            "WAYLAND_DISPLAY"):
        return
    if os.environ.get("PYOPENGL_PLATFORM", "egl").lower() != "egl":
        return
    os.environ["MUJOCO_GL"] = "egl"
    gl_context = sys.modules.get("mujoco.rendering.classic.gl_context")
    if gl_context is None or not hasattr(gl_context, "GLContext"):
        return  # mujoco not imported yet: it reads MUJOCO_GL itself
    if gl_context.GLContext.__module__.startswith("mujoco.egl"):
        return
    try:
        from mujoco.egl import GLContext as egl_context
    except ImportError:
        return  # no EGL (libEGL missing): keep MuJoCo's choice and its own error
    gl_context.GLContext = egl_context
    for name in ("mujoco", "mujoco.rendering.classic.renderer"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "GLContext"):
            module.GLContext = egl_context


_load_lock = threading.Lock()
_loaded_path: str | None = None


def pinned_mujoco_version() -> str:
    """The MuJoCo version cusp was built against (MUJOCO_VERSION, installed beside the package
    by ``pip install``, or the checkout's)."""
    for path in (_PACKAGE / "MUJOCO_VERSION", REPO / "MUJOCO_VERSION"):
        if path.is_file():
            return path.read_text().strip()
    raise PluginError(f"MUJOCO_VERSION not found beside {_PACKAGE} or in {REPO}: a broken install; "
                      "reinstall with pip install <cusp checkout>")


def plugin_path() -> pathlib.Path:
    """Where libcusp.so is: $CUSP_PLUGIN if set (it must name a file), else the one installed in
    this package (``pip install``), else the checkout's build/ (``scripts/build``)."""
    env = os.environ.get("CUSP_PLUGIN")
    if env:
        path = pathlib.Path(env)
        if not path.is_file():
            raise PluginError(f"CUSP_PLUGIN={env} names no file; point it at a built libcusp.so "
                              "or unset it to use the installed one")
        return path.resolve()
    candidates = [_PACKAGE / "libcusp.so", REPO / "build" / "libcusp.so"]
    for path in candidates:
        if path.is_file():
            return path
    raise PluginError("libcusp.so not found (looked at " + ", ".join(map(str, candidates)) +
                      "); install cusp with pip install <cusp checkout>, or build it in the "
                      "checkout with bash scripts/build, or set CUSP_PLUGIN")


def build_dir() -> pathlib.Path:
    """The directory holding libcusp.so (in a checkout also the command line tools)."""
    return plugin_path().parent


# ---- which library registered cusp.contact (MuJoCo's plugin table, read through ctypes) --------

class _PluginHead(ctypes.Structure):
    # the leading fields of mjpPlugin (mujoco/mjplugin.h) up to the init callback
    _fields_ = [("name", ctypes.c_char_p), ("nattribute", ctypes.c_int),
                ("attributes", ctypes.c_void_p), ("capabilityflags", ctypes.c_int),
                ("needstage", ctypes.c_int), ("nstate", ctypes.c_void_p),
                ("nsensordata", ctypes.c_void_p), ("init", ctypes.c_void_p)]


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _libmujoco() -> ctypes.CDLL:
    import mujoco

    # the library the bindings already loaded (same soname: dlopen hands back the same handle)
    path = pathlib.Path(mujoco.__file__).parent / f"libmujoco.so.{mujoco.__version__}"
    lib = ctypes.CDLL(str(path))
    lib.mjp_getPlugin.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    lib.mjp_getPlugin.restype = ctypes.POINTER(_PluginHead)
    return lib


def registered_path() -> str | None:
    """The file of the library that registered cusp.contact in this process (by
    :func:`load`, by MuJoCo's plugin directory or by anyone's ``mj_loadPluginLibrary``), or None
    while it is not registered."""
    slot = ctypes.c_int(-1)
    plugin = _libmujoco().mjp_getPlugin(PLUGIN_NAME.encode(), ctypes.byref(slot))
    if not plugin:
        return None
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except AttributeError:  # glibc < 2.34
        dladdr = ctypes.CDLL("libdl.so.2").dladdr
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    if not dladdr(plugin.contents.init, ctypes.byref(info)) or not info.dli_fname:
        raise PluginError("cusp.contact is registered but its library cannot be located")
    return os.path.realpath(info.dli_fname.decode())


def load() -> str:
    """Register the cusp.contact plugin with MuJoCo once per process; returns the library's path.
    A no-op when it is already registered (by the ``mujoco.plugins`` entry point that ``pip
    install`` sets up, by a libcusp.so in MuJoCo's plugin directory, or by an earlier call)."""
    global _loaded_path
    import mujoco

    with _load_lock:
        if _loaded_path is not None:
            return _loaded_path
        if mujoco.__version__ != pinned_mujoco_version():
            raise PluginError(
                f"cusp was built for MuJoCo {pinned_mujoco_version()}, but this Python has "
                f"mujoco {mujoco.__version__}: pip install mujoco=={pinned_mujoco_version()}")
        existing = registered_path()
        if existing is None:
            path = str(plugin_path())
            mujoco.mj_loadPluginLibrary(path)
            existing = registered_path()
            if existing is None:
                raise PluginError(f"{path} did not register {PLUGIN_NAME}: not a cusp library?")
        elif os.environ.get("CUSP_PLUGIN") and existing != str(plugin_path()):
            raise PluginError(f"{PLUGIN_NAME} is already registered from {existing}, not from "
                              f"CUSP_PLUGIN={os.environ['CUSP_PLUGIN']}: MuJoCo holds one library "
                              "per plugin; unset CUSP_PLUGIN or remove the other copy")
        _loaded_path = existing
        return _loaded_path


def config_keys(name: str = PLUGIN_NAME) -> tuple[str, ...]:
    """The config keys the registered plugin ``name`` accepts, in its order: the attributes it
    declared to MuJoCo (MuJoCo's compiler refuses any other ``<config key=...>``). Registers
    cusp first (:func:`load`); raises :class:`PluginError` if ``name`` is not registered."""
    load()
    slot = ctypes.c_int(-1)
    plugin = _libmujoco().mjp_getPlugin(name.encode(), ctypes.byref(slot))
    if not plugin:
        raise PluginError(f"plugin {name} is not registered in this process")
    head = plugin.contents
    names = ctypes.cast(head.attributes, ctypes.POINTER(ctypes.c_char_p))
    return tuple(names[i].decode() for i in range(head.nattribute))


# ---- pickling: a model or data with a cusp plugin loads cusp before MuJoCo makes it -----------

#: the plugins libcusp.so registers
PLUGIN_NAMES = (PLUGIN_NAME, "cusp.avoid", "cusp.inverse")


def _cusp_slots() -> set[int]:
    lib = _libmujoco()
    slots = set()
    for name in PLUGIN_NAMES:
        slot = ctypes.c_int(-1)
        if lib.mjp_getPlugin(name.encode(), ctypes.byref(slot)):
            slots.add(slot.value)
    return slots


def uses_cusp(model) -> bool:
    """Whether an MjModel has an instance of a plugin of libcusp.so."""
    return model.nplugin > 0 and bool(set(int(s) for s in model.plugin) & _cusp_slots())


def restore(cls: type):
    """Unpickling an MjModel or MjData of a cusp scene: register cusp (:func:`load`) before
    MuJoCo makes the object, which would crash on a plugin it does not know; raises
    :class:`PluginError` (saying how to make libcusp.so found) when cusp cannot be loaded."""
    try:
        load()
    except PluginError as err:
        raise PluginError(f"this pickled mujoco.{cls.__name__} uses cusp's plugins, which do "
                          f"not load here: {err}") from None
    return cls.__new__(cls)


def reduce_with_cusp(obj):
    """copyreg reducer of mujoco.MjModel and mujoco.MjData (installed by ``import cusp``): a
    model or data whose model uses a cusp plugin is pickled so that unpickling calls
    :func:`restore` first (it imports cusp and registers the plugin); others as MuJoCo does."""
    reduced = obj.__reduce_ex__(2)
    model = obj if hasattr(obj, "plugin") and hasattr(obj, "nplugin") else getattr(obj, "model",
                                                                                   None)
    if model is None or not uses_cusp(model):
        return reduced
    return (restore, (type(obj),)) + tuple(reduced[2:])


def unknown_key_message(key: str, name: str = PLUGIN_NAME) -> str:
    """One line naming an unknown config key of plugin ``name`` and every valid one."""
    return f"{name}: unknown config key '{key}'; valid keys: {', '.join(config_keys(name))}"


class _LogMessage(ctypes.Structure):
    # the leading fields of mjLogMessage (mujoco/mjtype.h)
    _fields_ = [("level", ctypes.c_int), ("topic", ctypes.c_int),
                ("subject", ctypes.c_char * 1024)]


_LOG_HANDLER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_LogMessage))
_log_handlers: list = []  # the installed handler and MuJoCo's previous one, kept alive


def warnings_as_lines(prog: str) -> None:
    """For a command line: MuJoCo's warnings (cusp's among them) printed as one line each,
    ``PROG: warning: ...``, on stderr, instead of MuJoCo's block with a blank line that is also
    appended to MUJOCO_LOG.TXT in the working directory; other messages go to MuJoCo's handler.
    Process-wide (mju_setLogHandler); MuJoCo's compiler still collects its own warnings."""
    lib = _libmujoco()
    lib.mju_setLogHandler.argtypes = [ctypes.c_void_p]
    lib.mju_setLogHandler.restype = ctypes.c_void_p
    previous: list = []

    def handle(msg: ctypes.POINTER(_LogMessage)) -> None:  # type: ignore[valid-type]
        if msg.contents.level == 2:  # mjLOG_WARNING
            text = msg.contents.subject.decode(errors="replace")
            print(f"{prog}: warning: {text}", file=sys.stderr, flush=True)
        elif previous[0]:
            _LOG_HANDLER(previous[0])(msg)

    handler = _LOG_HANDLER(handle)
    previous.append(lib.mju_setLogHandler(ctypes.cast(handler, ctypes.c_void_p)))
    _log_handlers.append((handler, previous))


#: the message of a failed registration already printed by :func:`entry_point` (None: none)
reported: str | None = None


def entry_point() -> None:
    """``mujoco.plugins`` entry point (pyproject.toml): ``import mujoco`` calls it, so that any
    cusp scene loads in plain MuJoCo (``python -m mujoco.viewer``, ``mujoco-studio``, ...). A
    failure is printed here as one line (MuJoCo would wrap it in a warning with its own source
    line) and raised again by :func:`load` when cusp is used."""
    global reported
    try:
        load()
    except PluginError as err:
        reported = str(err)
        print(f"cusp: {err}", file=sys.stderr)
