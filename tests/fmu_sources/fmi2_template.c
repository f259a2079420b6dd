/* A small FMI 2.0 Model Exchange + Co-Simulation FMU around a model header.
 *
 * Test asset of the cosim FMU import (tests/fmu_builders.py builds it with gcc and the
 * FMI headers shipped in fmpy).  The model header "model.h" defines the sizes, the
 * value references and the model functions (see oscillator.h); this file implements
 * the complete FMI 2.0 function set on top of them:
 *   - ME: time, states, derivatives, event indicators, event iteration, time events;
 *   - CS: fixed RK4 sub-steps per doStep, inputs interpolated from the derivatives set
 *     with fmi2SetRealInputDerivatives (order 1..3), state events located by
 *     bisection inside a sub-step, time events met exactly;
 *   - FMU state get/set/serialize, directional derivatives (from model_partial).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "model.h" /* sizes and value references */

#define N_INT_ (N_INT > 0 ? N_INT : 1)
#define N_BOOL_ (N_BOOL > 0 ? N_BOOL : 1)
#define N_Z_ (N_Z > 0 ? N_Z : 1)
#define N_IN_ (N_INPUTS > 0 ? N_INPUTS : 1)

typedef struct {
    double r[N_REAL];
    int i[N_INT_];
    int b[N_BOOL_];
    double time;
    double next_event_time; /* INFINITY: none */
    int terminate;
} State;

typedef struct {
    State s;
    int is_cs;
    int logging;
    int mode; /* 0 instantiated, 1 initialization, 2 event, 3 continuous/step, 4 error */
    double uder[N_IN_][3]; /* CS input derivatives of order 1..3 */
    double u_set[N_IN_];
    fmi2CallbackFunctions cb;
    char name[128];
} Inst;

#define R(vr) (c->s.r[(vr)])
#define I(vr) (c->s.i[(vr)])
#define B(vr) (c->s.b[(vr)])

static void logf_(Inst *c, fmi2Status st, const char *cat, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (c->cb.logger) c->cb.logger(c->cb.componentEnvironment, c->name, st, cat, "%s", buf);
}

#define MODEL_FUNCTIONS
#include "model.h" /* the model functions */

/* ------------------------------------------------------------------ common */
const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
    (void)n; (void)cat;
    ((Inst *)c)->logging = on;
    return fmi2OK;
}

static void reset_inst(Inst *c) {
    memset(&c->s, 0, sizeof c->s);
    memset(c->uder, 0, sizeof c->uder);
    c->s.next_event_time = INFINITY;
    model_start(c);
    c->mode = 0;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String res,
                              const fmi2CallbackFunctions *f, fmi2Boolean visible,
                              fmi2Boolean loggingOn) {
    (void)res; (void)visible;
    if (!guid || strcmp(guid, INSTANTIATION_TOKEN) != 0) {
        if (f && f->logger) f->logger(f->componentEnvironment, name, fmi2Error, "error",
                                      "wrong guid %s", guid ? guid : "(null)");
        return NULL;
    }
    Inst *c = (Inst *)calloc(1, sizeof(Inst));
    if (!c) return NULL;
    if (f) c->cb = *f;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "");
    c->is_cs = type == fmi2CoSimulation;
    c->logging = loggingOn;
    reset_inst(c);
    return c;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c_, fmi2Boolean tolDef, fmi2Real tol,
                               fmi2Real start, fmi2Boolean stopDef, fmi2Real stop) {
    (void)tolDef; (void)tol; (void)stopDef; (void)stop;
    ((Inst *)c_)->s.time = start;
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c_) {
    ((Inst *)c_)->mode = 1;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c_) {
    Inst *c = (Inst *)c_;
    model_init(c);
    fmi2Status st = model_eval(c);
    c->mode = c->is_cs ? 3 : 2;
    for (int k = 0; k < N_INPUTS; k++) c->u_set[k] = R(INPUT_VR[k]);
    return st;
}

fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
fmi2Status fmi2Reset(fmi2Component c) { reset_inst((Inst *)c); return fmi2OK; }

