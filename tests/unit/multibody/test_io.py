"""Mechanisms from YAML/JSON and back."""

import json
import pathlib

import numpy as np
import pytest

from blocks.multibody.analysis import inverse_dynamics, kinematics
from blocks.multibody.io import from_dict, load, to_dict
from cosim.errors import BuildError

ROOT = pathlib.Path(__file__).resolve().parents[3]
CRANK = ROOT / "examples" / "mechanisms" / "slider_crank.yaml"


def test_yaml_slider_crank_moves_as_driven():
    mech = load(CRANK)
    assert mech.assemble()["dof"] == 0
    k = kinematics(mech, np.linspace(0.0, 0.6, 7))
    th = 10.0 * k["t"]
    # slider position x = r cos th + sqrt(l^2 - r^2 sin^2 th), r = 0.1, l = 0.3
    x = 0.1 * np.cos(th) + np.sqrt(0.09 - 0.01 * np.sin(th) ** 2)
    ix = mech.bodies["slider"].iq
    np.testing.assert_allclose(k["q"][:, ix], x, atol=1e-10)


def test_round_trip_through_json(tmp_path):
    mech = load(CRANK)
    data = to_dict(mech)
    path = tmp_path / "crank.json"
    path.write_text(json.dumps(data))
    again = load(path)
    assert to_dict(again) == data
    t = np.linspace(0, 0.3, 4)
    a = inverse_dynamics(load(CRANK), t)["lambda"]
    b = inverse_dynamics(again, t)["lambda"]
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_data_errors_name_the_entry():
    with pytest.raises(BuildError, match="joints\\[0\\]: missing 'kind'"):
        from_dict({"bodies": [{"name": "a", "mass": 1, "inertia": 0.1, "position": [0, 0]}],
                   "joints": [{"name": "j", "i": "ground.O", "j": "a.cm"}]})
    with pytest.raises(BuildError, match="unknown mechanism file type"):
        load(pathlib.Path("crank.txt"))


def test_contact_and_spring_elements_round_trip():
    data = {"name": "ball", "dim": 2, "gravity": [0, -9.81],
            "bodies": [{"name": "ball", "particle": True, "mass": 1.0, "position": [0, 0.1]}],
            "elements": [{"kind": "contact", "name": "floor", "marker": "ball.cm",
                          "radius": 0.05, "point": [0, 0], "normal": [0, 1],
                          "stiffness": 1e7, "restitution": 0.9, "friction": 0.3},
                         {"kind": "spring_damper", "name": "s", "i": "ground.O",
                          "j": "ball.cm", "stiffness": 10.0, "damping": 0.1}]}
    mech = from_dict(data)
    again = to_dict(from_dict(to_dict(mech)))
    assert again == to_dict(mech)
    assert again["elements"][0]["model"] == "lankarani_nikravesh"
