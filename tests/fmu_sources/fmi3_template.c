/* A small FMI 3.0 Model Exchange + Co-Simulation FMU around the same model headers as
 * fmi2_template.c (test asset of the cosim FMU import).
 *
 * Value references: Float64 = the model's real index, Int32 = N_REAL + integer index,
 * Boolean = N_REAL + N_INT + boolean index, the independent time = N_REAL + N_INT + N_BOOL.
 *   - ME: as in FMI 2 (event indicators, time events, updateDiscreteStates);
 *   - CS: RK4 sub-steps; state events located by bisection, time events met exactly.
 *     With eventModeUsed and earlyReturnAllowed the step returns early at an event
 *     (eventHandlingNeeded; the event is applied in updateDiscreteStates); otherwise the
 *     event is handled inside the step.  With an intermediate-update callback and
 *     required intermediate variables, the inputs are requested at every RK4 stage.
 *   - FMU state get/set/serialize, directional derivatives.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"

typedef fmi3Status fmi2Status; /* the model headers are written against FMI 2 names */
#define fmi2OK fmi3OK
#define fmi2Warning fmi3Warning
#define fmi2Error fmi3Error

#include "model.h" /* sizes and value references */

#define N_INT_ (N_INT > 0 ? N_INT : 1)
#define N_BOOL_ (N_BOOL > 0 ? N_BOOL : 1)
#define N_Z_ (N_Z > 0 ? N_Z : 1)
#define N_IN_ (N_INPUTS > 0 ? N_INPUTS : 1)
#define VR_INT0 N_REAL
#define VR_BOOL0 (N_REAL + N_INT)
#define VR_TIME (N_REAL + N_INT + N_BOOL)

typedef struct {
    double r[N_REAL];
    int i[N_INT_];
    int b[N_BOOL_];
    double time;
    double next_event_time;
    int terminate;
    int event_pending; /* CS: located event waiting for event mode */
} State;

typedef struct {
    State s;
    int is_cs;
    int logging;
    int mode; /* 0 instantiated, 1 init, 2 event, 3 continuous/step */
    int event_mode_used, early_return_allowed, in_update;
    double uder[N_IN_][3];
    double u_set[N_IN_];
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
    fmi3IntermediateUpdateCallback iu;
    size_t n_required;
    char name[128];
} Inst;

#define R(vr) (c->s.r[(vr)])
#define I(vr) (c->s.i[(vr)])
#define B(vr) (c->s.b[(vr)])

static void logf_(Inst *c, fmi3Status st, const char *cat, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (c->log) c->log(c->env, st, cat, buf);
}

#define MODEL_FUNCTIONS
#include "model.h" /* the model functions */

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String cat[]) {
    (void)n; (void)cat;
    ((Inst *)c)->logging = on;
    return fmi3OK;
}

static void reset_inst(Inst *c) {
    memset(&c->s, 0, sizeof c->s);
    memset(c->uder, 0, sizeof c->uder);
    c->s.next_event_time = INFINITY;
    model_start(c);
    c->mode = 0;
}

static Inst *make(fmi3String name, fmi3String token, fmi3Boolean loggingOn,
                  fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
    if (!token || strcmp(token, INSTANTIATION_TOKEN) != 0) {
        if (log) log(env, fmi3Error, "error", "wrong instantiation token");
        return NULL;
    }
    Inst *c = (Inst *)calloc(1, sizeof(Inst));
    if (!c) return NULL;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "");
    c->logging = loggingOn;
    c->env = env;
    c->log = log;
    reset_inst(c);
    return c;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String res,
                                          fmi3Boolean visible, fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment env,
                                          fmi3LogMessageCallback log) {
    (void)res; (void)visible;
    return make(name, token, loggingOn, env, log);
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String res,
                                         fmi3Boolean visible, fmi3Boolean loggingOn,
                                         fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference required[], size_t nRequired,
                                         fmi3InstanceEnvironment env, fmi3LogMessageCallback log,
                                         fmi3IntermediateUpdateCallback iu) {
    (void)res; (void)visible; (void)required;
    Inst *c = make(name, token, loggingOn, env, log);
    if (!c) return NULL;
    c->is_cs = 1;
    c->event_mode_used = eventModeUsed;
    c->early_return_allowed = earlyReturnAllowed;
    c->iu = iu;
    c->n_required = nRequired;
    return c;
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String name, fmi3String token, fmi3String res,
                                               fmi3Boolean visible, fmi3Boolean loggingOn,
                                               fmi3InstanceEnvironment env,
                                               fmi3LogMessageCallback log,
                                               fmi3ClockUpdateCallback cu,
                                               fmi3LockPreemptionCallback lp,
                                               fmi3UnlockPreemptionCallback up) {
    (void)name; (void)token; (void)res; (void)visible; (void)loggingOn; (void)cu; (void)lp;
    (void)up;
    if (log) log(env, fmi3Error, "error", "Scheduled Execution is not supported");
    return NULL;
}

