/* FMI 2.0 wrapper of a cosim generated-C model (fmus/cgen/templates/fmi2.c).
 *
 * Model Exchange and Co-Simulation over the model core in model.h: Real variables through a
 * value-reference table, FMU state get/set/serialize (a copy of the flat ModelState), time
 * events for sampled blocks in Model Exchange, a fixed-step internal integrator in
 * Co-Simulation that follows the input derivatives (canInterpolateInputs, up to order 3),
 * directional derivatives from the tangent program (cosim/codegen/tangent.py).  No Python, no global mutable state.
 */
#include "fmi2Functions.h"
#include "model.h"

typedef struct {
    Model m;
    fmi2Type type;
    Mode mode;
    char name[128];
    fmi2CallbackFunctions cb;
    int logging;
} Instance;

static void logmsg(Instance *c, fmi2Status status, const char *category, const char *msg) {
    if (c && c->cb.logger) c->cb.logger(c->cb.componentEnvironment, c->name, status, category, "%s", msg);
}

/* report and clear a failure of the model core */
static fmi2Status check(Instance *c, const char *fn) {
    char buf[700];
    if (!c->m.error) return fmi2OK;
    snprintf(buf, sizeof buf, "%s: %s", fn, c->m.error);
    logmsg(c, fmi2Error, "logStatusError", buf);
    c->m.error = NULL;
    c->mode = MODE_ERROR;
    return fmi2Error;
}

static fmi2Status bad_call(Instance *c, const char *fn, const char *why) {
    char buf[300];
    snprintf(buf, sizeof buf, "%s: %s", fn, why);
    logmsg(c, fmi2Error, "logStatusError", buf);
    return fmi2Error;
}

/* ---------------------------------------------------- input interpolation (FMI 2) */
/* FMI 2 canInterpolateInputs: the input at t is the Taylor polynomial of the derivatives set
 * with fmi2SetRealInputDerivatives, u(t) = u0 + d1 tau + d2 tau^2/2 + d3 tau^3/6, tau = t - t0 */
static void cosim_poly_inputs(Model *M, double t) {
    ModelState *S = &M->st;
    double tau = t - S->du_t0;
    int i;
    for (i = 0; i < NIN; i++) {
        const double *d = S->du[i];
        S->s[COSIM_IN_OFF[i]] = S->u_start[i] + tau * (d[0] + tau * (d[1] / 2.0 + tau * d[2] / 6.0));
    }
    S->dirty = 1;
    (void)tau;
}

/* the index of the input element stored at signal offset off (-1 if it is not an input) */
static int cosim_input_index(size_t off) {
    int i;
    for (i = 0; i < NIN; i++)
        if ((size_t)COSIM_IN_OFF[i] == off) return i;
    (void)off;
    return -1;
}

/* Start of a step with interpolated inputs: the values set now are the polynomial's base. */
static void cosim_begin_interpolation(Model *M) {
    ModelState *S = &M->st;
    int i;
    for (i = 0; i < NIN; i++) S->u_start[i] = S->s[COSIM_IN_OFF[i]];
    S->du_t0 = (double)S->ticks * 1e-9;
}

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
    (void)n; (void)cat;
    if (!c) return fmi2Error;
    ((Instance *)c)->logging = on;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                              fmi2Boolean loggingOn) {
    Instance *c;
    (void)resources; (void)visible;
    if (!guid || strcmp(guid, COSIM_TOKEN) != 0) {
        if (functions && functions->logger)
            functions->logger(functions->componentEnvironment, name ? name : "?", fmi2Error,
                              "logStatusError", "fmi2Instantiate: GUID %s does not match %s",
                              guid ? guid : "(null)", COSIM_TOKEN);
        return NULL;
    }
#if !defined(COSIM_HAS_ME)
    if (type == fmi2ModelExchange) return NULL;
#endif
#if !defined(COSIM_HAS_CS)
    if (type == fmi2CoSimulation) return NULL;
#endif
    c = (Instance *)calloc(1, sizeof(Instance));
    if (!c) return NULL;
    cosim_reset(&c->m);
    c->type = type;
    c->mode = MODE_INSTANTIATED;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "");
    if (functions) c->cb = *functions;
    c->logging = loggingOn;
    return c;
}

