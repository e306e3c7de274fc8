import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
os.environ.setdefault("CUSP_PLUGIN", str(REPO / "build" / "libcusp.so"))
# offscreen rendering without a display: MuJoCo through EGL (before anything imports mujoco)
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")