void fmi3FreeInstance(fmi3Instance c) { free(c); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance c_, fmi3Boolean tolDef, fmi3Float64 tol,
                                       fmi3Float64 start, fmi3Boolean stopDef, fmi3Float64 stop) {
    (void)tolDef; (void)tol; (void)stopDef; (void)stop;
    Inst *c = (Inst *)c_;
    c->s.time = start;
    c->mode = 1;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance c_) {
    Inst *c = (Inst *)c_;
    model_init(c);
    fmi3Status st = model_eval(c);
    c->mode = (!c->is_cs || c->event_mode_used) ? 2 : 3;
    for (int k = 0; k < N_INPUTS; k++) c->u_set[k] = R(INPUT_VR[k]);
    return st;
}

fmi3Status fmi3EnterEventMode(fmi3Instance c) { ((Inst *)c)->mode = 2; return fmi3OK; }
fmi3Status fmi3Terminate(fmi3Instance c) { (void)c; return fmi3OK; }
fmi3Status fmi3Reset(fmi3Instance c) { reset_inst((Inst *)c); return fmi3OK; }

/* ------------------------------------------------------------------ values */
fmi3Status fmi3GetFloat64(fmi3Instance c_, const fmi3ValueReference vr[], size_t n,
                          fmi3Float64 v[], size_t nv) {
    Inst *c = (Inst *)c_;
    (void)nv;
    if (n == 0) return fmi3OK;
    fmi3Status st = model_eval(c);
    if (st > fmi3Warning) return st;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] == VR_TIME) v[k] = c->s.time;
        else if (vr[k] < N_REAL) v[k] = R(vr[k]);
        else return fmi3Error;
    }
    return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance c_, const fmi3ValueReference vr[], size_t n,
                          const fmi3Float64 v[], size_t nv) {
    Inst *c = (Inst *)c_;
    (void)nv;
    for (size_t k = 0; k < n; k++) {
        if (vr[k] >= N_REAL) return fmi3Error;
        R(vr[k]) = v[k];
        if (!c->in_update)
            for (int j = 0; j < N_INPUTS; j++)
                if ((int)vr[k] == INPUT_VR[j]) c->u_set[j] = v[k];
    }
    return fmi3OK;
}

fmi3Status fmi3GetInt32(fmi3Instance c_, const fmi3ValueReference vr[], size_t n, fmi3Int32 v[],
                        size_t nv) {
    Inst *c = (Inst *)c_;
    (void)nv;
    for (size_t k = 0; k < n; k++) {
        if ((int)vr[k] < VR_INT0 || (int)vr[k] >= VR_INT0 + N_INT) return fmi3Error;
        v[k] = I(vr[k] - VR_INT0);
    }
    return fmi3OK;
}

fmi3Status fmi3SetInt32(fmi3Instance c_, const fmi3ValueReference vr[], size_t n,
                        const fmi3Int32 v[], size_t nv) {
    Inst *c = (Inst *)c_;
    (void)nv;
    for (size_t k = 0; k < n; k++) {
        if ((int)vr[k] < VR_INT0 || (int)vr[k] >= VR_INT0 + N_INT) return fmi3Error;
        I(vr[k] - VR_INT0) = v[k];
    }
    return fmi3OK;
}

