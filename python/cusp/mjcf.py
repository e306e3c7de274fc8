"""Command line of the soft-body generator.

    python -m cusp.mjcf expand IN.xml [OUT.xml] [--no-plugin | --stock]
    python -m cusp.mjcf check IN.xml [OUT.xml]     exit 1 if OUT is not IN's current expansion
    scripts/cusp-mjcf ...                          same, from a shell

OUT defaults to IN with '.cusp.xml' replaced by '.xml'. See cusp.mjcf_gen and mjcf/README.md.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

from cusp.mjcf_gen import DescriptionError, default_output, expand_file, expand_string  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cusp-mjcf", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("expand", help="expand a soft-body description into plain MJCF")
    ex.add_argument("input")
    ex.add_argument("output", nargs="?")
    mode = ex.add_mutually_exclusive_group()
    mode.add_argument("--no-plugin", action="store_true",
                      help="omit the cusp.contact instance (loads without libcusp)")
    mode.add_argument("--stock", action="store_true",
                      help="stock twin: no plugin instance, disks collide in MuJoCo")
    ch = sub.add_parser("check", help="verify that OUT is the current expansion of IN")
    ch.add_argument("input")
    ch.add_argument("output", nargs="?")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.output) if args.output else default_output(args.input)
    try:
        if args.command == "expand":
            expand_file(args.input, out, plugin=False if args.no_plugin else None,
                        stock=args.stock)
            print(f"cusp-mjcf: wrote {out}")
            return 0
        want = expand_file(args.input)
        if not out.is_file() or out.read_text() != want:
            print(f"cusp-mjcf: {out} is not up to date with {args.input}; run "
                  f"scripts/cusp-mjcf expand {args.input} {out}", file=sys.stderr)
            return 1
        return 0
    except DescriptionError as err:
        print(f"cusp-mjcf: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"cusp-mjcf: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
