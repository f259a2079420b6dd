"""The CAN ids of a rig (hil.testing.can_ids): the ACC DBC, UDS, XCP, the session frames
and the bench's flood do not collide; a DBC that takes one of them is refused by name."""

from __future__ import annotations

import copy
import pathlib

import pytest

from hil.can import ACC_DBC, CanDatabase
from hil.testing.can_ids import FLOOD_ID, IdCollision, check_ids, reserved_ids

ROOT = pathlib.Path(__file__).resolve().parents[3]

DBC_ON_UDS = '''VERSION ""
NS_ :
BS_:
BU_: A B
BO_ 2016 DIAG_LIKE: 8 A
 SG_ x : 0|8@1+ (1,0) [0|255] "" B
'''


def test_the_acc_rig_ids_do_not_collide():
    ids = check_ids(CanDatabase(ACC_DBC))
    assert {i: o for i, o in ids.items() if o.startswith("DBC message")} == {
        0x100: "DBC message RADAR", 0x101: "DBC message EGO", 0x200: "DBC message ACC_CMD"}
    assert ids[0x7E0] == "UDS request" and ids[0x7E8] == "UDS response"
    assert ids[0x6F0] == "XCP command" and ids[0x6F1] == "XCP response/DAQ"
    assert ids[FLOOD_ID] == "bench flood" and len(ids) == 3 + 2 + 2 + 5 + 1


def test_the_bench_flood_is_on_no_rigs_id():
    import bench.hil_soak as soak
    assert soak.FLOOD_ID == FLOOD_ID
    assert FLOOD_ID not in reserved_ids(("uds", "xcp", "session"))
    assert "int(sys.argv[4])" in soak.FLOOD and "0x7E0" not in soak.FLOOD


def test_a_dbc_on_the_uds_request_id_is_refused(tmp_path):
    (tmp_path / "diag_like.dbc").write_text(DBC_ON_UDS)
    db = CanDatabase(tmp_path / "diag_like.dbc")
    with pytest.raises(IdCollision, match=r"0x7E0 is both DBC message DIAG_LIKE and the UDS "
                                          r"request: move the DBC's message"):
        check_ids(db)
    check_ids(db, ("xcp", "session"))  # a rig without UDS may use it
    from hil.testing.rig import Rig
    from hil.testing.rigfile import RigFileError, load_rig
    spec = copy.deepcopy(load_rig(ROOT / "examples" / "hil_tests" / "rigs" / "virtual.toml"))
    spec.buses["can"].dbc = str(tmp_path / "diag_like.dbc")
    with pytest.raises(RigFileError, match=r"\[buses.can\]: CAN id 0x7E0 is both"):
        Rig(spec)
