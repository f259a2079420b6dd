/* LIM two-mass oscillator, mass 2 that asks to terminate at t = 0.25 s (bench/lim.py m2_diagram): x2' = v2,
 * m2 v2' = -k2 x2 - c2 v2 + fc; input fc [N] (interpolated from
 * fmi2SetRealInputDerivatives), outputs x2 [m], v2 [m/s] (no feedthrough). */
#ifndef MODEL_SIZES
#define MODEL_SIZES
#define INSTANTIATION_TOKEN "{9b1f3c20-7d4e-4a51-8c2b-1a0c0de0a003}"
#define N_REAL 8
#define N_INT 0
#define N_BOOL 0
#define N_STATES 2
#define N_Z 0
#define N_INPUTS 1
#define CS_SUBSTEPS 10
static const int STATE_VR[2] = {0, 2};
static const int DER_VR[2] = {1, 3};
static const int INPUT_VR[1] = {4};
enum { X2, DER_X2, V2, DER_V2, FC, M2, K2, C2 };

#endif /* MODEL_SIZES */

#ifdef MODEL_FUNCTIONS
static void model_start(Inst *c) {
    R(X2) = 0.0; R(V2) = -100.0; R(FC) = 0.0; R(M2) = 1.0; R(K2) = 1000.0; R(C2) = 0.0;
}
static void model_init(Inst *c) { (void)c; }
static fmi2Status model_eval(Inst *c) {
    R(DER_X2) = R(V2);
    R(DER_V2) = -R(K2) / R(M2) * R(X2) + -R(C2) / R(M2) * R(V2) + 1.0 / R(M2) * R(FC);
    return fmi2OK;
}
static void model_indicators(Inst *c, double *z) { (void)c; (void)z; }
static void model_event(Inst *c, int *changed) { (void)c; *changed = 0; }
static double model_partial(Inst *c, unsigned u, unsigned k, int *ok) {
    (void)c; (void)u; (void)k;
    *ok = 0;
    return 0.0;
}
/* terminateSimulation at T_STOP: the step starting there is discarded with fmi2Terminated */
#define T_STOP 0.25
static fmi2Status model_check_step(Inst *c, double t, double h) {
    (void)h;
    if (t >= T_STOP - 1e-12) { c->s.terminate = 1; return fmi2Discard; }
    return fmi2OK;
}
#endif /* MODEL_FUNCTIONS */
