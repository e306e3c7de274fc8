"""Plugin sensors (design.md section 7): `<sensor><plugin instance=...>` records against the
published state and against analytic impulses; bad sensor objects fail the load by name."""
import math

import mujoco
import numpy as np
import pytest

import cusp

G = 9.81
H = 1e-3
NSTATE = len(cusp.slot_names())  # counters, plugin/state.h (read from the library)
STICK, SLIDE, BREAK = 1, 2, 0


def scene(gravity=(0, 0, -G), mu=0.5, puck_z=0.0101, sensors=None):
    cusp.load()
    sensors = sensors if sensors is not None else """
      <plugin name="all" instance="cusp"/>
      <plugin name="disk" instance="cusp" objtype="geom" objname="puck"/>
      <plugin name="blk" instance="cusp" objtype="body" objname="box"/>"""
    xml = f"""<mujoco><option timestep="{H}" gravity="{' '.join(map(str, gravity))}"/>
<extension><plugin plugin="cusp.contact"><instance name="cusp">
<config key="disks" value="puck"/><config key="bodies" value="box"/>
<config key="friction" value="{mu}"/>
</instance></plugin></extension>
<worldbody><geom name="floor" type="plane" size="2 2 .1"/>
<body name="p" pos="0 0 {puck_z}"><freejoint/>
  <geom name="puck" type="cylinder" size="0.03 0.01" mass="0.2" contype="0" conaffinity="0"/></body>
<body name="box" pos="0.3 0 0.0201"><freejoint/>
  <geom name="boxgeom" type="box" size="0.03 0.03 0.02" mass="0.5" contype="0" conaffinity="0"/></body>
</worldbody><sensor>{sensors}</sensor></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    return m, mujoco.MjData(m)


def test_every_cusp_sensor_has_fourteen_values():
    m, _ = scene()
    assert list(m.sensor_dim) == [14, 14, 14]  # CUSP_SENSOR_DIM (plugin/sensors.h), documented


def test_resting_records_match_weights_and_published_state():
    m, d = scene()
    mujoco.mj_step(m, d, 1000)
    state = d.plugin_state[m.plugin_stateadr[0]:]
    # counters: the same numbers as d.plugin_state, bitwise
    assert np.array_equal(d.sensor("all").data, state[:NSTATE])
    # disk: Ln = m g h per step (resting, tolerance 1e-6 relative), no friction, mode stick
    disk = d.sensor("disk").data
    assert disk[0] == pytest.approx(0.2 * G * H, rel=1e-6)
    assert disk[1] <= 1e-6 * disk[0]  # at rest on a level plane friction is not needed
    assert disk[4] >= 1
    assert np.all(disk[5:] == 0)  # zero padding
    # patch body: the body's 11 published slots, Ln = its weight per step
    blk = d.sensor("blk").data
    assert np.array_equal(blk[:11], state[NSTATE:NSTATE + 11])
    assert blk[0] == pytest.approx(0.5 * G * H, rel=1e-6)
    assert blk[10] == STICK
    assert blk[11] == 0


def test_resting_disk_sticks():
    m, d = scene()
    mujoco.mj_step(m, d, 1000)
    assert d.sensor("disk").data[3] == STICK


def test_sensors_belong_to_the_step_just_taken():
    # dropped from 5 mm: the step that lands must show load in the sensor right after mj_step
    m, d = scene(puck_z=0.015)
    landed_at = None
    for i in range(200):
        mujoco.mj_step(m, d)
        state = d.plugin_state[m.plugin_stateadr[0]:]
        assert np.array_equal(d.sensor("all").data, state[:NSTATE])
        if d.sensor("disk").data[0] > 0 and landed_at is None:
            landed_at = i
    assert landed_at is not None


def test_sliding_disk_reports_slide_and_saturation():
    # gravity tilted 35 deg, mu = 0.3 < tan 35: the puck slides; polyhedral cone with 8
    # directions: |Lf| / (mu Ln) between cos(pi/8) (slip between two directions) and 1
    a = math.radians(35)
    m, d = scene(gravity=(G * math.sin(a), 0, -G * math.cos(a)), mu=0.3)
    mujoco.mj_step(m, d, 300)
    disk = d.sensor("disk").data
    assert disk[3] == SLIDE
    assert math.cos(math.pi / 8) - 1e-9 <= disk[2] <= 1 + 1e-9
    assert disk[0] == pytest.approx(0.2 * G * math.cos(a) * H, rel=1e-6)


def test_free_flight_disk_record_is_zero():
    m, d = scene(puck_z=0.5)
    mujoco.mj_step(m, d, 10)
    assert np.all(d.sensor("disk").data == 0)  # mode 0 = break, no contacts


@pytest.mark.parametrize("sensor,expect", [
    ('<plugin name="bad" instance="cusp" objtype="geom" objname="floor"/>',
     "sensor 'bad': geom 'floor' is not a registered contact disk"),
    ('<plugin name="bad" instance="cusp" objtype="body" objname="p"/>',
     "sensor 'bad': body 'p' is not a registered patch body"),
])
def test_sensor_on_unregistered_object_fails_the_load(sensor, expect):
    with pytest.raises(ValueError, match=expect):
        scene(sensors=sensor)



def test_stock_twin_drops_the_cusp_sensors(tmp_path):
    # the twin must compile and step without the instance its sensors read
    cusp.load()
    m, _ = scene()
    path = str(tmp_path / "scene.xml")
    mujoco.mj_saveLastXML(path, m)
    twin = cusp.stock_twin(mujoco.MjSpec.from_file(path)).compile()
    assert twin.nplugin == 0 and twin.nsensor == 0
    d = mujoco.MjData(twin)
    mujoco.mj_step(twin, d, 10)
