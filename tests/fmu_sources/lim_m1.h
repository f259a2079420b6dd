/* LIM two-mass oscillator, mass 1 with the coupling spring (bench/lim.py m1_diagram):
 *   x1' = v1,  m1 v1' = -k1 x1 - c1 v1 - fc,  fc = kc (x1 - x2) + cc (v1 - v2)
 * inputs x2 [m], v2 [m/s] (interpolated from fmi2SetRealInputDerivatives), outputs fc [N]
 * (feedthrough from x2, v2), x1 [m], v1 [m/s]; exact partial derivatives. */
#ifndef MODEL_SIZES
#define MODEL_SIZES
#define INSTANTIATION_TOKEN "{9b1f3c20-7d4e-4a51-8c2b-1a0c0de0a001}"
#define N_REAL 12
#define N_INT 0
#define N_BOOL 0
#define N_STATES 2
#define N_Z 0
#define N_INPUTS 2
#define CS_SUBSTEPS 10
static const int STATE_VR[2] = {0, 2};
static const int DER_VR[2] = {1, 3};
static const int INPUT_VR[2] = {4, 5};
enum { X1, DER_X1, V1, DER_V1, X2, V2, FC, M1, K1, C1, KC, CC };

#endif /* MODEL_SIZES */

#ifdef MODEL_FUNCTIONS
static void model_start(Inst *c) {
    R(X1) = 0.0; R(V1) = 100.0; R(X2) = 0.0; R(V2) = 0.0;
    R(M1) = 1.0; R(K1) = 10.0; R(C1) = 0.0; R(KC) = 100.0; R(CC) = 0.0;
}
static void model_init(Inst *c) { (void)c; }
static fmi2Status model_eval(Inst *c) {
    R(FC) = R(KC) * (R(X1) - R(X2)) + R(CC) * (R(V1) - R(V2));
    R(DER_X1) = R(V1);
    R(DER_V1) = -R(K1) / R(M1) * R(X1) + -R(C1) / R(M1) * R(V1) + 1.0 / R(M1) * -R(FC);
    return fmi2OK;
}
static void model_indicators(Inst *c, double *z) { (void)c; (void)z; }
static void model_event(Inst *c, int *changed) { (void)c; *changed = 0; }
static double model_partial(Inst *c, unsigned u, unsigned k, int *ok) {
    if (u == FC) {
        switch (k) {
        case X1: return R(KC);
        case V1: return R(CC);
        case X2: return -R(KC);
        case V2: return -R(CC);
        }
    }
    *ok = 0;
    return 0.0;
}
static fmi2Status model_check_step(Inst *c, double t, double h) { (void)c; (void)t; (void)h; return fmi2OK; }
#endif /* MODEL_FUNCTIONS */
