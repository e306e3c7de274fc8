"""cusp-mjcf: expand the compact soft-body description (``<pcc>``, ``<rod>``, ``<cusp>``) into plain
MJCF that MuJoCo loads.

The description is an ordinary MJCF file with three extra elements (documented in mjcf/README.md,
section "Soft-body description (cusp-mjcf)"):

* ``<pcc>`` (inside ``<worldbody>`` or any ``<body>``): a piecewise-constant-curvature arm made of
  ``<section>`` children, each with three chambers at 120 deg and radial offset
  ``chamber_offset``;
* ``<rod>`` (same places): a Cosserat-style rod of disk bodies joined by ball joints;
* ``<cusp>`` (top level, optional): the ``cusp.contact`` instance; its ``<config>`` children are
  passed through and the generated disk geoms are added to the ``disks`` key.

How a PCC section of N = disks + 1 segments is realised (see models/pcc.h for the closed form in
the coordinates q = (s, theta_x, theta_y)):

* one body per disk; disk k+1 is the child of disk k, at rest ``pos = (0, 0, L0/N)``;
* each segment body carries, in order: two hinges at the parent disk (axis y: theta_x/(2N),
  axis -x: theta_y/(2N)), a slide along z whose qpos *is* the segment arc length s/N (ref = L0/N),
  then the same two hinges in reverse order at its own disk. The palindromic split makes the
  disk orientations exact to third order in the segment bending angle and puts the segment
  along the chord; disk positions are then exact up to a relative chord error theta^2/(24 N^2);
* joint equalities (``polycoef="0 1 0 0 0"``) tie every hinge and slide of a section to the
  section's first ones, so the section keeps constant curvature with 3 degrees of freedom;
* chamber j is a fixed tendon, length = sum(slides) - d * sum(cos(psi_j) hinge_y + sin(psi_j)
  hinge_-x) = s - d (theta_x cos psi_j + theta_y sin psi_j), the exact PCC chamber length; it
  carries the stiffness K (springlength L0), the damping D and one motor actuator.

That is ``realisation="chain"`` (the default). ``realisation="lean"`` puts each segment's bend at
its midpoint (slide, then the x-y hinge pair; or its mirror image, hinges then slide; the two
alternate and a section is a palindrome, the middle segment of an odd count being x-y halves,
slide, y-x halves): 3 joints per segment instead of 5, every disk at the tangent orientation,
positions within (theta/N)^2/12 of the segment length. Both write the per-section joint table
``cusp_pccj:<arm>:<i>`` (joint:kind:weight) that ``pcc_layout`` reads.
"""
from __future__ import annotations

import copy
import math
import pathlib
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

GENERATOR = "cusp-mjcf"
PLUGIN_NAME = "cusp.contact"
ORIENTATION_ATTRS = ("quat", "euler", "axisangle", "xyaxes", "zaxis")
CHAMBER_ANGLES = (0.0, 2 * math.pi / 3, 4 * math.pi / 3)  # psi_j (rad), section frame


class DescriptionError(ValueError):
    """A bad soft-body description; the message names the element, attribute and value."""


# ---- attribute parsing ------------------------------------------------------------------------

def _where(elem: ET.Element) -> str:
    name = elem.get("name")
    return f"<{elem.tag} name='{name}'>" if name else f"<{elem.tag}>"


def _fail(elem: ET.Element, attr: str, value, why: str):
    raise DescriptionError(f"{_where(elem)}: attribute '{attr}' = '{value}': {why}")


@dataclass
class Attr:
    kind: str            # "real", "int", "choice", "vec2", "text"
    default: object = None
    minimum: float | None = None  # inclusive unless strict
    strict: bool = False
    choices: tuple = ()
    unit: str = "-"
    doc: str = ""