fmi3Status fmi3GetBoolean(fmi3Instance c_, const fmi3ValueReference vr[], size_t n,
                          fmi3Boolean v[], size_t nv) {
    Inst *c = (Inst *)c_;
    (void)nv;
    model_eval(c);
    for (size_t k = 0; k < n; k++) {
        if ((int)vr[k] < VR_BOOL0 || (int)vr[k] >= VR_BOOL0 + N_BOOL) return fmi3Error;
        v[k] = B(vr[k] - VR_BOOL0) != 0;
    }
    return fmi3OK;
}

fmi3Status fmi3SetBoolean(fmi3Instance c_, const fmi3ValueReference vr[], size_t n,
                          const fmi3Boolean v[], size_t nv) {
    Inst *c = (Inst *)c_;
    (void)nv;
    for (size_t k = 0; k < n; k++) {
        if ((int)vr[k] < VR_BOOL0 || (int)vr[k] >= VR_BOOL0 + N_BOOL) return fmi3Error;
        B(vr[k] - VR_BOOL0) = v[k];
    }
    return fmi3OK;
}

#define NO_VARS(NAME, T)                                                                    \
    fmi3Status NAME(fmi3Instance c, const fmi3ValueReference vr[], size_t n, T v[],        \
                    size_t nv) {                                                           \
        (void)c; (void)vr; (void)v; (void)nv;                                              \
        return n == 0 ? fmi3OK : fmi3Error;                                                \
    }
NO_VARS(fmi3GetFloat32, fmi3Float32)
NO_VARS(fmi3GetInt8, fmi3Int8)
NO_VARS(fmi3GetUInt8, fmi3UInt8)
NO_VARS(fmi3GetInt16, fmi3Int16)
NO_VARS(fmi3GetUInt16, fmi3UInt16)
NO_VARS(fmi3GetUInt32, fmi3UInt32)
NO_VARS(fmi3GetInt64, fmi3Int64)
NO_VARS(fmi3GetUInt64, fmi3UInt64)
NO_VARS(fmi3GetString, fmi3String)
NO_VARS(fmi3SetFloat32, const fmi3Float32)
NO_VARS(fmi3SetInt8, const fmi3Int8)
NO_VARS(fmi3SetUInt8, const fmi3UInt8)
NO_VARS(fmi3SetInt16, const fmi3Int16)
NO_VARS(fmi3SetUInt16, const fmi3UInt16)
NO_VARS(fmi3SetUInt32, const fmi3UInt32)
NO_VARS(fmi3SetInt64, const fmi3Int64)
NO_VARS(fmi3SetUInt64, const fmi3UInt64)
NO_VARS(fmi3SetString, const fmi3String)

fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                         size_t sizes[], fmi3Binary v[], size_t nv) {
    (void)c; (void)vr; (void)sizes; (void)v; (void)nv;
    return n == 0 ? fmi3OK : fmi3Error;
}
fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                         const size_t sizes[], const fmi3Binary v[], size_t nv) {
    (void)c; (void)vr; (void)sizes; (void)v; (void)nv;
    return n == 0 ? fmi3OK : fmi3Error;
}
fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t n, fmi3Clock v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi3OK : fmi3Error;
}
fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                        const fmi3Clock v[]) {
    (void)c; (void)vr; (void)v;
    return n == 0 ? fmi3OK : fmi3Error;
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference vr, size_t *n) {
    (void)c; (void)vr; (void)n;
    return fmi3Error;
}
fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference dep, size_t e1[],
                                       fmi3ValueReference ind[], size_t e2[],
                                       fmi3DependencyKind kinds[], size_t n) {
    (void)c; (void)dep; (void)e1; (void)ind; (void)e2; (void)kinds; (void)n;
    return fmi3Error;
}

