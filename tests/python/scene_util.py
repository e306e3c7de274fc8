"""Scene loading shared by the Python tests: a model and data from MJCF text with the plugin
library loaded, a plugin instance's config keys set in the text, a cusp.contact instance added to
a spec, and the energy of a state."""
import re

import mujoco

import cusp


def load_xml(xml, keyframe=False, forward=False):
    """(model, data) of a scene given as MJCF text, with libcusp.so loaded; keyframe: the data
    reset to the scene's first keyframe (if it has one); forward: mj_forward run on it."""
    cusp.load()
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    if keyframe and m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    if forward:
        mujoco.mj_forward(m, d)
    return m, d


def with_config(xml, anchor, **config):
    """The scene's text with config keys of its plugin instance replaced, or added before the
    <config key=anchor> element when the scene does not set them."""
    for key, value in config.items():
        if f'key="{key}"' in xml:
            xml = re.sub(f'key="{key}" value="[^"]*"', f'key="{key}" value="{value}"', xml)
        else:
            xml = xml.replace(f'<config key="{anchor}"',
                              f'<config key="{key}" value="{value}" /><config key="{anchor}"', 1)
    return xml


def energy(m, d, scratch):
    """Kinetic + potential energy (J) of the state (qpos, qvel) of d. After mj_step, d's own
    kinematics are those of the free configuration q* (cusp's detection ran there) and its mass
    matrix that of the previous state, so mj_energyPos/Vel on d would mix states (an apparent
    m g h dv_z = 1e-3 J "gain" after each impact); they are recomputed on scratch at (qpos, qvel)."""
    scratch.qpos[:] = d.qpos
    scratch.qvel[:] = d.qvel
    mujoco.mj_kinematics(m, scratch)
    mujoco.mj_comPos(m, scratch)
    mujoco.mj_crb(m, scratch)
    mujoco.mj_energyPos(m, scratch)
    mujoco.mj_energyVel(m, scratch)
    return scratch.energy.sum()


def largest_step_gain(m, d, steps):
    """Steps d `steps` times; returns the largest one-step gain (J) of MuJoCo's energy (the
    scene's <flag energy="enable"/>), read after an mj_forward at the step's end state."""
    gain = 0.0
    for _ in range(steps):
        e0 = d.energy.sum()
        mujoco.mj_step(m, d)
        mujoco.mj_forward(m, d)
        gain = max(gain, d.energy.sum() - e0)
    return gain


def register(spec, bodies):
    """Add a cusp.contact instance registering `bodies` (their geoms and those welded to them are
    given contype = conaffinity = 0, as the contract asks)."""
    for name in bodies:
        for geom in cusp._welded_geoms(spec.body(name)):
            geom.contype = geom.conaffinity = 0
    spec.activate_plugin(cusp.PLUGIN_NAME)
    plugin = spec.add_plugin(name="cusp", plugin_name=cusp.PLUGIN_NAME, active=True)
    plugin.config = {"bodies": " ".join(bodies)}
    return spec
