"""Command line: python -m cusp {view,run,mjcf} ..."""
from __future__ import annotations

import argparse
import subprocess
import sys

import cusp


def _view(args: argparse.Namespace) -> int:
    import mujoco.viewer

    spec = cusp.load_spec(args.scene, stock=args.stock)
    model = spec.compile()
    mujoco.viewer.launch(model)
    return 0


def _run(argv: list[str]) -> int:
    # mirrors cusp-sim exactly: same arguments, same output
    return subprocess.call([str(cusp.build_dir() / "cusp-sim")] + argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "run":
        return _run(argv[1:])
    if argv and argv[0] == "mjcf":
        from cusp import mjcf  # the soft-body generator

        return mjcf.main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m cusp")
    sub = parser.add_subparsers(dest="command", required=True)
    view = sub.add_parser("view", help="open a scene in MuJoCo's viewer with cusp loaded")
    view.add_argument("scene")
    view.add_argument("--stock", action="store_true", help="open the stock twin instead")
    sub.add_parser("run", help="run a scene headless (same arguments as cusp-sim)")
    sub.add_parser("mjcf", help="soft-body generator: mjcf expand IN.xml OUT.xml")
    args = parser.parse_args(argv)
    if args.command == "view":
        return _view(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
