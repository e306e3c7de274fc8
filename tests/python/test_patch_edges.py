"""Box edges against a box (issue: register what MuJoCo users have, item 6): a registered box
whose deepest points lie beside an environment box's face, or whose edge crosses the box's edge,
is detected (patch_detect.c falls back to MuJoCo's point contacts of the pair when no face holds
it). Checked against MuJoCo's own distance query mj_geomDistance at configurations where the
touching features change, and by dropping a pitched box onto a narrow beam."""
import mujoco
import numpy as np
import pytest

import cusp

NAMES = cusp.slot_names()
FAILURES = NAMES.index("solver_failures")

# a box 10 x 4 x 4 cm and a static beam 2 cm wide (along y), its top at z = 0.05
SCENE = """
<mujoco>
  <option timestep="0.001" gravity="0 0 {gravity}"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="box"/>
    <config key="environment" value="beam"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="beam" type="box" size="0.01 0.2 0.05"/>
    <body name="box" pos="0 0 0.2">
      <freejoint/>
      <geom name="box" type="box" size="0.05 0.02 0.02" mass="0.5" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>"""

# (touching features, x of the box (m), roll pitch yaw (deg))
FEATURES = [
    ("face on face", 0.0, (0, 0, 0)),
    ("bottom face across the beam's top edges", 0.0, (0, 5, 0)),
    ("edge on the top face", 0.0, (45, 0, 0)),
    ("edge across the beam's edge", 0.03, (45, 30, 0)),
    ("yawed edge across the beam's edge", 0.035, (45, 20, 40)),
    ("corner beside the top face", 0.0, (35, 30, 0)),
]


def move_to_distance(m, d, place, geoms, distance, lo, hi):
    """Bisection on s in [lo, hi]: place(s) sets d's configuration, mj_geomDistance of the two
    geoms grows with s; returns the distance reached at the end (80 halvings)."""
    for _ in range(80):
        s = 0.5 * (lo + hi)
        place(s)
        mujoco.mj_kinematics(m, d)
        reached = mujoco.mj_geomDistance(m, d, *geoms, 0.5, None)
        if reached > distance:
            hi = s
        else:
            lo = s
    return reached


def pose(m, d, x, rpy, distance):
    """Put the box at x with orientation rpy, at the height where mj_geomDistance to the beam is
    `distance` (bisection); returns the distance reached."""
    q = np.zeros(4)
    mujoco.mju_euler2Quat(q, np.radians(rpy), "xyz")

    def place(z):
        d.qpos[:3] = [x, 0, z]
        d.qpos[3:7] = q

    return move_to_distance(m, d, place, (m.geom("box").id, m.geom("beam").id), distance,
                            -0.05, 0.3)


@pytest.mark.parametrize("name, x, rpy", FEATURES)
@pytest.mark.parametrize("distance", [0.004, 0.001, 0.0, -5e-4])
def test_detected_gap_is_mujocos_distance(name, x, rpy, distance):
    # at rest, without gravity, the free configuration is the pose: the deepest reported gap is
    # MuJoCo's signed distance (within the 5 mm margin: every case is found)
    m = mujoco.MjModel.from_xml_string(SCENE.format(gravity=0))
    d = mujoco.MjData(m)
    reached = pose(m, d, x, rpy, distance)
    assert reached == pytest.approx(distance, abs=1e-9)
    mujoco.mj_step(m, d)
    c = cusp.contacts(m, d)
    assert len(c.gap), name
    assert c.gap.min() == pytest.approx(distance, abs=1e-7), name


@pytest.mark.parametrize("x, rpy", [(0.0, (0, 5, 0)), (0.02, (0, 5, 0)), (0.0, (0, 5, 30)),
                                    (0.0, (3, 5, 20))])
def test_pitched_box_dropped_on_a_narrow_beam_does_not_sink(x, rpy):
    # dropped from 2 cm: it lands on the beam's edges and tips off; MuJoCo's distance to the beam
    # never below -0.1 mm (it sank 18 mm and fell through before)
    m = mujoco.MjModel.from_xml_string(SCENE.format(gravity=-9.81))
    d = mujoco.MjData(m)
    pose(m, d, x, rpy, 0.02)
    scratch = mujoco.MjData(m)
    worst = np.inf
    for _ in range(600):
        mujoco.mj_step(m, d)
        scratch.qpos[:] = d.qpos
        mujoco.mj_kinematics(m, scratch)
        worst = min(worst, mujoco.mj_geomDistance(m, scratch, m.geom("box").id,
                                                  m.geom("beam").id, 0.1, None))
    assert worst >= -1e-4
    assert d.plugin_state[m.plugin_stateadr[0] + FAILURES] == 0


