"""Sweeps (``python -m cusp sweep``): a grid of scenes x config values x integrators x time steps,
each grid point one task on Ray (a local Ray by default, a cluster with ``--address``), every task
:func:`cusp.run` (cusp-sim's loop) in a Ray worker process; the results gathered into one CSV
table and a picture.

    python -m cusp sweep mjcf/scenario_a_45_3.xml mjcf/scenario_a_60_3.xml \\
        --set ruiz=true,false --set tikhonov=true,false --integrator Euler,implicitfast \\
        --timestep 1e-4,1e-3 --seconds 2 --workers 2 --out results/sweep

``--seeds N --perturb SIGMA --threads T``: each grid point becomes one ``mujoco.rollout`` batch
of N initial states (:func:`initial_states`) on T threads (:func:`run_batch`), one row per seed.
``--timestep`` values pair with ``--integrator`` values when both have the same length (as in
the ablation: Euler at 1e-4 s, implicitfast at 1e-3 s), else every combination is run.
Every run reports the outcome per free body (:func:`cusp.plots.outcomes`: final position,
displacement, slip relative to ``--relative-to``, shares of steps sticking / sliding / without
load) and what ``bench/ablation`` judges ([CUSP] Sec. V-B, scenario C; references in
docs/references.md): the fraction of steps with contacts whose LCP solved (solver_status 0), the
largest penetration and the completed fraction of the horizon (up to the first row with a
non-finite value, |energy| > 1e6 J or penetration > 0.1 m); ``ok`` is solved >= 95%,
penetration < 10 mm and >= 80% completed.

On a cluster: start Ray on the nodes (``ray start --head`` on one, ``ray start --address
HEAD:6379`` on the others), ``pip install <cusp checkout>`` on every node, then the same command
with ``--address HEAD:6379`` (or ``ray://HEAD:10001``). Scenes travel as XML text, so they must
not refer to asset files (meshes, textures); results come back to the driver.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import itertools
import math
import os
import pathlib
import sys
import time
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class Job:
    """One run of the grid."""

    scene: str  # name (the file's), for the table
    xml: str  # the scene's MJCF text
    overrides: tuple[tuple[str, str], ...]  # cusp.contact config keys
    integrator: str | None  # MuJoCo integrator name (Euler, RK4, implicit, implicitfast)
    timestep: float | None  # s
    seconds: float  # simulated s
    seeds: int = 1  # initial states per run; > 1: one mujoco.rollout batch
    perturb: float = 0.0  # m, std. dev. of the free bodies' initial position for seeds > 0
    threads: int = 1  # mujoco.rollout threads of the batch
    relative_to: str | None = None  # a free body: the others' slip in its frame
    control: str | None = None  # MODULE:FUNCTION or FILE.py:FUNCTION, ctrl(model, data)


def grid(scenes: list[str | os.PathLike], sets: dict[str, list[str]],
         integrators: list[str | None], timesteps: list[float | None], seconds: float,
         seeds: int = 1, perturb: float = 0.0, threads: int = 1, relative_to: str | None = None,
         control: str | None = None) -> list[Job]:
    """Every combination, scenes outermost; integrators and time steps paired when both lists
    have the same length > 1."""
    if len(integrators) == len(timesteps) > 1:
        settings = list(zip(integrators, timesteps))
    else:
        settings = list(itertools.product(integrators, timesteps))
    keys = list(sets)
    jobs = []
    for scene in scenes:
        path = pathlib.Path(scene)
        xml = path.read_text()
        for values in itertools.product(*(sets[k] for k in keys)):
            for integrator, timestep in settings:
                jobs.append(Job(path.name, xml, tuple(zip(keys, values)), integrator, timestep,
                                seconds, seeds, perturb, threads, relative_to, control))
    return jobs


def judge(series: dict[str, np.ndarray], seconds: float) -> dict[str, Any]:
    """bench/ablation's criteria on one run's CSV columns."""
    done_t, pen, steps, solved = 0.0, 0.0, 0, 0
    rows = zip(series["time"], series["kinetic_J"], series["potential_J"],
               series["max_penetration_m"], series["ncontact"], series["solver_status"])
    for t, ke, pe, pn, nc, st in rows:
        if not all(math.isfinite(v) for v in (t, ke, pe, pn, nc, st)) or abs(ke + pe) > 1e6 \
                or pn > 0.1:
            break
        done_t = t
        pen = max(pen, pn)
        if nc > 0:
            steps += 1
            solved += st == 0
    solved_frac = solved / steps if steps else 1.0
    completion = done_t / seconds
    return dict(solved=solved_frac, penetration_m=pen, completion=completion,
                ok=bool(solved_frac >= 0.95 and pen < 0.01 and completion >= 0.8))


def _spec(job: Job) -> Any:
    import mujoco

    spec = mujoco.MjSpec.from_string(job.xml)
    spec.modelname = pathlib.Path(job.scene).stem
    if job.integrator:
        integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{job.integrator.upper()}", None)
        if integrator is None:
            names = [n[6:] for n in dir(mujoco.mjtIntegrator) if n.startswith("mjINT_")]
            raise ValueError(f"integrator '{job.integrator}': expected one of "
                             f"{', '.join(names)}")
        spec.option.integrator = integrator
    if job.timestep:
        spec.option.timestep = job.timestep
    return spec


def check(job: Job) -> None:
    """Compile the job's scene with its settings, as the worker will: raises ValueError (one
    line: the scene, the key, the value, the reason) for what the worker would refuse."""
    import cusp

    import mujoco

    spec = _spec(job)
    model = cusp.compile_spec(cusp.load_spec(spec, **dict(job.overrides)), job.scene)
    if job.relative_to:
        free = [model.body(b).name for b in range(1, model.nbody) if model.body_jntnum[b] >= 1
                and model.jnt_type[model.body_jntadr[b]] == mujoco.mjtJoint.mjJNT_FREE]
        if job.relative_to not in free:
            raise ValueError(f"--relative-to '{job.relative_to}': not a free body of "
                             f"{job.scene}; free bodies: {', '.join(free) or 'none'}")


def run_job(job: Job) -> dict[str, Any] | list[dict[str, Any]]:
    """One run (in a Ray worker, or here): the scene with its integrator and time step set on
    its MjSpec, the overrides on its cusp.contact instance, stepped by :func:`cusp.run`; with
    ``seeds`` > 1 a batch (:func:`run_batch`, one row per seed)."""
    import cusp

    from cusp import plots

    if job.seeds > 1:
        return run_batch(job)
    spec = _spec(job)
    ctrl = None
    if job.control:
        from cusp.__main__ import controller

        ctrl = controller(job.control)
    t0 = time.monotonic()
    summary, series = cusp.run(spec, job.seconds, ctrl=ctrl, **dict(job.overrides))
    row: dict[str, Any] = dict(scene=job.scene, integrator=job.integrator or "",
                               timestep=spec.option.timestep, **dict(job.overrides))
    row.update(judge(series, job.seconds))
    row.update(steps=summary["steps"], solver_failures=summary["solver_failures"],
               energy_max_step_increase_J=summary["energy_max_step_increase_J"],
               us_per_step=summary["us_per_step"], wall_s=time.monotonic() - t0,
               worker=f"{os.uname().nodename}:{os.getpid()}")
    row.update(plots.outcomes(series, job.relative_to))
    return row


def _batch_series(model: Any, trajectory: np.ndarray, n: int,
                  mode_slot: dict[str, int]) -> dict[str, np.ndarray]:
    """The CSV columns :func:`cusp.plots.outcomes` reads, from a rollout's states (n rows):
    time, every free body's pose, and ``<body>_mode`` of the registered rigid bodies."""
    import mujoco

    series = {"time": trajectory[:n, 0]}
    qpos0 = mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_TIME)
    for b in range(1, model.nbody):
        if model.body_jntnum[b] < 1 or model.jnt_type[model.body_jntadr[b]] != \
                mujoco.mjtJoint.mjJNT_FREE:
            continue
        name = model.body(b).name or f"body{b}"
        adr = qpos0 + model.jnt_qposadr[model.body_jntadr[b]]
        for k, suffix in enumerate(("x", "y", "z", "qw", "qx", "qy", "qz")):
            series[f"{name}_{suffix}"] = trajectory[:n, adr + k]
    for name, column in mode_slot.items():
        series[f"{name}_mode"] = trajectory[:n, column]
    return series


