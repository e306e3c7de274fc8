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


def write_stock_twin(path: pathlib.Path) -> None:
    """Turn the expanded scene at ``path`` into its stock twin, in place. What changes is decided
    by :func:`cusp.stock_twin` (the same C code as ``cusp-sim --stock``): the geoms whose contype /
    conaffinity it turns on get contype = conaffinity = 1 in the file, the cusp.contact instances
    and the plugin sensors reading them go. The file is edited rather than rewritten by MuJoCo's
    XML writer, which rounds numbers (a ctrlrange of 1 1.000000001 comes back as 1 1)."""
    import xml.etree.ElementTree as ET

    import cusp  # loads mujoco and libcusp.so: only needed here

    spec = cusp.load_spec(path)
    instances = {p.name for p in spec.plugins if p.plugin_name == cusp.PLUGIN_NAME}

    def collisions() -> dict:
        return {(body.name, i): (geom.contype, geom.conaffinity)
                for body in spec.bodies for i, geom in enumerate(body.geoms)}

    before = collisions()
    cusp.stock_twin(spec)
    turned = {key for key, value in collisions().items() if before[key] != value}

    root = ET.parse(path).getroot()
    bodies = {"world": root.find("worldbody")}
    bodies.update({b.get("name"): b for b in root.iter("body") if b.get("name")})
    for name, index in sorted(turned):
        geoms = bodies[name].findall("geom") if name in bodies else []
        if index >= len(geoms):
            raise cusp.SceneError(f"{path}: cannot find geom {index} of body '{name}' in the file "
                                  "(geoms inside <frame> or <replicate> are not supported here)")
        geoms[index].set("contype", "1")
        geoms[index].set("conaffinity", "1")
    for extension in root.findall("extension"):
        for plugin in extension.findall("plugin"):
            if plugin.get("plugin") == cusp.PLUGIN_NAME:
                extension.remove(plugin)
        if not len(extension):
            root.remove(extension)
    for sensors in root.findall("sensor"):
        for sensor in sensors.findall("plugin"):
            if sensor.get("plugin") == cusp.PLUGIN_NAME or sensor.get("instance") in instances:
                sensors.remove(sensor)
    text = path.read_text()
    header = text[:text.index("<mujoco")] if "<mujoco" in text else ""
    path.write_text(header + "<!-- stock twin (cusp-mjcf expand --stock, cusp.stock_twin) -->\n"
                    + ET.tostring(root, encoding="unicode") + "\n")


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
                      help="stock twin (cusp.stock_twin): no plugin instance, every registered "
                           "geom collides in MuJoCo")
    ch = sub.add_parser("check", help="verify that OUT is the current expansion of IN")
    ch.add_argument("input")
    ch.add_argument("output", nargs="?")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.output) if args.output else default_output(args.input)
    try:
        if args.command == "expand":
            expand_file(args.input, out, plugin=False if args.no_plugin else None)
            if args.stock:
                write_stock_twin(out)
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
    except (OSError, ValueError, RuntimeError) as err:  # SceneError, PluginError: one line
        print(f"cusp-mjcf: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