def _parse(elem: ET.Element, attr: str, spec: Attr, raw: str):
    if spec.kind == "text":
        return raw
    if spec.kind == "choice":
        if raw not in spec.choices:
            _fail(elem, attr, raw, "must be one of " + "|".join(spec.choices))
        return raw
    parts = raw.split()
    want = 2 if spec.kind == "vec2" else 1
    if len(parts) != want:
        _fail(elem, attr, raw, f"expected {want} number(s)")
    values = []
    for part in parts:
        try:
            v = int(part) if spec.kind == "int" else float(part)
        except ValueError:
            _fail(elem, attr, raw, "not " + ("an integer" if spec.kind == "int" else "a number"))
        if not math.isfinite(v):
            _fail(elem, attr, raw, "not finite")
        if spec.minimum is not None:
            if spec.strict and not v > spec.minimum:
                _fail(elem, attr, raw, f"must be > {spec.minimum:g}")
            if not spec.strict and not v >= spec.minimum:
                _fail(elem, attr, raw, f"must be >= {spec.minimum:g}")
        values.append(v)
    if spec.kind == "vec2":
        if values[0] > values[1]:
            _fail(elem, attr, raw, "lower bound above upper bound")
        return tuple(values)
    return values[0]


def _read(elem: ET.Element, table: dict, inherited: dict | None = None,
          passthrough: tuple = ()) -> dict:
    """Attributes of elem parsed with table; unknown attributes fail; values not given come from
    inherited (already parsed) or the table's defaults."""
    for attr, raw in elem.attrib.items():
        if attr not in table and attr not in passthrough:
            _fail(elem, attr, raw, "unknown attribute (known: " +
                  ", ".join(sorted(list(table) + list(passthrough))) + ")")
    out = {}
    for attr, spec in table.items():
        raw = elem.get(attr)
        if raw is not None:
            out[attr] = _parse(elem, attr, spec, raw)
        elif inherited is not None and attr in inherited:
            out[attr] = inherited[attr]
        else:
            out[attr] = spec.default
    return out


def _require(elem: ET.Element, values: dict, attr: str):
    if values.get(attr) is None:
        _fail(elem, attr, "", "missing (required)")


# Attributes of <section>; the same names on <pcc> are defaults for its sections.
SECTION_ATTRS = {
    "length": Attr("real", None, 0.0, True, unit="m", doc="rest arc length L0 of the section"),
    "mass": Attr("real", None, 0.0, True, unit="kg", doc="section mass, lumped on its disks"),
    "disks": Attr("int", 3, 1, unit="-", doc="interior disks (>= 1); the section has disks+1 "
                  "segments and disks+2 disks counting base and tip"),
    "disk_radius": Attr("real", 0.035, 0.0, True, unit="m", doc="contact disk radius"),
    "disk_thickness": Attr("real", 0.01, 0.0, True, unit="m", doc="contact disk thickness"),
    "chamber_offset": Attr("real", 0.02, 0.0, True, unit="m",
                           doc="radial offset d of the chambers (< disk_radius)"),
    "stiffness": Attr("real", 265.0, 0.0, unit="N/m", doc="chamber stiffness K"),
    "damping": Attr("real", 125.0, 0.0, unit="N s/m", doc="chamber damping D"),
    "friction": Attr("real", 0.6, 0.0, unit="-", doc="disk friction coefficient"),
    "ctrlrange": Attr("vec2", (-40.0, 40.0), unit="N",
                      doc="chamber actuator force range (positive extends the chamber)"),
}
PCC_ATTRS = {
    "name": Attr("text", None, doc="prefix of every generated name"),
    "base": Attr("choice", "fixed", choices=("fixed", "free"),
                 doc="base disk welded to the parent body, or on a free joint"),
    "actuators": Attr("choice", "motor", choices=("motor", "none"),
                      doc="one motor per chamber tendon, or none"),
    "eq_solref": Attr("text", "0.005 1", doc="solref of the constant-curvature joint equalities"),
    "eq_solimp": Attr("text", "0.9999 0.9999 0.001 0.5 2",
                      doc="solimp of the constant-curvature joint equalities"),
    "rgba": Attr("text", "0.35 0.65 0.9 1", doc="disk colour"),
    "realisation": Attr("choice", "chain", choices=("chain", "lean"),
                        doc="lean: 2 hinges per disk and a slide per segment (3 joints per "
                            "disk); chain: 5 joints per segment, two hinges at each end and a "
                            "slide"),
    **SECTION_ATTRS,
}
ROD_ATTRS = {
    "name": Attr("text", None, doc="prefix of every generated name"),
    "base": Attr("choice", "fixed", choices=("fixed", "free"),
                 doc="base disk welded to the parent (clamped), or on a free joint"),
    "length": Attr("real", None, 0.0, True, unit="m", doc="rod length L"),
    "mass": Attr("real", None, 0.0, True, unit="kg", doc="rod mass, lumped on its disks"),
    "segments": Attr("int", 20, 1, unit="-", doc="segments N (N + 1 disks)"),
    "disk_radius": Attr("real", 0.01, 0.0, True, unit="m", doc="contact disk radius"),
    "disk_thickness": Attr("real", 0.004, 0.0, True, unit="m", doc="contact disk thickness"),
    "bend_stiffness": Attr("real", None, 0.0, True, unit="N m^2", doc="bending stiffness EI"),
    "twist_stiffness": Attr("real", None, 0.0, True, unit="N m^2",
                            doc="twisting stiffness GJ (default EI; must equal EI with "
                                "joint=ball)"),
    "stretch_stiffness": Attr("real", None, 0.0, True, unit="N",
                              doc="axial stiffness EA; given: a slide joint per segment"),
    "damping": Attr("real", 0.0, 0.0, unit="N m s/rad",
                    doc="damping of every bending/twisting joint"),
    "stretch_damping": Attr("real", 0.0, 0.0, unit="N s/m",
                            doc="damping of the stretch slides (with stretch_stiffness)"),
    "joint": Attr("choice", "ball", choices=("ball", "hinge"),
                  doc="ball joints (isotropic, GJ = EI) or three hinges (EI, EI, GJ)"),
    "friction": Attr("real", 0.6, 0.0, unit="-", doc="disk friction coefficient"),
    "rgba": Attr("text", "0.9 0.55 0.2 1", doc="disk colour"),
}
CUSP_ATTRS = {
    "instance": Attr("text", "cusp", doc="name of the cusp.contact plugin instance"),
    "plugin": Attr("choice", "true", choices=("true", "false"),
                   doc="false: no plugin instance (plain MuJoCo kinematics)"),
}


