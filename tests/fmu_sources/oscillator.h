/* Forced mass-spring-damper with a step force switched on by a time event.
 *   x' = v,  m v' = F + F_ext(t) - k x - c v,  F_ext = F_step for t >= t_step (time event)
 * outputs x [m], v [m/s], a [m/s2] (feedthrough from F), x_mm [mm], phase (Integer),
 * stepped (Boolean); exact partial derivatives (fmi2GetDirectionalDerivative). */
#ifndef MODEL_SIZES
#define MODEL_SIZES
#define INSTANTIATION_TOKEN "{2f1c6a52-4a8e-4d1b-9a7e-0c05c1a7ed01}"
#define N_REAL 12
#define N_INT 1
#define N_BOOL 1
#define N_STATES 2
#define N_Z 0
#define N_INPUTS 1
#define CS_SUBSTEPS 10
static const int STATE_VR[2] = {0, 2};
static const int DER_VR[2] = {1, 3};
static const int INPUT_VR[1] = {4};
enum { X, DER_X, V, DER_V, F, M, K, C, T_STEP, F_STEP, A, X_MM };

#endif /* MODEL_SIZES */

#ifdef MODEL_FUNCTIONS
static void model_start(Inst *c) {
    R(X) = 0.1; R(V) = 0.0; R(F) = 0.0; R(M) = 1.0; R(K) = 40.0; R(C) = 0.4;
    R(T_STEP) = 0.5; R(F_STEP) = 2.0; I(0) = 0; B(0) = 0;
}
static void model_init(Inst *c) {
    I(0) = c->s.time >= R(T_STEP) ? 1 : 0;
    c->s.next_event_time = I(0) ? INFINITY : R(T_STEP);
}
static fmi2Status model_eval(Inst *c) {
    if (R(M) <= 0) {
        logf_(c, fmi2Error, "error", "mass m = %g must be positive", R(M));
        return fmi2Error;
    }
    double fext = I(0) ? R(F_STEP) : 0.0;
    R(DER_X) = R(V);
    R(DER_V) = (R(F) + fext - R(K) * R(X) - R(C) * R(V)) / R(M);
    R(A) = R(DER_V);
    R(X_MM) = 1000.0 * R(X);
    B(0) = I(0) != 0;
    return fmi2OK;
}
static void model_indicators(Inst *c, double *z) { (void)c; (void)z; }
static void model_event(Inst *c, int *changed) {
    *changed = 0;
    if (I(0) == 0 && c->s.time >= R(T_STEP) - 1e-12) {
        I(0) = 1;
        c->s.next_event_time = INFINITY;
    }
}
static double model_partial(Inst *c, unsigned u, unsigned k, int *ok) {
    int j = k == X ? 0 : k == V ? 1 : k == F ? 2 : -1;
    if (j < 0) { *ok = 0; return 0.0; }
    double acc[3] = {-R(K) / R(M), -R(C) / R(M), 1.0 / R(M)};
    switch (u) {
    case DER_X: return j == 1 ? 1.0 : 0.0;
    case DER_V: case A: return acc[j];
    case X: return j == 0 ? 1.0 : 0.0;
    case V: return j == 1 ? 1.0 : 0.0;
    case X_MM: return j == 0 ? 1000.0 : 0.0;
    default: *ok = 0; return 0.0;
    }
}
static fmi2Status model_check_step(Inst *c, double t, double h) { (void)c; (void)t; (void)h; return fmi2OK; }
#endif /* MODEL_FUNCTIONS */
