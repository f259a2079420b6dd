"""The temporal checks (hil.testing.checks) against brute-force oracles written here: a
plain loop over the samples of seeded random traces (step responses, ramps, noise, NaNs,
thresholds equal to sample values so that edges fall exactly on sample boundaries); the
reported times and margins must be equal, not close."""

import math

import numpy as np
import pytest

from hil.testing import (
    CheckFailed,
    Trace,
    WindowError,
    always,
    check,
    eventually,
    responds,
    settles,
    sig,
)

EPS = 1e-9
OPS = (">", ">=", "<", "<=")


def _cmp(op, name, c):
    s = sig(name)
    return {">": s > c, ">=": s >= c, "<": s < c, "<=": s <= c}[op]


def _margin(op, x, c):
    return x - c if op[0] == ">" else c - x


def _holds(op, m):
    return m >= 0 if op.endswith("=") else m > 0


def _random_trace(seed, nan=True):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    regular = rng.random() < 0.5
    dt = np.full(n, 0.01) if regular else rng.uniform(0.001, 0.05, n)
    t = np.round(np.cumsum(dt) - dt[0] + rng.uniform(-1, 1), 6) if not regular \
        else np.arange(n) * 0.01 + float(rng.integers(0, 3))
    ts, tau, k = rng.uniform(t[0], t[-1]), rng.uniform(0.01, 1), rng.uniform(-5, 5)
    x = np.where(t >= ts, k * (1 - np.exp(-(t - ts) / tau)), 0.0)
    x += rng.normal(0, rng.choice([0, 0.01, 0.3]), n)
    if rng.random() < 0.3:
        x = rng.uniform(-1, 1) * (t - t[0])  # a ramp
    y = rng.normal(0, 1, n)
    if nan and rng.random() < 0.3:
        x[rng.integers(0, n)] = np.nan
    return Trace(t, {"x": x, "y": y}, {"x": "m", "y": "m"}), rng


def _threshold(rng, x):
    fin = x[np.isfinite(x)]
    return float(rng.choice(fin)) if rng.random() < 0.5 else float(rng.uniform(-5, 5))