/* --------------------------------------------------------------- FMU state */
fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState *st) {
    if (!*st) *st = malloc(sizeof(State));
    if (!*st) return fmi3Error;
    memcpy(*st, &((Inst *)c)->s, sizeof(State));
    return fmi3OK;
}
fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState st) {
    if (!st) return fmi3Error;
    memcpy(&((Inst *)c)->s, st, sizeof(State));
    return fmi3OK;
}
fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState *st) {
    (void)c;
    free(*st);
    *st = NULL;
    return fmi3OK;
}
fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState st, size_t *size) {
    (void)c; (void)st;
    *size = sizeof(State);
    return fmi3OK;
}
fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState st, fmi3Byte b[], size_t size) {
    (void)c;
    if (size < sizeof(State)) return fmi3Error;
    memcpy(b, st, sizeof(State));
    return fmi3OK;
}
fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte b[], size_t size,
                                   fmi3FMUState *st) {
    (void)c;
    if (size < sizeof(State)) return fmi3Error;
    if (!*st) *st = malloc(sizeof(State));
    if (!*st) return fmi3Error;
    memcpy(*st, b, sizeof(State));
    return fmi3OK;
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c_, const fmi3ValueReference u[], size_t nu,
                                        const fmi3ValueReference k[], size_t nk,
                                        const fmi3Float64 seed[], size_t ns,
                                        fmi3Float64 sens[], size_t nsens) {
    (void)ns; (void)nsens;
    Inst *c = (Inst *)c_;
    fmi3Status st = model_eval(c);
    if (st > fmi3Warning) return st;
    for (size_t i = 0; i < nu; i++) {
        double acc = 0.0;
        for (size_t j = 0; j < nk; j++) {
            int ok = 1;
            double p = model_partial(c, u[i], k[j], &ok);
            if (!ok) return fmi3Error;
            acc += p * seed[j];
        }
        sens[i] = acc;
    }
    return fmi3OK;
}
fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference u[], size_t nu,
                                    const fmi3ValueReference k[], size_t nk,
                                    const fmi3Float64 seed[], size_t ns, fmi3Float64 sens[],
                                    size_t nsens) {
    (void)c; (void)u; (void)nu; (void)k; (void)nk; (void)seed; (void)ns; (void)sens; (void)nsens;
    return fmi3Error;
}

/* --------------------------------------------------------- clocks (none) */
fmi3Status fmi3EnterConfigurationMode(fmi3Instance c) { (void)c; return fmi3Error; }
fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) { (void)c; return fmi3Error; }
fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                  fmi3Float64 iv[], fmi3IntervalQualifier q[]) {
    (void)c; (void)vr; (void)n; (void)iv; (void)q;
    return fmi3Error;
}
fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                   fmi3UInt64 cnt[], fmi3UInt64 res[],
                                   fmi3IntervalQualifier q[]) {
    (void)c; (void)vr; (void)n; (void)cnt; (void)res; (void)q;
    return fmi3Error;
}
fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               fmi3Float64 s[]) {
    (void)c; (void)vr; (void)n; (void)s;
    return fmi3Error;
}
fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                fmi3UInt64 cnt[], fmi3UInt64 res[]) {
    (void)c; (void)vr; (void)n; (void)cnt; (void)res;
    return fmi3Error;
}
fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                  const fmi3Float64 iv[]) {
    (void)c; (void)vr; (void)n; (void)iv;
    return fmi3Error;
}
fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                   const fmi3UInt64 cnt[], const fmi3UInt64 res[]) {
    (void)c; (void)vr; (void)n; (void)cnt; (void)res;
    return fmi3Error;
}
fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               const fmi3Float64 s[]) {
    (void)c; (void)vr; (void)n; (void)s;
    return fmi3Error;
}
fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                const fmi3UInt64 cnt[], const fmi3UInt64 res[]) {
    (void)c; (void)vr; (void)n; (void)cnt; (void)res;
    return fmi3Error;
}
fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) { (void)c; return fmi3OK; }
fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference vr, fmi3Float64 t) {
    (void)c; (void)vr; (void)t;
    return fmi3Error;
}

