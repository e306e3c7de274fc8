"""MJCF of grasp, stack and pile scenes with registered rigid objects (patch contact), shared by
the tests (tests/python/test_grasp_stack.py) and the cost benchmark (bench/rigid). The files in
mjcf/ of the same names are written by `python tests/python/rigid_scenes.py` from these
functions, so that the scenes a user opens are the ones the tests check.
"""
import math
import pathlib
import random
import sys

HEAD = """<mujoco model="{name}">
  <option timestep="{h}" integrator="{integrator}"><flag energy="enable"/></option>
  <extension>
    <plugin plugin="cusp.contact">
      <instance name="cusp">
        <config key="bodies" value="{bodies}"/>
      </instance>
    </plugin>
  </extension>
"""


def _finger_tips(kind, side):
    """Geoms of one fingertip on the x axis facing the object; side = -1 (left) or +1."""
    if kind == "sphere1":
        return '<geom type="sphere" size="0.008" mass="0.02" friction="0.7"/>'
    if kind == "sphere2":  # two spheres 6 mm apart, one above the other
        return ('<geom type="sphere" size="0.008" pos="0 0 0.003" mass="0.02" friction="0.7"/>'
                '<geom type="sphere" size="0.008" pos="0 0 -0.003" mass="0.02" friction="0.7"/>')
    if kind == "sphere2h":  # two spheres 6 mm apart side by side
        return ('<geom type="sphere" size="0.008" pos="0 0.003 0" mass="0.02" friction="0.7"/>'
                '<geom type="sphere" size="0.008" pos="0 -0.003 0" mass="0.02" friction="0.7"/>')
    if kind == "capsule":  # a vertical capsule
        return ('<geom type="capsule" size="0.006 0.01" mass="0.02" friction="0.7"/>')
    raise ValueError(kind)


def pinch(tips="sphere2", integrator="implicitfast", h=0.002, squeeze=10.0):
    """A free sphere (r = 22 mm, 50 g, friction 0.7) held in the air between two fingers on slide
    joints squeezed by motors of `squeeze` N; the grip carries the weight by friction alone."""
    r_tip = 0.008 if tips != "capsule" else 0.006
    x0 = 0.022 + r_tip  # finger origin where its tip touches the ball
    xml = HEAD.format(name=f"grasp_pinch_{tips}", h=h, integrator=integrator, bodies="ball")
    xml += f"""  <worldbody>
    <light pos="0 0 2"/>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="ball" pos="0 0 0.3">
      <freejoint/>
      <geom name="ball" type="sphere" size="0.022" mass="0.05" friction="0.7"
            contype="0" conaffinity="0" rgba="0.8 0.3 0.3 1"/>
    </body>
    <body name="left" pos="{-x0:.4f} 0 0.3">
      <joint name="left" type="slide" axis="1 0 0" damping="2"/>
      {_finger_tips(tips, -1)}
    </body>
    <body name="right" pos="{x0:.4f} 0 0.3">
      <joint name="right" type="slide" axis="1 0 0" damping="2"/>
      {_finger_tips(tips, 1)}
    </body>
  </worldbody>
  <actuator>
    <motor name="left" joint="left" ctrlrange="-20 20" ctrllimited="true"/>
    <motor name="right" joint="right" ctrlrange="-20 20" ctrllimited="true"/>
  </actuator>
  <keyframe><key name="grip" ctrl="{squeeze} {-squeeze}"/></keyframe>
</mujoco>
"""
    return xml


def three_finger(obj="sphere", integrator="implicitfast", h=0.002, squeeze=8.0):
    """A sphere (r = 25 mm) or a box (half 20 mm) held by three fingers at 120 deg, each a sphere
    tip (r = 8 mm) on a radial slide joint squeezed by a motor."""
    size = 0.025 if obj == "sphere" else 0.02
    geom = (f'<geom name="obj" type="sphere" size="{size}" mass="0.08" friction="0.8" '
            'contype="0" conaffinity="0"/>' if obj == "sphere" else
            f'<geom name="obj" type="box" size="{size} {size} {size}" mass="0.08" friction="0.8" '
            'contype="0" conaffinity="0"/>')
    fingers, acts = "", ""
    for i in range(3):
        a = 2 * math.pi * i / 3
        # box: fingers at 0, 120, 240 deg touch a face (0 deg) or an edge region; pushed radially
        # the tip touches: a sphere at its radius, a box face at the face's distance along the
        # finger's line (the tip's radius measured along the face normal)
        lean = max(abs(math.cos(a)), abs(math.sin(a)))
        reach = size + 0.008 if obj == "sphere" else (size + 0.008) / lean
        c, s = math.cos(a), math.sin(a)
        fingers += f"""    <body name="f{i}" pos="{reach * c:.5f} {reach * s:.5f} 0.3">
      <joint name="f{i}" type="slide" axis="{-c:.6f} {-s:.6f} 0" damping="2"/>
      <geom type="sphere" size="0.008" mass="0.02" friction="0.8"/>
    </body>
"""
        acts += f'    <motor name="f{i}" joint="f{i}" ctrlrange="-20 20" ctrllimited="true"/>\n'
    xml = HEAD.format(name=f"grasp_three_{obj}", h=h, integrator=integrator, bodies="obj")
    xml += f"""  <worldbody>
    <light pos="0 0 2"/>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="obj" pos="0 0 0.3"><freejoint/>{geom}</body>
{fingers}  </worldbody>
  <actuator>
{acts}  </actuator>
  <keyframe><key name="grip" ctrl="{squeeze} {squeeze} {squeeze}"/></keyframe>
</mujoco>
"""
    return xml