# Two registered bodies whose pair MuJoCo collides with its general convex routine (mjc_Convex):
# a box 4 x 3 x 2 cm on the floor of the scene and a cylinder, an ellipsoid or a second cylinder
CONVEX_PAIR = """
<mujoco>
  <option timestep="0.002" gravity="0 0 {gravity}"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="base other"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="base" pos="0 0 0.01"><freejoint/>
      <geom name="base" type="{base}" size="{base_size}" mass="0.05" contype="0" conaffinity="0"/>
    </body>
    <body name="other" pos="0 0 0.1"><freejoint/>
      <geom name="other" type="{other}" size="{other_size}" mass="0.05" contype="0"
            conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>"""

CONVEX_PAIRS = [("box", "0.02 0.015 0.01", "cylinder", "0.018 0.012"),
                ("box", "0.02 0.015 0.01", "ellipsoid", "0.02 0.012 0.008"),
                ("cylinder", "0.02 0.01", "cylinder", "0.018 0.012")]


def place_near(m, d, rng, distance):
    """A random orientation of `other` and a position above one of the base's top edges or
    corners, moved along the line to the base's centre until mj_geomDistance is `distance`."""
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    top = d.qpos[:3].copy()
    aim = top + np.array([rng.choice([-1, 1]) * 0.02, rng.uniform(-0.015, 0.015), 0.01])
    out = np.array([rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0.2, 1)])
    out /= np.linalg.norm(out)

    def place(s):
        d.qpos[7:10] = aim + s * out
        d.qpos[10:14] = q

    return move_to_distance(m, d, place, (m.geom("other").id, m.geom("base").id), distance,
                            0.0, 0.2)


@pytest.mark.parametrize("base, base_size, other, other_size", CONVEX_PAIRS)
def test_convex_pairs_near_an_edge_read_mujocos_distance(base, base_size, other, other_size):
    # apart by 0.2-3 mm (inside the 5 mm margin), at 40 random orientations near the base's top
    # edges: the pair is found and its deepest published gap is MuJoCo's distance (GJK, exact
    # while apart) within 1 um, no gap below it (a cylinder 2.2 mm above a box's edge read -0.9 mm
    # along the box's side normal, and fell into the box)
    m = mujoco.MjModel.from_xml_string(CONVEX_PAIR.format(
        gravity=0, base=base, base_size=base_size, other=other, other_size=other_size))
    rng = np.random.default_rng(7)
    for trial in range(40):
        d = mujoco.MjData(m)
        distance = [3e-3, 1e-3, 2e-4][trial % 3]
        reached = place_near(m, d, rng, distance)
        assert reached == pytest.approx(distance, abs=1e-9)
        mujoco.mj_step(m, d)
        c = cusp.contacts(m, d)
        pair = [k for k in range(len(c)) if set(c.body[k]) == {m.body("base").id,
                                                                m.body("other").id}]
        assert pair, (trial, distance)
        gaps = c.gap[pair]
        assert gaps.min() == pytest.approx(distance, abs=1e-6), (trial, distance, gaps)


# A registered cylinder lying across a corner of a static box's top face, its axis tipped so that
# both ends of its bottom line lie beside the face (the line's two ends differ in height by more
# than the patch's feature tolerance): the line crosses the face's two edges at the corner, where
# it touches. MuJoCo's point contacts of the pair may hold one of the two crossings only (a pile's
# cylinder sank 78 um into a box at the other); cusp adds a point at each crossing.
CORNER = """
<mujoco>
  <option timestep="0.002" gravity="0 0 {gravity}"/>
  <extension><plugin plugin="cusp.contact"><instance name="cusp">
    <config key="bodies" value="cyl"/>
  </instance></plugin></extension>
  <worldbody>
    <geom name="box" type="box" size="0.02 0.015 0.01"/>
    <body name="cyl" pos="0 0 0.2"><freejoint/>
      <geom name="cyl" type="cylinder" size="0.012 0.02" mass="0.05" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>"""


