"""The UDS round trip case of ``python -m bench hil`` (bench/hil_uds.py, issue 36)."""

import pytest

pytest.importorskip("isotp")
pytest.importorskip("udsoncan")


def test_round_trip_case_measures_both_services_and_its_target_judges_the_p99():
    from bench.hil import targets
    from bench.hil_uds import uds_round_trip
    r = uds_round_trip(20)
    assert r["requests"] == 20
    for name in ("read_did", "read_dtc_0a"):
        f = r[name]
        assert 0 < f["p50_ms"] <= f["p99_ms"] <= f["max_ms"]
    # every request answered (21 each: one to warm up), none negative
    assert r["server"]["requests"] == {"0x22": 21, "0x19": 21}
    assert r["server"]["negative"] == {} and r["server"]["errors"] == 0
    assert r["monitor_cost"]["updates"] == 63  # the hit at 0 and 62 periods of 16 ms
    name = ("UDS request round trip on the virtual rig (ReadDataByIdentifier, "
            "ReadDTCInformation 0x0A), p99 [ms]")
    t = {x["name"]: x for x in targets({"uds": {"extra": {"p99_ms": 51.0}}})}[name]
    assert t["met"] is False and t["bound"] == 50
    t = {x["name"]: x for x in targets({"uds": {"extra": r}})}[name]
    assert t["value"] == r["p99_ms"]
    assert {x["name"]: x for x in targets({})}[name]["met"] is None
