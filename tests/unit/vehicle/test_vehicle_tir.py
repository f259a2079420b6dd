"""The .tir reader: sections, values, comments, tables, units, version, unknown and missing keys."""

import warnings

import pytest

from blocks.vehicle import SAMPLE_TIR, MagicFormula, TirError, TirWarning, parse_tir, read_tir

MINIMAL = """\
[MDI_HEADER]
FILE_TYPE     = 'tir'
FILE_VERSION  = 3.0
$------------------------------------------------- units
[UNITS]
LENGTH        = 'meter'
FORCE         = "newton"
ANGLE         = 'radians'
[MODEL]
FITTYP        = {fittyp}          $Magic Formula Version number
TYRESIDE      = 'LEFT $ not a comment!'   ! a comment after a string
[VERTICAL]
FNOMIN        = 4000
[DIMENSION]
UNLOADED_RADIUS = 0.3135  ! comment with a quote " inside
[LONGITUDINAL_COEFFICIENTS]
PCX1 = 1.65
PDX1 = 1.0D0
PKX1 = 2.1e+001
[LATERAL_COEFFICIENTS]
pcy1 = 1.3
PDY1 = 0.9
PKY1 = -15.3
PKY2 = 1.7
[ALIGNING_COEFFICIENTS]
QBZ1 = 10.0
QCZ1 = 1.1
QDZ1 = 0.1
"""


def minimal(fittyp="61", extra=""):
    return MINIMAL.format(fittyp=fittyp) + extra


def test_sample_file_parses_completely_with_no_unknown_keys():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no TirWarning for the bundled file
        tir = read_tir(SAMPLE_TIR, strict=True)
    assert tir.version == "5.2" and tir.fittyp is None  # PAC2002: no FITTYP
    assert tir.file_version == 3.0
    assert tir["PROPERTY_FILE_FORMAT"] == "PAC2002"
    assert tir["FNOMIN"] == 3800.0
    assert tir["PVX1"] == -9.9052e-6
    assert tir.lines["PCX1"] > tir.lines["LFZO"]
    assert tir.sections["LATERAL_COEFFICIENTS"]["PKY1"] == -12.536
    assert tir.tables["SHAPE"] == [[1.0, 0.0], [1.0, 0.4], [1.0, 0.9], [0.9, 1.0]]
    assert tir.unknown == []
    # 156 keys, each in one section, each reachable by key alone
    assert len(tir.values) == sum(len(s) for s in tir.sections.values()) == 156


def test_values_strings_comments_and_fortran_exponents():
    tir = parse_tir(minimal(), name="min.tir")
    assert tir["TYRESIDE"] == "LEFT $ not a comment!"  # '$' and '!' inside quotes are text
    assert tir["FORCE"] == "newton"
    assert tir["PDX1"] == 1.0 and tir["PKX1"] == 21.0
    assert tir["PCY1"] == 1.3  # keys are case-insensitive
    assert tir["UNLOADED_RADIUS"] == 0.3135
    assert tir.fittyp == 61 and tir.version == "6.1"


@pytest.mark.parametrize("fittyp, version", [("6", "5.2"), ("21", "5.2"), ("61", "6.1"),
                                             ("62", "6.2")])
def test_fittyp_selects_the_version(fittyp, version):
    assert parse_tir(minimal(fittyp)).version == version


def test_unsupported_fittyp_and_unknown_version_are_errors():
    with pytest.raises(TirError, match=r"FITTYP = 5\.0 is not supported; known: 6 or 21"):
        parse_tir(minimal("5"), name="x.tir")
    text = minimal().replace("FITTYP        = 61", "")
    with pytest.raises(TirError, match="cannot tell the Magic Formula version: no FITTYP"):
        parse_tir(text)


