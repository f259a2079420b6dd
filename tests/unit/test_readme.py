"""The README quickstart runs as written."""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_quickstart_runs():
    text = (ROOT / "README.md").read_text()
    start = text.index("```python") + len("```python")
    code = text[start:text.index("```", start)]
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    res = ns["res"]
    assert abs(res["motor.speed"][-1] - 3000 * 2 * 3.141592653589793 / 60) < 0.1
    assert ns["df"].shape[0] == len(res.time)


def test_readme_cosimulation_example_runs():
    text = (ROOT / "README.md").read_text()
    section = text.index("## Co-simulation master")
    start = text.index("```python", section) + len("```python")
    code = text[start:text.index("```", start)]
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    res = ns["res"]
    assert res.diagnostics["subsystem_steps"] == {"m1": 1000, "m2": 500}
    assert abs(res["m2.x2"][-1]) < 10.0


def test_readme_multibody_example_runs():
    text = (ROOT / "README.md").read_text()
    section = text.index("## Multibody")
    start = text.index("```python", section) + len("```python")
    code = text[start:text.index("```", start)]
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    block = ns["block"]
    assert block.assembly["dof"] == 1
    assert {"bob_cm_pos", "link_reaction"} <= set(block.outputs)


def test_readme_flatness_example_runs():
    text = (ROOT / "README.md").read_text()
    section = text.index("## Flatness-based control")
    start = text.index("```python", section) + len("```python")
    code = text[start:text.index("```", start)]
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    d, t = ns["report"].min_singularity
    assert abs(d - 9.66e-4) < 1e-6 and abs(t - 7.18) < 0.01
