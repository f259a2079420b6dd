/* First-order lag with direct feedthrough: x' = -x + u, y = x + ka u (the subsystem A of
 * tests/system/test_master_algebraic_loop.py), with exact directional derivatives. */
#ifndef MODEL_SIZES
#define MODEL_SIZES
#define INSTANTIATION_TOKEN "{6d3c9b1e-5f2a-4b8c-8d7e-10a0b00c0a01}"
#define N_REAL 5
#define N_INT 0
#define N_BOOL 0
#define N_STATES 1
#define N_Z 0
#define N_INPUTS 1
#define CS_SUBSTEPS 10
static const int STATE_VR[1] = {0};
static const int DER_VR[1] = {1};
static const int INPUT_VR[1] = {2};
enum { X, DER_X, U, Y, KA };

#endif /* MODEL_SIZES */

#ifdef MODEL_FUNCTIONS
static void model_start(Inst *c) { R(X) = 1.0; R(U) = 0.0; R(KA) = 2.0; }
static void model_init(Inst *c) { (void)c; }
static fmi2Status model_eval(Inst *c) {
    R(DER_X) = -R(X) + R(U);
    R(Y) = R(X) + R(KA) * R(U);
    return fmi2OK;
}
static void model_indicators(Inst *c, double *z) { (void)c; (void)z; }
static void model_event(Inst *c, int *changed) { (void)c; *changed = 0; }
static double model_partial(Inst *c, unsigned u, unsigned k, int *ok) {
    if (k != X && k != U) { *ok = 0; return 0.0; }
    switch (u) {
    case DER_X: return k == X ? -1.0 : 1.0;
    case Y: return k == X ? 1.0 : R(KA);
    case X: return k == X ? 1.0 : 0.0;
    default: *ok = 0; return 0.0;
    }
}
static fmi2Status model_check_step(Inst *c, double t, double h) { (void)c; (void)t; (void)h; return fmi2OK; }
#endif /* MODEL_FUNCTIONS */