# ---- generated-model bookkeeping -------------------------------------------------------------

@dataclass
class Generated:
    disks: list = field(default_factory=list)       # disk geom names, in order
    tendons: list = field(default_factory=list)     # ET elements for <tendon>
    equalities: list = field(default_factory=list)  # ET elements for <equality>
    actuators: list = field(default_factory=list)   # ET elements for <actuator>
    custom: list = field(default_factory=list)      # ET elements for <custom>
    names: set = field(default_factory=set)


def _fmt(x: float) -> str:
    # shortest text that reads back to the same double (exact tendon coefficients)
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def _vec(*xs) -> str:
    return " ".join(_fmt(x) for x in xs)


def _disk_inertia(mass: float, radius: float, thickness: float) -> str:
    # solid cylinder about its centre: Ixx = Iyy = m (3 R^2 + t^2) / 12, Izz = m R^2 / 2 (kg m^2)
    ixx = mass * (3 * radius ** 2 + thickness ** 2) / 12
    return _vec(ixx, ixx, mass * radius ** 2 / 2)


def _add_disk(body: ET.Element, gen: Generated, name: str, mass: float, radius: float,
              thickness: float, friction: float, rgba: str, stock: bool):
    ET.SubElement(body, "inertial", pos="0 0 0", mass=_fmt(mass),
                  diaginertia=_disk_inertia(mass, radius, thickness))
    collide = "1" if stock else "0"
    ET.SubElement(body, "geom", name=name, type="cylinder", size=_vec(radius, thickness / 2),
                  contype=collide, conaffinity=collide, friction=_vec(friction, 0.005, 0.0001),
                  rgba=rgba, mass="0")
    gen.disks.append(name)


def _new_body(parent: ET.Element, name: str, gen: Generated, elem: ET.Element, **attrib):
    if name in gen.names:
        _fail(elem, "name", elem.get("name"), f"generated name '{name}' is not unique")
    gen.names.add(name)
    return ET.SubElement(parent, "body", name=name, **attrib)


def _base_body(parent: ET.Element, elem: ET.Element, name: str, base: str, gen: Generated,
               passthrough: dict) -> ET.Element:
    attrib = {k: v for k, v in passthrough.items()}
    body = _new_body(parent, name, gen, elem, **attrib)
    if base == "free":
        ET.SubElement(body, "freejoint", name=name + "_root")
    return body


# ---- PCC arm -----------------------------------------------------------------------------------