/* ------------------------------------------------------------------ values */
fmi2Status fmi2GetReal(fmi2Component c_, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
    Inst *c = (Inst *)c_;
    if (n == 0) return fmi2OK;
    fmi2Status st = model_eval(c);
    if (st > fmi2Warning) return st;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= N_REAL) return fmi2Error;
        v[k] = R(vr[k]);
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c_, const fmi2ValueReference vr[], size_t n,
                       const fmi2Real v[]) {
    Inst *c = (Inst *)c_;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= N_REAL) return fmi2Error;
        R(vr[k]) = v[k];
        for (int j = 0; j < N_INPUTS; j++)
            if ((int)vr[k] == INPUT_VR[j]) c->u_set[j] = v[k];
    }
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component c_, const fmi2ValueReference vr[], size_t n,
                          fmi2Integer v[]) {
    Inst *c = (Inst *)c_;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= N_INT) return fmi2Error;
        v[k] = I(vr[k]);
    }
    return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component c_, const fmi2ValueReference vr[], size_t n,
                          const fmi2Integer v[]) {
    Inst *c = (Inst *)c_;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= N_INT) return fmi2Error;
        I(vr[k]) = v[k];
    }
    return fmi2OK;
}

fmi2Status fmi2GetBoolean(fmi2Component c_, const fmi2ValueReference vr[], size_t n,
                          fmi2Boolean v[]) {
    Inst *c = (Inst *)c_;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= N_BOOL) return fmi2Error;
        v[k] = B(vr[k]);
    }
    return fmi2OK;
}

fmi2Status fmi2SetBoolean(fmi2Component c_, const fmi2ValueReference vr[], size_t n,
                          const fmi2Boolean v[]) {
    Inst *c = (Inst *)c_;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= N_BOOL) return fmi2Error;
        B(vr[k]) = v[k];
    }
    return fmi2OK;
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         fmi2String v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                         const fmi2String v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi2OK : fmi2Error;
}

/* --------------------------------------------------------------- FMU state */
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *st) {
    if (!*st) *st = malloc(sizeof(State));
    if (!*st) return fmi2Error;
    memcpy(*st, &((Inst *)c)->s, sizeof(State));
    return fmi2OK;
}
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate st) {
    if (!st) return fmi2Error;
    memcpy(&((Inst *)c)->s, st, sizeof(State));
    return fmi2OK;
}
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *st) {
    (void)c;
    free(*st);
    *st = NULL;
    return fmi2OK;
}
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate st, size_t *size) {
    (void)c; (void)st;
    *size = sizeof(State);
    return fmi2OK;
}
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate st, fmi2Byte b[], size_t size) {
    (void)c;
    if (size < sizeof(State)) return fmi2Error;
    memcpy(b, st, sizeof(State));
    return fmi2OK;
}
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t size,
                                   fmi2FMUstate *st) {
    (void)c;
    if (size < sizeof(State)) return fmi2Error;
    if (!*st) *st = malloc(sizeof(State));
    if (!*st) return fmi2Error;
    memcpy(*st, b, sizeof(State));
    return fmi2OK;
}

/* ------------------------------------------------------ partial derivatives */
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c_, const fmi2ValueReference u[], size_t nu,
                                        const fmi2ValueReference z[], size_t nz,
                                        const fmi2Real dv[], fmi2Real dz[]) {
    Inst *c = (Inst *)c_;
    fmi2Status st = model_eval(c);
    if (st > fmi2Warning) return st;
    for (size_t i = 0; i < nu; i++) {
        double acc = 0.0;
        for (size_t j = 0; j < nz; j++) {
            int ok = 1;
            double p = model_partial(c, u[i], z[j], &ok);
            if (!ok) {
                logf_(c, fmi2Error, "error", "no partial derivative d[%u]/d[%u]",
                      (unsigned)u[i], (unsigned)z[j]);
                return fmi2Error;
            }
            acc += p * dv[j];
        }
        dz[i] = acc;
    }
    return fmi2OK;
}

