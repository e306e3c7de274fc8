"""`cusp-mjcf expand --stock` is cusp.stock_twin (one implementation): registered patch
bodies collide in the written twin (the box of a pushing scene no longer falls through the
floor) and the file loads in MuJoCo without libcusp.so."""
import os
import pathlib
import subprocess
import sys

import mujoco
import numpy as np

import cusp

REPO = pathlib.Path(__file__).resolve().parents[2]
TOOL = REPO / "scripts" / "cusp-mjcf"


def expand_stock(src, out):
    done = subprocess.run([str(TOOL), "expand", str(src), str(out), "--stock"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


def same_collision_model(a: mujoco.MjModel, b: mujoco.MjModel) -> None:
    assert a.ngeom == b.ngeom and a.nplugin == b.nplugin == 0
    for g in range(a.ngeom):
        assert (a.geom(g).name, a.geom_contype[g], a.geom_conaffinity[g]) == (
            b.geom(g).name, b.geom_contype[g], b.geom_conaffinity[g])


def test_expand_stock_twin_equals_cusp_stock_twin_for_disks_and_bodies(tmp_path):
    cusp.load()
    for name in ("arm_push_sphere", "scenario_a_45_3"):
        src = REPO / "mjcf" / f"{name}.cusp.xml"
        out = expand_stock(src, tmp_path / f"{name}_stock.xml")
        written = mujoco.MjModel.from_xml_path(str(out))
        twin = cusp.load_spec(REPO / "mjcf" / f"{name}.xml", stock=True).compile()
        same_collision_model(written, twin)


def test_written_twin_of_a_patch_scene_keeps_the_box_on_the_floor(tmp_path):
    """A description with a registered rigid body (<cusp><config key="bodies">): in the written
    twin the box collides and rests on the floor (the generator's own twin left it at contype 0,
    and it fell through), and the file loads in MuJoCo without libcusp.so."""
    src = tmp_path / "box.cusp.xml"
    src.write_text("""<mujoco model="box">
  <cusp><config key="bodies" value="box"/></cusp>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="box" pos="0 0 0.05">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <sensor><plugin instance="cusp" name="counters"/></sensor>
</mujoco>
""")
    out = expand_stock(src, tmp_path / "box_stock.xml")
    assert "cusp.contact" not in out.read_text()
    # plain MuJoCo, no cusp in the process: a fresh interpreter without the plugin
    code = ("import mujoco, sys; m = mujoco.MjModel.from_xml_path(sys.argv[1]); "
            "d = mujoco.MjData(m); mujoco.mj_step(m, d, 500); print(m.nsensor, d.qpos[2])")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CUSP_PLUGIN")}
    done = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    nsensor, height = done.stdout.split()
    assert int(nsensor) == 0
    assert abs(float(height) - 0.05) < 2e-3  # resting on the floor, not fallen through
    cusp.load()
    written = mujoco.MjModel.from_xml_path(str(out))
    with_plugin = tmp_path / "box.xml"
    subprocess.run([str(TOOL), "expand", str(src), str(with_plugin)], check=True,
                   capture_output=True)
    same_collision_model(written, cusp.load_spec(with_plugin, stock=True).compile())
    np.testing.assert_equal(written.geom_contype[1], 1)
