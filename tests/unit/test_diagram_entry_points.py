"""Every public entry point that takes a built diagram refuses anything else with a cosim
error that says what it got, and, for a DiagramBuilder, "call build() first" (not an
AttributeError from deep inside, such as "'DiagramBuilder' object has no attribute
'compile'").

The entry points were found with ``grep`` for functions and constructors taking a
``diagram`` (cosim, fmus, hil); the wrong objects are a builder, a leaf block, None and a
file name.
"""

from __future__ import annotations

import pytest

from blocks.math import Gain
from blocks.sources import Constant
from cosim import DiagramBuilder
from cosim.errors import CosimError


def _builder() -> DiagramBuilder:
    b = DiagramBuilder("plant")
    c = b.add(Constant("c", 1.0))
    g = b.add(Gain("g", 2.0))
    b.connect(c.y, g.u)
    b.export_output(g.y, "y")
    return b


def _simulator(x):
    from cosim import Simulator
    Simulator(x, solver="rk4", dt=0.01)


def _simulate(x):
    from cosim import simulate
    simulate(x, 0.1)


def _subsystem(x):
    from cosim import DiagramSubsystem
    DiagramSubsystem(x, solver="rk4", dt=0.01)


def _master(x):
    from cosim import MasterScheduler
    MasterScheduler([x], [], 0.01)


def _to_dot(x):
    from cosim.graphviz import to_dot
    to_dot(x)


def _export_fmu(x, tmp_path):
    from fmus.export import export_fmu
    export_fmu(x, tmp_path / "x.fmu", compile=False)


def _shadow(x):
    from hil.shadow import ShadowModel
    ShadowModel(x, {}, {"y": "y"})


def _study(x, tmp_path):
    """A model file whose diagram function returns ``x`` (rebuilt there from its source)."""
    from cosim.studies.model import ModelSpec, diagram_for
    path = tmp_path / "model_returning_x.py"
    path.write_text(f"def build():\n    return {SOURCE[id(x)]}\n")
    diagram_for(ModelSpec(str(path)), {})


def _runner(x):
    from hil.runner import RealTimeRunner
    RealTimeRunner(x, 0.01)


#: entry point -> (call, what it takes besides a diagram)
ENTRY_POINTS = {
    "Simulator": (_simulator, ()),
    "simulate": (_simulate, ()),
    "DiagramSubsystem": (_subsystem, ()),
    "MasterScheduler": (_master, ()),
    "graphviz.to_dot": (_to_dot, ()),
    "fmus.export_fmu": (_export_fmu, ("block",)),       # a leaf block is exported alone
    "hil.ShadowModel": (_shadow, ()),
    "studies (a model's diagram function)": (_study, ()),
    "hil.RealTimeRunner": (_runner, ()),
}

#: wrong object -> (its source, words the message must hold)
OBJECTS = {
    "builder": ("__import__('cosim').DiagramBuilder('plant')",
                ("DiagramBuilder 'plant'", "build() first")),
    "block": ("__import__('blocks.math', fromlist=['Gain']).Gain('lonely', 1.0)", ("Gain",)),
    "None": ("None", ("NoneType",)),
    "file name": ("'model.py'", ("str",)),
}
SOURCE: dict = {}   # id(object) -> its source, for the study's model file

#: entry points whose file another engineer owns: the gap is reported, not fixed here
NOT_HERE: dict = {}


@pytest.mark.parametrize("obj", sorted(OBJECTS))
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_an_entry_point_given_something_else_than_a_diagram_says_what(entry, obj, tmp_path):
    call, also_takes = ENTRY_POINTS[entry]
    if obj in also_takes:
        pytest.skip(f"{entry} also takes a {obj}")
    if entry in NOT_HERE:
        pytest.xfail(NOT_HERE[entry])
    source, words = OBJECTS[obj]
    x = eval(source)  # noqa: S307 - our own table
    SOURCE[id(x)] = source
    args = (x, tmp_path) if "tmp_path" in call.__code__.co_varnames else (x,)
    with pytest.raises(CosimError) as info:
        call(*args)
    msg = str(info.value)
    for w in words:
        assert w in msg, f"{entry} given a {obj}: {msg!r} lacks {w!r}"


def test_the_builder_names_build_for_a_diagram_attribute():
    b = _builder()
    with pytest.raises(AttributeError, match=r"'create_context' belongs to the built Diagram; "
                                             r"call build\(\) first"):
        b.create_context()
    with pytest.raises(AttributeError, match="has no attribute 'nonsense'$"):
        b.nonsense  # noqa: B018
    assert not hasattr(b, "compile") and hasattr(b.build(), "compile")


def test_the_issue_case_simulator_of_a_builder():
    from cosim import Simulator
    from cosim.errors import NotADiagramError
    with pytest.raises(NotADiagramError, match=r"Simulator\(\) takes a built Diagram, got the "
                                               r"DiagramBuilder 'plant': call build\(\) first"):
        Simulator(_builder(), solver="rk4", dt=0.01)


def test_a_simulator_refuses_a_context_that_is_not_one():
    from cosim import Simulator
    from cosim.errors import ContextError
    with pytest.raises(ContextError, match="context must be a Context .* got dict"):
        Simulator(_builder().build(), {}, solver="rk4", dt=0.01)
