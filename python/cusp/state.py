"""The published state of a cusp.contact instance, by slot name.

The layout is plugin/state.h's, read from libcusp.so at run time (``cusp_state_slot_name``), so
nobody hard-codes slot numbers: the instance's counters of the last step (``ncontact``,
``nkept``, ``nstick``, ``nslide``, ``nbreak``, ``iterations``, ``status``, ``max_penetration``
(m), ``solver_failures`` and ``steps`` since reset, ``rcond_before``, ``rcond_after``, ``reduced_islands`` (islands solved in the contact-space basis),
``reduction_fallbacks`` (total islands where the reduction fell back to the full problem)), then per
registered body (config key ``bodies``, in its order) its patch observables (``Ln``, ``Lt``,
``Lo``, ``Lr``, ``s``, ``rho_t``, ``rho_r``, ``ecp_x``, ``ecp_y``, ``ecp_z``, ``mode``)."""
from __future__ import annotations

import ctypes
import functools

import mujoco


@functools.lru_cache(maxsize=None)
def _layout() -> tuple[tuple[str, ...], tuple[str, ...]]:
    from . import _library
    lib = _library()
    lib.cusp_state_slot_name.argtypes = [ctypes.c_int]
    lib.cusp_state_slot_name.restype = ctypes.c_char_p
    n, nb = lib.cusp_state_nslot(), lib.cusp_state_nbody_slot()
    names = tuple(lib.cusp_state_slot_name(i).decode() for i in range(n))
    body = tuple(lib.cusp_state_slot_name(n + i).decode() for i in range(nb))
    return names, body


def slot_names() -> tuple[str, ...]:
    """Names of the instance slots, in order."""
    return _layout()[0]


def body_slot_names() -> tuple[str, ...]:
    """Names of the per-body slots, in order."""
    return _layout()[1]


def state(model: mujoco.MjModel, data: mujoco.MjData, instance: int = 0) -> dict:
    """The state of plugin instance ``instance`` (index among the model's plugin instances) after
    the last step: ``{slot name: value}``, and ``"bodies"``: one ``{slot name: value}`` per
    registered body, in the order of the config key ``bodies``."""
    names, body = _layout()
    adr = model.plugin_stateadr[instance]
    n = model.plugin_statenum[instance]
    values = data.plugin_state[adr:adr + n]
    out = {name: float(values[i]) for i, name in enumerate(names)}
    nbody = (n - len(names)) // len(body) if body else 0
    out["bodies"] = [{name: float(values[len(names) + k * len(body) + i])
                      for i, name in enumerate(body)} for k in range(nbody)]
    return out
