"""libcusp.so runs on the BLAS/LAPACK it was linked with (the reference libraries, CMakeLists.txt),
whatever libblas.so.3 / liblapack.so.3 the system's alternatives or LD_LIBRARY_PATH put first:
the loader resolves both through libcusp's RPATH, and a short scene's trajectory hashes alike."""
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
LIB = REPO / "build" / "libcusp.so"
ARCH = "x86_64-linux-gnu"
PINNED = {"libblas.so.3": f"/usr/lib/{ARCH}/blas/libblas.so.3",
          "liblapack.so.3": f"/usr/lib/{ARCH}/lapack/liblapack.so.3"}
# a directory with another libblas.so.3 and liblapack.so.3 (what the alternatives point to once
# libsiconos-numerics-dev has installed OpenBLAS), put first on the search path
OTHER = pathlib.Path(f"/usr/lib/{ARCH}/openblas-pthread")

HASH = r'''
import hashlib, sys
import cusp, mujoco
m = mujoco.MjModel.from_xml_path(sys.argv[1])
d = mujoco.MjData(m)
h = hashlib.sha256()
for _ in range(300):
    mujoco.mj_step(m, d)
    h.update(d.qpos.tobytes()); h.update(d.qvel.tobytes()); h.update(d.plugin_state.tobytes())
maps = open("/proc/self/maps").read()
libs = sorted({l.split()[-1] for l in maps.splitlines() if "libblas" in l or "liblapack" in l})
print(h.hexdigest(), *libs)
'''


def ldd(path, env):
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, env=env,
                         check=True).stdout
    found = {}
    for line in out.splitlines():
        name, _, rest = line.strip().partition(" => ")
        if name in PINNED:
            found[name] = rest.split(" (")[0]
    return found


def environments():
    envs = {"plain": dict(os.environ, PYTHONPATH=str(REPO / "python"), CUSP_PLUGIN=str(LIB))}
    if (OTHER / "libblas.so.3").exists():
        envs["other first"] = dict(envs["plain"], LD_LIBRARY_PATH=str(OTHER))
    return envs


@pytest.mark.parametrize("tool", ["libcusp.so", "cusp-sim", "cusp-fc3d"])
def test_ldd_shows_the_pinned_libraries(tool):
    for name, env in environments().items():
        assert ldd(REPO / "build" / tool, env) == PINNED, name


def test_scene_hash_is_the_same_whatever_comes_first_on_the_search_path():
    envs = environments()
    if len(envs) < 2:
        pytest.skip(f"no other BLAS in {OTHER} to put first")
    results = {}
    for name, env in envs.items():
        out = subprocess.run([sys.executable, "-c", HASH, str(REPO / "mjcf" / "push_slide.xml")],
                             capture_output=True, text=True, env=env, check=True, timeout=300)
        digest, *libs = out.stdout.split()
        assert sorted(pathlib.Path(p).parent.name for p in libs) == ["blas", "lapack"], libs
        results[name] = digest
    assert len(set(results.values())) == 1, results
