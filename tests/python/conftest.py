import os
import pathlib
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
os.environ.setdefault("CUSP_PLUGIN", str(REPO / "build" / "libcusp.so"))
