"""SX functions compiled to machine code once and cached on disk.

An interval's Hessian of the Lagrangian is a few hundred thousand SX instructions; CasADi's
virtual machine runs it at about 0.7 ms per interval, the same code compiled by the C compiler at
about 0.15 ms. The C source CasADi generates is hashed (SHA-256) and the shared library is kept
under the cache directory by that hash, so a scene's functions are compiled once (tens of
seconds at -O1) and loaded from then on; any change of the model, the task's constants or the
transcription changes the source and so the hash. The compiled function computes the same
expression graph as the SX one (the tests compare them).

Cache directory: $CUSP_PLAN_CACHE, else $XDG_CACHE_HOME/cusp/plan, else ~/.cache/cusp/plan.
Compiler: $CC, else cc or gcc; -O1 (about 25 s for an interval Hessian; higher levels untried).
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import shutil
import subprocess
import tempfile

import casadi as ca

from cusp.plan.mpcc import PlanError

OPT_LEVEL = "-O1"


def cache_dir() -> pathlib.Path:
    env = os.environ.get("CUSP_PLAN_CACHE")
    if env:
        return pathlib.Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(pathlib.Path.home() / ".cache")
    return pathlib.Path(base) / "cusp" / "plan"


def compiler() -> str | None:
    """The C compiler to use, or None when there is none on PATH."""
    cc = os.environ.get("CC", "cc")
    return shutil.which(cc) or shutil.which("gcc")


def compile_function(fn: ca.Function) -> ca.Function:
    """fn (an SX Function) as a compiled external with the same name, inputs and outputs;
    raises PlanError with one line when no compiler is found or the compiler fails."""
    cc = compiler()
    if cc is None:
        raise PlanError("compile = True: no C compiler (set CC or install gcc)")
    with tempfile.TemporaryDirectory() as tmp:
        gen = ca.CodeGenerator(f"{fn.name()}.c", {"with_header": False})
        gen.add(fn)
        gen.generate(tmp + os.sep)
        source = pathlib.Path(tmp, f"{fn.name()}.c").read_bytes()
        key = hashlib.sha256(source + OPT_LEVEL.encode()).hexdigest()[:24]
        target = cache_dir() / f"{fn.name()}_{key}.so"
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            c_file = pathlib.Path(tmp, "src.c")
            c_file.write_bytes(source)
            partial = pathlib.Path(tmp, "out.so")
            run = subprocess.run([cc, "-shared", "-fPIC", OPT_LEVEL, str(c_file), "-o",
                                  str(partial), "-lm"], capture_output=True, text=True)
            if run.returncode != 0:
                first = (run.stderr.strip().splitlines() or ["(no message)"])[0]
                raise PlanError(f"compile = True: {cc} failed on {fn.name()}: {first}")
            # rename is atomic within a file system: a concurrent reader sees all or nothing
            staged = target.with_suffix(f".{os.getpid()}.tmp")
            shutil.copyfile(partial, staged)
            os.replace(staged, target)
    return ca.external(fn.name(), str(target))