def initial_states(model: Any, seeds: int, perturb: float) -> np.ndarray:
    """(seeds x nstate) mjSTATE_FULLPHYSICS states: the scene's first keyframe (or its default
    state), the positions of its free bodies moved by N(0, perturb^2) per axis for seed k > 0
    (numpy's default_rng(k))."""
    import mujoco

    data = mujoco.MjData(model)
    if model.nkey:
        mujoco.mj_resetDataKeyframe(model, data, 0)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    free = [model.jnt_qposadr[j] for j in range(model.njnt)
            if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    qpos0 = data.qpos.copy()
    states = np.zeros((seeds, mujoco.mj_stateSize(model, spec)))
    for k in range(seeds):
        data.qpos[:] = qpos0
        if k:
            rng = np.random.default_rng(k)
            for adr in free:
                data.qpos[adr:adr + 3] += rng.normal(0.0, perturb, 3)
        mujoco.mj_getState(model, data, states[k], spec)
    return states


def run_batch(job: Job) -> list[dict[str, Any]]:
    """All seeds of one grid point as one ``mujoco.rollout`` batch on ``threads`` threads (the
    plugin keeps its state per MjData, so threads give the results of stepping one after the
    other). Judged from the published plugin state in the rollout's states (solver status,
    penetration, contacts per step) like :func:`judge`; a run is complete up to the first
    non-finite state (the rollout has no energies)."""
    import mujoco
    from mujoco import rollout

    import cusp

    model = cusp.compile_spec(cusp.load_spec(_spec(job), **dict(job.overrides)), job.scene)
    nstep = round(job.seconds / model.opt.timestep)
    states0 = initial_states(model, job.seeds, job.perturb)
    datas = [mujoco.MjData(model) for _ in range(max(job.threads, 1))]
    t0 = time.monotonic()
    states, _ = rollout.rollout(model, datas, states0, nstep=nstep)
    wall = time.monotonic() - t0
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    below = int(spec) & (int(mujoco.mjtState.mjSTATE_PLUGIN) - 1)  # parts before plugin state
    instance = cusp.instances(model, datas[0])[0]
    base = mujoco.mj_stateSize(model, below) + model.plugin_stateadr[instance]
    slot = {name: base + k for k, name in enumerate(cusp.slot_names())}  # plugin/state.h
    from cusp import plots

    plugin = next(iter(p for p in _spec(job).plugins if p.plugin_name == cusp.PLUGIN_NAME), None)
    patch_bodies = (dict(plugin.config).get("bodies", "") if plugin else "").split()
    per_body = len(cusp.body_slot_names())
    mode = cusp.body_slot_names().index("mode")
    mode_slot = {name: base + len(cusp.slot_names()) + i * per_body + mode
                 for i, name in enumerate(patch_bodies)}
    rows = []
    for k in range(job.seeds):
        trajectory = states[k]
        finite = np.all(np.isfinite(trajectory), axis=1)
        n = nstep if finite.all() else int(np.argmin(finite))
        pen = trajectory[:n, slot["max_penetration"]]
        pen_ok = pen <= 0.1
        n = n if pen_ok.all() else int(np.argmin(pen_ok))
        contact = trajectory[:n, slot["ncontact"]] > 0
        solved = np.count_nonzero(trajectory[:n, slot["status"]][contact] == 0)
        solved_frac = solved / np.count_nonzero(contact) if contact.any() else 1.0
        penetration = float(pen[:n].max()) if n else 0.0
        completion = n / nstep
        row: dict[str, Any] = dict(scene=job.scene, integrator=job.integrator or "",
                                   timestep=model.opt.timestep, **dict(job.overrides), seed=k,
                                   solved=float(solved_frac), penetration_m=penetration,
                                   completion=completion,
                                   ok=bool(solved_frac >= 0.95 and penetration < 0.01
                                           and completion >= 0.8),
                                   steps=n,
                                   solver_failures=float(trajectory[n - 1, slot["solver_failures"]])
                                   if n else 0.0,
                                   wall_s=wall / job.seeds,
                                   worker=f"{os.uname().nodename}:{os.getpid()}")
        if n:
            row.update(plots.outcomes(_batch_series(model, trajectory, n, mode_slot),
                                      job.relative_to))
        rows.append(row)
    return rows


def run_grid(jobs: list[Job], workers: int | None = None, address: str | None = None,
             progress: bool = True) -> list[dict[str, Any]]:
    """Run the jobs as Ray tasks and return their rows in job order. ``address`` None: a local
    Ray with ``workers`` CPUs (default: all); else the cluster at that address."""
    import ray

    env = {k: os.environ[k] for k in ("CUSP_PLUGIN", "PYTHONPATH") if k in os.environ}
    python_dir = str(pathlib.Path(__file__).resolve().parents[1])  # checkout: python/
    env["PYTHONPATH"] = os.pathsep.join([python_dir] + [p for p in env.get(
        "PYTHONPATH", "").split(os.pathsep) if p and p != python_dir])
    init: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False,
                                configure_logging=False)
    if address:
        init["address"] = address
    else:
        init["num_cpus"] = workers or os.cpu_count()
        init["runtime_env"] = {"env_vars": env}
    ray.init(**init)
    try:
        threads = max([j.threads for j in jobs] + [1])
        task = ray.remote(num_cpus=threads)(run_job)
        pending = {task.remote(job): k for k, job in enumerate(jobs)}
        rows: list[dict[str, Any] | None] = [None] * len(jobs)
        start = time.monotonic()
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                k = pending.pop(ref)
                result = ray.get(ref)
                rows[k] = result
                if progress:
                    r = result[0] if isinstance(result, list) else result
                    print(f"[{len(jobs) - len(pending):3d}/{len(jobs)} "
                          f"{time.monotonic() - start:7.1f} s] {r['scene']} "
                          f"{_setting(r, jobs[k])} solved {100 * r['solved']:5.1f}% pen "
                          f"{1e3 * r['penetration_m']:.3f} mm done {100 * r['completion']:.0f}% "
                          f"{'OK' if r['ok'] else 'FAIL'}{_outcome_text(r)}", file=sys.stderr,
                          flush=True)
        flat: list[dict[str, Any]] = []
        for result in rows:
            flat.extend(result if isinstance(result, list) else [result])  # type: ignore[arg-type]
        return flat
    finally:
        ray.shutdown()


