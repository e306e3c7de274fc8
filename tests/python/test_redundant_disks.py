"""Stage 1 (inertial rank selection) on a real soft body: a PCC section with 6 interior disks
lying on a flat surface has more contacts than the section has free directions to push; the
dependent ones are dropped, and the resting pose matches the 3-disk section's within 0.1 mm."""
import mujoco
import numpy as np

import cusp
from cusp import mjcf_gen

DESCRIPTION = """
<mujoco model="section_on_floor_{n}">
  <option timestep="0.001" integrator="Euler"/>
  <cusp instance="cusp">
    <config key="environment" value="floor"/>
  </cusp>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1" friction="0.8"/>
    <pcc name="arm" base="free" pos="0 0 0.037" euler="0 90 0" disks="{n}" disk_radius="0.035"
         disk_thickness="0.01" chamber_offset="0.02" stiffness="265" damping="125"
         actuators="none" friction="0.8">
      <section length="0.15" mass="0.54"/>
    </pcc>
  </worldbody>
</mujoco>
"""


def settle(ndisk: int, seconds: float = 1.5):
    cusp.load()
    xml = mjcf_gen.expand_string(DESCRIPTION.format(n=ndisk), source=f"section{ndisk}")
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    adr = model.plugin_stateadr[0]
    detected = kept = 0
    for _ in range(int(seconds / model.opt.timestep)):
        mujoco.mj_step(model, data)
        detected = max(detected, data.plugin_state[adr + 0])
        kept = data.plugin_state[adr + 1]
    assert data.plugin_state[adr + 8] == 0, "solver failures"
    disks = [model.geom(f"arm_disk{k}").id for k in range(ndisk + 2)
             if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, f"arm_disk{k}") >= 0]
    heights = np.array([data.geom_xpos[g][2] for g in disks])
    base = data.xpos[model.body("arm_base").id].copy() if mujoco.mj_name2id(
        model, mujoco.mjtObj.mjOBJ_BODY, "arm_base") >= 0 else data.qpos[:3].copy()
    tip = data.geom_xpos[disks[-1]].copy()
    return detected, kept, data.plugin_state[adr + 0], heights, base, tip, data.qvel.copy()


def test_redundant_disks_are_dropped_and_pose_matches_three_disk_section():
    det6, kept6, n6, h6, base6, tip6, v6 = settle(6)
    det3, kept3, n3, h3, base3, tip3, v3 = settle(3)
    # at rest every disk touches the floor ...
    assert n6 >= 8 and n3 >= 5
    # ... and stage 1 keeps fewer contacts than it detects for the 6-disk section
    assert kept6 < n6, (kept6, n6)
    # both at rest
    assert np.abs(v6).max() < 1e-4 and np.abs(v3).max() < 1e-4
    # resting pose: the backbone lies at disk-radius height in both, within 0.1 mm
    assert abs(h6.mean() - h3.mean()) < 1e-4, (h6, h3)
    assert abs(h6.max() - h6.min()) < 1e-4 and abs(h3.max() - h3.min()) < 1e-4
    # same horizontal length and straightness: tip relative to base within 0.1 mm
    np.testing.assert_allclose(tip6 - base6, tip3 - base3, atol=1e-4)