def _expand_pcc(elem: ET.Element, parent: ET.Element, gen: Generated, stock: bool) -> ET.Element:
    top = _read(elem, PCC_ATTRS, passthrough=("pos",) + ORIENTATION_ATTRS)
    name = top["name"]
    if not name:
        _fail(elem, "name", "", "missing (required)")
    sections_xml = [c for c in elem if isinstance(c.tag, str)]
    for child in sections_xml:
        if child.tag != "section":
            raise DescriptionError(f"{_where(elem)}: unknown child element <{child.tag}> "
                                   "(expected <section>)")
    if not sections_xml:
        raise DescriptionError(f"{_where(elem)}: needs at least one <section> child")
    sections = []
    for child in sections_xml:
        sec = _read(child, SECTION_ATTRS, inherited=top)
        for attr in ("length", "mass"):
            if sec[attr] is None:
                _fail(child, attr, "", f"missing (required on <section> or <pcc name='{name}'>)")
        if sec["chamber_offset"] >= sec["disk_radius"]:
            _fail(child, "chamber_offset", _fmt(sec["chamber_offset"]),
                  f"must be smaller than disk_radius = {_fmt(sec['disk_radius'])}")
        sections.append(sec)

    passthrough = {k: elem.get(k) for k in ("pos",) + ORIENTATION_ATTRS if elem.get(k)}
    nseg = [sec["disks"] + 1 for sec in sections]
    # lumped masses: every segment puts half its mass on each of its two disks (kg)
    disk_mass = [0.0] * (sum(nseg) + 1)
    j = 0
    for i, sec in enumerate(sections):
        m_half = sec["mass"] / (2 * nseg[i])
        for _ in range(nseg[i]):
            disk_mass[j] += m_half
            disk_mass[j + 1] += m_half
            j += 1

    meta = [len(sections)]
    disk = 0
    body = _base_body(parent, elem, f"{name}_disk0", top["base"], gen, passthrough)
    sec0 = sections[0]
    _add_disk(body, gen, f"{name}_disk0", disk_mass[0], sec0["disk_radius"],
              sec0["disk_thickness"], sec0["friction"], top["rgba"], stock)
    _add_chamber_sites(body, f"{name}_disk0", sec0["chamber_offset"])
    lean = top["realisation"] == "lean"
    for i, sec in enumerate(sections):
        n, d, L0 = nseg[i], sec["chamber_offset"], sec["length"]
        ds0 = L0 / n  # rest segment length (m)
        meta += [n, d, L0]
        prefix = f"{name}_s{i}"
        # joints of this section: (name, kind, weight); kind "x"/"y" bends, "s" slides; the joint
        # value is weight * theta_x, weight * theta_y or weight * s, and the weights of a kind sum
        # to 1, so chamber lengths are exact linear functions of the joints
        joints = []
        for k in range(n):
            disk += 1
            dname = f"{name}_disk{disk}"
            child = _new_body(body, dname, gen, elem, pos=_vec(0, 0, ds0))
            seg = f"{prefix}_g{k}"
            if lean:
                # the bend of segment k sits inside the segment, not at a disk: every disk then
                # has the tangent orientation k theta / N (up to the twist of non-commuting
                # hinges, which alternates in sign and does not accumulate), and the legs run
                # along the disk tangents. Two kinds of segment alternate: A = slide, then x, y
                # at the midpoint; B = y, x at the midpoint, then slide (its mirror image; a
                # stretched leg alternates sides). The second half of the section mirrors the
                # first, and the middle segment of an odd count is its own mirror image (x, y
                # halves at the first quarter, slide, y, x halves at the third), so the section
                # is a palindrome and its tip frame exact to third order
                xh, yh = ("x", "0 1 0"), ("y", "-1 0 0")
                ext = (seg + "_ext", "s", 1 / n)
                mirror = 2 * k + 1 > n  # the second half mirrors the first
                if 2 * k + 1 == n:
                    plan = [((xh, yh), -0.75, 0.5), ext, ((yh, xh), -0.25, 0.5)]
                elif (k if not mirror else n - 1 - k) % 2 == int(mirror):
                    plan = [ext, ((xh, yh), -0.5, 1.0)]
                else:
                    plan = [((yh, xh), -0.5, 1.0), ext]
                for item in plan:
                    if len(item) == 3 and isinstance(item[0], str):
                        ET.SubElement(child, "joint", name=item[0], type="slide", axis="0 0 1",
                                      pos="0 0 0", ref=_fmt(ds0))
                        joints.append(item)
                        continue
                    pair, at, frac = item
                    for kind, axis in pair:
                        jn = f"{seg}_b{kind}" + ("2" if at == -0.25 else "")
                        ET.SubElement(child, "joint", name=jn, type="hinge", axis=axis,
                                      pos=_vec(0, 0, at * ds0))
                        joints.append((jn, kind, frac / n))
            else:
                # first half bend about the parent disk, slide = segment arc length, second half
                ET.SubElement(child, "joint", name=seg + "_bxa", type="hinge", axis="0 1 0",
                              pos=_vec(0, 0, -ds0))
                ET.SubElement(child, "joint", name=seg + "_bya", type="hinge", axis="-1 0 0",
                              pos=_vec(0, 0, -ds0))
                ET.SubElement(child, "joint", name=seg + "_ext", type="slide", axis="0 0 1",
                              pos="0 0 0", ref=_fmt(ds0))
                ET.SubElement(child, "joint", name=seg + "_byb", type="hinge", axis="-1 0 0",
                              pos="0 0 0")
                ET.SubElement(child, "joint", name=seg + "_bxb", type="hinge", axis="0 1 0",
                              pos="0 0 0")
                joints += [(seg + "_bxa", "x", 1 / (2 * n)), (seg + "_bya", "y", 1 / (2 * n)),
                           (seg + "_ext", "s", 1 / n), (seg + "_byb", "y", 1 / (2 * n)),
                           (seg + "_bxb", "x", 1 / (2 * n))]
            # a translucent backbone piece for the viewer (never collides, no mass)
            ET.SubElement(child, "geom", name=f"{dname}_backbone", type="capsule",
                          fromto=_vec(0, 0, -ds0, 0, 0, 0), size=_fmt(0.25 * d),
                          contype="0", conaffinity="0", group="1", mass="0",
                          rgba="0.8 0.8 0.8 0.35")
            _add_disk(child, gen, dname, disk_mass[disk], sec["disk_radius"],
                      sec["disk_thickness"], sec["friction"], top["rgba"], stock)
            _add_chamber_sites(child, dname, d)
            body = child
        # constant curvature: every joint is tied to the section's first of its kind in the
        # ratio of their weights
        for kind in ("x", "y", "s"):
            group = [(jn, w) for jn, k2, w in joints if k2 == kind]
            first, w0 = group[0]
            for other, w in group[1:]:
                gen.equalities.append(ET.Element(
                    "joint", name=f"{other}_cc", joint1=other, joint2=first,
                    polycoef=_vec(0, w / w0, 0, 0, 0), solref=top["eq_solref"],
                    solimp=top["eq_solimp"]))
        # chambers: fixed tendons, length = s - d (theta_x cos psi + theta_y sin psi) (m); the
        # coefficient of a joint is the chamber's coefficient over the weights' sum (1)
        for c, psi in enumerate(CHAMBER_ANGLES):
            tname = f"{prefix}_c{c}"
            ten = ET.Element("fixed", name=tname, stiffness=_fmt(sec["stiffness"]),
                             damping=_fmt(sec["damping"]), springlength=_fmt(L0))
            coef = {"s": 1.0, "x": -d * math.cos(psi), "y": -d * math.sin(psi)}
            for jn, kind, w in sorted(joints, key=lambda j: "sxy".index(j[1])):
                if abs(coef[kind]) > 1e-15:
                    ET.SubElement(ten, "joint", joint=jn, coef=_fmt(coef[kind]))
            gen.tendons.append(ten)
            if top["actuators"] == "motor":
                lo, hi = sec["ctrlrange"]
                gen.actuators.append(ET.Element("motor", name=tname, tendon=tname, gear="1",
                                                ctrllimited="true", ctrlrange=_vec(lo, hi)))
        gen.custom.append(ET.Element("text", name=f"cusp_pccj:{name}:{i}", data=" ".join(
            f"{jn}:{kind}:{_fmt(w)}" for jn, kind, w in joints)))
    gen.custom.append(ET.Element("numeric", name=f"cusp_pcc:{name}",
                                 data=_vec(*meta)))
    return body


