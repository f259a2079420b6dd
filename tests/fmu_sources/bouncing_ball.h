/* Bouncing ball: h' = v, v' = -g; event indicator h; at h <= 0 falling: v <- -e v. */
#include <float.h>
#ifndef MODEL_SIZES
#define MODEL_SIZES
#define INSTANTIATION_TOKEN "{8b7f1e2a-3c4d-4e5f-9a0b-b0a1c1ba1101}"
#define N_REAL 6
#define N_INT 0
#define N_BOOL 0
#define N_STATES 2
#define N_Z 1
#define N_INPUTS 0
#define CS_SUBSTEPS 10
static const int STATE_VR[2] = {0, 2};
static const int DER_VR[2] = {1, 3};
static const int INPUT_VR[1] = {-1};
enum { H, DER_H, V, DER_V, G, E };

#endif /* MODEL_SIZES */

#ifdef MODEL_FUNCTIONS
static void model_start(Inst *c) { R(H) = 1.0; R(V) = 0.0; R(G) = 9.81; R(E) = 0.7; }
static void model_init(Inst *c) { (void)c; }
static fmi2Status model_eval(Inst *c) {
    R(DER_H) = R(V);
    R(DER_V) = -R(G);
    return fmi2OK;
}
static void model_indicators(Inst *c, double *z) { z[0] = R(H); }
static void model_event(Inst *c, int *changed) {
    *changed = 0;
    if (R(H) <= 0.0 && R(V) < 0.0) {
        R(H) = DBL_MIN; /* just above the ground: no new crossing (as the Reference FMUs) */
        R(V) = -R(E) * R(V);
        *changed = 1;
    }
}
static double model_partial(Inst *c, unsigned u, unsigned k, int *ok) {
    (void)c;
    if (k != H && k != V) { *ok = 0; return 0.0; }
    switch (u) {
    case DER_H: return k == V ? 1.0 : 0.0;
    case DER_V: return 0.0;
    case H: return k == H ? 1.0 : 0.0;
    case V: return k == V ? 1.0 : 0.0;
    default: *ok = 0; return 0.0;
    }
}
static fmi2Status model_check_step(Inst *c, double t, double h) { (void)c; (void)t; (void)h; return fmi2OK; }
#endif /* MODEL_FUNCTIONS */
