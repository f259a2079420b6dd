"""The fault memory's status bits (hil.diag.dtc): the rules one by one, then a generated
corpus of random pass/fail/cycle/clear sequences against an oracle written here from
ISO 14229-1 Annex D's definitions of the bits (over the whole history since the last
clear, not as a state machine)."""

import random

import pytest

from hil.diag.dtc import AVAILABILITY_MASK, GROUPS, FaultMemory, Status, dtc_text

A, B, U = 0x057929, 0x400105, 0xC23587


def mem(**kw):
    return FaultMemory({A: "a", B: "b", U: "u"}, **kw)


def test_power_on_fail_pass_and_a_new_cycle():
    m = mem()
    assert m.status(A) == Status.INITIAL == 0x50
    assert m.report(A, False) == 0x00  # ran and passed: nothing else
    assert m.report(A, True) == 0x2F  # TF TFTOC PDTC CDTC TFSLC
    assert m.report(A, False) == 0x2E  # no longer failing, still stored
    m.new_operation_cycle()
    assert m.status(A) == 0x6C  # not completed this cycle; failed last cycle: pending
    m.report(A, False)
    assert m.status(A) == 0x2C
    m.new_operation_cycle()  # a cycle that ran without a failure: pending goes
    assert m.status(A) == 0x68
    assert m.status(B) == Status.INITIAL  # never tested


def test_confirmation_needs_consecutive_failing_cycles_and_untested_ones_do_not_break():
    m = mem(confirm_cycles=2)
    m.report(A, True)
    assert m.status(A) & Status.CDTC == 0 and m.status(A) & Status.PDTC
    m.new_operation_cycle()
    m.new_operation_cycle()  # a cycle without a result: the run goes on
    m.report(A, True)
    assert m.status(A) & Status.CDTC
    m2 = mem(confirm_cycles=2)
    m2.report(A, True)
    m2.new_operation_cycle()
    m2.report(A, False)
    m2.new_operation_cycle()  # a passing cycle breaks the run
    m2.report(A, True)
    assert m2.status(A) & Status.CDTC == 0


def test_aging_resets_confirmed_after_passing_cycles_only():
    m = mem(aging_cycles=2)
    m.report(A, True)
    for _ in range(2):
        m.new_operation_cycle()
        m.report(A, False)
    assert m.status(A) & Status.CDTC  # the second passing cycle has not ended yet
    m.new_operation_cycle()
    assert m.status(A) & Status.CDTC == 0
    assert m.status(A) & Status.TFSLC  # only a clear resets it
    never = mem(aging_cycles=None)
    never.report(A, True)
    for _ in range(50):
        never.new_operation_cycle()
        never.report(A, False)
    assert never.status(A) & Status.CDTC


def test_snapshot_at_the_first_failure_since_the_clear_and_occurrences():
    t = [0.0]
    m = FaultMemory([A], clock=lambda: t[0])
    calls = []

    def snap():
        calls.append(1)
        return {"speed": 12.5}

    t[0] = 1.5
    m.report(A, True, snap)
    t[0] = 2.0
    m.report(A, False, snap)
    m.report(A, True, snap)
    assert m.snapshot(A) == {"time": 1.5, "cycle": 1, "speed": 12.5}
    assert len(calls) == 1  # called only when stored
    assert m.records[A].occurrences == 2
    m.clear()
    assert m.snapshot(A) is None and m.records[A].occurrences == 0
    m.report(A, True, {"speed": 3.0})
    assert m.snapshot(A)["speed"] == 3.0 and m.snapshot(A)["time"] == 2.0


def test_clear_by_group_and_the_queries():
    m = mem()
    for d in (A, B, U):
        m.report(d, True)
    assert m.count(Status.CDTC) == 3
    assert m.by_status_mask(0x80) == []  # warningIndicatorRequested: not supported
    assert m.clear(0xC00000) == [U]  # network (U) group
    assert m.status(U) == 0x50 and m.status(A) == 0x2F
    assert m.clear(B) == [B]
    assert m.clear(0x000000) == [A]  # powertrain (P) group
    with pytest.raises(ValueError, match="groupOfDTC 0x123456"):
        m.clear(0x123456)
    assert m.clears == 3
    assert set(GROUPS) == {0, 0x400000, 0x800000, 0xC00000}
    assert m.supported() == [(A, 0x50), (B, 0x50), (U, 0x50)]
    assert AVAILABILITY_MASK == 0x7F