def _outcome_text(row: dict) -> str:
    """'; block moved 295.1 mm, slip 3.0 mm, stick/slide/break 0/100/0 %' for each body."""
    parts = []
    for key in row:
        if not key.endswith("_displacement_m"):
            continue
        body = key[:-len("_displacement_m")]
        text = f"{body} moved {1e3 * row[key]:.1f} mm"
        if f"{body}_slip_m" in row:
            text += f", slip {1e3 * row[f'{body}_slip_m']:.1f} mm"
        if not math.isnan(row.get(f"{body}_stick", float("nan"))):
            text += ", stick/slide/break " + "/".join(
                f"{100 * row[f'{body}_{k}']:.0f}" for k in ("stick", "slide", "break")) + " %"
        parts.append(text)
    return "".join(f"; {p}" for p in parts)


def _setting(row: dict, job: Job) -> str:
    keys = " ".join(f"{k}={v}" for k, v in job.overrides)
    return f"{row['integrator'] or '-'} h={row['timestep']:g} {keys}".strip()


def write_table(rows: list[dict[str, Any]], path: str | os.PathLike) -> pathlib.Path:
    """One CSV row per run, columns in first-seen order."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def plot(rows: list[dict[str, Any]], jobs: list[Job], path: str | os.PathLike) -> pathlib.Path:
    """Largest penetration and solved fraction per run (green: ok, red: not)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k, _ in jobs[0].overrides] if jobs else []
    labels = [f"{r['scene']} {r['integrator'] or '-'} h={r['timestep']:g} "
              + " ".join(f"{k}={r[k]}" for k in keys)
              + (f" seed {r['seed']}" if "seed" in r else "") for r in rows]
    colours = ["tab:green" if r["ok"] else "tab:red" for r in rows]
    y = np.arange(len(rows))
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 0.28 * len(rows) + 1.2), sharey=True)
    a.barh(y, [1e3 * r["penetration_m"] for r in rows], color=colours)
    a.set_xlabel("max penetration (mm)")
    a.set_xscale("symlog", linthresh=1e-3)
    b.barh(y, [100 * r["solved"] for r in rows], color=colours)
    b.set_xlabel("steps with contacts solved (%)")
    a.set_yticks(y, labels, fontsize=6)
    a.invert_yaxis()
    fig.suptitle(f"cusp sweep: {sum(r['ok'] for r in rows)}/{len(rows)} ok", fontsize=10)
    fig.tight_layout()
    path = pathlib.Path(path)
    fig.savefig(path, dpi=90, bbox_inches="tight")  # widened to hold the run labels
    plt.close(fig)
    return path