def _add_chamber_sites(body: ET.Element, dname: str, d: float):
    # where the three chambers pierce this disk (visual aid, group 3)
    for c, psi in enumerate(CHAMBER_ANGLES):
        ET.SubElement(body, "site", name=f"{dname}_c{c}", pos=_vec(d * math.cos(psi),
                      d * math.sin(psi), 0), size=_fmt(0.1 * d), group="3")


# ---- Cosserat rod ------------------------------------------------------------------------------

def _expand_rod(elem: ET.Element, parent: ET.Element, gen: Generated, stock: bool):
    r = _read(elem, ROD_ATTRS, passthrough=("pos",) + ORIENTATION_ATTRS)
    name = r["name"]
    if not name:
        _fail(elem, "name", "", "missing (required)")
    for attr in ("length", "mass", "bend_stiffness"):
        _require(elem, r, attr)
    for child in elem:
        if isinstance(child.tag, str):
            raise DescriptionError(f"{_where(elem)}: unknown child element <{child.tag}>")
    ei = r["bend_stiffness"]
    gj = r["twist_stiffness"] if r["twist_stiffness"] is not None else ei
    if r["joint"] == "ball" and abs(gj - ei) > 1e-12 * ei:
        _fail(elem, "twist_stiffness", _fmt(gj),
              "ball joints are isotropic (GJ = EI); use joint='hinge' for GJ != EI")
    n, L, m = r["segments"], r["length"], r["mass"]
    ds = L / n
    passthrough = {k: elem.get(k) for k in ("pos",) + ORIENTATION_ATTRS if elem.get(k)}
    # lumped masses: half of each segment on each of its end disks (kg)
    masses = [m / (2 * n)] + [m / n] * (n - 1) + [m / (2 * n)]
    body = _base_body(parent, elem, f"{name}_disk0", r["base"], gen, passthrough)
    _add_disk(body, gen, f"{name}_disk0", masses[0], r["disk_radius"], r["disk_thickness"],
              r["friction"], r["rgba"], stock)
    for k in range(1, n + 1):
        child = _new_body(body, f"{name}_disk{k}", gen, elem, pos=_vec(0, 0, ds))
        # the joint of disk k sits at disk k-1. Rotational springs lump the bending energy of
        # the rod length around their node (trapezoidal rule): ds for interior nodes, ds/2 at
        # a clamped base; a free base welds its first segment (zero moment at a free end).
        clamped = k == 1 and r["base"] == "fixed"
        if k > 1 or clamped:
            lump = ds / 2 if clamped else ds
            jn = f"{name}_j{k - 1}"
            anchor = _vec(0, 0, -ds)
            if r["joint"] == "ball":
                ET.SubElement(child, "joint", name=jn, type="ball", pos=anchor,
                              stiffness=_fmt(ei / lump), damping=_fmt(r["damping"]))
            else:
                for axis, suffix, stiff in (("1 0 0", "x", ei), ("0 1 0", "y", ei),
                                            ("0 0 1", "z", gj)):
                    ET.SubElement(child, "joint", name=f"{jn}{suffix}", type="hinge",
                                  axis=axis, pos=anchor, stiffness=_fmt(stiff / lump),
                                  damping=_fmt(r["damping"]))
            if r["stretch_stiffness"] is not None:
                ET.SubElement(child, "joint", name=f"{jn}_ext", type="slide", axis="0 0 1",
                              pos="0 0 0", stiffness=_fmt(r["stretch_stiffness"] / ds),
                              damping=_fmt(r["stretch_damping"]))
        ET.SubElement(child, "geom", name=f"{name}_disk{k}_backbone", type="capsule",
                      fromto=_vec(0, 0, -ds, 0, 0, 0), size=_fmt(0.3 * r["disk_radius"]),
                      contype="0", conaffinity="0", group="1", mass="0",
                      rgba="0.8 0.8 0.8 0.35")
        _add_disk(child, gen, f"{name}_disk{k}", masses[k], r["disk_radius"],
                  r["disk_thickness"], r["friction"], r["rgba"], stock)
        body = child
    gen.custom.append(ET.Element("numeric", name=f"cusp_rod:{name}",
                                 data=_vec(n, L, ei, gj)))


