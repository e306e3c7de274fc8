"""Controller of mjcf/finger_push.xml: ``push(model, data)``, called before every step by
``cusp.run(..., ctrl=push)``, ``python -m cusp run|compare|render|view --control
mjcf/finger_push.py:push`` or your own loop (``push(model, data); mujoco.mj_step(model, data)``).

0 to 0.3 s: lower the finger tip from 10 cm to 3 cm (beside the box); then move it along +x at
0.2 m/s (position targets of the two slide joints, m)."""

LOWER_S = 0.3  # s
DEPTH = 0.07  # m the finger goes down
SPEED = 0.2  # m/s along +x after lowering


def push(model, data):
    t = data.time
    data.ctrl[0] = min(SPEED * max(t - LOWER_S, 0.0), 0.3)
    data.ctrl[1] = -DEPTH * min(t / LOWER_S, 1.0)
