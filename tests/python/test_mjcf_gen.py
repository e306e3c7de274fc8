"""The soft-body generator (cusp-mjcf): every description in mjcf/ expands and loads, committed
expansions are current, the generated structure is what the plugin expects, and bad
descriptions fail with a message naming element, attribute and value."""
import pathlib
import re
import subprocess

import mujoco
import numpy as np
import pytest

import cusp
from cusp import mjcf_gen

REPO = pathlib.Path(__file__).resolve().parents[2]
DESCRIPTIONS = sorted((REPO / "mjcf").glob("*.cusp.xml"))


def test_there_are_descriptions():
    names = {p.name for p in DESCRIPTIONS}
    assert {"arm3_free.cusp.xml", "arm3_hanging.cusp.xml", "arm6_hanging.cusp.xml",
            "rod_cantilever.cusp.xml"} <= names


@pytest.mark.parametrize("src", DESCRIPTIONS, ids=lambda p: p.name)
def test_description_expands_loads_and_is_committed(src):
    cusp.load()
    out = mjcf_gen.default_output(src)
    assert out.is_file(), f"{out.name} missing: run scripts/cusp-mjcf expand {src.name}"
    assert out.read_text() == mjcf_gen.expand_file(src), \
        f"{out.name} is stale: run scripts/cusp-mjcf expand mjcf/{src.name}"
    model = mujoco.MjModel.from_xml_path(str(out))
    assert model.nplugin == 1
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, 200)
    assert np.isfinite(data.qpos).all()
    # the same description without the plugin, and as its stock twin, loads in plain MuJoCo
    for kwargs in ({"plugin": False}, {"stock": True}):
        plain = mujoco.MjModel.from_xml_string(mjcf_gen.expand_file(src, **kwargs))
        assert plain.nplugin == 0
        assert plain.nbody == model.nbody and plain.nq == model.nq


@pytest.mark.parametrize("src", DESCRIPTIONS, ids=lambda p: p.name)
def test_registered_disks_are_noncolliding_cylinders(src):
    cusp.load()
    spec = mujoco.MjSpec.from_file(str(mjcf_gen.default_output(src)))
    (plugin,) = [p for p in spec.plugins if p.plugin_name == "cusp.contact"]
    disks = plugin.config["disks"].split()
    assert disks
    model = spec.compile()
    for name in disks:
        g = model.geom(name)
        assert g.type[0] == mujoco.mjtGeom.mjGEOM_CYLINDER
        assert g.contype[0] == 0 and g.conaffinity[0] == 0
    # the stock twin (generator --stock) makes the same disks collide in MuJoCo
    stock = mujoco.MjModel.from_xml_string(mjcf_gen.expand_file(src, stock=True))
    for name in disks:
        assert stock.geom(name).contype[0] == 1 and stock.geom(name).conaffinity[0] == 1


@pytest.mark.parametrize("disks,ndisk,neq", [(3, 13, 3 * (7 + 7 + 3)), (6, 22, 3 * (13 + 13 + 6))])
def test_arm_structure_and_mass(disks, ndisk, neq):
    cusp.load()
    model = mujoco.MjModel.from_xml_path(str(REPO / "mjcf" / f"arm{disks}_hanging.xml"))
    layout = mjcf_gen.pcc_layout(model, "arm")
    assert [s["nseg"] for s in layout] == [disks + 1] * 3
    assert len({g for s in layout for g in s["disks"]}) == ndisk  # shared junction disks
    assert model.neq == neq and model.ntendon == 9 and model.nu == 9
    arm_bodies = [b for b in range(model.nbody) if model.body(b).name.startswith("arm_disk")]
    total = sum(model.body_mass[b] for b in arm_bodies)
    assert abs(total - (1.17 + 0.54 + 0.265)) < 1e-12  # kg
    for t in range(model.ntendon):
        assert model.tendon_stiffness[t] == 265 and model.tendon_damping[t] == 125
        assert model.tendon_lengthspring[t, 0] == 0.15
    # the hanging, unactuated arm stretches by its weight and stays straight. Section 1's arc
    # length s carries, by virtual work, the weight of disk k of that section with lever k/N (its
    # slides are equal) and the full weight of every disk beyond: 3 K (s - L0) = Q
    n = disks + 1
    q = 9.81 * sum(model.body_mass[model.body(f"arm_disk{k}").id] * min(1.0, k / n)
                   for k in range(1, ndisk))
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, 5000)
    l1 = data.ten_length[layout[0]["tendons"]]
    assert np.abs(l1 - (0.15 + q / (3 * 265))).max() < 5e-6  # m (stretch about 1.7 cm)
    assert np.ptp(l1) < 1e-6


