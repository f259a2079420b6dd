"""Tests of cosim.units: parsing, compatibility, conversion and FMI mapping."""

from __future__ import annotations

import math

import pytest

from cosim.errors import UnitError
from cosim.units import (
    BASE_UNITS,
    DIMENSIONLESS,
    Unit,
    compatible,
    conversion,
    from_fmi,
    parse_unit,
)


def unit(text: str) -> Unit:
    u = parse_unit(text)
    assert u is not None
    return u


def convert(value: float, src: str | None, dst: str | None) -> float:
    scale, bias = conversion(src, dst)
    return scale * value + bias


# ----------------------------------------------------------------- conversions
def test_rpm_to_rad_per_s():
    scale, bias = conversion("rpm", "rad/s")
    assert scale == pytest.approx(2 * math.pi / 60, rel=1e-15)
    assert bias == 0.0
    assert convert(60.0, "rpm", "rad/s") == pytest.approx(2 * math.pi)


def test_bar_to_pa():
    assert conversion("bar", "Pa") == (pytest.approx(1e5), 0.0)
    assert conversion("mbar", "hPa") == pytest.approx((1.0, 0.0))


def test_degc_to_kelvin_and_back():
    assert conversion("degC", "K") == (1.0, pytest.approx(273.15))
    assert convert(300.0, "K", "degC") == pytest.approx(26.85)
    assert conversion("\u00b0C", "K") == conversion("degC", "K")


@pytest.mark.parametrize(("c", "f"), [(0.0, 32.0), (100.0, 212.0), (-40.0, -40.0)])
def test_degc_to_degf(c, f):
    assert convert(c, "degC", "degF") == pytest.approx(f, abs=1e-12)
    assert convert(f, "degF", "degC") == pytest.approx(c, abs=1e-12)


def test_offset_dropped_in_compound_units():
    assert unit("degC").offset == 273.15
    assert unit("(degC)").offset == 273.15
    for text in ("degC/s", "degC^2", "kg*degC", "degC.s-1"):
        assert unit(text).offset == 0.0, text
    assert conversion("degC/s", "K/s") == (1.0, 0.0)
    assert conversion("degF/s", "K/s") == (pytest.approx(5 / 9), 0.0)


def test_km_per_h_to_m_per_s():
    assert convert(36.0, "km/h", "m/s") == pytest.approx(10.0)
    assert convert(10.0, "m/s", "km/h") == pytest.approx(36.0)


def test_litre_per_minute_to_cubic_metre_per_second():
    scale, bias = conversion("L/min", "m^3/s")
    assert scale == pytest.approx(1e-3 / 60)
    assert bias == 0.0
    assert conversion("l/min", "L/min") == (1.0, 0.0)
    assert conversion("mL", "cc") == pytest.approx((1.0, 0.0))
    assert conversion("dm3", "L") == pytest.approx((1.0, 0.0))


def test_identity_is_exact():
    for text in ("m", "km/h", "degC", "rpm", "kg.m2/s2"):
        assert conversion(text, text) == (1.0, 0.0)
    assert conversion("N*m", "J") == (1.0, 0.0)
    assert conversion(None, None) == (1.0, 0.0)
    assert conversion("", None) == (1.0, 0.0)


# ----------------------------------------------------------- compatibility
def test_energy_units_compatible():
    assert compatible("N*m", "J")
    assert compatible("J", "kg.m2/s2")
    assert compatible("kg m^2 s^-2", "N.m")
    assert compatible("W*s", "J")
    assert compatible("V*A", "W")
    assert not compatible("J", "W")
    assert unit("N*m") == unit("J") == unit("kg.m2/s2")
    assert hash(unit("N*m")) == hash(unit("J"))


def test_modelica_syntax():
    u = unit("kg.m2")
    assert u.exponents == (1, 2, 0, 0, 0, 0, 0, 0)
    assert u.factor == 1.0
    assert unit("kg.m2/s2").exponents == (1, 2, -2, 0, 0, 0, 0, 0)
    assert unit("m.s-2") == unit("m/s^2") == unit("m/s/s") == unit("m*s**-2")


def test_inverse_seconds_equal():
    assert unit("s-1") == unit("1/s") == unit("Hz") == unit("s^-1") == unit("s^(-1)")
    assert unit("kHz") == unit("1/ms")