def _jaw_gripper(name, integrator, h, hand_joint, before_hand, after_world, hand_actuator):
    """The parallel-jaw gripper with convex-mesh fingers (tapered pads) around a 4 cm box resting
    on a table: jaws on slide joints squeezed by motors; the hand's joint, what comes before the
    hand in the worldbody, after the worldbody, and the hand's actuator lines given."""
    pad = ("0.0 -0.012 -0.02  0.0 0.012 -0.02  0.0 -0.012 0.02  0.0 0.012 0.02  "
           "0.008 -0.01 -0.018  0.008 0.01 -0.018  0.008 -0.01 0.018  0.008 0.01 0.018")
    xml = HEAD.format(name=name, h=h, integrator=integrator, bodies="box")
    xml += f"""  <asset><mesh name="pad" vertex="{pad}"/></asset>
  <worldbody>
    <light pos="0 0 2"/>
    <geom name="table" type="plane" size="1 1 0.1" friction="0.6"/>
    <body name="box" pos="0 0 0.02"><freejoint/>
      <geom name="box" type="box" size="0.02 0.02 0.02" mass="0.1" friction="0.8"
            contype="0" conaffinity="0"/>
    </body>
{before_hand}    <body name="hand" pos="0 0 0.02" gravcomp="1">{hand_joint}
      <geom type="box" size="0.05 0.015 0.005" pos="0 0 0.035" mass="0.2" contype="0"
            conaffinity="0"/>
      <body name="jaw_l" pos="-0.028 0 0" gravcomp="1">
        <joint name="jaw_l" type="slide" axis="1 0 0" damping="5"/>
        <geom type="mesh" mesh="pad" mass="0.05" friction="0.8"/>
      </body>
      <body name="jaw_r" pos="0.028 0 0" euler="0 0 180" gravcomp="1">
        <joint name="jaw_r" type="slide" axis="1 0 0" damping="5"/>
        <geom type="mesh" mesh="pad" mass="0.05" friction="0.8"/>
      </body>
    </body>
  </worldbody>
{after_world}  <actuator>
{hand_actuator}    <motor name="jaw_l" joint="jaw_l" ctrlrange="-20 20" ctrllimited="true"/>
    <motor name="jaw_r" joint="jaw_r" ctrlrange="-20 20" ctrllimited="true"/>
  </actuator>
</mujoco>
"""
    return xml


def jaw_lift(integrator="implicitfast", h=0.002):
    """A parallel-jaw gripper with convex-mesh fingers (tapered pads) closes on a 4 cm box resting
    on a table and lifts it 5 cm: jaws on slide joints squeezed by motors, the hand on a vertical
    slide driven by a position servo (ctrl: the hand height, m)."""
    return _jaw_gripper(
        "grasp_jaw_lift", integrator, h,
        hand_joint='\n      <joint name="lift" type="slide" axis="0 0 1" damping="20"/>',
        before_hand="", after_world="",
        hand_actuator='    <position name="lift" joint="lift" kp="400" ctrlrange="0 0.1" '
                      'ctrllimited="true"/>\n')