def test_bad_input_is_refused_with_what_to_do():
    with pytest.raises(ValueError, match="3-byte"):
        FaultMemory([0x1000000])
    with pytest.raises(ValueError, match="reserved"):
        FaultMemory([0xFFFFFF])
    with pytest.raises(ValueError, match="confirm_cycles"):
        FaultMemory([A], confirm_cycles=0)
    with pytest.raises(ValueError, match="aging_cycles"):
        FaultMemory([A], aging_cycles=0)
    with pytest.raises(KeyError, match="not supported; supported: 0x057929"):
        FaultMemory([A]).report(0x123456, True)
    with pytest.raises(ValueError, match="at least one"):
        FaultMemory([])


def test_dtc_text():
    assert dtc_text(0xC23587) == "U0235-87"
    assert dtc_text(0x057929) == "P0579-29"
    assert dtc_text(0x400105) == "C0001-05"
    assert dtc_text(0x9A1234) == "B1A12-34"


# ------------------------------------------------------------------ the corpus
def oracle(history, confirm, aging):
    """The status from the results since the last clear (``history``: ``True``/``False``
    results and ``"cycle"`` marks), by the standard's definitions of each bit:

    * TF: the last result was a failure; TFTOC: a failure in this cycle;
    * TNCSLC / TNCTOC: no result since the clear / in this cycle; TFSLC: any failure;
    * PDTC: a failure, and no cycle ended after the last failing one that ran and passed;
    * CDTC: ``confirm`` failing cycles in a row (cycles without a result skipped; this
      cycle counts once it failed), and after the last such run never ``aging`` passing
      cycles in a row (ended cycles only).
    """
    cycles = [[]]
    for e in history:
        if e == "cycle":
            cycles.append([])
        else:
            cycles[-1].append(e)
    ended, cur = cycles[:-1], cycles[-1]
    results = [r for c in cycles for r in c]
    bits = 0
    if results and results[-1]:
        bits |= Status.TF
    if any(cur):
        bits |= Status.TFTOC
    if not results:
        bits |= Status.TNCSLC
    if not cur:
        bits |= Status.TNCTOC
    if any(results):
        bits |= Status.TFSLC
    failing = [i for i, c in enumerate(cycles) if any(c)]
    if failing and not any(c and not any(c) for c in ended[failing[-1] + 1:]):
        bits |= Status.PDTC
    kinds = ["F" if any(c) else "P" for c in ended if c]
    if any(cur):
        kinds.append("F")
    runs_end = [i for i in range(confirm - 1, len(kinds))
                if all(k == "F" for k in kinds[i - confirm + 1:i + 1])]
    if runs_end:
        aged, n = False, 0
        for k in kinds[runs_end[-1] + 1:]:
            n = n + 1 if k == "P" else 0
            if aging is not None and n >= aging:
                aged = True
        if not aged:
            bits |= Status.CDTC
    return bits


def test_status_bits_against_the_oracle_on_random_sequences():
    rng = random.Random(36)
    checked = 0
    for case in range(400):
        confirm = rng.choice([1, 1, 2, 3])
        aging = rng.choice([None, 1, 2, 4])
        m = FaultMemory([A], confirm_cycles=confirm, aging_cycles=aging)
        p_fail = rng.choice([0.1, 0.3, 0.6])
        history = []
        for step in range(rng.randint(5, 80)):
            x = rng.random()
            if x < 0.03:
                m.clear()
                history = []
            elif x < 0.28:
                m.new_operation_cycle()
                history.append("cycle")
            else:
                failed = rng.random() < p_fail
                m.report(A, failed)
                history.append(failed)
            want = oracle(history, confirm, aging)
            assert m.status(A) == want, (case, step, confirm, aging, history,
                                         f"0x{m.status(A):02X} != 0x{want:02X}")
            checked += 1
    assert checked > 10000