/* --------------------------------------------------------- model exchange */
fmi2Status fmi2EnterEventMode(fmi2Component c) { ((Inst *)c)->mode = 2; return fmi2OK; }

fmi2Status fmi2NewDiscreteStates(fmi2Component c_, fmi2EventInfo *info) {
    Inst *c = (Inst *)c_;
    int changed = 0;
    fmi2Status st = model_eval(c);
    if (st > fmi2Warning) return st;
    model_event(c, &changed);
    st = model_eval(c);
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = c->s.terminate ? fmi2True : fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = changed ? fmi2True : fmi2False;
    info->nextEventTimeDefined = isfinite(c->s.next_event_time) ? fmi2True : fmi2False;
    info->nextEventTime = isfinite(c->s.next_event_time) ? c->s.next_event_time : 0.0;
    return st;
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { ((Inst *)c)->mode = 3; return fmi2OK; }

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSet, fmi2Boolean *enter,
                                       fmi2Boolean *term) {
    (void)noSet;
    *enter = fmi2False;
    *term = ((Inst *)c)->s.terminate ? fmi2True : fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) { ((Inst *)c)->s.time = t; return fmi2OK; }

fmi2Status fmi2SetContinuousStates(fmi2Component c_, const fmi2Real x[], size_t nx) {
    Inst *c = (Inst *)c_;
    if (nx != N_STATES) return fmi2Error;
    for (int k = 0; k < N_STATES; k++) R(STATE_VR[k]) = x[k];
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c_, fmi2Real dx[], size_t nx) {
    Inst *c = (Inst *)c_;
    if (nx != N_STATES) return fmi2Error;
    fmi2Status st = model_eval(c);
    for (int k = 0; k < N_STATES; k++) dx[k] = R(DER_VR[k]);
    return st;
}

fmi2Status fmi2GetEventIndicators(fmi2Component c_, fmi2Real z[], size_t nz) {
    Inst *c = (Inst *)c_;
    if (nz != N_Z) return fmi2Error;
    fmi2Status st = model_eval(c);
    if (N_Z > 0) model_indicators(c, z);
    return st;
}

fmi2Status fmi2GetContinuousStates(fmi2Component c_, fmi2Real x[], size_t nx) {
    Inst *c = (Inst *)c_;
    if (nx != N_STATES) return fmi2Error;
    for (int k = 0; k < N_STATES; k++) x[k] = R(STATE_VR[k]);
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    (void)c;
    for (size_t k = 0; k < nx; k++) x[k] = 1.0;
    return fmi2OK;
}

/* ----------------------------------------------------------- co-simulation */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c_, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], const fmi2Real v[]) {
    Inst *c = (Inst *)c_;
    for (size_t k = 0; k < n; k++) {
        int j = -1;
        for (int q = 0; q < N_INPUTS; q++)
            if ((int)vr[k] == INPUT_VR[q]) j = q;
        if (j < 0 || order[k] < 1 || order[k] > 3) {
            logf_(c, fmi2Error, "error", "input derivative of vr %u order %d not supported",
                  (unsigned)vr[k], (int)order[k]);
            return fmi2Error;
        }
        c->uder[j][order[k] - 1] = v[k];
    }
    return fmi2OK;
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], fmi2Real v[]) {
    (void)c; (void)vr; (void)order;
    for (size_t k = 0; k < n; k++) v[k] = 0.0;
    return fmi2Error;
}

static void set_inputs_at(Inst *c, double t0, double t) {
    double tau = t - t0;
    for (int j = 0; j < N_INPUTS; j++)
        R(INPUT_VR[j]) = c->u_set[j] + c->uder[j][0] * tau + c->uder[j][1] * tau * tau / 2.0 +
                         c->uder[j][2] * tau * tau * tau / 6.0;
}