def stack(n=5, integrator="implicitfast", h=0.002, taper=True, turn=20.0):
    """n boxes stacked on the floor, each 4 cm tall; tapering (each 8% smaller than the one below)
    with the middle box turned `turn` deg about z so that its corners overhang, or n equal boxes."""
    bodies, names, z = [], [], 0.0
    for i in range(n):
        half = 0.06 * (0.92 ** i if taper else 1.0)
        ang = math.radians(turn) if (taper and i == n // 2) else 0.0
        z += 0.02
        bodies.append(
            f'    <body name="b{i}" pos="0 0 {z:.5f}" quat="{math.cos(ang / 2):.8f} 0 0 '
            f'{math.sin(ang / 2):.8f}"><freejoint/>\n'
            f'      <geom type="box" size="{half:.5f} {half:.5f} 0.02" mass="0.3" friction="0.6" '
            'contype="0" conaffinity="0"/></body>')
        names.append(f"b{i}")
        z += 0.02
    xml = HEAD.format(name=f"stack_{n}" + ("_taper" if taper else ""), h=h,
                      integrator=integrator, bodies=" ".join(names))
    xml += ('  <worldbody>\n    <light pos="0 0 2"/>\n'
            '    <geom name="floor" type="plane" size="2 2 0.1" friction="0.6"/>\n'
            + "\n".join(bodies) + "\n  </worldbody>\n</mujoco>\n")
    return xml


PILE_SHAPES = [("box", "0.02 0.015 0.01"), ("sphere", "0.018"), ("capsule", "0.012 0.02"),
               ("cylinder", "0.018 0.012"), ("ellipsoid", "0.02 0.014 0.011"),
               ("box", "0.015 0.015 0.015"), ("sphere", "0.014"), ("capsule", "0.01 0.015"),
               ("cylinder", "0.012 0.02"), ("box", "0.025 0.01 0.01")]


def _pile_body(i, x, y, z, euler):
    """Body p{i} of the pile: PILE_SHAPES[i] on a free joint at (x, y, z), turned by euler (deg)."""
    t, s = PILE_SHAPES[i]
    return (f'    <body name="p{i}" pos="{x:.4f} {y:.4f} {z:.4f}" euler="{euler}"><freejoint/>\n'
            f'      <geom type="{t}" size="{s}" mass="0.05" friction="0.7" '
            'contype="0" conaffinity="0"/></body>')


def _bin(name, integrator, h, bodies):
    """The pile's scene: the registered bodies (all of PILE_SHAPES) in a bin of four static walls
    on the floor."""
    walls = "".join(
        f'    <geom name="wall{k}" type="box" size="{sx} {sy} 0.05" pos="{px} {py} 0.05"/>\n'
        for k, (sx, sy, px, py) in enumerate([(0.005, 0.08, -0.085, 0), (0.005, 0.08, 0.085, 0),
                                              (0.08, 0.005, 0, -0.085), (0.08, 0.005, 0, 0.085)]))
    names = " ".join(f"p{i}" for i in range(len(PILE_SHAPES)))
    xml = HEAD.format(name=name, h=h, integrator=integrator, bodies=names)
    xml += ('  <worldbody>\n    <light pos="0 0 2"/>\n'
            '    <geom name="floor" type="plane" size="1 1 0.1" friction="0.7"/>\n' + walls
            + "\n".join(bodies) + "\n  </worldbody>\n</mujoco>\n")
    return xml


def pile(integrator="implicitfast", h=0.002):
    """Mixed shapes (boxes, spheres, capsules, cylinders, ellipsoids) dropped into a bin of four
    static walls on the floor; they settle into a pile."""
    bodies = []
    for i in range(len(PILE_SHAPES)):
        x = -0.03 + 0.06 * ((i * 7) % 5) / 4
        y = -0.03 + 0.06 * ((i * 3) % 4) / 3
        bodies.append(_pile_body(i, x, y, 0.04 + 0.05 * i, f"{17 * i} {29 * i} {11 * i}"))
    return _bin("pile_bin", integrator, h, bodies)


def random_pile(seed, integrator="implicitfast", h=0.002):
    """The pile's shapes in the same bin, dropped in a seeded random order, each from a random
    x, y (within 5 cm of the centre) and a random orientation, 5 cm above the one before: piles
    nobody tuned, for bench/rigid/piles.py."""
    rng = random.Random(seed)
    order = list(range(len(PILE_SHAPES)))
    rng.shuffle(order)
    bodies = []
    for j, i in enumerate(order):
        x, y = rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05)
        e = [rng.uniform(0, 360) for _ in range(3)]
        bodies.append(_pile_body(i, x, y, 0.04 + 0.05 * j, f"{e[0]:.1f} {e[1]:.1f} {e[2]:.1f}"))
    return _bin(f"pile_random{seed}", integrator, h, bodies)


def jaw_mocap(integrator="implicitfast", h=0.002, weld=""):
    """The jaw gripper of jaw_lift on a free hand welded to a mocap body (MuJoCo's soft weld: its
    default solref, or the attributes `weld`), the way task suites drive a hand: the script moves
    the mocap target (the hand's height, m) instead of a slide servo; the jaws' motors squeeze as
    in jaw_lift."""
    return _jaw_gripper(
        "grasp_jaw_mocap", integrator, h, hand_joint="<freejoint/>",
        before_hand='    <body name="target" mocap="true" pos="0 0 0.02"/>\n',
        after_world=f'  <equality><weld body1="target" body2="hand" {weld}/></equality>\n',
        hand_actuator="")


SCENE_FILES = {
    "grasp_pinch1.xml": lambda: pinch("sphere1"),
    "grasp_pinch2.xml": lambda: pinch("sphere2"),
    "grasp_pinch_capsule.xml": lambda: pinch("capsule"),
    "grasp_three_sphere.xml": lambda: three_finger("sphere"),
    "grasp_three_box.xml": lambda: three_finger("box"),
    "grasp_jaw_lift.xml": jaw_lift,
    "stack_taper5.xml": lambda: stack(5),
    "pile_bin.xml": pile,
}

if __name__ == "__main__":
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                       pathlib.Path(__file__).resolve().parents[2] / "mjcf")
    for name, make in SCENE_FILES.items():
        text = make()
        comment = ("<!-- Written by tests/python/rigid_scenes.py (" + name + "); checked by "
                   "tests/python/test_grasp_stack.py. Run: build/cusp-sim mjcf/" + name +
                   " [--stock] -->\n")
        (out / name).write_text(comment + text)
        print(out / name)
