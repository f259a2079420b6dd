"""Folding FMI 2 arrays of scalar variables in ``cosim fmu info`` (fmus.cli_info.fold)."""

from types import SimpleNamespace

from fmus.cli_info import fold


def v(name, unit="m", causality="parameter"):
    return SimpleNamespace(name=name, unit=unit, causality=causality, shape=())


def same(x):
    return (x.unit, x.causality)


def test_only_variables_that_differ_in_their_indices_fold():
    vs = [v("k"), v("t[1]"), v("t[2]"), v("t[3]", unit="N"), v("m[1,1]"), v("m[1,2]"),
          v("m[2,1]"), v("m[2,2]"), v("m[2,3]"), v("a[1].b[1]"), v("a[1].b[2]"),
          v("a[2].b[1]"), v("a[2].b[2]"), v("s[1]", causality="input"), v("s[2]"),
          v("one[7]")]
    got = [(name, len(members)) for name, members in fold(vs, same)]
    assert got == [("k", 1), ("t[1..2]", 2), ("t[3]", 1), ("m[1..2,1..3]", 5),
                   ("a[1..2].b[1..2]", 4), ("s[1]", 1), ("s[2]", 1), ("one[7]", 1)]


def test_an_fmi3_array_variable_is_never_folded_with_others():
    vs = [SimpleNamespace(name="x[1]", unit="", causality="local", shape=(3,)),
          v("x[2]", unit="", causality="local")]
    assert [n for n, _ in fold(vs, same)] == ["x[1]", "x[2]"]