/* one RK4 step of the states from (t, x) over h, inputs interpolated from t0 */
static fmi2Status rk4(Inst *c, double t0, double t, double h) {
    double x0[N_STATES > 0 ? N_STATES : 1], k[4][N_STATES > 0 ? N_STATES : 1];
    static const double cs[4] = {0.0, 0.5, 0.5, 1.0};
    for (int q = 0; q < N_STATES; q++) x0[q] = R(STATE_VR[q]);
    for (int s = 0; s < 4; s++) {
        for (int q = 0; q < N_STATES; q++)
            R(STATE_VR[q]) = s == 0 ? x0[q] : x0[q] + cs[s] * h * k[s - 1][q];
        c->s.time = t + cs[s] * h;
        set_inputs_at(c, t0, c->s.time);
        fmi2Status st = model_eval(c);
        if (st > fmi2Warning) return st;
        for (int q = 0; q < N_STATES; q++) k[s][q] = R(DER_VR[q]);
    }
    for (int q = 0; q < N_STATES; q++)
        R(STATE_VR[q]) = x0[q] + h / 6.0 * (k[0][q] + 2 * k[1][q] + 2 * k[2][q] + k[3][q]);
    c->s.time = t + h;
    set_inputs_at(c, t0, c->s.time);
    return model_eval(c);
}

fmi2Status fmi2DoStep(fmi2Component c_, fmi2Real t0, fmi2Real H, fmi2Boolean noSet) {
    (void)noSet;
    Inst *c = (Inst *)c_;
    fmi2Status st = model_check_step(c, t0, H);
    if (st > fmi2Warning) return st;
    int n = CS_SUBSTEPS;
    double t_end = t0 + H, h = H / n;
    double t = t0;
    for (int s = 0; s < n && t < t_end; s++) {
        double t_next = (s == n - 1) ? t_end : t0 + (s + 1) * h;
        /* time event inside the sub-step: stop there */
        if (c->s.next_event_time > t && c->s.next_event_time < t_next) t_next = c->s.next_event_time;
        double z0[N_Z_], z1[N_Z_];
        State before = c->s;
        if (N_Z > 0) model_indicators(c, z0);
        st = rk4(c, t0, t, t_next - t);
        if (st > fmi2Warning) return st;
        if (N_Z > 0) {
            model_indicators(c, z1);
            int crossed = 0;
            for (int q = 0; q < N_Z; q++) crossed |= (z0[q] > 0) != (z1[q] > 0);
            if (crossed) { /* bisection on the sub-step length */
                double lo = 0.0, hi = t_next - t;
                for (int it = 0; it < 60; it++) {
                    double mid = 0.5 * (lo + hi);
                    c->s = before;
                    rk4(c, t0, t, mid);
                    model_indicators(c, z1);
                    int cr = 0;
                    for (int q = 0; q < N_Z; q++) cr |= (z0[q] > 0) != (z1[q] > 0);
                    if (cr) hi = mid; else lo = mid;
                }
                c->s = before;
                rk4(c, t0, t, hi);
                t_next = t + hi;
                int changed = 0;
                model_event(c, &changed);
                s--; /* the rest of this sub-step is taken again */
            }
        }
        if (fabs(t_next - c->s.next_event_time) < 1e-14 * (1.0 + fabs(t_next))) {
            int changed = 0;
            c->s.time = c->s.next_event_time;
            model_event(c, &changed);
        }
        t = t_next;
        if (c->s.terminate) break;
    }
    c->s.time = t_end;
    for (int j = 0; j < N_INPUTS; j++) R(INPUT_VR[j]) = c->u_set[j];
    memset(c->uder, 0, sizeof c->uder);
    return model_eval(c);
}

fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }
fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v) {
    (void)c; (void)s; (void)v;
    return fmi2Discard;
}
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v) {
    if (s != fmi2LastSuccessfulTime) return fmi2Discard;
    *v = ((Inst *)c)->s.time;
    return fmi2OK;
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v) {
    (void)c; (void)s; (void)v;
    return fmi2Discard;
}
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v) {
    if (s != fmi2Terminated) return fmi2Discard;
    *v = ((Inst *)c)->s.terminate;
    return fmi2OK;
}
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v) {
    (void)c; (void)s; (void)v;
    return fmi2Discard;
}