# ---- document expansion -----------------------------------------------------------------------

def _section(root: ET.Element, tag: str) -> ET.Element:
    found = root.find(tag)
    if found is None:
        found = ET.SubElement(root, tag)
    return found


def expand_tree(root: ET.Element, plugin: bool | None = None, stock: bool = False) -> ET.Element:
    """Expand a parsed description (its <mujoco> root) into plain MJCF, in a new tree.

    plugin: None follows the description's <cusp plugin=...>; False omits the cusp.contact
    instance (the scene then loads without libcusp); stock: disks collide in MuJoCo
    (contype = conaffinity = 1) and no plugin instance is written (the stock twin)."""
    if root.tag != "mujoco":
        raise DescriptionError(f"<{root.tag}>: the root element must be <mujoco>")
    root = copy.deepcopy(root)
    gen = Generated()

    cusp_elems = [c for c in root if c.tag == "cusp"]
    if len(cusp_elems) > 1:
        raise DescriptionError("<cusp>: at most one <cusp> element per file")
    cusp_cfg = {"instance": "cusp", "plugin": "true"}
    user_config: list[tuple[str, str]] = []
    if cusp_elems:
        ce = cusp_elems[0]
        cusp_cfg = _read(ce, CUSP_ATTRS)
        for child in ce:
            if not isinstance(child.tag, str):
                continue
            if child.tag != "config":
                raise DescriptionError(f"<cusp>: unknown child element <{child.tag}> "
                                       "(expected <config key= value=>)")
            for attr, raw in child.attrib.items():
                if attr not in ("key", "value"):
                    _fail(child, attr, raw, "unknown attribute (known: key, value)")
            if not child.get("key"):
                _fail(child, "key", "", "missing (required)")
            user_config.append((child.get("key"), child.get("value", "")))
        root.remove(ce)

    # replace every <pcc>/<rod> by its generated bodies, depth first, in document order
    def walk(parent: ET.Element):
        for idx, child in enumerate(list(parent)):
            if not isinstance(child.tag, str):
                continue
            if child.tag in ("pcc", "rod"):
                if parent.tag not in ("worldbody", "body"):
                    raise DescriptionError(f"{_where(child)}: must be inside <worldbody> or "
                                           f"<body>, not <{parent.tag}>")
                holder = ET.Element("holder")
                if child.tag == "pcc":
                    _expand_pcc(child, holder, gen, stock)
                else:
                    _expand_rod(child, holder, gen, stock)
                parent.remove(child)
                for j, new in enumerate(list(holder)):
                    parent.insert(idx + j, new)
            elif child.tag in ("section",):
                raise DescriptionError(f"<section>: only allowed inside <pcc>, found in "
                                       f"<{parent.tag}>")
            else:
                walk(child)

    walk(root)

    for tag, items in (("custom", gen.custom), ("tendon", gen.tendons),
                       ("equality", gen.equalities), ("actuator", gen.actuators)):
        if items:
            holder = _section(root, tag)
            holder.extend(items)

    want_plugin = cusp_cfg["plugin"] == "true" if plugin is None else plugin
    if stock:
        want_plugin = False
    if want_plugin:
        ext = _section(root, "extension")
        # the extension must come before the elements that reference plugin instances
        root.remove(ext)
        root.insert(0, ext)
        plug = ET.SubElement(ext, "plugin", plugin=PLUGIN_NAME)
        inst = ET.SubElement(plug, "instance", name=cusp_cfg["instance"])
        disks = list(gen.disks)
        for key, value in user_config:
            if key == "disks":
                disks = value.split() + disks
        ET.SubElement(inst, "config", key="disks", value=" ".join(disks))
        for key, value in user_config:
            if key != "disks":
                ET.SubElement(inst, "config", key=key, value=value)
    return root


