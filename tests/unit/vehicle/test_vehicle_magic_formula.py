"""Magic Formula invariants and reference checks (anchors-domain.md section 3).

Every expected value is computed here from the .tir coefficients with the published
equations (Pacejka 2012, 4.E9-4.E78), independently of blocks.vehicle.magic_formula.
No TNO/MFeval golden values were available (anchors-domain.md 3: 'no publicly
accessible MF parameter file with independently computed force values'); these are
the exact invariants of the formulas.
"""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from blocks.vehicle import SAMPLE_TIR, MagicFormula, magic_formula, parse_tir, read_tir

TIR = read_tir(SAMPLE_TIR)
C = TIR.values
FZ0 = C["FNOMIN"]  # 3800 N
R0 = C["UNLOADED_RADIUS"]  # 0.376 m
# scaling factors that switch off every shift / residual term at zero slip
NO_SHIFT = dict(LHX=0, LVX=0, LHY=0, LVY=0, LVYKA=0, LRES=0)
TIR0 = TIR.replace(RHX1=0, RHY1=0, RHY2=0, QHZ1=0, QHZ2=0, QHZ3=0, QHZ4=0)
MF = MagicFormula(TIR)
MF0 = MagicFormula(TIR0, scaling=NO_SHIFT)


def dfz(fz):
    return (fz - FZ0) / FZ0


def kx_ref(fz):
    d = dfz(fz)
    return fz * (C["PKX1"] + C["PKX2"] * d) * math.exp(C["PKX3"] * d)


def kya_ref(fz, gamma=0.0):  # MF 5.2: fixed exponent 2
    return (C["PKY1"] * FZ0 * math.sin(2 * math.atan(fz / (C["PKY2"] * FZ0)))
            * (1 - C["PKY3"] * abs(gamma)))


def mf_ref(x, b, c, d, e):
    return d * math.sin(c * math.atan(b * x - e * (b * x - math.atan(b * x))))


# ------------------------------------------------------------ the basic formula
def test_basic_formula_slope_asymptote_and_peak():
    B, Cc, D, E = 10.0, 1.9, 1.0, 0.97
    h = 1e-7
    slope = (magic_formula(h, B, Cc, D, E) - magic_formula(-h, B, Cc, D, E)) / (2 * h)
    assert slope == pytest.approx(19.0, rel=1e-9)  # BCD
    assert magic_formula(1e9, B, Cc, D, E) == pytest.approx(0.156434, abs=1e-6)  # D sin(pi C/2)
    res = minimize_scalar(lambda x: -magic_formula(x, B, Cc, D, 0.0), bounds=(0.0, 1.0),
                          method="bounded", options={"xatol": 1e-12})
    assert res.x == pytest.approx(0.108629, abs=1e-6)  # tan(pi/(2C))/B with E = 0
    assert -res.fun == pytest.approx(1.0, abs=1e-12)


# ------------------------------------------------------------ zero slip
@pytest.mark.parametrize("fz", [1000.0, 3800.0, 7000.0])
def test_zero_force_at_zero_slip_without_shift_terms(fz):
    r = MF0.evaluate(0.0, 0.0, 0.0, fz, vx=20.0)
    assert (r.fx, r.fy, r.mz, r.mx) == (0.0, 0.0, 0.0, 0.0)  # exactly


@pytest.mark.parametrize("fz, gamma", [(3800.0, 0.0), (3800.0, math.radians(2.0)),
                                       (5000.0, math.radians(-3.0))])
