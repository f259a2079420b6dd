/* A lag that starts at steady state from its input: x' = (K u - x) / T, y = x + D u,
 * x(0) = K u(0) computed in Initialization Mode (so y(0) depends on u(0) even with D = 0).
 * The FMU of tests/unit/fmus/test_init_inputs.py (model description written by the test). */
#ifndef MODEL_SIZES
#define MODEL_SIZES
#define INSTANTIATION_TOKEN "{0b1d7a2e-3c4f-4e5a-9b6c-7d8e9f0a1b21}"
#define N_REAL 7
#define N_INT 0
#define N_BOOL 0
#define N_STATES 1
#define N_Z 0
#define N_INPUTS 1
#define CS_SUBSTEPS 20
static const int STATE_VR[1] = {0};
static const int DER_VR[1] = {1};
static const int INPUT_VR[1] = {2};
enum { X, DER_X, U, Y, K, T, D };

#endif /* MODEL_SIZES */

#ifdef MODEL_FUNCTIONS
static void model_start(Inst *c) { R(X) = 0.0; R(U) = 0.0; R(K) = 1.0; R(T) = 0.5; R(D) = 0.0; }
static void model_init(Inst *c) { R(X) = R(K) * R(U); }
static fmi2Status model_eval(Inst *c) {
    if (c->mode <= 1) R(X) = R(K) * R(U); /* Initialization Mode: steady state */
    R(DER_X) = (R(K) * R(U) - R(X)) / R(T);
    R(Y) = R(X) + R(D) * R(U);
    return fmi2OK;
}
static void model_indicators(Inst *c, double *z) { (void)c; (void)z; }
static void model_event(Inst *c, int *changed) { (void)c; *changed = 0; }
static double model_partial(Inst *c, unsigned u, unsigned k, int *ok) {
    (void)c; (void)u; (void)k; *ok = 0; return 0.0;
}
static fmi2Status model_check_step(Inst *c, double t, double h) { (void)c; (void)t; (void)h; return fmi2OK; }
#endif /* MODEL_FUNCTIONS */