def test_rad_per_s_incompatible_with_hz():
    assert not compatible("rad/s", "Hz")
    assert not compatible("rad/s", "1/s")
    assert compatible("rpm", "rad/s")
    assert compatible("deg", "rev")
    with pytest.raises(UnitError) as exc:
        conversion("rad/s", "Hz")
    msg = str(exc.value)
    assert "'rad/s'" in msg and "'Hz'" in msg
    assert "[rad s^-1]" in msg and "[s^-1]" in msg


def test_incompatible_message_format():
    with pytest.raises(UnitError, match=r"incompatible units 'rad/s' \[rad s\^-1\] and "
                                        r"'m/s' \[m s\^-1\]"):
        conversion("rad/s", "m/s")


def test_unit_error_is_value_error():
    with pytest.raises(ValueError):
        conversion("m", "s")


def test_none_compatible_with_everything():
    for text in ("m", "degC", "rad/s", "1", "%", None, ""):
        assert compatible(None, text)
        assert compatible(text, None)
        assert compatible("", text)
        assert conversion(None, text) == (1.0, 0.0)
        assert conversion(text, None) == (1.0, 0.0)
    assert parse_unit(None) is None
    assert parse_unit("") is None
    assert parse_unit("  ") is None


# -------------------------------------------------------------------- parsing
def test_unknown_token_message():
    with pytest.raises(UnitError) as exc:
        parse_unit("kg*foo/s")
    msg = str(exc.value)
    assert "'kg*foo/s'" in msg
    assert "'foo'" in msg
    assert "known symbols" in msg and "Pa" in msg and "rpm" in msg


def test_prefix_on_unprefixable_unit_rejected():
    for text in ("kmin", "kdegC", "mrpm", "kd"):
        with pytest.raises(UnitError, match="unknown unit symbol"):
            parse_unit(text)
    with pytest.raises(UnitError, match="does not accept SI prefixes"):
        parse_unit("kmin")


@pytest.mark.parametrize(
    ("text", "exponents", "factor"),
    [
        ("m", (0, 1, 0, 0, 0, 0, 0, 0), 1.0),
        ("mm", (0, 1, 0, 0, 0, 0, 0, 0), 1e-3),
        ("min", (0, 0, 1, 0, 0, 0, 0, 0), 60.0),
        ("ms", (0, 0, 1, 0, 0, 0, 0, 0), 1e-3),
        ("mol", (0, 0, 0, 0, 0, 1, 0, 0), 1.0),
        ("mmol", (0, 0, 0, 0, 0, 1, 0, 0), 1e-3),
        ("cd", (0, 0, 0, 0, 0, 0, 1, 0), 1.0),
        ("cm", (0, 1, 0, 0, 0, 0, 0, 0), 1e-2),
        ("d", (0, 0, 1, 0, 0, 0, 0, 0), 86400.0),
        ("dm", (0, 1, 0, 0, 0, 0, 0, 0), 0.1),
        ("dam", (0, 1, 0, 0, 0, 0, 0, 0), 10.0),
        ("daN", (1, 1, -2, 0, 0, 0, 0, 0), 10.0),
        ("h", (0, 0, 1, 0, 0, 0, 0, 0), 3600.0),
        ("hPa", (1, -1, -2, 0, 0, 0, 0, 0), 100.0),
        ("T", (1, 0, -2, -1, 0, 0, 0, 0), 1.0),
        ("t", (1, 0, 0, 0, 0, 0, 0, 0), 1000.0),
        ("kg", (1, 0, 0, 0, 0, 0, 0, 0), 1.0),
        ("g", (1, 0, 0, 0, 0, 0, 0, 0), 1e-3),
        ("mA", (0, 0, 0, 1, 0, 0, 0, 0), 1e-3),
        ("mrad", (0, 0, 0, 0, 0, 0, 0, 1), 1e-3),
        ("deg", (0, 0, 0, 0, 0, 0, 0, 1), math.pi / 180),
        ("rev", (0, 0, 0, 0, 0, 0, 0, 1), 2 * math.pi),
        ("kOhm", (1, 2, -3, -2, 0, 0, 0, 0), 1e3),
        ("k\u03a9", (1, 2, -3, -2, 0, 0, 0, 0), 1e3),
        ("psi", (1, -1, -2, 0, 0, 0, 0, 0), 6894.757293168361),
        ("atm", (1, -1, -2, 0, 0, 0, 0, 0), 101325.0),
        ("uF", (-1, -2, 4, 2, 0, 0, 0, 0), 1e-6),
        ("mWb", (1, 2, -2, -1, 0, 0, 0, 0), 1e-3),
    ],
)
def test_symbol_disambiguation(text, exponents, factor):
    u = unit(text)
    assert u.exponents == exponents
    assert u.factor == pytest.approx(factor, rel=1e-12)
    assert u.offset == 0.0