CASES = [
    # (description fragment inside <worldbody>, words the message must contain)
    ('<pcc name="a"><section mass="1"/></pcc>', ["<section>", "'length'", "missing"]),
    ('<pcc name="a"><section length="-0.1" mass="1"/></pcc>',
     ["<section>", "'length'", "'-0.1'", "> 0"]),
    ('<pcc name="a" disks="0"><section length="0.1" mass="1"/></pcc>',
     ["<pcc name='a'>", "'disks'", "'0'", ">= 1"]),
    ('<pcc name="a"><section length="0.1" mass="1" color="red"/></pcc>',
     ["<section>", "'color'", "'red'", "unknown attribute"]),
    ('<pcc name="a" stiffnes="3"><section length="0.1" mass="1"/></pcc>',
     ["<pcc name='a'>", "'stiffnes'", "'3'", "unknown attribute"]),
    ('<pcc name="a"><section length="0.1" mass="abc"/></pcc>',
     ["<section>", "'mass'", "'abc'", "not a number"]),
    ('<pcc name="a" chamber_offset="0.05"><section length="0.1" mass="1"/></pcc>',
     ["<section>", "'chamber_offset'", "'0.05'", "disk_radius"]),
    ('<pcc name="a" base="floating"><section length="0.1" mass="1"/></pcc>',
     ["<pcc name='a'>", "'base'", "'floating'", "fixed|free"]),
    ('<pcc name="a"/>', ["<pcc name='a'>", "<section>"]),
    ('<pcc><section length="0.1" mass="1"/></pcc>', ["<pcc>", "'name'", "missing"]),
    ('<rod name="r" length="0.5" mass="0.1"/>', ["<rod name='r'>", "'bend_stiffness'",
                                                   "missing"]),
    ('<rod name="r" length="0.5" mass="0.1" bend_stiffness="1" segments="0"/>',
     ["<rod name='r'>", "'segments'", "'0'"]),
    ('<rod name="r" length="0" mass="0.1" bend_stiffness="1"/>',
     ["<rod name='r'>", "'length'", "'0'", "> 0"]),
]


@pytest.mark.parametrize("fragment,words", CASES)
def test_bad_description_names_element_attribute_value(fragment, words):
    text = f"<mujoco><worldbody>{fragment}</worldbody></mujoco>"
    with pytest.raises(mjcf_gen.DescriptionError) as err:
        mjcf_gen.expand_string(text)
    for word in words:
        assert word in str(err.value), f"{word!r} not in {err.value}"


def test_cli_expands_and_reports_errors(tmp_path):
    good = tmp_path / "one.cusp.xml"
    good.write_text('<mujoco><worldbody><pcc name="a"><section length="0.15" mass="1"/></pcc>'
                    '</worldbody></mujoco>')
    tool = str(REPO / "scripts" / "cusp-mjcf")
    done = subprocess.run([tool, "expand", str(good), "--no-plugin"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "one.xml"))
    assert model.ntendon == 3
    assert subprocess.run([tool, "check", str(good)], capture_output=True).returncode == 1
    bad = tmp_path / "bad.cusp.xml"
    bad.write_text('<mujoco><worldbody><pcc name="a" disks="0"><section length="0.15" '
                   'mass="1"/></pcc></worldbody></mujoco>')
    done = subprocess.run([tool, "expand", str(bad)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "<pcc name='a'>: attribute 'disks' = '0'" in done.stderr
    # the same from python -m cusp mjcf (the lead's dispatcher)
    from cusp import mjcf
    assert mjcf.main(["expand", str(good), str(tmp_path / "again.xml"), "--no-plugin"]) == 0
    assert (tmp_path / "again.xml").read_text() == (tmp_path / "one.xml").read_text()


def test_user_config_passes_through_and_disks_merge():
    text = """<mujoco><cusp instance="c1"><config key="disks" value="extra"/>
      <config key="margin" value="0.01"/></cusp><worldbody>
      <body name="b"><geom name="extra" type="cylinder" size="0.01 0.01" contype="0"
        conaffinity="0"/></body>
      <pcc name="a" disks="1"><section length="0.1" mass="1"/></pcc></worldbody></mujoco>"""
    cusp.load()
    spec = mujoco.MjSpec.from_string(mjcf_gen.expand_string(text))
    (plugin,) = spec.plugins
    assert plugin.name == "c1"
    assert plugin.config["disks"].split() == ["extra", "a_disk0", "a_disk1", "a_disk2"]
    assert plugin.config["margin"] == "0.01"
    spec.compile()


def test_lean_hanging_arm_stretches_by_its_weight():
    """arm6_hanging with realisation="lean": the same masses, tendons and static stretch as the
    chain realisation (virtual work, as in test_arm_structure_and_mass), with 69 joints and 60
    equalities instead of 105 and 96."""
    cusp.load()
    text = (REPO / "mjcf" / "arm6_hanging.cusp.xml").read_text()
    text, k = re.subn(r'<pcc name="arm"', '<pcc name="arm" realisation="lean"', text)
    assert k == 1
    model = mujoco.MjModel.from_xml_string(mjcf_gen.expand_string(text))
    assert (model.nv, model.neq, model.ntendon, model.nu) == (69, 60, 9, 9)
    layout = mjcf_gen.pcc_layout(model, "arm")
    arm_bodies = [b for b in range(model.nbody) if model.body(b).name.startswith("arm_disk")]
    assert abs(sum(model.body_mass[b] for b in arm_bodies) - (1.17 + 0.54 + 0.265)) < 1e-12
    n = 7
    q = 9.81 * sum(model.body_mass[model.body(f"arm_disk{k}").id] * min(1.0, k / n)
                   for k in range(1, 22))
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data, 5000)
    l1 = data.ten_length[layout[0]["tendons"]]
    assert np.abs(l1 - (0.15 + q / (3 * 265))).max() < 5e-6  # m
    assert np.ptp(l1) < 1e-6