def test_residual_forces_at_zero_slip_are_the_shift_terms(fz, gamma):
    # MF 5.2 (PAC2002): at kappa = alpha = 0 the horizontal and vertical shifts leave
    # Fx0 = Dx sin(Cx atan(Bx SHx - Ex(Bx SHx - atan Bx SHx))) + SVx, and Fy0 likewise
    d = dfz(fz)
    shx = C["PHX1"] + C["PHX2"] * d
    dx = (C["PDX1"] + C["PDX2"] * d) * (1 - C["PDX3"] * gamma ** 2) * fz
    ex = (C["PEX1"] + C["PEX2"] * d + C["PEX3"] * d * d) * (1 - C["PEX4"] * np.sign(shx))
    fx = mf_ref(shx, kx_ref(fz) / (C["PCX1"] * dx), C["PCX1"], dx, ex) \
        + fz * (C["PVX1"] + C["PVX2"] * d)
    shy = C["PHY1"] + C["PHY2"] * d + C["PHY3"] * gamma
    svy = fz * (C["PVY1"] + C["PVY2"] * d + (C["PVY3"] + C["PVY4"] * d) * gamma)
    dy = (C["PDY1"] + C["PDY2"] * d) * (1 - C["PDY3"] * gamma ** 2) * fz
    ey = (C["PEY1"] + C["PEY2"] * d) * (1 - (C["PEY3"] + C["PEY4"] * gamma) * np.sign(shy))
    fy = mf_ref(shy, kya_ref(fz, gamma) / (C["PCY1"] * dy), C["PCY1"], dy, min(ey, 1.0)) + svy
    r = MF.evaluate(0.0, 0.0, gamma, fz, vx=20.0)
    # at Fz0, gamma = 0: Fx = -133.389 N (PHX1 = -0.001779 times Kx = 74985 N),
    # Fy = +6.909 N; at 2 deg camber Fy = -108.482 N (PHY3, PVY3 camber shifts)
    assert r.fx == pytest.approx(fx, rel=1e-12)
    assert r.fy == pytest.approx(fy, rel=1e-12)
    if gamma == 0.0 and fz == FZ0:
        assert (r.fx, r.fy) == (pytest.approx(-133.389442, abs=1e-6),
                                pytest.approx(6.908764, abs=1e-6))
    if gamma > 0:
        assert r.fy == pytest.approx(-108.482, abs=1e-3)


def test_standstill_reduces_the_shifts_to_zero():
    r = MF.evaluate(0.0, 0.0, 0.0, FZ0, vx=0.0)
    assert (r.fx, r.fy, r.mz, r.my) == (0.0, 0.0, 0.0, 0.0)
    # at VXLOW/2 the weight is (1 - cos(pi/2))/2 = 1/2: every shift halved, which the
    # shift scaling factors reproduce at full speed
    half = MF.evaluate(0.0, 0.0, 0.0, FZ0, vx=0.5 * C["VXLOW"])
    full = MF.evaluate(0.0, 0.0, 0.0, FZ0, vx=C["VXLOW"])
    scaled = MagicFormula(TIR, scaling=dict(LHX=.5, LVX=.5, LHY=.5, LVY=.5)).evaluate(
        0.0, 0.0, 0.0, FZ0, vx=C["VXLOW"])
    assert half.my == pytest.approx(0.5 * full.my, rel=1e-12)
    assert (half.fx, half.fy) == (pytest.approx(scaled.fx, rel=1e-12),
                                  pytest.approx(scaled.fy, rel=1e-12))
    assert abs(half.fx) > 60.0  # -66.7 N: not trivially zero


# ------------------------------------------------------------ peak and slope
@pytest.mark.parametrize("fz", [2000.0, 3800.0, 6000.0])
def test_longitudinal_peak_is_mu_fz_and_slope_is_bcd(fz):
    d = dfz(fz)
    dx = (C["PDX1"] + C["PDX2"] * d) * fz  # D = mu_x Fz
    for sign in (1.0, -1.0):
        res = minimize_scalar(lambda k, sign=sign: -sign * MF0.evaluate(k, 0.0, 0.0, fz).fx,
                              bounds=sorted((0.0, sign * 0.6)), method="bounded",
                              options={"xatol": 1e-12})
        assert -res.fun == pytest.approx(dx, rel=1e-10)
    h = 1e-6
    slope = (MF0.evaluate(h, 0.0, 0.0, fz).fx - MF0.evaluate(-h, 0.0, 0.0, fz).fx) / (2 * h)
    assert slope == pytest.approx(kx_ref(fz), rel=1e-7)  # Kx = BCD: 74985.4 N at Fz0
    assert MF0.slip_stiffness(fz) == pytest.approx(kx_ref(fz), rel=1e-14)


@pytest.mark.parametrize("fz", [2000.0, 3800.0, 6000.0])
def test_lateral_peak_is_mu_fz_and_slope_is_cornering_stiffness(fz):
    d = dfz(fz)
    dy = (C["PDY1"] + C["PDY2"] * d) * fz
    for sign in (1.0, -1.0):  # the two sides have different curvature (PEY3 sgn term)
        res = minimize_scalar(lambda a, sign=sign: sign * MF0.evaluate(0.0, a, 0.0, fz).fy,
                              bounds=sorted((0.0, sign * 0.5)), method="bounded",
                              options={"xatol": 1e-12})
        assert -res.fun == pytest.approx(dy, rel=1e-10)
    h = 1e-6
    slope = (MF0.evaluate(0.0, h, 0.0, fz).fy - MF0.evaluate(0.0, -h, 0.0, fz).fy) / (2 * h)
    # K_ya = pKy1 Fz0 sin(2 atan(Fz/(pKy2 Fz0))): -45211.0 N/rad at Fz0 (ISO: negative)
    assert slope == pytest.approx(kya_ref(fz), rel=1e-7)
    if fz == FZ0:
        assert slope == pytest.approx(-45211.02, abs=0.01)


