"""Diagram views: DOT text by hand, SVG/PNG through Graphviz's ``dot``."""

import pathlib
import re
import shutil
import sys
import xml.etree.ElementTree as ET

import pytest

from blocks.continuous import Integrator
from blocks.math import Gain, Sum
from blocks.sources import Constant
from cosim import DiagramBuilder, MasterScheduler
from cosim.cli import main
from cosim.errors import CosimError
from cosim.graphviz import to_dot, to_svg, write
from cosim.subsystem import DiagramSubsystem

ROOT = pathlib.Path(__file__).resolve().parents[2]
HAS_DOT = shutil.which("dot") is not None
needs_dot = pytest.mark.skipif(not HAS_DOT, reason="Graphviz 'dot' not installed "
                               "(apt-get install graphviz)")


@pytest.fixture(scope="module")
def motor():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import dc_motor_speed_loop as demo
        return demo.build()
    finally:
        sys.path.pop(0)


def _edges(text):
    return [line.strip() for line in text.splitlines() if " -> " in line]


def _loop_diagram():
    b = DiagramBuilder("loop")
    c = b.add(Constant("c", 1.0))
    s = b.add(Sum("s", "+-"))
    g = b.add(Gain("g", 0.5))
    out = b.add(Gain("out", 2.0))
    b.connect(c.y, s.ins[0])
    b.connect(s.y, g.u)
    b.connect(g.y, s.ins[1])
    b.connect(g.y, out.u)
    return b.build()


def test_blocks_ports_units_rates_and_conversion(motor):
    text = to_dot(motor)
    assert text.startswith('digraph "dc_motor_speed_loop" {') and text.rstrip().endswith("}")
    for blk in motor.leaf_blocks():
        assert f'"{blk.name}" [shape=none' in text
        assert f"<B>{blk.name}</B>" in text and type(blk).__name__ in text
    edges = _edges(text)
    assert len(edges) == len(motor.connections)
    for c in motor.connections:
        head = (f'"{c.src.block.name}":"out_{c.src.name}":e -> '
                f'"{c.dst.block.name}":"in_{c.dst.name}":w')
        assert sum(e.startswith(head) for e in edges) == 1, head
    assert 'PORT="in_voltage" ALIGN="LEFT">voltage [V]' in text
    assert 'PORT="out_speed" ALIGN="RIGHT">speed [rad/s]' in text
    ref_edge = next(e for e in edges if e.startswith('"speed_ref"'))
    assert 'label="rpm→rad/s"' in ref_edge and "x0.10472" in ref_edge
    assert not any("label=" in e for e in edges if not e.startswith('"speed_ref"'))
    assert "every 1 ms · 3 discrete" in text and "continuous · 2 states" in text
    assert "fused linear group 0 (2 states)" in text and "style=\"dashed,rounded\"" in text
    assert 'ALIGN="LEFT">every 1 ms</TD>' in text  # legend entry
    assert "#d62728" not in text  # no loop


def test_options_drop_units_and_rates(motor):
    text = to_dot(motor, show_units=False, show_rates=False, rankdir="TB", title="T")
    assert "rankdir=TB" in text and "<B>T</B>" in text
    assert "[rad/s]" not in text and "rpm→rad/s" not in text
    assert "every 1 ms" not in text and "3 discrete" in text
    with pytest.raises(CosimError, match="rankdir"):
        to_dot(motor, rankdir="XY")


def test_algebraic_loop_edges_are_red():
    d = _loop_diagram()
    assert len(d.compile().loops) == 1
    red = [e for e in _edges(to_dot(d)) if "#d62728" in e]
    assert sorted(e.split(" [")[0] for e in red) == [
        '"g":"out_y":e -> "s":"in_u1":w', '"s":"out_y":e -> "g":"in_u":w']
    assert "algebraic loop" in to_dot(d)


def test_html_special_characters_are_escaped():
    d = _loop_diagram()
    d.blocks["g"].name = "a<b>&c"  # names are identifiers; force one to test the escaping
    text = to_dot(d, title='x < y & "z"')
    assert "<B>a&lt;b&gt;&amp;c</B>" in text
    assert '"a<b>&c":"out_y":e' in text  # a quoted DOT ID needs no HTML escaping
    assert "<B>x &lt; y &amp; &quot;z&quot;</B>" in text
    assert 'digraph "x < y & \\"z\\"" {' in text