void fmi2FreeInstance(fmi2Component c) { free(c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDef, fmi2Real tol, fmi2Real start,
                               fmi2Boolean stopDef, fmi2Real stop) {
    Instance *m = (Instance *)c;
    (void)tolDef; (void)tol; (void)stopDef; (void)stop;
    if (m->mode != MODE_INSTANTIATED) return bad_call(m, "fmi2SetupExperiment", "not after instantiation");
    cosim_set_start(&m->m, start);
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
    Instance *m = (Instance *)c;
    if (m->mode != MODE_INSTANTIATED) return bad_call(m, "fmi2EnterInitializationMode", "wrong state");
    m->mode = MODE_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
    Instance *m = (Instance *)c;
    if (m->mode != MODE_INIT) return bad_call(m, "fmi2ExitInitializationMode", "not in initialization mode");
    m->mode = cosim_exit_initialization(&m->m, m->type == fmi2CoSimulation);
    return check(m, "fmi2ExitInitializationMode");
}

fmi2Status fmi2Terminate(fmi2Component c) {
    ((Instance *)c)->mode = MODE_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c) {
    Instance *m = (Instance *)c;
    cosim_reset(&m->m);
    m->mode = MODE_INSTANTIATED;
    return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real value[]) {
    Instance *m = (Instance *)c;
    size_t i, size;
    int kind, derivs_done = 0;
    if (n == 0) return fmi2OK;
    cosim_ensure_outputs(&m->m);
    for (i = 0; i < n; i++) {
        double *ptr = cosim_var_ptr(&m->m, vr[i], &size, &kind);
        if (!ptr) return bad_call(m, "fmi2GetReal", "unknown value reference");
        if (kind == VK_DER && !derivs_done) {
            cosim_derivatives(&m->m);
            derivs_done = 1;
        }
        value[i] = *ptr;
    }
    return check(m, "fmi2GetReal");
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real value[]) {
    Instance *m = (Instance *)c;
    size_t i, size;
    int kind;
    for (i = 0; i < n; i++) {
        double *ptr = cosim_var_ptr(&m->m, vr[i], &size, &kind);
        if (!ptr) return bad_call(m, "fmi2SetReal", "unknown value reference");
        if (kind == VK_PARAM || kind == VK_INPUT ||
            (kind == VK_STATE && (m->mode == MODE_INSTANTIATED || m->mode == MODE_INIT))) {
            *ptr = value[i];
        } else {
            return bad_call(m, "fmi2SetReal", "variable cannot be set (not a parameter, an input "
                                              "or a state before initialization)");
        }
    }
    m->m.st.dirty = 1;
    return fmi2OK;
}

#define NO_VARS_OF_TYPE(F, T)                                                           \
    fmi2Status F(fmi2Component c, const fmi2ValueReference vr[], size_t n, T value[]) { \
        (void)vr; (void)value;                                                          \
        if (n == 0) return fmi2OK;                                                      \
        return bad_call((Instance *)c, #F, "the model has no variables of this type");  \
    }
NO_VARS_OF_TYPE(fmi2GetInteger, fmi2Integer)
NO_VARS_OF_TYPE(fmi2GetBoolean, fmi2Boolean)
NO_VARS_OF_TYPE(fmi2GetString, fmi2String)
NO_VARS_OF_TYPE(fmi2SetInteger, const fmi2Integer)
NO_VARS_OF_TYPE(fmi2SetBoolean, const fmi2Boolean)
NO_VARS_OF_TYPE(fmi2SetString, const fmi2String)

/* ------------------------------------------------------------------- FMU state */
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *st) {
    Instance *m = (Instance *)c;
    if (!*st) *st = calloc(1, sizeof(ModelState));
    if (!*st) return bad_call(m, "fmi2GetFMUstate", "out of memory");
    memcpy(*st, &m->m.st, sizeof(ModelState));
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate st) {
    Instance *m = (Instance *)c;
    if (!st) return bad_call(m, "fmi2SetFMUstate", "null state");
    memcpy(&m->m.st, st, sizeof(ModelState));
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *st) {
    (void)c;
    if (st) { free(*st); *st = NULL; }
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate st, size_t *size) {
    (void)c; (void)st;
    *size = sizeof(SavedState);
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate st, fmi2Byte b[], size_t size) {
    if (size < sizeof(SavedState)) return bad_call((Instance *)c, "fmi2SerializeFMUstate", "buffer too small");
    cosim_state_to_bytes(st, b);
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t size, fmi2FMUstate *st) {
    SavedState s;
    Instance *m = (Instance *)c;
    const char *why = cosim_state_from_bytes(b, size, &s);
    if (why) return bad_call(m, "fmi2DeSerializeFMUstate", why);
    if (!*st) *st = calloc(1, sizeof(ModelState));
    if (!*st) return bad_call(m, "fmi2DeSerializeFMUstate", "out of memory");
    memcpy(*st, &s.st, sizeof(ModelState));
    return fmi2OK;
}

/* Directional derivatives of outputs (and, in Model Exchange, state derivatives) with respect
 * to inputs (and states): the tangent program, cosim_directional in model.h. */
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference z[], size_t nz,
                                        const fmi2ValueReference u[], size_t nu, const fmi2Real dv[],
                                        fmi2Real dz[]) {
    Instance *m = (Instance *)c;
    const char *why;
    if (nz == 0) return fmi2OK;
    if (m->mode == MODE_INSTANTIATED)
        return bad_call(m, "fmi2GetDirectionalDerivative", "not before initialization mode");
    why = cosim_directional_vr(&m->m, m->type == fmi2ModelExchange, z, nz, u, nu, dv, nu, dz, nz);
    if (why) return bad_call(m, "fmi2GetDirectionalDerivative", why);
    return check(m, "fmi2GetDirectionalDerivative");
}