def test_percent_and_one():
    assert unit("%").factor == 0.01
    assert unit("%").is_dimensionless
    assert convert(50.0, "%", "1") == pytest.approx(0.5)
    assert unit("1") == DIMENSIONLESS == Unit.dimensionless()
    assert str(unit("1")) == "1"
    assert compatible("%", "1") and not compatible("%", "m")


def test_micro_prefix_spellings():
    for text in ("\u00b5m", "\u03bcm"):
        assert unit(text).exponents == unit("um").exponents
        assert unit(text).factor == unit("um").factor == pytest.approx(1e-6)
    assert conversion("um", "\u00b5m") == (1.0, 0.0)


def test_parentheses():
    u = unit("(N*m)/(rad/s)")
    assert u.exponents == (1, 2, -1, 0, 0, 0, 0, -1)
    assert u == unit("N*m*s/rad") == unit("J.s/rad")
    assert unit("W/(rad/s)") == unit("N*m/rad")
    assert unit("m/(s*s)") == unit("m/s2") != unit("m/s*s")
    assert unit("W/(m*K)").exponents == (1, 1, -3, 0, -1, 0, 0, 0)
    assert unit("W/m*K").exponents == (1, 1, -3, 0, 1, 0, 0, 0)  # left-associative
    assert unit("(m/s)2") == unit("m2/s2") == unit("(m/s)^2")


def test_whitespace_tolerated():
    assert unit(" kg * m ^ 2 / s ^ 2 ") == unit("J")
    assert unit("kg m^2 s^-2") == unit("J")


@pytest.mark.parametrize("text", ["m/", "(m", "m)", "2*m", "m^x", "m^", "m$s", "*m", "m//s"])
def test_syntax_errors(text):
    with pytest.raises(UnitError) as exc:
        parse_unit(text)
    assert repr(text) in str(exc.value)


def test_name_kept_and_str():
    u = unit("kg.m2/s2")
    assert u.name == "kg.m2/s2"
    assert str(u) == "kg.m2/s2"
    assert parse_unit("km/h") is parse_unit("km/h")  # cached


def test_dimension_string():
    assert unit("J").dimension_string() == "kg m^2 s^-2"
    assert unit("V").dimension_string() == "kg m^2 s^-3 A^-1"
    assert unit("rad/s").dimension_string() == "rad s^-1"
    assert unit("%").dimension_string() == "1"
    assert unit("mol/L").dimension_string() == "mol m^-3"


# ------------------------------------------------------------------------ FMI
@pytest.mark.parametrize("text", ["degF", "rpm", "km/h", "kg.m2/s2", "1", "mV", "degC"])
def test_fmi_round_trip(text):
    u = unit(text)
    d = u.to_fmi()
    assert list(d) == [*BASE_UNITS, "factor", "offset"]
    back = from_fmi(**d, name=text)
    assert back == u
    assert back.name == text
    assert back.to_fmi() == d


def test_from_fmi_attributes():
    u = from_fmi(rad=1, s=-1, factor=2 * math.pi / 60, name="rpm")
    assert u == unit("rpm")
    assert from_fmi(K=1, offset=273.15).to_fmi()["offset"] == 273.15
    assert from_fmi() == DIMENSIONLESS
    with pytest.raises(UnitError):
        from_fmi(m=1, factor=0.0)
    with pytest.raises(UnitError):
        Unit((1, 2, 3))


def test_unit_is_frozen_and_hashable():
    u = unit("m/s")
    with pytest.raises(AttributeError):
        u.factor = 2.0  # type: ignore[misc]
    assert {unit("m/s"), unit("m.s-1")} == {u}