def _window(rng, t):
    start = float(rng.choice(t[: max(len(t) // 2, 1)])) if rng.random() < 0.7 else None
    t0 = t[0] if start is None else start
    return start, t0, float(rng.uniform(0, t[-1] - t0))


def oracle_eventually(t, x, op, c, t0, w):
    best = None
    for i in range(len(t)):
        if t[i] < t0 - EPS or t[i] > t0 + w + EPS:
            continue
        if math.isnan(x[i]):
            return "nan", t[i], None
        m = _margin(op, x[i], c)
        if _holds(op, m):
            return "pass", t[i], m
        if best is None or m > best[1]:
            best = (t[i], m)
    return "fail", best[0], best[1]


@pytest.mark.parametrize("seed", range(150))
def test_eventually_matches_a_loop_over_the_samples(seed):
    tr, rng = _random_trace(seed)
    op, c = OPS[seed % 4], _threshold(rng, tr["x"])
    start, t0, w = _window(rng, tr.t)
    if not len(tr.slice(t0, t0 + w)):
        return
    kind, when, m = oracle_eventually(tr.t, tr["x"], op, c, t0, w)
    r = eventually(tr, _cmp(op, "x", c), within=w, start=start)
    if kind == "pass":
        assert r.passed and r.when == when and r.margin == m
        assert "held at t = " in r.message
    elif kind == "nan":
        assert not r.passed and r.when == when and "NaN at t = " in r.message
    else:
        assert not r.passed and r.details["closest_at"] == when and r.margin == m
        assert r.when == t0 + w and "never held" in r.message


def oracle_always(t, x, op, c, t0, t1):
    worst = None
    for i in range(len(t)):
        if t[i] < t0 - EPS or t[i] > t1 + EPS:
            continue
        if math.isnan(x[i]):
            return "nan", t[i], None
        m = _margin(op, x[i], c)
        if not _holds(op, m):
            return "fail", t[i], m
        if worst is None or m < worst[1]:
            worst = (t[i], m)
    return "pass", worst[0], worst[1]


@pytest.mark.parametrize("seed", range(150))
def test_always_matches_a_loop_over_the_samples(seed):
    tr, rng = _random_trace(seed)
    op, c = OPS[seed % 4], _threshold(rng, tr["x"])
    if rng.random() < 0.3:  # mostly true: passes happen too
        c = float(np.nanmin(tr["x"])) if op[0] == ">" else float(np.nanmax(tr["x"]))
    start, t0, w = _window(rng, tr.t)
    during = None if rng.random() < 0.3 else w
    t1 = tr.t[-1] if during is None else t0 + w
    if not len(tr.slice(t0, t1)):
        return
    kind, when, m = oracle_always(tr.t, tr["x"], op, c, t0, t1)
    r = always(tr, _cmp(op, "x", c), during=during, start=start)
    assert r.passed == (kind == "pass") and r.when == when
    if kind != "nan":
        assert r.margin == m
    else:
        assert "NaN at t = " in r.message and "in x" in r.message
    if kind == "fail":
        assert "failed at t = " in r.message and " m" in r.message


def oracle_settles(t, x, to, tol, t0, w):
    last_out, worst, worst_t = None, -1.0, None
    for i in range(len(t)):
        if t[i] < t0 - EPS:
            continue
        if math.isnan(x[i]):
            return "nan", t[i], None, None
        d = abs(x[i] - to)
        if d > tol:
            last_out = i
        if t[i] >= t0 + w - EPS and d > worst:
            worst, worst_t = d, t[i]
    first_in = next(i for i in range(len(t)) if t[i] >= t0 - EPS)
    settled = t[first_in] if last_out is None else (
        t[last_out + 1] if last_out + 1 < len(t) else None)
    return ("pass" if worst <= tol else "fail"), settled, worst, worst_t


@pytest.mark.parametrize("seed", range(150))
def test_settles_matches_a_loop_over_the_samples(seed):
    tr, rng = _random_trace(seed)
    x = tr["x"]
    to = float(np.nanmedian(x[-5:])) if rng.random() < 0.7 else _threshold(rng, x)
    tol = float(rng.choice([0.0, 0.05, 0.5, abs(float(np.nan_to_num(x[-1])) - to)]))
    start, t0, w = _window(rng, tr.t)
    kind, settled, worst, worst_t = oracle_settles(tr.t, x, to, tol, t0, w)
    r = settles(tr, "x", to=to, tol=tol, within=w, start=start)
    assert r.passed == (kind == "pass")
    if kind == "nan":
        assert r.when == settled and "NaN at t = " in r.message
        return
    assert r.details["settled_at"] == settled and r.details["worst"] == worst
    assert r.details["worst_at"] == worst_t and r.margin == tol - worst
    assert r.when == (settled if kind == "pass" else worst_t)


def oracle_responds(t, u, y, lat, thr, edge):
    out = []
    for k in range(1, len(t)):
        if abs(u[k] - u[k - 1]) > edge:
            got = None
            for m in range(k, len(t)):
                if abs(y[m] - y[k - 1]) > thr:
                    got = t[m] - t[k]
                    break
            out.append((t[k], got))
    return out


@pytest.mark.parametrize("seed", range(150))
def test_responds_matches_a_loop_over_the_samples(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 200))
    t = np.arange(n) * 0.01
    u = np.repeat(rng.integers(0, 3, n // 5 + 1).astype(float), 5)[:n]
    delay = int(rng.integers(0, 6))
    y = np.concatenate([np.zeros(delay), u[: n - delay]]) + rng.normal(0, 0.01, n)
    lat = float(rng.choice([0.0, 0.02, 0.03, 0.05]))
    thr = 0.2
    want = oracle_responds(t, u, y, lat, thr, 0.0)
    last_edge = want[-1][0] if want else None
    undecided = [e for e, g in want if (g is None or g > lat + EPS) and e + lat > t[-1] + EPS]
    if undecided:
        with pytest.raises(WindowError, match="no response yet"):
            responds(Trace(t, {"u": u, "y": y}), "u", "y", latency=lat, threshold=thr)
        return
    r = responds(Trace(t, {"u": u, "y": y}), "u", "y", latency=lat, threshold=thr)
    assert r.details["latencies"] == want
    if not want:
        assert not r.passed and "never changed" in r.message
        return
    lats = [math.inf if g is None else g for _, g in want]
    assert r.passed == all(g <= lat + EPS for g in lats)
    worst = max(lats)
    assert r.when == want[lats.index(worst)][0] and last_edge is not None
    assert r.margin == (None if worst == math.inf else lat - worst)


def test_an_edge_on_a_sample_boundary_and_latency_equal_to_the_limit_pass():
    t = np.arange(10) * 0.1
    u = (t >= 0.3).astype(float)
    y = (t >= 0.5).astype(float)
    r = responds(Trace(t, {"u": u, "y": y}), "u", "y", latency=0.2)
    assert r.passed and r.details["latencies"] == [(t[3], t[5] - t[3])]
    r = responds(Trace(t, {"u": u, "y": y}), "u", "y", latency=0.19)
    assert not r.passed and "over the limit by" in r.message


def test_strict_and_non_strict_comparisons_at_an_exact_sample_value():
    tr = Trace([0.0, 1.0, 2.0], {"x": [0.0, 20.0, 10.0]}, {"x": "m"})
    assert eventually(tr, sig("x") >= 20, within=2).when == 1.0
    r = eventually(tr, sig("x") > 20, within=2)
    assert not r.passed and r.margin == 0.0 and r.details["closest_at"] == 1.0
    r = always(tr, sig("x") < 20)
    assert not r.passed and r.when == 1.0 and r.margin == 0.0


def test_a_failure_says_when_and_by_how_much_and_shows_the_window():
    t = np.arange(0, 20.001, 0.01)
    gap = np.full(len(t), 25.0)
    gap[1234] = 18.3
    tr = Trace(t, {"gap": gap, "v": t}, {"gap": "m", "v": "m/s"})
    with pytest.raises(CheckFailed) as e:
        check(always(tr, sig("gap") >= 20))
    text = str(e.value)
    assert "gap >= 20 m failed at t = 12.340 s by 1.7 m" in text
    assert "gap [m]" in text and "> 12.340     18.3" in text and "v [m/s]" not in text
    assert isinstance(e.value, AssertionError) and e.value.result.when == t[1234]


def test_composite_conditions_name_the_deciding_comparison():
    t = np.arange(5.0)
    tr = Trace(t, {"a": [5, 5, 5, 1, 5], "b": [0, 0, 0, 0, 9]}, {"a": "m", "b": "V"})
    r = always(tr, (sig("a") > 2) & (sig("b") < 3))
    assert not r.passed and r.when == 3.0 and r.margin == -1.0
    assert "a > 2 m failed at t = 3.000 s by 1 m" in r.message
    r = always(tr, (sig("a") > 2) | (sig("b") > 8))
    assert not r.passed and r.when == 3.0 and r.margin == -1.0  # max(-1, -8)
    r = eventually(tr, ~(sig("a") >= 5), within=4)
    assert r.passed and r.when == 3.0 and r.margin == 4.0


def test_a_plain_callable_says_its_margin_is_unknown():
    tr = Trace(np.arange(4.0), {"x": [0.0, 1.0, 2.0, 3.0]})
    r = always(tr, lambda tr: tr["x"] < 2.5)
    assert not r.passed and r.when == 3.0 and r.margin is None
    assert "margin unknown" in r.message
    r = eventually(tr, lambda tr: tr["x"] > 5, within=3)
    assert not r.passed and "margin unknown" in r.message
    with pytest.raises(Exception, match="one bool per sample"):
        always(tr, lambda tr: tr["x"])


def test_never_a_silent_pass():
    empty = Trace([], {"x": []})
    with pytest.raises(WindowError, match="empty"):
        always(empty, sig("x") > 0)
    tr = Trace(np.arange(5.0), {"x": np.arange(5.0)})
    with pytest.raises(WindowError, match="no sample in the window"):
        eventually(tr, sig("x") > 0, within=1, start=10)
    with pytest.raises(WindowError, match="not covered"):  # undecided: not yet held
        eventually(tr, sig("x") > 10, within=10)
    assert eventually(tr, sig("x") > 2, within=10).when == 3.0  # decided in the trace
    with pytest.raises(WindowError, match="not covered"):
        always(tr, sig("x") >= 0, during=10)
    assert always(tr, sig("x") < 3, during=10).when == 3.0
    with pytest.raises(WindowError, match="not covered"):
        settles(tr, "x", to=4, tol=1, within=8)
    with pytest.raises(WindowError, match="duration"):
        eventually(tr, sig("x") > 0, within=-1)
    with pytest.raises(WindowError, match="finite time"):
        always(tr, sig("x") > 0, start=float("nan"))
    nan = Trace(np.arange(3.0), {"x": [1.0, np.nan, 1.0]})
    r = always(nan, ~(sig("x") > 5))
    assert not r.passed and "NaN at t = 1.000 s in x" in r.message
    r = responds(nan, "x", "x", latency=1)
    assert not r.passed and "NaN" in r.message


def test_responds_to_a_condition_and_reports_a_missing_response():
    t = np.arange(10) * 0.1
    tr = Trace(t, {"v": np.arange(10.0), "brake": np.where(t >= 0.8, 1.0, 0.0)})
    r = responds(tr, sig("v") > 3, "brake", latency=0.5)
    assert r.passed and r.details["latencies"] == [(t[4], t[8] - t[4])]
    r = responds(tr, sig("v") > 3, "brake", latency=0.3)
    assert not r.passed and r.margin == pytest.approx(-0.1)
    flat = Trace(t, {"u": (t >= 0.2).astype(float), "y": np.zeros(10)})
    r = responds(flat, "u", "y", latency=0.3)
    assert not r.passed and r.margin is None and "no response" in r.message


def test_checks_read_cosim_results():
    from cosim.observers import Results
    res = Results(np.arange(4.0), {"car.v": np.array([0.0, 1, 2, 3]),
                                   "car.p": np.zeros((4, 2))}, {"car.v": "m/s", "car.p": "m"})
    r = eventually(res, sig("car.v") >= 2, within=3)
    assert r.when == 2.0 and r.unit == "m/s"
    assert settles(res, "car.p[1]", to=0, tol=0, within=0).passed