/* --------------------------------------------------------------- Model Exchange */
fmi2Status fmi2EnterEventMode(fmi2Component c) {
    ((Instance *)c)->mode = MODE_EVENT;
    return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info) {
    Instance *m = (Instance *)c;
    int64_t next;
    int terminate = 0, changed;
    cosim_me_event(&m->m);
    changed = cosim_zc_event(&m->m, &terminate);
    next = cosim_next_event(llround(m->m.st.time * 1e9));
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = terminate ? fmi2True : fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = changed ? fmi2True : fmi2False;
    info->nextEventTimeDefined = next != INT64_MAX ? fmi2True : fmi2False;
    info->nextEventTime = next != INT64_MAX ? (double)next * 1e-9 : 0.0;
    return check(m, "fmi2NewDiscreteStates");
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
    ((Instance *)c)->mode = MODE_CONT;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation) {
    (void)c; (void)noSetFMUStatePriorToCurrentPoint;
    *enterEventMode = fmi2False;
    *terminateSimulation = fmi2False;
    return fmi2OK;
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) {
    Instance *m = (Instance *)c;
    m->m.st.time = time;
    m->m.st.dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
    Instance *m = (Instance *)c;
    if (nx != NX) return bad_call(m, "fmi2SetContinuousStates", "wrong number of states");
#if NX > 0
    memcpy(m->m.st.x, x, sizeof(double) * NX);
#endif
    (void)x;
    m->m.st.dirty = 1;
    return fmi2OK;
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx) {
    Instance *m = (Instance *)c;
    if (nx != NX) return bad_call(m, "fmi2GetDerivatives", "wrong number of states");
#if NX > 0
    cosim_derivatives(&m->m);
    memcpy(derivatives, m->m.dx, sizeof(double) * NX);
#endif
    (void)derivatives;
    return check(m, "fmi2GetDerivatives");
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real ei[], size_t ni) {
    Instance *m = (Instance *)c;
    if (ni != NZ) return bad_call(m, "fmi2GetEventIndicators", "wrong number of event indicators");
#if NZ > 0
    cosim_ensure_outputs(&m->m);
    cosim_indicators(&m->m, ei);
#endif
    (void)ei;
    return check(m, "fmi2GetEventIndicators");
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
    Instance *m = (Instance *)c;
    if (nx != NX) return bad_call(m, "fmi2GetContinuousStates", "wrong number of states");
#if NX > 0
    memcpy(x, m->m.st.x, sizeof(double) * NX);
#endif
    (void)x;
    return fmi2OK;
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx) {
    size_t i;
    (void)c;
    for (i = 0; i < nx; i++) x_nominal[i] = 1.0;
    return fmi2OK;
}