def test_unknown_keys_are_reported_with_line_numbers():
    extra = "[LATERAL_COEFFICIENTS]\nPKY11 = 2.0\n[MY_SECTION]\nFOO = 1\n"
    text = minimal(extra=extra)
    n_pky11 = text.splitlines().index("PKY11 = 2.0") + 1
    with pytest.warns(TirWarning) as rec:
        tir = parse_tir(text, name="typo.tir")
    msg = str(rec[0].message)
    assert f"PKY11 (line {n_pky11}, [LATERAL_COEFFICIENTS])" in msg
    assert f"[MY_SECTION] (line {n_pky11 + 1})" in msg
    assert "typo.tir: 3 unknown" in msg  # the key, the section and the key in it
    assert tir["PKY11"] == 2.0  # kept, but not used by the models
    with pytest.raises(TirError, match=r"PKY11 \(line \d+, \[LATERAL_COEFFICIENTS\]\).*strict"):
        parse_tir(text, name="typo.tir", strict=True)


def test_known_key_in_the_wrong_section_is_unknown_there():
    text = minimal().replace("PCX1 = 1.65", "PCY2 = 1.65\nPCX1 = 1.65")
    with pytest.raises(TirError, match=r"PCY2 \(line \d+, \[LONGITUDINAL_COEFFICIENTS\]\)"):
        parse_tir(text, strict=True)


def test_missing_required_coefficients_are_named_with_their_sections():
    text = minimal().replace("PKY2 = 1.7\n", "").replace("FNOMIN        = 4000\n", "")
    tir = parse_tir(text, name="short.tir")
    with pytest.raises(TirError) as exc:
        MagicFormula(tir)
    msg = str(exc.value)
    assert "short.tir: missing required coefficient(s) for the MF 6.1 tyre model" in msg
    assert "FNOMIN ([VERTICAL])" in msg and "PKY2 ([LATERAL_COEFFICIENTS])" in msg
    with pytest.raises(TirError, match=r"coefficient QSY1 not found \(it belongs in "
                                       r"\[ROLLING_COEFFICIENTS\]\)"):
        tir["QSY1"]


def test_missing_combined_slip_coefficients_are_a_warning():
    with pytest.warns(TirWarning, match="no combined-slip coefficients"):
        MagicFormula(parse_tir(minimal()))


def test_syntax_errors_give_line_numbers():
    with pytest.raises(TirError, match=r"line 2: expected '\[SECTION\]', 'KEY = value'"):
        parse_tir("[MODEL]\nthis is not a line\n")
    with pytest.raises(TirError, match="line 1: FITTYP appears before any"):
        parse_tir("FITTYP = 61\n")
    with pytest.raises(TirError, match="line 2: TYRESIDE: no value or an unterminated quote"):
        parse_tir("[MODEL]\nTYRESIDE = 'LEFT\n")
    tir = parse_tir(minimal().replace("PCX1 = 1.65", "PCX1 = 1.6.5"), name="bad.tir")
    with pytest.raises(TirError, match=r"bad.tir:\d+: PCX1 = '1.6.5' is not a number"):
        MagicFormula(tir)


def test_duplicate_key_warns_and_keeps_the_last():
    with pytest.warns(TirWarning, match=r"PCX1 \(lines \d+ and \d+\)"):
        tir = parse_tir(minimal(extra="[LONGITUDINAL_COEFFICIENTS]\nPCX1 = 1.7\n"))
    assert tir["PCX1"] == 1.7


def test_non_si_units_are_refused():
    text = minimal().replace("LENGTH        = 'meter'", "LENGTH        = 'mm'")
    with pytest.raises(TirError, match=r"only SI .* LENGTH = 'mm' \(line 6\)"):
        parse_tir(text)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(TirError, match="cannot read tyre property file"):
        read_tir(tmp_path / "nope.tir")


def test_replace_returns_a_modified_copy():
    tir = read_tir(SAMPLE_TIR)
    t2 = tir.replace(pcx1=2.0)
    assert t2["PCX1"] == 2.0 and tir["PCX1"] == 1.5587