def _nested():
    inner = DiagramBuilder("inner")
    g = inner.add(Gain("g", 2.0, input_unit="rad/s", unit="rad/s"))
    inner.export_input(g.u, "w")
    inner.export_output(g.y, "w2")
    sub = inner.build()
    b = DiagramBuilder("top")
    c = b.add(Constant("c", 60.0, unit="rpm"))
    b.add(sub)
    i = b.add(Integrator("i", unit="rad", input_unit="rad/s"))
    b.connect(c.y, "inner.w")
    b.connect("inner.w2", i.u)
    b.export_output(i.y, "angle")
    return b.build()


def test_nested_diagram_is_a_cluster_with_exported_ports():
    text = to_dot(_nested())
    assert "fused group 0" in text  # g and i fuse across the cluster border
    assert 'subgraph "cluster_inner" {' in text
    assert '"inner/g" [shape=none' in text
    assert '"inner@in@w" [shape=plaintext' in text and '"@out@angle"' in text
    edges = _edges(text)
    assert any(e.startswith('"c":"out_y":e -> "inner@in@w" [label="rpm→rad/s"') for e in edges)
    assert '"inner@in@w" -> "inner/g":"in_u":w;' in edges
    assert '"inner/g":"out_y":e -> "inner@out@w2";' in edges
    assert '"inner@out@w2" -> "i":"in_u":w;' in edges


def _master():
    src = DiagramBuilder("src")
    c = src.add(Constant("c", 2.0, unit="m"))
    src.export_output(c.y, "y")
    acc = DiagramBuilder("acc")
    i = acc.add(Integrator("i", 0.0))
    acc.export_input(i.u, "u")
    acc.export_output(i.y, "x")
    m = MasterScheduler([DiagramSubsystem(src.build(), solver="euler", dt=1e-3),
                         DiagramSubsystem(acc.build(), solver="rk4", dt=1e-3, rate=2)],
                        [("src.y", "acc.u", (3.0, 1.0))], 0.01)
    return m


def test_master_subsystems_are_clusters():
    text = to_dot(_master())
    assert 'subgraph "cluster_src" {' in text and 'subgraph "cluster_acc" {' in text
    assert "step 20 ms, rk4 dt 1 ms" in text
    assert '"src::@out@y" -> "acc::@in@u" [label="x3 +1"' in text
    assert '"acc::i" [shape=none' in text and "bgcolor" in text


def test_write_dot_and_unknown_suffix(motor, tmp_path):
    p = write(motor, tmp_path / "m.dot")
    assert pathlib.Path(p).read_text() == to_dot(motor)
    with pytest.raises(CosimError, match=r"use \.dot, \.svg, \.png"):
        write(motor, tmp_path / "m.pdf")


def test_missing_dot_is_a_clear_error(motor, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(CosimError, match="apt-get install graphviz"):
        to_svg(motor)


@needs_dot
def test_svg_is_well_formed_with_one_node_per_block(motor, tmp_path):
    svg = to_svg(motor, tmp_path / "m.svg")
    assert (tmp_path / "m.svg").read_text() == svg
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    titles = [g.find("s:title", ns).text for g in root.iter("{http://www.w3.org/2000/svg}g")
              if g.get("class") == "node"]
    assert sorted(titles) == sorted([b.name for b in motor.leaf_blocks()] + ["@legend"])
    assert len([g for g in root.iter("{http://www.w3.org/2000/svg}g")
                if g.get("class") == "edge"]) == len(motor.connections)


@needs_dot
def test_every_view_renders(tmp_path):
    """dot accepts the nested, looped and master views (syntax check of the DOT)."""
    for name, d in (("nested", _nested()), ("loop", _loop_diagram()), ("master", _master())):
        ET.fromstring(to_svg(d))
        write(d, tmp_path / f"{name}.png")
        assert (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG"


@needs_dot
def test_cli_info_writes_dot_and_svg(tmp_path, capsys):
    dot, svg = tmp_path / "m.dot", tmp_path / "m.svg"
    model = str(ROOT / "examples" / "dc_motor_speed_loop.py")
    assert main(["info", model, "--dot", str(dot), "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    assert "execution order" in out and f"diagram: {dot}" in out
    assert re.search(r'label="rpm→rad/s"', dot.read_text())
    ET.parse(svg)