/* ----------------------------------------------------------------- Co-Simulation */
/* canInterpolateInputs: the derivatives (orders 1..3) of inputs at the start of the next step;
 * that step follows their Taylor polynomial (cosim_poly_inputs), then they are used up. */
fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], const fmi2Real value[]) {
    Instance *m = (Instance *)c;
#if !COSIM_INTERPOLATE
    (void)vr; (void)n; (void)order; (void)value;
    (void)cosim_input_index; (void)cosim_poly_inputs; (void)cosim_begin_interpolation;
    return bad_call(m, "fmi2SetRealInputDerivatives",
                    "this FMU holds its inputs over a step (canInterpolateInputs is false)");
#else
    size_t i, size;
    int kind, idx;
    for (i = 0; i < n; i++) {
        double *ptr = cosim_var_ptr(&m->m, vr[i], &size, &kind);
        if (!ptr || kind != VK_INPUT)
            return bad_call(m, "fmi2SetRealInputDerivatives", "the variable is not an input");
        if (order[i] < 1 || order[i] > 3)
            return bad_call(m, "fmi2SetRealInputDerivatives",
                            "this FMU follows input derivatives of order 1, 2 and 3 only");
        idx = cosim_input_index((size_t)(ptr - m->m.st.s));
        if (idx < 0) return bad_call(m, "fmi2SetRealInputDerivatives", "the variable is not an input");
        m->m.st.du[idx][order[i] - 1] = value[i];
    }
    m->m.st.has_du = 1;
    return fmi2OK;
#endif
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], fmi2Real value[]) {
    (void)vr; (void)n; (void)order; (void)value;
    return bad_call((Instance *)c, "fmi2GetRealOutputDerivatives", "not provided");
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetPrior) {
    Instance *m = (Instance *)c;
    ModelState *S = &m->m.st;
    int64_t t0 = llround(t * 1e9), end = llround((t + h) * 1e9);
    (void)noSetPrior;
    if (m->type != fmi2CoSimulation || m->mode != MODE_STEP)
        return bad_call(m, "fmi2DoStep", "not in step mode of a Co-Simulation instance");
    if (t0 - S->ticks > 1 || S->ticks - t0 > 1) {
        char buf[200];
        snprintf(buf, sizeof buf, "currentCommunicationPoint %.17g s differs from the FMU time %.17g s",
                 t, (double)S->ticks * 1e-9);
        return bad_call(m, "fmi2DoStep", buf);
    }
    if (h < 0 || end < S->ticks) return bad_call(m, "fmi2DoStep", "negative step size");
    if (S->has_du) {
        cosim_begin_interpolation(&m->m);
        m->m.inputs_at = cosim_poly_inputs;
    }
    cosim_advance(&m->m, end);
    cosim_end_interpolation(&m->m);
    return check(m, "fmi2DoStep");
}

fmi2Status fmi2CancelStep(fmi2Component c) {
    return bad_call((Instance *)c, "fmi2CancelStep", "doStep is synchronous");
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v) {
    (void)c; (void)s; (void)v;
    return fmi2Discard;
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v) {
    if (s != fmi2LastSuccessfulTime) return fmi2Discard;
    *v = (double)((Instance *)c)->m.st.ticks * 1e-9;
    return fmi2OK;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v) {
    (void)c; (void)s; (void)v;
    return fmi2Discard;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v) {
    (void)c; (void)s; (void)v;
    return fmi2Discard;
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v) {
    (void)c; (void)s; (void)v;
    return fmi2Discard;
}