def _values(text: str) -> list[str]:
    return [v for v in text.split(",") if v]


DESCRIPTION = (
    "Run a grid of scenes x cusp.contact config values x integrators x time steps as Ray tasks "
    "(a local Ray, or a cluster with --address), one cusp.run per grid point, and write the "
    "results to OUT/sweep.csv (one row per run) and OUT/sweep.png.")
EPILOG = (
    "Time steps pair with integrators when both lists have the same length; otherwise every "
    "combination runs. Each run is judged as bench/ablation judges it: the share of steps with "
    "contacts whose solve succeeded, the largest penetration and the completed share of the "
    "horizon. Every grid point is compiled before Ray starts: an unknown config key (naming the "
    "valid keys, documented in mjcf/README.md), a value out of range or an unknown integrator "
    "is refused in one line without starting Ray. Example: python -m cusp sweep mjcf/scenario_a_45_3.xml "
    "--set ruiz=true,false --integrator Euler,implicitfast --timestep 1e-4,1e-3 --out "
    "results/sweep")


def main(argv: list[str], parser_class: type = argparse.ArgumentParser) -> int:
    parser = parser_class(prog="python -m cusp sweep", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("scenes", nargs="+", help="MJCF scenes (XML text only: no mesh or "
                        "texture files)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=V1,V2,...",
                        help="a cusp.contact config key and the values to sweep (repeatable)")
    parser.add_argument("--integrator", default="",
                        help="MuJoCo integrators, comma-separated (e.g. Euler,implicitfast); "
                        "default: each scene's own")
    parser.add_argument("--timestep", default="",
                        help="time steps in s, comma-separated (e.g. 1e-4,1e-3); default: each "
                        "scene's own")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="simulated time per run in s (default 2)")
    parser.add_argument("--seeds", type=int, default=1,
                        help="initial states per grid point, run as one mujoco.rollout batch "
                        "(default 1)")
    parser.add_argument("--perturb", type=float, default=0.0,
                        help="standard deviation in m of the free bodies' initial positions for "
                        "seeds after the first (default 0)")
    parser.add_argument("--threads", type=int, default=1,
                        help="mujoco.rollout threads per task (default 1)")
    parser.add_argument("--workers", type=int, help="CPUs of the local Ray (default: all)")
    parser.add_argument("--address", help="the address of a Ray cluster (HEAD:6379 or "
                        "ray://HEAD:10001) instead of a local Ray")
    parser.add_argument("--out", default="results/sweep",
                        help="output directory for sweep.csv and sweep.png (default "
                        "results/sweep)")
    parser.add_argument("--relative-to", metavar="BODY",
                        help="a free body of the scenes: every other body's slip in its frame "
                        "(column <body>_slip_m)")
    parser.add_argument("--control", metavar="MODULE:FUNCTION",
                        help="a Python controller FUNCTION(model, data) called before every step "
                        "of every run (importable on the workers: a module on their path or "
                        "FILE.py:FUNCTION)")
    parser.add_argument("--quiet", action="store_true",
                        help="do not print a line per finished run")
    args = parser.parse_args(argv)
    sets = {}
    for item in args.set:
        key, sep, values = item.partition("=")
        if not sep or not key or not _values(values):
            parser.error(f"argument --set: '{item}': expected KEY=V1,V2,...")
        sets[key] = _values(values)
    import cusp

    valid = cusp.config_keys()  # before Ray starts: a typo must not cost a cluster round trip
    for key in sets:
        if key not in valid:
            parser.error(f"argument --set: {cusp.unknown_key_message(key)}")
    for scene in args.scenes:
        if not pathlib.Path(scene).is_file():
            raise FileNotFoundError(f"cannot open scene '{scene}'")
    try:
        timesteps = [float(v) for v in _values(args.timestep)] or [None]
    except ValueError:
        parser.error(f"argument --timestep: '{args.timestep}': expected numbers, e.g. 1e-4,1e-3")
    control = None
    if args.control:
        from cusp.__main__ import controller

        try:
            controller(args.control)  # importable here; the workers import it again
        except argparse.ArgumentTypeError as err:
            parser.error(f"argument --control: {err}")
        if args.seeds > 1:
            parser.error("argument --control: a controller cannot drive a mujoco.rollout batch "
                         "(--seeds > 1); run one seed per grid point")
        where, _, name = args.control.rpartition(":")
        control = (f"{os.path.abspath(where)}:{name}"
                   if where.endswith(".py") or os.sep in where else args.control)
    jobs = grid(args.scenes, sets, _values(args.integrator) or [None], timesteps, args.seconds,
                args.seeds, args.perturb, args.threads, args.relative_to, control)
    for job in jobs:  # every grid point compiles here before Ray starts: a bad value, too
        try:
            check(job)
        except ValueError as err:
            parser.error(f"{err}")
    start = time.monotonic()
    rows = run_grid(jobs, args.workers, args.address, progress=not args.quiet)
    wall = time.monotonic() - start
    out = pathlib.Path(args.out)
    table = write_table(rows, out / "sweep.csv")
    picture = plot(rows, jobs, out / "sweep.png")
    print(f"{sum(r['ok'] for r in rows)}/{len(rows)} ok, {wall:.1f} s wall "
          f"({len({r['worker'] for r in rows})} worker processes); wrote {table} and {picture}")
    return 0
