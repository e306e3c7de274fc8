"""Command line: python -m cusp {view,studio,run,compare,render,sweep,mjcf,reduction,plan} ...

    view SCENE.xml [--stock] [--seconds T] [--hide-contacts] [--paused]
                                                MuJoCo's viewer with cusp loaded
    studio SCENE.xml [--gfx MODE] [--port P]    MuJoCo Studio with cusp's markers and panel
    studio --plugin-file                        print the path of cusp's Studio plugin file
    run ARGS...                                 cusp-sim's arguments and output (its loop, in
                                                this process), plus --control MODULE:FUNCTION
    compare SCENE.xml --out DIR [--seconds T] [--set KEY=VALUE]...
                                                cusp vs stock: PNG plots and summary.md in DIR
    render SCENE.xml --out FILE.png|FILE.mp4 [--seconds T] [--fps F] [--size WxH] [--stock]
                                                headless pictures with the contact markers
    sweep SCENE... [--set KEY=V1,V2]... [--integrator I1,I2] [--timestep H1,H2] [--workers N]
          [--address RAY] --out DIR               a grid of runs as Ray tasks (cusp.sweep)
    mjcf expand|check ...                       the soft-body generator
    reduction snapshot|basis|error ...          contact-space reduction (cusp.reduction)
    plan [--axis x|y|z] [--angle DEG] [--steps N] [--horizon T] [--scene FILE] [--no-replay]
         [--no-replan]
         --out DIR                              plan the sphere task (cusp.plan), replay it
                                                with cusp and stock: plan.npz, summary.json,
                                                plan.png in DIR

view, run, compare and render take --control MODULE:FUNCTION (or FILE.py:FUNCTION): a Python
controller called as FUNCTION(model, data) before every step, on cusp and on the stock twin alike.
Errors are one line on stderr (exit status 2 for bad arguments, 1 otherwise).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import pathlib
import sys
import warnings
from typing import Callable

import cusp


def _view(args: argparse.Namespace) -> int:
    from cusp import visual

    visual.view(args.scene, stock=args.stock, ctrl=args.control, seconds=args.seconds,
                paused=args.paused, follow=not args.no_follow, markers=not args.hide_contacts,
                ui=not args.hide_ui)
    return 0


def _studio(args: argparse.Namespace) -> int:
    from cusp import studio

    if args.plugin_file:
        print(studio.__file__)
        return 0
    from mujoco.studio import viewer_protocol

    usage = "(python -m cusp studio --help for usage)"
    if not args.scene:
        raise _UsageError(f"a SCENE.xml is needed (or --plugin-file) {usage}")
    if not os.path.isfile(args.scene):
        raise _UsageError(f"no file {args.scene}")
    if args.gfx not in ("",) + tuple(viewer_protocol.GFX_MODES):
        raise _UsageError(f"argument --gfx: '{args.gfx}': expected one of "
                          f"{', '.join(viewer_protocol.GFX_MODES)} {usage}")
    studio.run(args.scene, gfx=args.gfx, width=args.width, height=args.height, port=args.port)
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors ("PROG: argument --seconds: '-1': expected ...")."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(f"{message} ({self.prog} --help for usage)")


class _UsageError(Exception):
    """A bad command line: one line, exit status 2."""


def _positive(flag: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not (value > 0 and value < float("inf")):
            raise argparse.ArgumentTypeError(f"'{text}': expected a positive number of seconds")
        return value

    parse.__name__ = flag
    return parse


def controller(text: str) -> Callable:
    """The function named by ``--control MODULE:FUNCTION`` or ``FILE.py:FUNCTION`` (modules are
    looked up from the current directory too, as ``python -m`` does)."""
    where, sep, name = text.rpartition(":")
    if not sep or not where or not name:
        raise argparse.ArgumentTypeError(f"'{text}': expected MODULE:FUNCTION or FILE.py:FUNCTION")
    try:
        if where.endswith(".py") or os.sep in where:
            path = pathlib.Path(where)
            if not path.is_file():
                raise argparse.ArgumentTypeError(f"'{text}': no file {where}")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(where)
    except argparse.ArgumentTypeError:
        raise
    except Exception as err:  # the controller's own module failed to import
        raise argparse.ArgumentTypeError(f"'{text}': cannot import {where}: {err}") from None
    function = getattr(module, name, None)
    if not callable(function):
        raise argparse.ArgumentTypeError(f"'{text}': {where} has no function {name}")
    return function


def _common(parser: argparse.ArgumentParser, seconds_default: float | None = 2.0) -> None:
    parser.add_argument("scene")
    parser.add_argument("--seconds", type=_positive("--seconds"), default=seconds_default,
                        help="simulated time in s" + (f" (default {seconds_default:g})"
                                                      if seconds_default else ""))
    parser.add_argument("--control", type=controller, metavar="MODULE:FUNCTION",
                        help="Python controller FUNCTION(model, data), called before every step")


def _run_parser(prog: str) -> argparse.ArgumentParser:
    run = _Parser(prog=prog, description="Run a scene headless with cusp contact (or its stock "
                  "twin) and print a JSON summary (cusp-sim's loop and output).")
    _common(run)
    run.add_argument("--timestep", type=_positive("--timestep"),
                     help="override the scene's timestep in s")
    run.add_argument("--stock", action="store_true",
                     help="run the stock twin: cusp.contact removed, registered geoms collide")
    run.add_argument("--csv", help="write one row per step")
    run.add_argument("--solver", help="cusp backend (same as --set solver=NAME)")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override a cusp.contact config key (see mjcf/README.md)")
    return run


def _run(argv: list[str], prog: str = "python -m cusp run") -> int:
    args = _run_parser(prog).parse_args(argv)
    overrides = _overrides(args.set, prog)
    if args.solver:
        overrides["solver"] = args.solver
    text, _, failures = cusp._simulate(args.scene, args.seconds, args.stock, args.timestep, False,
                                       args.control, args.csv, overrides)
    print(text)
    if failures:
        print(f"{prog}: {failures}", file=sys.stderr)
    return 0


def sim_main() -> None:
    """``cusp-sim`` as installed by pip (the same loop and output as the cusp-sim tool of a
    build, plus --control)."""
    sys.exit(main(["run"] + sys.argv[1:], prog="cusp-sim"))


def _overrides(pairs: list[str], prog: str = "python -m cusp") -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise _UsageError(f"argument --set: '{pair}': expected KEY=VALUE (a cusp.contact "
                              f"config key) ({prog} --help for usage)")
        out[key] = value
    return out


def _compare(args: argparse.Namespace) -> int:
    from cusp import plots

    runs = plots.compare_to_dir(args.scene, args.out, seconds=args.seconds,
                                progress=not args.quiet, timestep=args.timestep,
                                ctrl=args.control, relative_to=args.relative_to,
                                **_overrides(args.set))
    print(plots.summary_table(runs, args.relative_to))
    print(f"python -m cusp compare: wrote {args.out}/summary.md and PNGs", file=sys.stderr)
    return 0


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        width = height = 0
    if width <= 0 or height <= 0:
        raise argparse.ArgumentTypeError(f"'{text}': expected WxH in pixels, e.g. 640x480")
    return width, height


def _render(args: argparse.Namespace) -> int:
    from cusp import visual

    width, height = args.size
    out = visual.render(args.scene, args.out, seconds=args.seconds, fps=args.fps, width=width,
                        height=height, stock=args.stock, markers=not args.hide_contacts,
                        progress=not args.quiet, ctrl=args.control)
    print(f"python -m cusp render: wrote {out}", file=sys.stderr)
    return 0


def _count(flag: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 2:
            raise argparse.ArgumentTypeError(f"'{text}': expected an integer >= 2")
        return value

    parse.__name__ = flag
    return parse


def _plan(args: argparse.Namespace) -> int:
    try:
        import cusp.plan
    except ImportError as err:
        raise ValueError(f"needs CasADi: pip install casadi==3.8.2 (scripts/bootstrap installs "
                         f"it in .venv) ({err})") from None

    task = cusp.plan.SphereTask(axis=args.axis, angle_deg=args.angle, steps=args.steps,
                                horizon=args.horizon, max_seconds=args.max_seconds,
                                terminal_weight=args.terminal_weight,
                                **({"scene": args.scene} if args.scene else {}))
    say = None if args.quiet else (lambda text: print(text, file=sys.stderr))
    try:
        summary = cusp.plan.plan_and_replay(task, args.out, replays=not args.no_replay,
                                            progress=say, replan=not args.no_replan)
    except cusp.plan.PlanError as err:
        raise ValueError(str(err)) from None
    print(json.dumps(summary, indent=2))
    ok = all(stage["success"] for stage in summary["stages"])
    if not ok:
        print("python -m cusp plan: a stage did not converge (see summary.json)", file=sys.stderr)
    return 0 if ok else 1


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m cusp", description=(
        "cusp's command line: view, run, compare and render scenes with cusp contact (and their "
        "stock twins), and run sweeps, contact-space reduction and planning through contact. "
        "Each command has its own --help."))
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    view = sub.add_parser("view", help="open a scene in MuJoCo's viewer with cusp loaded")
    _common(view, seconds_default=None)
    view.add_argument("--stock", action="store_true", help="open the stock twin instead")
    view.add_argument("--hide-ui", action="store_true", help="start without the side panels")
    view.add_argument("--hide-contacts", action="store_true",
                      help="start with the contact markers off (keys C/F switch them)")
    view.add_argument("--paused", action="store_true",
                      help="start paused (space runs and pauses the physics)")
    view.add_argument("--no-follow", action="store_true",
                      help="do not keep the camera on the registered bodies")
    studio = sub.add_parser("studio", help="open a scene in MuJoCo Studio with cusp's markers "
                            "and panel")
    studio.add_argument("scene", nargs="?", default="")
    studio.add_argument("--gfx", default="", help="Studio's graphics mode: opengl, "
                        "opengl_software, vulkan, web (a browser), ... (default: Studio's choice)")
    studio.add_argument("--port", type=int, default=0,
                        help="web viewer port (0: the first free port >= 8080)")
    studio.add_argument("--width", type=int, default=1200, help="window width in pixels")
    studio.add_argument("--height", type=int, default=800, help="window height in pixels")
    studio.add_argument("--plugin-file", action="store_true",
                        help="print the path of cusp's plugin file for mujoco-studio --plugins")
    sub.add_parser("run", help="run a scene headless (cusp-sim's arguments, plus --control)")
    cmp_ = sub.add_parser("compare", help="cusp vs stock: PNG plots and a Markdown summary")
    _common(cmp_)
    cmp_.add_argument("--out", required=True, help="directory for the PNGs and summary.md")
    cmp_.add_argument("--timestep", type=_positive("--timestep"),
                      help="override the scene's time step (s)")
    cmp_.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                      help="override a cusp.contact config key (cusp run only)")
    cmp_.add_argument("--relative-to", metavar="BODY",
                      help="a free body: report every other body's slip in its frame")
    cmp_.add_argument("--quiet", action="store_true", help="no progress bar")
    ren = sub.add_parser("render", help="render a scene headless to a PNG or an MP4")
    _common(ren)
    ren.add_argument("--out", required=True, help="FILE.png (last frame) or FILE.mp4")
    ren.add_argument("--fps", type=_positive("--fps"), default=30.0)
    ren.add_argument("--size", type=_size, default=(640, 480),
                     help="WxH pixels (default 640x480)")
    ren.add_argument("--stock", action="store_true", help="render the stock twin")
    ren.add_argument("--hide-contacts", action="store_true", help="no contact markers")
    ren.add_argument("--quiet", action="store_true", help="no progress bar")
    sub.add_parser("sweep", help="a grid of scenes x config values as Ray tasks "
                   "(python -m cusp sweep --help)")
    sub.add_parser("mjcf", help="soft-body generator: mjcf expand IN.xml OUT.xml")
    sub.add_parser("reduction", help="contact-space reduction: reduction snapshot|basis|error "
                   "(python -m cusp reduction --help)")
    pln = sub.add_parser("plan", help="plan the sphere task through contact and replay it",
                         description="Plan the sphere-turning task of [CUSP] Sec. V-C "
                         "(docs/references.md) through contact with cusp's contact model, then "
                         "replay the plan with cusp and with the stock twin.")
    pln.add_argument("--axis", choices=("x", "y", "z"), default="x",
                     help="rotation axis of the sphere (default x)")
    pln.add_argument("--angle", type=float, default=90.0, help="rotation (deg, default 90)")
    pln.add_argument("--steps", type=_count("--steps"), default=100, help="N (default 100)")
    pln.add_argument("--horizon", type=_positive("--horizon"), default=4.0,
                     help="T in s (default 4)")
    pln.add_argument("--terminal-weight", type=_positive("--terminal-weight"), default=100.0,
                     help="weight of the final orientation cost (default 100, as in [CUSP] "
                     "eq. (20); docs/references.md)")
    pln.add_argument("--scene", help="generated scene (default mjcf/plan_sphere.cusp.xml)")
    pln.add_argument("--max-seconds", type=_positive("--max-seconds"), default=300.0,
                     help="wall-time limit of each IPOPT run (s, default 300)")
    pln.add_argument("--no-replay", action="store_true", help="plan only")
    pln.add_argument("--no-replan", action="store_true",
                     help="no re-planning replay (open loop and feedback only)")
    pln.add_argument("--out", required=True, help="directory for plan.npz, summary.json, plan.png")
    pln.add_argument("--quiet", action="store_true", help="no per-stage lines on stderr")
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m cusp") -> int:
    """The command line; every error is one line on stderr (2: bad arguments, 1: the rest)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    name = prog if prog != "python -m cusp" or not argv else f"{prog} {argv[0]}"
    if argv and argv[0] in ("run", "compare", "render"):
        from cusp import _plugin

        _plugin.warnings_as_lines(name)
    shown = warnings.showwarning

    def show(message, category, *rest):  # a run's failed-solve summary: one line
        if issubclass(category, cusp.SolveWarning):
            print(f"{name}: {message}", file=sys.stderr)
        else:
            shown(message, category, *rest)

    warnings.showwarning = show
    try:
        if argv and argv[0] == "run":
            return _run(argv[1:], prog if prog != "python -m cusp" else "python -m cusp run")
        if argv and argv[0] == "sweep":
            from cusp import sweep

            try:
                import ray  # noqa: F401
            except ImportError:
                print("python -m cusp sweep: needs Ray: pip install ray (scripts/bootstrap "
                      "installs it in .venv)", file=sys.stderr)
                return 1
            return sweep.main(argv[1:], _Parser)
        if argv and argv[0] == "reduction":
            from cusp import reduction

            return reduction.main(argv[1:], _Parser)
        if argv and argv[0] == "mjcf":
            from cusp import mjcf  # the soft-body generator

            return mjcf.main(argv[1:])
        args = _parser().parse_args(argv)
        handlers = {"view": _view, "studio": _studio, "compare": _compare, "render": _render,
                    "plan": _plan}
        return handlers[args.command](args)
    except _UsageError as err:
        print(f"{name}: {err}", file=sys.stderr)
        return 2
    except cusp.PluginError as err:
        from cusp import _plugin

        if _plugin.reported != str(err):  # not printed already by the mujoco.plugins entry point
            print(f"{name}: {err}", file=sys.stderr)
        return 1
    except (ValueError, RuntimeError, OSError) as err:  # cusp.SceneError is a ValueError
        print(f"{name}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