def test_camber_stiffness_mf52():
    # shifts off except the camber ones: dFy/dgamma = pHy3 K_ya + Fz (pVy3 + pVy4 dfz)
    mf = MagicFormula(TIR, scaling=dict(LHY=0, LVY=0))
    for fz in (3000.0, 5000.0):
        h = 1e-6
        k = (mf.evaluate(0.0, 0.0, h, fz).fy0 - mf.evaluate(0.0, 0.0, -h, fz).fy0) / (2 * h)
        d = dfz(fz)
        assert k == pytest.approx(C["PHY3"] * kya_ref(fz) + fz * (C["PVY3"] + C["PVY4"] * d),
                                  rel=1e-6)


# ------------------------------------------------------------ signs, symmetry
def test_forces_oppose_the_slip_and_are_antisymmetric():
    kap = np.linspace(-0.5, 0.5, 41)
    alp = np.radians(np.linspace(-20, 20, 41))
    r = MF0.evaluate(kap, 0.0, 0.0, 4000.0)
    assert np.all(np.sign(r.fx) == np.sign(kap))
    r = MF0.evaluate(0.0, alp, 0.0, 4000.0)
    assert np.all(np.sign(r.fy) == -np.sign(alp))  # ISO: Fy opposes V_y
    small = np.abs(alp) < np.radians(6)
    assert np.all(np.sign(r.mz[small]) == np.sign(alp[small]))  # aligning: Mz = -t Fy
    # exact antisymmetry once the sign-dependent curvature terms are zero
    sym = MagicFormula(TIR0.replace(PEX4=0, PEY3=0, QEZ4=0, RBY3=0), scaling=NO_SHIFT)
    p, m = sym.evaluate(kap, 0.0, 0.0, 4000.0), sym.evaluate(-kap, 0.0, 0.0, 4000.0)
    np.testing.assert_allclose(p.fx, -m.fx, rtol=0, atol=1e-9)
    p, m = sym.evaluate(0.1, alp, 0.0, 4000.0), sym.evaluate(0.1, -alp, 0.0, 4000.0)
    np.testing.assert_allclose(p.fy, -m.fy, rtol=0, atol=1e-9)
    np.testing.assert_allclose(p.mz0, -m.mz0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(p.fx, m.fx, rtol=0, atol=1e-9)  # Fx even in alpha


# ------------------------------------------------------------ combined slip
def test_combined_slip_weights_and_shrinking_forces():
    kap = np.linspace(-0.3, 0.3, 61)[None, :]
    alp = np.radians(np.linspace(-15, 15, 61))[:, None]
    for fz in (2000.0, 3800.0, 6000.0):
        r = MF0.evaluate(kap, alp, 0.0, fz)
        assert np.all((r.gxa > 0) & (r.gxa <= 1 + 1e-15))
        assert np.all((r.gyk > 0) & (r.gyk <= 1 + 1e-15))
        assert np.all(np.abs(r.fx) <= np.abs(r.fx0) * (1 + 1e-15))
        assert np.all(np.abs(r.fy) <= np.abs(r.fy0) * (1 + 1e-15))
    r = MF.evaluate(kap, 0.0, 0.0, 4000.0)  # with the file's shifts: G = 1 on the axes
    np.testing.assert_allclose(r.gxa, 1.0, rtol=0, atol=1e-15)
    r = MF.evaluate(0.0, alp, 0.0, 4000.0)
    np.testing.assert_allclose(r.gyk, 1.0, rtol=0, atol=1e-15)
    # Fx shrinks as the slip angle grows, Fy as the slip ratio grows (file as is)
    a = np.radians(np.linspace(0, 15, 31))
    for k in (0.02, 0.05, 0.1, 0.3, -0.1):
        fx = np.abs(MF.evaluate(k, a, 0.0, 4000.0).fx)
        assert np.all(np.diff(fx) < 0), k
    kk = np.linspace(0, 0.5, 51)
    for adeg in (1.0, 4.0, 10.0):
        fy = np.abs(MF.evaluate(kk, math.radians(adeg), 0.0, 4000.0).fy)
        assert np.all(np.diff(fy) < 0), adeg


def test_combined_slip_against_the_friction_ellipse():
    # The MF weighting functions are empirical: this coefficient set leaves the ellipse
    # (Fx/Dx)^2 + (Fy/Dy)^2 = 1 of the pure-slip peaks slightly.  Measured maxima over
    # |kappa| <= 0.3, |alpha| <= 15 deg (61 x 121 grid): 1.0241 at Fz0 (kappa 0.155,
    # alpha -4.5 deg), 1.0985 at 2000 N, 0.99999 at 6000 N.  Pinned here as a regression
    # check; the brush model's strict bound is tested in test_vehicle_brush.py.
    kap = np.linspace(-0.3, 0.3, 121)[None, :]
    alp = np.radians(np.linspace(-15, 15, 61))[:, None]
    for fz, worst in ((3800.0, 1.0240922), (2000.0, 1.0985083), (6000.0, 0.9999897)):
        r = MF0.evaluate(kap, alp, 0.0, fz)
        e = (r.fx / (r.mux * fz)) ** 2 + (r.fy / (r.muy * fz)) ** 2
        assert e.max() == pytest.approx(worst, abs=1e-6)
    # in full sliding (large combined slip) the resultant is well inside the ellipse
    r = MF0.evaluate(np.array([0.5, 1.0]), math.radians(15.0), 0.0, FZ0)
    e = (r.fx / (r.mux * FZ0)) ** 2 + (r.fy / (r.muy * FZ0)) ** 2
    assert np.all(e < 0.8)


# ------------------------------------------------------------ moments
def test_aligning_moment_slope_is_trail_times_cornering_stiffness():
    for fz in (3000.0, 4500.0):
        d = dfz(fz)
        dt = fz * (C["QDZ1"] + C["QDZ2"] * d) * R0 / FZ0  # peak trail times Fz
        h = 1e-6
        r_p, r_m = MF0.evaluate(0.0, h, 0.0, fz), MF0.evaluate(0.0, -h, 0.0, fz)
        assert MF0.evaluate(0.0, 0.0, 0.0, fz).trail == pytest.approx(dt, rel=1e-14)
        assert (r_p.mz0 - r_m.mz0) / (2 * h) == pytest.approx(-dt * kya_ref(fz), rel=1e-6)
        assert (r_p.mz - r_m.mz) / (2 * h) == pytest.approx(-dt * kya_ref(fz), rel=1e-6)


def test_rolling_resistance_moment():
    for vx, sign in ((20.0, -1.0), (-20.0, 1.0)):
        r = MF.evaluate(0.0, 0.0, 0.0, 5000.0, vx=vx)
        assert r.my == pytest.approx(sign * C["QSY1"] * 5000.0 * R0, rel=1e-14)  # 18.8 N*m
    assert MF.evaluate(0.0, 0.0, 0.0, 5000.0, vx=0.0).my == 0.0


def test_relaxation_lengths_and_rolling_radius():
    sk, sa = MF.relaxation_lengths(FZ0)
    assert sk == pytest.approx(C["PTX1"] * R0, rel=1e-14)  # 0.715190 m
    assert sa == pytest.approx(C["PTY1"] * math.sin(2 * math.atan(1 / C["PTY2"])) * R0,
                               rel=1e-14)  # 0.564647 m
    re = R0 - FZ0 / C["VERTICAL_STIFFNESS"] * (C["DREFF"] * math.atan(C["BREFF"]) + C["FREFF"])
    assert MF.rolling_radius(FZ0) == pytest.approx(re, rel=1e-14)  # 0.368026 m
    assert (round(sk, 6), round(sa, 6), round(re, 6)) == (0.71519, 0.564647, 0.368026)


# ------------------------------------------------------------ robustness
def test_no_load_gives_zero_and_no_nan():
    for fz in (0.0, -100.0):
        r = MF.evaluate(0.1, 0.1, 0.05, fz, vx=20.0)
        assert (r.fx, r.fy, r.mx, r.my, r.mz) == (0.0, 0.0, 0.0, 0.0, 0.0)
    r = MF.evaluate(np.array([0.0, 0.2, -1.0]), np.array([0.0, 0.3, 1.5]), 0.0,
                    np.array([0.0, -5.0, 1e5]), vx=np.array([0.0, 3.0, 60.0]))
    assert np.all(np.isfinite([r.fx, r.fy, r.mz, r.my, r.mx]))
    assert r.fx[2] == pytest.approx(MF.evaluate(-1.0, 1.5, 0.0, C["FZMAX"], 60.0).fx)  # clipped


def test_vectorised_equals_scalar():
    rng = np.random.default_rng(3)
    k, a, g = rng.uniform(-0.4, 0.4, 20), rng.uniform(-0.3, 0.3, 20), rng.uniform(-.1, .1, 20)
    fz, vx = rng.uniform(500, 8000, 20), rng.uniform(-30, 30, 20)
    r = MF.evaluate(k, a, g, fz, vx)
    for i in range(20):
        s = MF.evaluate(float(k[i]), float(a[i]), float(g[i]), float(fz[i]), float(vx[i]))
        for f in ("fx", "fy", "mx", "my", "mz", "mz0"):
            assert getattr(s, f) == pytest.approx(getattr(r, f)[i], rel=1e-12, abs=1e-9)


# ------------------------------------------------------------ MF 6.1
MF61_EXTRA = """
[OPERATING_CONDITIONS]
INFLPRES = 260000
NOMPRES  = 220000
[LONGITUDINAL_COEFFICIENTS]
PPX1 = -0.35
PPX2 = 0.38
PPX3 = -0.10
PPX4 = 0.06
[LATERAL_COEFFICIENTS]
PKY4 = 2.2
PKY5 = 0.5
PKY6 = -0.9
PKY7 = -0.2
PPY1 = 0.3
PPY2 = -0.2
"""


def mf61(**scaling):
    text = SAMPLE_TIR.read_text().replace("PROPERTY_FILE_FORMAT     ='PAC2002'", "FITTYP = 61")
    return MagicFormula(parse_tir(text + MF61_EXTRA, name="mf61.tir"), scaling=scaling)


def test_mf61_stiffnesses_with_pressure_terms():
    mf = mf61(**NO_SHIFT)
    assert mf.version == "6.1"
    dpi = (260000 - 220000) / 220000
    for fz in (3000.0, 5000.0):
        d = dfz(fz)
        kya = (C["PKY1"] * FZ0 * (1 + 0.3 * dpi)
               * math.sin(2.2 * math.atan(fz / FZ0 / (C["PKY2"] * (1 - 0.2 * dpi)))))
        kx = kx_ref(fz) * (1 - 0.35 * dpi + 0.38 * dpi ** 2)
        dx = (C["PDX1"] + C["PDX2"] * d) * (1 - 0.10 * dpi + 0.06 * dpi ** 2) * fz
        r = mf.evaluate(0.0, 0.0, 0.0, fz)
        assert r.kya == pytest.approx(kya, rel=1e-14)
        assert r.kxk == pytest.approx(kx, rel=1e-14)
        assert r.mux * fz == pytest.approx(dx, rel=1e-14)
        h = 1e-6
        slope = (mf.evaluate(0.0, h, 0.0, fz).fy - mf.evaluate(0.0, -h, 0.0, fz).fy) / (2 * h)
        assert slope == pytest.approx(kya, rel=1e-7)
        # camber stiffness: dFy/dgamma = K_yg0 = Fz (pKy6 + pKy7 dfz) (4.E30)
        k = (mf.evaluate(0.0, 0.0, h, fz).fy - mf.evaluate(0.0, 0.0, -h, fz).fy) / (2 * h)
        assert k == pytest.approx(fz * (-0.9 - 0.2 * d), rel=1e-6)
        assert mf.evaluate(0.0, 0.0, 0.0, fz).fy == 0.0


def test_mf61_degressive_friction_scaling_of_the_vertical_shift():
    # with S_Hy = 0, Fy(0) = S_Vy = Fz (pVy1 + pVy2 dfz) lambda_Vy lambda'_muy where
    # lambda' = 10 l / (1 + 9 l): 0.90909 for l = 0.5, while mu_y scales with l itself
    lo, hi = mf61(LMUY=0.5, LHY=0.0), mf61(LMUY=1.0, LHY=0.0)
    fz = 4500.0
    svy = fz * (C["PVY1"] + C["PVY2"] * dfz(fz))
    assert hi.evaluate(0.0, 0.0, 0.0, fz).fy == pytest.approx(svy, rel=1e-14)  # 139.2 N
    assert lo.evaluate(0.0, 0.0, 0.0, fz).fy == pytest.approx(svy * 5 / 5.5, rel=1e-14)
    assert (lo.evaluate(0.0, 0.3, 0.0, fz).muy / hi.evaluate(0.0, 0.3, 0.0, fz).muy
            == pytest.approx(0.5, rel=1e-14))


@pytest.mark.parametrize("version", ["5.2", "6.1"])
def test_combined_forces_and_aligning_moment_follow_the_equations(version):
    # Combined slip at Fz0, zero camber, from 4.E50-4.E67 and 4.E71-4.E78, built on the pure
    # quantities (Fx0, Fy0, K, mu: checked above).  RVY6 = 1 switches on the kappa-induced
    # side force S_Vyk (0 in the file).  At zero camber MF 5.2's -t (Fy - S_Vyk) and MF 6.1's
    # -t G_yk Fy0(gamma=0) are the same term.
    if version == "5.2":
        mf = MagicFormula(TIR.replace(RVY6=1.0))
    else:
        text = SAMPLE_TIR.read_text().replace("PROPERTY_FILE_FORMAT     ='PAC2002'",
                                              "FITTYP = 61")
        mf = MagicFormula(parse_tir(text + MF61_EXTRA, name="mf61.tir").replace(RVY6=1.0))
    fz = FZ0

    def g(b, c, e, x, shift):
        def f(u):
            return math.cos(c * math.atan(b * u - e * (b * u - math.atan(b * u))))
        return f(x + shift) / f(shift)

    for kap, adeg in ((0.03, 2.0), (-0.08, -5.0), (0.15, 8.0)):
        alp = math.radians(adeg)
        a = math.tan(alp)
        r = mf.evaluate(kap, alp, 0.0, fz, vx=20.0)
        gxa = g(C["RBX1"] * math.cos(math.atan(C["RBX2"] * kap)), C["RCX1"], C["REX1"], a,
                C["RHX1"])
        gyk = g(C["RBY1"] * math.cos(math.atan(C["RBY2"] * (a - C["RBY3"]))), C["RCY1"],
                C["REY1"], kap, C["RHY1"])
        svyk = (r.muy * fz * C["RVY1"] * math.cos(math.atan(C["RVY4"] * a))
                * math.sin(C["RVY5"] * math.atan(1.0 * kap)))
        fx, fy = gxa * r.fx0, gyk * r.fy0 + svyk
        assert (r.gxa, r.gyk) == (pytest.approx(gxa, rel=1e-13), pytest.approx(gyk, rel=1e-13))
        assert r.fx == pytest.approx(fx, rel=1e-13)
        assert r.fy == pytest.approx(fy, rel=1e-13)
        assert abs(svyk) > 1.0  # 1.55, -4.12, 7.61 N: the term is exercised
        # aligning moment: trail and residual moment at the equivalent slip angles
        shy, svy = C["PHY1"], fz * C["PVY1"]
        at, ar = a + C["QHZ1"], a + shy + svy / r.kya
        k2 = (r.kxk / r.kya * kap) ** 2
        at_eq, ar_eq = math.copysign(math.hypot(at, math.sqrt(k2)), at), \
            math.copysign(math.hypot(ar, math.sqrt(k2)), ar)
        bt, ct, dt = C["QBZ1"], C["QCZ1"], fz * C["QDZ1"] * R0 / FZ0
        et = min(C["QEZ1"] * (1 + C["QEZ4"] * 2 / math.pi * math.atan(bt * ct * at)), 1.0)
        t = dt * math.cos(ct * math.atan(bt * at_eq - et * (bt * at_eq - math.atan(bt * at_eq))))
        t *= math.cos(alp)
        bycy = r.kya / (r.muy * fz)
        br = C["QBZ9"] + C["QBZ10"] * bycy
        mzr = fz * R0 * C["QDZ6"] * math.cos(alp) * math.cos(math.atan(br * ar_eq))
        s = R0 * (C["SSZ1"] + C["SSZ2"] * fy / FZ0)
        mz = -t * gyk * r.fy0 + mzr + s * fx
        assert r.trail == pytest.approx(t, rel=1e-12)
        assert r.mz == pytest.approx(mz, rel=1e-12)


def test_reversing_flips_the_aligning_moment_and_keeps_forces_opposing_the_slip():
    alp = math.radians(3.0)
    fwd = MF0.evaluate(0.0, alp, 0.0, FZ0, vx=10.0)
    rev = MF0.evaluate(0.0, alp, 0.0, FZ0, vx=-10.0)
    assert rev.fy == fwd.fy < 0  # tan(alpha) = vy/|vx|: the force opposes vy either way
    assert rev.mz == -fwd.mz and fwd.mz > 0  # the trail lies behind the contact centre
    assert rev.my == -fwd.my