/* ------------------------------------------------------------ event mode */
fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c_, fmi3Boolean *again, fmi3Boolean *term,
                                    fmi3Boolean *nominals, fmi3Boolean *values,
                                    fmi3Boolean *defined, fmi3Float64 *next) {
    Inst *c = (Inst *)c_;
    int changed = 0;
    fmi3Status st = model_eval(c);
    if (st > fmi3Warning) return st;
    model_event(c, &changed);
    c->s.event_pending = 0;
    st = model_eval(c);
    *again = false;
    *term = c->s.terminate != 0;
    *nominals = false;
    *values = changed != 0;
    *defined = isfinite(c->s.next_event_time);
    *next = isfinite(c->s.next_event_time) ? c->s.next_event_time : 0.0;
    return st;
}

/* --------------------------------------------------------- model exchange */
fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) { ((Inst *)c)->mode = 3; return fmi3OK; }

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean noSet, fmi3Boolean *enter,
                                       fmi3Boolean *term) {
    (void)noSet;
    *enter = false;
    *term = ((Inst *)c)->s.terminate != 0;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 t) { ((Inst *)c)->s.time = t; return fmi3OK; }

fmi3Status fmi3SetContinuousStates(fmi3Instance c_, const fmi3Float64 x[], size_t nx) {
    Inst *c = (Inst *)c_;
    if (nx != N_STATES) return fmi3Error;
    for (int k = 0; k < N_STATES; k++) R(STATE_VR[k]) = x[k];
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c_, fmi3Float64 dx[], size_t nx) {
    Inst *c = (Inst *)c_;
    if (nx != N_STATES) return fmi3Error;
    fmi3Status st = model_eval(c);
    for (int k = 0; k < N_STATES; k++) dx[k] = R(DER_VR[k]);
    return st;
}

fmi3Status fmi3GetEventIndicators(fmi3Instance c_, fmi3Float64 z[], size_t nz) {
    Inst *c = (Inst *)c_;
    if (nz != N_Z) return fmi3Error;
    fmi3Status st = model_eval(c);
    if (N_Z > 0) model_indicators(c, z);
    return st;
}

fmi3Status fmi3GetContinuousStates(fmi3Instance c_, fmi3Float64 x[], size_t nx) {
    Inst *c = (Inst *)c_;
    if (nx != N_STATES) return fmi3Error;
    for (int k = 0; k < N_STATES; k++) x[k] = R(STATE_VR[k]);
    return fmi3OK;
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t nx) {
    (void)c;
    for (size_t k = 0; k < nx; k++) x[k] = 1.0;
    return fmi3OK;
}
fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n) { (void)c; *n = N_Z; return fmi3OK; }
fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) { (void)c; *n = N_STATES; return fmi3OK; }

/* ----------------------------------------------------------- co-simulation */
fmi3Status fmi3EnterStepMode(fmi3Instance c) { ((Inst *)c)->mode = 3; return fmi3OK; }

fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                    const fmi3Int32 order[], fmi3Float64 v[], size_t nv) {
    (void)c; (void)vr; (void)n; (void)order; (void)v; (void)nv;
    return fmi3Error;
}

/* inputs at time t: asked from the importer (intermediate update) or held */
static void inputs_at(Inst *c, double t) {
    if (c->iu && c->n_required > 0 && N_INPUTS > 0) {
        fmi3Boolean req = false;
        fmi3Float64 req_t = t;
        c->in_update = 1;
        c->iu(c->env, t, true, true, false, false, &req, &req_t);
        c->in_update = 0;
    } else {
        for (int j = 0; j < N_INPUTS; j++) R(INPUT_VR[j]) = c->u_set[j];
    }
}

