/* An integrator y = x, x' = u that misbehaves on purpose from t >= t_fault:
 * mode 1 returns fmi2Error from doStep (with a log message), mode 2 hangs inside doStep,
 * mode 3 aborts the process, mode 4 writes through a null pointer; and an input above
 * u_max makes every evaluation return fmi2Error. */
#include <signal.h>
#ifndef MODEL_SIZES
#define MODEL_SIZES
#define INSTANTIATION_TOKEN "{f0a1b2c3-d4e5-4f60-8a7b-fa017f0a1701}"
#define N_REAL 6
#define N_INT 1
#define N_BOOL 0
#define N_STATES 1
#define N_Z 0
#define N_INPUTS 1
#define CS_SUBSTEPS 2
static const int STATE_VR[1] = {0};
static const int DER_VR[1] = {1};
static const int INPUT_VR[1] = {2};
enum { X, DER_X, U, Y, T_FAULT, U_MAX };

#endif /* MODEL_SIZES */

#ifdef MODEL_FUNCTIONS
static void model_start(Inst *c) { R(X) = 0.0; R(U) = 0.0; R(T_FAULT) = 0.05; R(U_MAX) = 100.0; I(0) = 0; }
static void model_init(Inst *c) { (void)c; }
static fmi2Status model_eval(Inst *c) {
    if (R(U) > R(U_MAX)) {
        logf_(c, fmi2Error, "error", "input u = %g exceeds u_max = %g", R(U), R(U_MAX));
        return fmi2Error;
    }
    R(DER_X) = R(U);
    R(Y) = R(X);
    return fmi2OK;
}
static void model_indicators(Inst *c, double *z) { (void)c; (void)z; }
static void model_event(Inst *c, int *changed) { (void)c; *changed = 0; }
static double model_partial(Inst *c, unsigned u, unsigned k, int *ok) { (void)c; (void)u; (void)k; *ok = 0; return 0.0; }
static fmi2Status model_check_step(Inst *c, double t, double h) {
    (void)h;
    if (t < R(T_FAULT) - 1e-12 || I(0) == 0) return fmi2OK;
    if (I(0) == 1) {
        logf_(c, fmi2Error, "error", "fault injected at t = %g s (mode 1)", t);
        return fmi2Error;
    }
    if (I(0) == 2) {
        volatile int spin = 1;
        while (spin) { }
    }
    if (I(0) == 3) abort();
    if (I(0) == 4) { volatile int *p = 0; *p = 1; }
    return fmi2OK;
}
#endif /* MODEL_FUNCTIONS */
