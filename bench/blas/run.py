#!/usr/bin/env python3
"""Which BLAS/LAPACK libcusp.so runs on, and what it costs: the same build run with the libraries
it is linked against and, for comparison, with another libblas.so.3/liblapack.so.3 put first on
LD_LIBRARY_PATH (e.g. OpenBLAS, single-threaded as cusp sets it). Per library: cusp-fc3d on
tests/data/fc3d/BoxesStack1 (best of 5 per round, s), us per mj_step of a 16-box stack (best of 3 per round), the
best over --rounds interleaved rounds, and the
sha256 of that stack's trajectory (qpos, qvel, plugin_state after each of 500 steps), and the
libblas/liblapack files the process actually mapped.

    PYTHONPATH=python CUSP_PLUGIN=build/libcusp.so .venv/bin/python bench/blas/run.py \
        [--other /usr/lib/x86_64-linux-gnu/openblas-pthread]

A library that libcusp.so pins (see CMakeLists.txt, CUSP_BLAS) is not displaced by
LD_LIBRARY_PATH: both rows then name the same files and hash alike.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]

CHILD = r'''
import hashlib, json, sys, time
sys.path.insert(0, sys.argv[1] + "/tests/python")
import cusp, mujoco
import rigid_scenes as rs
m = mujoco.MjModel.from_xml_string(rs.stack(16))
best, h = 1e9, None
for rep in range(3):
    d = mujoco.MjData(m)
    hh = hashlib.sha256()
    t0 = time.perf_counter()
    for i in range(500):
        mujoco.mj_step(m, d)
        hh.update(d.qpos.tobytes()); hh.update(d.qvel.tobytes()); hh.update(d.plugin_state.tobytes())
    best = min(best, (time.perf_counter() - t0) / 500 * 1e6)
    h = hh.hexdigest()[:16] if h is None else h
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libblas" in l or "liblapack" in l
               or "openblas" in l})
print(json.dumps({"stack16_us": best, "stack16_hash": h, "libs": libs}))
'''


def measure(env):
    fc3d = []
    for _ in range(5):
        out = subprocess.run([str(REPO / "build" / "cusp-fc3d"),
                              str(REPO / "tests/data/fc3d/BoxesStack1-i100000-32.hdf5.dat")],
                             capture_output=True, text=True, env=env, check=True).stdout
        fc3d.append(json.loads(out)["seconds"])
    out = subprocess.run([sys.executable, "-c", CHILD, str(REPO)], capture_output=True,
                         text=True, env=env, check=True).stdout
    row = json.loads(out)
    row["fc3d_boxes_s"] = min(fc3d)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--other", default="/usr/lib/x86_64-linux-gnu/openblas-pthread",
                    help="a directory holding another libblas.so.3 and liblapack.so.3")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), OPENBLAS_NUM_THREADS="1")
    envs = {"linked": env, "LD_LIBRARY_PATH=" + args.other: dict(env, LD_LIBRARY_PATH=args.other)}
    rows = {}
    for _ in range(args.rounds):  # interleaved, best of the rounds: a loaded machine's noise
        for name, e in envs.items():
            row = measure(e)
            best = rows.setdefault(name, row)
            assert best["stack16_hash"] == row["stack16_hash"], "not deterministic"
            for key in ("stack16_us", "fc3d_boxes_s"):
                best[key] = min(best[key], row[key])
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
