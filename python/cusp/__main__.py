"""Command line: python -m cusp {view,run,compare,render,mjcf} ...

    view SCENE.xml [--stock] [--seconds T] [--hide-contacts]   MuJoCo's viewer with cusp loaded
    run ARGS...                                 exactly cusp-sim's arguments and output
    compare SCENE.xml --out DIR [--seconds T] [--set KEY=VALUE]...
                                                cusp vs stock: PNG plots and summary.md in DIR
    render SCENE.xml --out FILE.png|FILE.mp4 [--seconds T] [--fps F] [--size WxH] [--stock]
                                                headless pictures with the contact markers
    mjcf expand|check ...                       the soft-body generator
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import cusp


def _view(args: argparse.Namespace) -> int:
    """MuJoCo's viewer (passive mode: this process steps the physics in real time), cusp's
    markers switched on (keys C, F and T switch points, force arrows and transparency). The
    passive viewer renders its own copy of the mjData, whose plugin instance never steps, so the
    markers of the stepping mjData are handed to it through its user scene."""
    import mujoco
    import mujoco.viewer

    from cusp import visual

    model = cusp.load_spec(args.scene, stock=args.stock).compile()
    data = mujoco.MjData(model)
    bodies = visual.registered_bodies(model, cusp.load_spec(args.scene))
    ui = not args.hide_ui
    with mujoco.viewer.launch_passive(model, data, show_left_ui=ui,
                                      show_right_ui=ui) as viewer:
        with viewer.lock():
            cusp.show_contacts(viewer.opt, points=not args.hide_contacts,
                               forces=not args.hide_contacts)
            visual.frame_camera(model, data, bodies, viewer.cam)
        start = time.monotonic()
        while viewer.is_running():
            if args.seconds is not None and time.monotonic() - start > args.seconds:
                break
            wall = time.monotonic() - start
            with viewer.lock():
                while data.time < wall:  # real time, at most the viewer's frame behind
                    mujoco.mj_step(model, data)
                if not args.stock:
                    cusp.draw_markers(model, data, viewer.opt, viewer.user_scn)
            viewer.sync()
            time.sleep(0.005)
        timed_out = viewer.is_running()
        viewer.close()
        while viewer.is_running():  # let the render thread finish before the window goes
            time.sleep(0.05)
    if timed_out:
        # closed by --seconds: leave without the interpreter's teardown, where GLFW's atexit
        # terminate can race the viewer's render thread (seen as a segfault under Xvfb)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0


def _run(argv: list[str]) -> int:
    # mirrors cusp-sim exactly: same arguments, same output
    return subprocess.call([str(cusp.build_dir() / "cusp-sim")] + argv)


def _overrides(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"python -m cusp: --set expects KEY=VALUE, got '{pair}'")
        out[key] = value
    return out


def _compare(args: argparse.Namespace) -> int:
    from cusp import plots

    runs = plots.compare_to_dir(args.scene, args.out, seconds=args.seconds,
                                progress=not args.quiet, timestep=args.timestep,
                                **_overrides(args.set))
    print(plots.summary_table(runs))
    print(f"python -m cusp compare: wrote {args.out}/summary.md and PNGs", file=sys.stderr)
    return 0


def _render(args: argparse.Namespace) -> int:
    from cusp import visual

    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        raise SystemExit(f"python -m cusp render: --size expects WxH, got '{args.size}'")
    out = visual.render(args.scene, args.out, seconds=args.seconds, fps=args.fps, width=width,
                        height=height, stock=args.stock, markers=not args.hide_contacts,
                        progress=not args.quiet)
    print(f"python -m cusp render: wrote {out}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "run":
        return _run(argv[1:])
    if argv and argv[0] == "mjcf":
        from cusp import mjcf  # the soft-body generator

        return mjcf.main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m cusp", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    view = sub.add_parser("view", help="open a scene in MuJoCo's viewer with cusp loaded")
    view.add_argument("scene")
    view.add_argument("--stock", action="store_true", help="open the stock twin instead")
    view.add_argument("--hide-ui", action="store_true", help="start without the side panels")
    view.add_argument("--seconds", type=float, help="close the viewer after T wall seconds")
    view.add_argument("--hide-contacts", action="store_true",
                      help="start with the contact markers off (keys C/F switch them)")
    sub.add_parser("run", help="run a scene headless (same arguments as cusp-sim)")
    cmp_ = sub.add_parser("compare", help="cusp vs stock: PNG plots and a Markdown summary")
    cmp_.add_argument("scene")
    cmp_.add_argument("--out", required=True, help="directory for the PNGs and summary.md")
    cmp_.add_argument("--seconds", type=float, default=2.0, help="simulated time (default 2)")
    cmp_.add_argument("--timestep", type=float, help="override the scene's time step (s)")
    cmp_.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                      help="override a cusp.contact config key (cusp run only)")
    cmp_.add_argument("--quiet", action="store_true", help="no progress bar")
    ren = sub.add_parser("render", help="render a scene headless to a PNG or an MP4")
    ren.add_argument("scene")
    ren.add_argument("--out", required=True, help="FILE.png (last frame) or FILE.mp4")
    ren.add_argument("--seconds", type=float, default=2.0, help="simulated time (default 2)")
    ren.add_argument("--fps", type=float, default=30.0)
    ren.add_argument("--size", default="640x480", help="WxH pixels (default 640x480)")
    ren.add_argument("--stock", action="store_true", help="render the stock twin")
    ren.add_argument("--hide-contacts", action="store_true", help="no contact markers")
    ren.add_argument("--quiet", action="store_true", help="no progress bar")
    sub.add_parser("mjcf", help="soft-body generator: mjcf expand IN.xml OUT.xml")
    args = parser.parse_args(argv)
    handlers = {"view": _view, "compare": _compare, "render": _render}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