def expand_string(text: str, source: str = "<string>", plugin: bool | None = None,
                  stock: bool = False) -> str:
    """Expand a description given as XML text; returns plain MJCF text."""
    try:
        root = ET.fromstring(text, parser=ET.XMLParser(
            target=ET.TreeBuilder(insert_comments=True)))
    except ET.ParseError as err:
        raise DescriptionError(f"{source}: not well-formed XML: {err}") from None
    out = expand_tree(root, plugin=plugin, stock=stock)
    ET.indent(out, space="  ")
    header = (f"<!-- Generated by {GENERATOR} from {source}; do not edit: change the "
              "description and re-run\n     scripts/cusp-mjcf expand. -->\n")
    return header + ET.tostring(out, encoding="unicode") + "\n"


def expand_file(src: str | pathlib.Path, dst: str | pathlib.Path | None = None,
                plugin: bool | None = None, stock: bool = False) -> str:
    """Expand the description file src; writes dst if given; returns the MJCF text. Relative
    asset paths keep working when dst is in the same directory as src."""
    src = pathlib.Path(src)
    text = expand_string(src.read_text(), source=src.name, plugin=plugin, stock=stock)
    if dst is not None:
        pathlib.Path(dst).write_text(text)
    return text


def default_output(src: str | pathlib.Path) -> pathlib.Path:
    """mjcf/x.cusp.xml -> mjcf/x.xml (the committed expansion next to its description)."""
    src = pathlib.Path(src)
    stem = re.sub(r"\.cusp\.xml$", "", src.name)
    if stem == src.name:
        stem = src.stem + ".expanded"
    return src.with_name(stem + ".xml")


