"""Mechanisms from data (dict, JSON or YAML) and back, for exchange and versioning.

Format (YAML shown; JSON is the same structure)::

    name: slider_crank
    dim: 2                      # 2 planar, 3 spatial
    gravity: [0, -9.81]
    bodies:
      - {name: crank, mass: 1.0, inertia: 0.01, position: [0.1, 0], orientation: 0}
      - {name: bob, particle: true, mass: 1.0, position: [1, 0]}
    markers:                    # body frame; 'cm' exists on every body, ground has any
      - {body: crank, name: A, position: [-0.1, 0]}
    joints:
      - {kind: revolute, name: O, i: ground.O, j: crank.A}
      - {kind: distance, name: rod, i: ground.O, j: bob.cm, length: 1.0}
      - {kind: angle_driver, name: motor, i: ground.O, j: crank.A,
         function: {poly: [0.0, 3.0]}}          # or {sine: [amplitude, w, phase, offset]}
    elements:
      - {kind: spring_damper, name: s, i: ground.O, j: bob.cm, stiffness: 100,
         damping: 1, length0: 1.0, rope: false}
      - {kind: contact, name: floor, marker: bob.cm, radius: 0.05, point: [0, 0],
         normal: [0, 1], stiffness: 1.0e7, restitution: 0.9, friction: 0.3}
    loads:
      - {name: F, marker: bob.cm, kind: force}

Spatial orientations are 3x3 matrices, 4 Euler parameters or
``{axis: [x, y, z], angle: a}``; spatial inertia 3 principal moments or 3x3.
Driving functions given as Python callables cannot be written back
(:func:`to_dict` says which).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from cosim.errors import BuildError

from .mechanism import Mechanism


def function_from_spec(spec: dict) -> Any:
    """``{poly: [c0, c1, ...]}`` or ``{sine: [A, w, phase, offset]}`` -> ``t -> (f, f', f'')``."""
    if "poly" in spec:
        c = np.asarray(spec["poly"], float)
        d1, d2 = np.polynomial.polynomial.polyder(c), np.polynomial.polynomial.polyder(c, 2)
        pv = np.polynomial.polynomial.polyval

        def fn(t):
            return float(pv(t, c)), float(pv(t, d1)), float(pv(t, d2))
    elif "sine" in spec:
        a, w, ph, off = (list(spec["sine"]) + [0.0, 0.0])[:4]

        def fn(t):
            s, co = math.sin(w * t + ph), math.cos(w * t + ph)
            return off + a * s, a * w * co, -a * w * w * s
    else:
        raise BuildError(f"driving function {spec!r}: give {{poly: [...]}} or {{sine: [A, w, "
                         "phase, offset]}}")
    fn.spec = dict(spec)
    return fn


def _orient(o: Any) -> Any:
    if isinstance(o, dict):
        return (o["axis"], o["angle"])
    return o


def from_dict(data: dict) -> Mechanism:
    """Build a :class:`Mechanism` from the format above (errors name the entry)."""
    def need(entry: dict, key: str, where: str) -> Any:
        if key not in entry:
            raise BuildError(f"{where}: missing '{key}' in {entry!r}")
        return entry[key]
    mech = Mechanism(data.get("name", "mechanism"), int(data.get("dim", 2)),
                     data.get("gravity"))
    for k, b in enumerate(data.get("bodies", [])):
        where = f"bodies[{k}]"
        name, mass, pos = need(b, "name", where), need(b, "mass", where), need(b, "position",
                                                                                where)
        if b.get("particle"):
            mech.add_particle(name, mass, pos, b.get("velocity"))
        else:
            mech.add_body(name, mass, need(b, "inertia", where), pos,
                          _orient(b.get("orientation", 0.0)), b.get("velocity"),
                          b.get("angular_velocity"))
    for k, m in enumerate(data.get("markers", [])):
        where = f"markers[{k}]"
        mech.marker(need(m, "body", where), need(m, "name", where),
                    need(m, "position", where), _orient(m.get("orientation")))
    for k, j in enumerate(data.get("joints", [])):
        where = f"joints[{k}]"
        opts = {key: v for key, v in j.items() if key not in ("kind", "name", "i", "j",
                                                              "function")}
        if "function" in j:
            opts["fn"] = function_from_spec(j["function"])
        mech.add_joint(need(j, "kind", where), need(j, "name", where), need(j, "i", where),
                       need(j, "j", where), **opts)
    for k, e in enumerate(data.get("elements", [])):
        where = f"elements[{k}]"
        kind = e.get("kind", "spring_damper")
        if kind == "contact":
            opts = {key: v for key, v in e.items()
                    if key not in ("kind", "name", "marker", "radius", "point", "normal")}
            mech.add_contact(need(e, "name", where), need(e, "marker", where),
                             need(e, "radius", where), need(e, "point", where),
                             need(e, "normal", where), **opts)
            continue
        if kind == "bushing":
            opts = {key: v for key, v in e.items() if key not in ("kind", "name", "i", "j")}
            mech.add_bushing(need(e, "name", where), need(e, "i", where), need(e, "j", where),
                             **opts)
            continue
        if kind != "spring_damper":
            raise BuildError(f"{where}: unknown element kind {kind!r} (spring_damper, contact, "
                             "bushing)")
        opts = {key: v for key, v in e.items() if key not in ("kind", "name", "i", "j")}
        mech.add_spring_damper(need(e, "name", where), need(e, "i", where), need(e, "j", where),
                               **opts)
    for k, ld in enumerate(data.get("loads", [])):
        where = f"loads[{k}]"
        mech.add_load(need(ld, "name", where), need(ld, "marker", where),
                      ld.get("kind", "force"))
    return mech


def load(path: str | Path) -> Mechanism:
    """A mechanism from a ``.json``, ``.yaml`` or ``.yml`` file."""
    path = Path(path)
    if path.suffix not in (".json", ".yaml", ".yml"):
        raise BuildError(f"{path}: unknown mechanism file type; use .json, .yaml or .yml")
    if not path.is_file():
        raise BuildError(f"mechanism file {path} not found")
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise BuildError("reading YAML needs PyYAML: pip install 'cosim[yaml]'") from None
        data = yaml.safe_load(text)
    else:
        data = json.loads(text)
    return from_dict(data)


def to_dict(mech: Mechanism) -> dict:
    """The mechanism in the format above (round-trips through :func:`from_dict`)."""
    def lst(a: Any) -> Any:
        return np.asarray(a, float).tolist()
    out: dict = {"name": mech.name, "dim": mech.dim, "gravity": lst(mech.gravity),
                 "bodies": [], "markers": [], "joints": [], "elements": [], "loads": []}
    for b in mech.bodies.values():
        if b.kind == "ground":
            continue
        e: dict = {"name": b.name, "mass": b.mass}
        if b.kind == "particle":
            e.update(particle=True, position=lst(b.q0), velocity=lst(b.v0))
        elif b.kind == "planar":
            e.update(inertia=b.inertia, position=lst(b.q0[:2]), orientation=float(b.q0[2]),
                     velocity=lst(b.v0[:2]), angular_velocity=float(b.v0[2]))
        else:
            from .geometry import quat_matrix
            e.update(inertia=lst(b.inertia), position=lst(b.q0[:3]), orientation=lst(b.q0[3:]),
                     velocity=lst(b.v0[:3]),
                     angular_velocity=lst(quat_matrix(b.q0[3:]) @ b.v0[3:]))
        out["bodies"].append(e)
    for (bname, mname), m in mech.markers.items():
        if mname == "cm" and not np.any(m.s) and np.allclose(m.R, np.eye(mech.dim)):
            continue
        from .geometry import quat_from_matrix
        orient = float(np.arctan2(m.R[1, 0], m.R[0, 0])) if mech.dim == 2 else \
            lst(quat_from_matrix(m.R))
        out["markers"].append({"body": bname, "name": mname, "position": lst(m.s),
                               "orientation": orient})
    for j in mech.joints.values():
        e = {"kind": j.kind, "name": j.name, "i": j.mi.path, "j": j.mj.path}
        if hasattr(j, "length"):
            e["length"] = j.length
        if hasattr(j, "radius"):
            e["radius"] = j.radius
        if hasattr(j, "fn"):
            spec = getattr(j.fn, "spec", None)
            if spec is None:
                raise BuildError(f"joint '{j.name}': its driving function is a Python callable "
                                 "and cannot be written as data; use {poly: ...} or {sine: ...}")
            e["function"] = spec
        out["joints"].append(e)
    for el in mech.elements.values():
        if getattr(el, "force", None) is not None:
            raise BuildError(f"element '{el.name}': a force callable cannot be written as data")
        if hasattr(el, "kt"):
            out["elements"].append({
                "kind": "bushing", "name": el.name, "i": el.mi.path, "j": el.mj.path,
                "translational": lst(el.kt), "rotational": lst(el.kr),
                "damping_translational": lst(el.ct), "damping_rotational": lst(el.cr)})
            continue
        if hasattr(el, "penetration"):
            out["elements"].append({
                "kind": "contact", "name": el.name, "marker": el.m.path, "radius": el.R,
                "point": lst(el.p0), "normal": lst(el.n), "stiffness": el.K,
                "restitution": el.cr, "exponent": el.e, "model": el.model,
                "hc_alpha": el.alpha, "friction": el.mu, "slip_velocity": el.vs})
            continue
        out["elements"].append({"kind": "spring_damper", "name": el.name, "i": el.mi.path,
                                "j": el.mj.path, "stiffness": el.k, "damping": el.c,
                                "length0": el.l0, "rope": el.rope})
    for name, (kind, m) in mech.loads.items():
        out["loads"].append({"name": name, "marker": m.path, "kind": kind})
    return out