def corner_crossings(a, p0):
    """The points (2 x 3) where the line p0 + s a crosses the top face's edges x = 0.02 and
    y = 0.015."""
    return np.array([p0 + (edge - p0[k]) / a[k] * a for k, edge in ((0, 0.02), (1, 0.015))])


def corner_pose(tilt, height):
    """qpos (7) of the cylinder: axis along (1, -1) / sqrt 2 in x, y, tipped up by `tilt` (rad)
    towards +x; its bottom line through (0.016, 0.011) in x, y, the lower of its two crossings
    with the face's edges `height` (m) above the top face (z = 0.01). Returns qpos and the
    crossings (2 x 3)."""
    a = np.array([np.cos(tilt) / np.sqrt(2), -np.cos(tilt) / np.sqrt(2), np.sin(tilt)])
    w = -(np.array([0, 0, 1.0]) - a[2] * a)
    w /= np.linalg.norm(w)  # from the axis to the bottom line, perpendicular to a
    p0 = np.array([0.016, 0.011, 0.0])
    p0[2] = 0.01 + height - corner_crossings(a, p0)[:, 2].min()
    centre = p0 - 0.012 * w
    # the cylinder's z axis along a: the rotation from (0, 0, 1) to a
    q = np.zeros(4)
    axis = np.cross([0, 0, 1.0], a)
    mujoco.mju_axisAngle2Quat(q, axis / np.linalg.norm(axis), np.arccos(np.clip(a[2], -1, 1)))
    return np.concatenate([centre, q]), corner_crossings(a, p0)


@pytest.mark.parametrize("tilt", [0.02, -0.02, 0.05])
@pytest.mark.parametrize("height", [1e-4, 0.0, -2e-5])
def test_cylinder_across_a_box_corner_touches_at_both_edge_crossings(tilt, height):
    # each crossing of the bottom line with the face's edges is held by a contact of the pair
    # within 1 mm (along the face) that reads no more than 1 um above the line's height there
    # (the line is straight: a point at the crossing reads it exactly; one of MuJoCo's points
    # holds it when it reads no more than 1 um above), and the deepest published gap is MuJoCo's
    # distance or more, within 1 um (as for the convex pairs above: MuJoCo's own point contacts
    # of the pair read up to 1.3e-7 m deeper than its distance here)
    m = mujoco.MjModel.from_xml_string(CORNER.format(gravity=0))
    d = mujoco.MjData(m)
    d.qpos[:7], crossings = corner_pose(tilt, height)
    scratch = mujoco.MjData(m)
    scratch.qpos[:] = d.qpos
    mujoco.mj_kinematics(m, scratch)
    dist = mujoco.mj_geomDistance(m, scratch, m.geom("cyl").id, m.geom("box").id, 0.05, None)
    mujoco.mj_step(m, d)
    c = cusp.contacts(m, d)
    pair = [k for k in range(len(c)) if m.body("cyl").id in c.body[k]]
    for crossing in crossings:
        near = [k for k in pair if np.hypot(*(c.pos[k][:2] - crossing[:2])) <= 1e-3]
        assert near, (crossing, c.pos[pair])
        assert min(c.gap[near]) <= crossing[2] - 0.01 + 1e-6, (c.gap[near], crossing)
    assert c.gap[pair].min() >= dist - 1e-6


@pytest.mark.parametrize("tilt", [0.02, 0.05])
def test_cylinder_dropped_across_a_box_corner_does_not_sink(tilt):
    # released 0.1 mm above the corner under gravity: it tips off the corner; MuJoCo's distance
    # to the box never below -0.1 mm and no failed solve
    m = mujoco.MjModel.from_xml_string(CORNER.format(gravity=-9.81))
    d = mujoco.MjData(m)
    d.qpos[:7] = corner_pose(tilt, 1e-4)[0]
    scratch = mujoco.MjData(m)
    worst = np.inf
    for _ in range(400):
        mujoco.mj_step(m, d)
        scratch.qpos[:] = d.qpos
        mujoco.mj_kinematics(m, scratch)
        worst = min(worst, mujoco.mj_geomDistance(m, scratch, m.geom("cyl").id,
                                                  m.geom("box").id, 0.1, None))
    assert worst >= -1e-4
    assert d.plugin_state[m.plugin_stateadr[0] + FAILURES] == 0