# ---- helpers for generated models (tests, the plugin's Python side) ---------------------------

def pcc_layout(model, name: str) -> list[dict]:
    """Sections of the generated PCC arm `name` in a compiled mujoco.MjModel: per section a dict
    with nseg, chamber_offset d (m), rest length L0 (m), the qpos addresses of its bend-x,
    bend-y and slide joints, its chamber tendon ids and its disk geom ids (base to tip)."""
    import mujoco

    nid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_NUMERIC, f"cusp_pcc:{name}")
    if nid < 0:
        raise KeyError(f"no generated PCC arm named '{name}' in this model")
    adr = model.numeric_adr[nid]
    data = model.numeric_data[adr:adr + model.numeric_size[nid]]
    nsec = int(data[0])
    out, disk = [], 0

    def qadr(jname):
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, jname)
        if jid < 0:
            raise KeyError(jname)
        return int(model.jnt_qposadr[jid])

    for i in range(nsec):
        nseg, d, L0 = int(data[1 + 3 * i]), float(data[2 + 3 * i]), float(data[3 + 3 * i])
        tid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TEXT, f"cusp_pccj:{name}:{i}")
        if tid < 0:
            raise KeyError(f"arm '{name}' section {i}: no joint table (regenerate the scene)")
        adr_t, size_t = model.text_adr[tid], model.text_size[tid]
        text = bytes(model.text_data[adr_t:adr_t + size_t - 1]).decode()
        joints = []
        for item in text.split():
            jname, kind, weight = item.rsplit(":", 2)
            joints.append((qadr(jname), kind, float(weight)))
        sec = {
            "nseg": nseg, "d": d, "L0": L0,
            "joints": joints,
            "bx": [a for a, k, _ in joints if k == "x"],
            "by": [a for a, k, _ in joints if k == "y"],
            "ext": [a for a, k, _ in joints if k == "s"],
            "tendons": [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TENDON, f"{name}_s{i}_c{c}")
                        for c in range(3)],
            "disks": [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, f"{name}_disk{k}")
                      for k in range(disk, disk + nseg + 1)],
        }
        disk += nseg
        out.append(sec)
    return out


def pcc_config_from_lengths(lengths, d: float):
    """(s, theta_x, theta_y) from three chamber lengths (m); mirrors models/pcc.c."""
    s = sum(lengths) / 3
    tx = -2.0 / (3 * d) * sum(l * math.cos(p) for l, p in zip(lengths, CHAMBER_ANGLES))
    ty = -2.0 / (3 * d) * sum(l * math.sin(p) for l, p in zip(lengths, CHAMBER_ANGLES))
    return s, tx, ty


def pcc_set_lengths(model, qpos, name: str, lengths) -> None:
    """Write into qpos the joint values of arm `name` for chamber lengths (nsection x 3, m):
    every joint = its weight times s, theta_x or theta_y (chain: slides s/N, hinges theta/(2N);
    lean: slides s/N, hinges theta/N inside a section and theta/(2N) at its ends)."""
    for sec, l in zip(pcc_layout(model, name), lengths):
        q = dict(zip("sxy", pcc_config_from_lengths(l, sec["d"])))
        for adr, kind, weight in sec["joints"]:
            qpos[adr] = weight * q[kind]