static fmi3Status rk4(Inst *c, double t, double h) {
    double x0[N_STATES > 0 ? N_STATES : 1], k[4][N_STATES > 0 ? N_STATES : 1];
    static const double cs[4] = {0.0, 0.5, 0.5, 1.0};
    for (int q = 0; q < N_STATES; q++) x0[q] = R(STATE_VR[q]);
    for (int s = 0; s < 4; s++) {
        for (int q = 0; q < N_STATES; q++)
            R(STATE_VR[q]) = s == 0 ? x0[q] : x0[q] + cs[s] * h * k[s - 1][q];
        c->s.time = t + cs[s] * h;
        inputs_at(c, c->s.time);
        fmi3Status st = model_eval(c);
        if (st > fmi3Warning) return st;
        for (int q = 0; q < N_STATES; q++) k[s][q] = R(DER_VR[q]);
    }
    for (int q = 0; q < N_STATES; q++)
        R(STATE_VR[q]) = x0[q] + h / 6.0 * (k[0][q] + 2 * k[1][q] + 2 * k[2][q] + k[3][q]);
    c->s.time = t + h;
    return model_eval(c);
}

static int crossed(const double *a, const double *b) {
    int cr = 0;
    for (int q = 0; q < N_Z; q++) cr |= (a[q] > 0) != (b[q] > 0);
    return cr;
}

fmi3Status fmi3DoStep(fmi3Instance c_, fmi3Float64 t0, fmi3Float64 H, fmi3Boolean noSet,
                      fmi3Boolean *eventNeeded, fmi3Boolean *term, fmi3Boolean *early,
                      fmi3Float64 *last) {
    (void)noSet;
    Inst *c = (Inst *)c_;
    *eventNeeded = false;
    *term = false;
    *early = false;
    *last = t0;
    fmi3Status st = model_check_step(c, t0, H);
    if (st > fmi3Warning) return st;
    int n = CS_SUBSTEPS;
    double t_end = t0 + H, h = H / n, t = t0;
    c->s.time = t0;
    for (int s = 0; s < n && t < t_end; s++) {
        double t_next = (s == n - 1) ? t_end : t0 + (s + 1) * h;
        if (t_next <= t) continue;
        if (c->s.next_event_time > t && c->s.next_event_time < t_next) t_next = c->s.next_event_time;
        double z0[N_Z_], z1[N_Z_];
        State before = c->s;
        if (N_Z > 0) model_indicators(c, z0);
        st = rk4(c, t, t_next - t);
        if (st > fmi3Warning) return st;
        int event = 0;
        if (N_Z > 0) {
            model_indicators(c, z1);
            if (crossed(z0, z1)) {
                double lo = 0.0, hi = t_next - t;
                for (int it = 0; it < 60; it++) {
                    double mid = 0.5 * (lo + hi);
                    c->s = before;
                    rk4(c, t, mid);
                    model_indicators(c, z1);
                    if (crossed(z0, z1)) hi = mid; else lo = mid;
                }
                c->s = before;
                rk4(c, t, hi);
                t_next = t + hi;
                event = 1;
                s--; /* the rest of this sub-step is taken again */
            }
        }
        if (fabs(t_next - c->s.next_event_time) < 1e-14 * (1.0 + fabs(t_next))) {
            c->s.time = c->s.next_event_time;
            event = 1;
        }
        t = t_next;
        if (event) {
            if (c->event_mode_used && c->early_return_allowed) {
                c->s.event_pending = 1; /* applied in fmi3UpdateDiscreteStates */
                *eventNeeded = true;
                *early = true;
                *last = t;
                for (int j = 0; j < N_INPUTS; j++) R(INPUT_VR[j]) = c->u_set[j];
                return model_eval(c);
            }
            int changed = 0;
            model_event(c, &changed);
            if (c->early_return_allowed) {
                *early = true;
                *last = t;
                for (int j = 0; j < N_INPUTS; j++) R(INPUT_VR[j]) = c->u_set[j];
                return model_eval(c);
            }
        }
        if (c->s.terminate) break;
    }
    c->s.time = t_end;
    *last = t_end;
    *term = c->s.terminate != 0;
    for (int j = 0; j < N_INPUTS; j++) R(INPUT_VR[j]) = c->u_set[j];
    return model_eval(c);
}
