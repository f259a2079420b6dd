/* FMI 3.0 wrapper of a cosim generated-C model (fmus/cgen/templates/fmi3.c).
 *
 * Model Exchange and Co-Simulation over the model core in model.h: Float64 variables (arrays
 * for vector ports and matrix parameters) through a value-reference table, FMU state
 * get/set/serialize (a copy of the flat ModelState), time events for sampled blocks in Model
 * Exchange, a fixed-step internal integrator in Co-Simulation (no event mode, no early return)
 * that asks the importer for its inputs at each Runge-Kutta stage (intermediate update),
 * directional derivatives from the tangent program (cosim/codegen/tangent.py).
 * No Python, no global mutable state.
 */
#include "fmi3Functions.h"
#include "model.h"

typedef enum { TYPE_ME, TYPE_CS } InstType;

typedef struct {
    Model m;
    InstType type;
    Mode mode;
    char name[128];
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log;
    fmi3IntermediateUpdateCallback intermediate;  /* Co-Simulation: input interpolation */
    int logging;
} Instance;

static void logmsg(Instance *c, fmi3Status status, const char *category, const char *msg) {
    if (c && c->log) c->log(c->env, status, category, msg);
}

static fmi3Status check(Instance *c, const char *fn) {
    char buf[700];
    if (!c->m.error) return fmi3OK;
    snprintf(buf, sizeof buf, "%s: %s", fn, c->m.error);
    logmsg(c, fmi3Error, "logStatusError", buf);
    c->m.error = NULL;
    c->mode = MODE_ERROR;
    return fmi3Error;
}

static fmi3Status bad_call(Instance *c, const char *fn, const char *why) {
    char buf[300];
    snprintf(buf, sizeof buf, "%s: %s", fn, why);
    logmsg(c, fmi3Error, "logStatusError", buf);
    return fmi3Error;
}

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[]) {
    (void)nCategories; (void)categories;
    if (!instance) return fmi3Error;
    ((Instance *)instance)->logging = loggingOn;
    return fmi3OK;
}

static Instance *instantiate(fmi3String name, fmi3String token, InstType type, fmi3Boolean loggingOn,
                             fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
    Instance *c;
    if (!token || strcmp(token, COSIM_TOKEN) != 0) {
        if (log) log(env, fmi3Error, "logStatusError",
                     "fmi3Instantiate: instantiationToken does not match the model description");
        return NULL;
    }
    c = (Instance *)calloc(1, sizeof(Instance));
    if (!c) return NULL;
    cosim_reset(&c->m);
    c->type = type;
    c->mode = MODE_INSTANTIATED;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "");
    c->env = env;
    c->log = log;
    c->logging = loggingOn;
    return c;
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage) {
    (void)resourcePath; (void)visible;
#if defined(COSIM_HAS_ME)
    return instantiate(instanceName, instantiationToken, TYPE_ME, loggingOn, instanceEnvironment,
                       logMessage);
#else
    (void)instanceName; (void)instantiationToken; (void)loggingOn; (void)instanceEnvironment;
    (void)logMessage;
    return NULL;
#endif
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String instanceName, fmi3String instantiationToken,
                                         fmi3String resourcePath, fmi3Boolean visible,
                                         fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
                                         fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference requiredIntermediateVariables[],
                                         size_t nRequiredIntermediateVariables,
                                         fmi3InstanceEnvironment instanceEnvironment,
                                         fmi3LogMessageCallback logMessage,
                                         fmi3IntermediateUpdateCallback intermediateUpdate) {
    (void)resourcePath; (void)visible; (void)earlyReturnAllowed;
    (void)requiredIntermediateVariables; (void)nRequiredIntermediateVariables;
#if defined(COSIM_HAS_CS)
    Instance *c;
    if (eventModeUsed) {
        if (logMessage) logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                                   "fmi3InstantiateCoSimulation: event mode is not supported");
        return NULL;
    }
    c = instantiate(instanceName, instantiationToken, TYPE_CS, loggingOn, instanceEnvironment,
                    logMessage);
#if COSIM_INTERPOLATE && NIN > 0
    if (c) c->intermediate = intermediateUpdate;
#else
    (void)intermediateUpdate;
#endif
    return c;
#else
    (void)instanceName; (void)instantiationToken; (void)loggingOn; (void)eventModeUsed;
    (void)instanceEnvironment; (void)logMessage; (void)intermediateUpdate;
    return NULL;
#endif
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String instanceName, fmi3String instantiationToken,
                                               fmi3String resourcePath, fmi3Boolean visible,
                                               fmi3Boolean loggingOn,
                                               fmi3InstanceEnvironment instanceEnvironment,
                                               fmi3LogMessageCallback logMessage,
                                               fmi3ClockUpdateCallback clockUpdate,
                                               fmi3LockPreemptionCallback lockPreemption,
                                               fmi3UnlockPreemptionCallback unlockPreemption) {
    (void)instanceName; (void)instantiationToken; (void)resourcePath; (void)visible; (void)loggingOn;
    (void)clockUpdate; (void)lockPreemption; (void)unlockPreemption;
    if (logMessage) logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                               "Scheduled Execution is not supported");
    return NULL;
}

void fmi3FreeInstance(fmi3Instance instance) { free(instance); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
    Instance *m = (Instance *)instance;
    (void)toleranceDefined; (void)tolerance; (void)stopTimeDefined; (void)stopTime;
    if (m->mode != MODE_INSTANTIATED) return bad_call(m, "fmi3EnterInitializationMode", "wrong state");
    cosim_set_start(&m->m, startTime);
    m->mode = MODE_INIT;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance) {
    Instance *m = (Instance *)instance;
    if (m->mode != MODE_INIT) return bad_call(m, "fmi3ExitInitializationMode", "not in initialization mode");
    m->mode = cosim_exit_initialization(&m->m, m->type == TYPE_CS);
    return check(m, "fmi3ExitInitializationMode");
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance) {
    ((Instance *)instance)->mode = MODE_EVENT;
    return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance instance) {
    ((Instance *)instance)->mode = MODE_TERMINATED;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance instance) {
    Instance *m = (Instance *)instance;
    cosim_reset(&m->m);
    m->mode = MODE_INSTANTIATED;
    return fmi3OK;
}

/* ----------------------------------------------------------------- variables */
fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, fmi3Float64 values[], size_t nValues) {
    Instance *m = (Instance *)instance;
    size_t i, k, size, pos = 0;
    int kind, derivs_done = 0;
    if (nValueReferences == 0) return fmi3OK;
    cosim_ensure_outputs(&m->m);
    for (i = 0; i < nValueReferences; i++) {
        double *ptr = cosim_var_ptr(&m->m, valueReferences[i], &size, &kind);
        if (!ptr) return bad_call(m, "fmi3GetFloat64", "unknown value reference");
        if (kind == VK_DER && !derivs_done) {
            cosim_derivatives(&m->m);
            derivs_done = 1;
        }
        if (pos + size > nValues) return bad_call(m, "fmi3GetFloat64", "nValues too small");
        for (k = 0; k < size; k++) values[pos++] = ptr[k];
    }
    return check(m, "fmi3GetFloat64");
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, const fmi3Float64 values[], size_t nValues) {
    Instance *m = (Instance *)instance;
    size_t i, k, size, pos = 0;
    int kind;
    for (i = 0; i < nValueReferences; i++) {
        double *ptr = cosim_var_ptr(&m->m, valueReferences[i], &size, &kind);
        if (!ptr) return bad_call(m, "fmi3SetFloat64", "unknown value reference");
        if (!(kind == VK_PARAM || kind == VK_INPUT ||
              (kind == VK_STATE && (m->mode == MODE_INSTANTIATED || m->mode == MODE_INIT))))
            return bad_call(m, "fmi3SetFloat64", "variable cannot be set (not a parameter, an "
                                                 "input or a state before initialization)");
        if (pos + size > nValues) return bad_call(m, "fmi3SetFloat64", "nValues too small");
        for (k = 0; k < size; k++) ptr[k] = values[pos++];
    }
    m->m.st.dirty = 1;
    return fmi3OK;
}

#define NO_VARS_GET(F, T)                                                                         \
    fmi3Status F(fmi3Instance instance, const fmi3ValueReference valueReferences[],              \
                 size_t nValueReferences, T values[], size_t nValues) {                          \
        (void)valueReferences; (void)values; (void)nValues;                                      \
        if (nValueReferences == 0) return fmi3OK;                                                \
        return bad_call((Instance *)instance, #F, "the model has no variables of this type");    \
    }
#define NO_VARS_SET(F, T)                                                                         \
    fmi3Status F(fmi3Instance instance, const fmi3ValueReference valueReferences[],              \
                 size_t nValueReferences, const T values[], size_t nValues) {                    \
        (void)valueReferences; (void)values; (void)nValues;                                      \
        if (nValueReferences == 0) return fmi3OK;                                                \
        return bad_call((Instance *)instance, #F, "the model has no variables of this type");    \
    }
NO_VARS_GET(fmi3GetFloat32, fmi3Float32)
NO_VARS_GET(fmi3GetInt8, fmi3Int8)
NO_VARS_GET(fmi3GetUInt8, fmi3UInt8)
NO_VARS_GET(fmi3GetInt16, fmi3Int16)
NO_VARS_GET(fmi3GetUInt16, fmi3UInt16)
NO_VARS_GET(fmi3GetInt32, fmi3Int32)
NO_VARS_GET(fmi3GetUInt32, fmi3UInt32)
NO_VARS_GET(fmi3GetInt64, fmi3Int64)
NO_VARS_GET(fmi3GetUInt64, fmi3UInt64)
NO_VARS_GET(fmi3GetBoolean, fmi3Boolean)
NO_VARS_GET(fmi3GetString, fmi3String)
NO_VARS_SET(fmi3SetFloat32, fmi3Float32)
NO_VARS_SET(fmi3SetInt8, fmi3Int8)
NO_VARS_SET(fmi3SetUInt8, fmi3UInt8)
NO_VARS_SET(fmi3SetInt16, fmi3Int16)
NO_VARS_SET(fmi3SetUInt16, fmi3UInt16)
NO_VARS_SET(fmi3SetInt32, fmi3Int32)
NO_VARS_SET(fmi3SetUInt32, fmi3UInt32)
NO_VARS_SET(fmi3SetInt64, fmi3Int64)
NO_VARS_SET(fmi3SetUInt64, fmi3UInt64)
NO_VARS_SET(fmi3SetBoolean, fmi3Boolean)
NO_VARS_SET(fmi3SetString, fmi3String)

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, size_t valueSizes[], fmi3Binary values[],
                         size_t nValues) {
    (void)valueReferences; (void)valueSizes; (void)values; (void)nValues;
    if (nValueReferences == 0) return fmi3OK;
    return bad_call((Instance *)instance, "fmi3GetBinary", "the model has no binary variables");
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, const size_t valueSizes[], const fmi3Binary values[],
                         size_t nValues) {
    (void)valueReferences; (void)valueSizes; (void)values; (void)nValues;
    if (nValueReferences == 0) return fmi3OK;
    return bad_call((Instance *)instance, "fmi3SetBinary", "the model has no binary variables");
}

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, fmi3Clock values[]) {
    (void)valueReferences; (void)values;
    if (nValueReferences == 0) return fmi3OK;
    return bad_call((Instance *)instance, "fmi3GetClock", "the model has no clocks");
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, const fmi3Clock values[]) {
    (void)valueReferences; (void)values;
    if (nValueReferences == 0) return fmi3OK;
    return bad_call((Instance *)instance, "fmi3SetClock", "the model has no clocks");
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance, fmi3ValueReference valueReference,
                                               size_t *nDependencies) {
    (void)valueReference; (void)nDependencies;
    return bad_call((Instance *)instance, "fmi3GetNumberOfVariableDependencies",
                    "not provided (see ModelStructure in modelDescription.xml)");
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[], fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[],
                                       fmi3DependencyKind dependencyKinds[], size_t nDependencies) {
    (void)dependent; (void)elementIndicesOfDependent; (void)independents;
    (void)elementIndicesOfIndependents; (void)dependencyKinds; (void)nDependencies;
    return bad_call((Instance *)instance, "fmi3GetVariableDependencies",
                    "not provided (see ModelStructure in modelDescription.xml)");
}

/* ------------------------------------------------------------------- FMU state */
fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *FMUState) {
    Instance *m = (Instance *)instance;
    if (!*FMUState) *FMUState = calloc(1, sizeof(ModelState));
    if (!*FMUState) return bad_call(m, "fmi3GetFMUState", "out of memory");
    memcpy(*FMUState, &m->m.st, sizeof(ModelState));
    return fmi3OK;
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState) {
    Instance *m = (Instance *)instance;
    if (!FMUState) return bad_call(m, "fmi3SetFMUState", "null state");
    memcpy(&m->m.st, FMUState, sizeof(ModelState));
    return fmi3OK;
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState) {
    (void)instance;
    if (FMUState) { free(*FMUState); *FMUState = NULL; }
    return fmi3OK;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState, size_t *size) {
    (void)instance; (void)FMUState;
    *size = sizeof(SavedState);
    return fmi3OK;
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState, fmi3Byte serializedState[],
                                 size_t size) {
    if (size < sizeof(SavedState))
        return bad_call((Instance *)instance, "fmi3SerializeFMUState", "buffer too small");
    cosim_state_to_bytes(FMUState, serializedState);
    return fmi3OK;
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[], size_t size,
                                   fmi3FMUState *FMUState) {
    SavedState s;
    Instance *m = (Instance *)instance;
    const char *why = cosim_state_from_bytes(serializedState, size, &s);
    if (why) return bad_call(m, "fmi3DeserializeFMUState", why);
    if (!*FMUState) *FMUState = calloc(1, sizeof(ModelState));
    if (!*FMUState) return bad_call(m, "fmi3DeserializeFMUState", "out of memory");
    memcpy(*FMUState, &s.st, sizeof(ModelState));
    return fmi3OK;
}

/* Directional derivatives of outputs (and, in Model Exchange, state derivatives) with respect
 * to inputs (and states): the tangent program, cosim_directional in model.h.  Array variables take one seed and give one sensitivity per element. */
fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[], size_t nKnowns,
                                        const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[],
                                        size_t nSensitivity) {
    Instance *m = (Instance *)instance;
    const char *why;
    if (nUnknowns == 0) return fmi3OK;
    if (m->mode == MODE_INSTANTIATED)
        return bad_call(m, "fmi3GetDirectionalDerivative", "not before initialization mode");
    why = cosim_directional_vr(&m->m, m->type == TYPE_ME, unknowns, nUnknowns, knowns, nKnowns,
                               seed, nSeed, sensitivity, nSensitivity);
    if (why) return bad_call(m, "fmi3GetDirectionalDerivative", why);
    return check(m, "fmi3GetDirectionalDerivative");
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                    size_t nUnknowns, const fmi3ValueReference knowns[], size_t nKnowns,
                                    const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[],
                                    size_t nSensitivity) {
    (void)unknowns; (void)nUnknowns; (void)knowns; (void)nKnowns; (void)seed; (void)nSeed;
    (void)sensitivity; (void)nSensitivity;
    return bad_call((Instance *)instance, "fmi3GetAdjointDerivative", "not provided");
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance) {
    return bad_call((Instance *)instance, "fmi3EnterConfigurationMode", "no structural parameters");
}

fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance) {
    return bad_call((Instance *)instance, "fmi3ExitConfigurationMode", "no structural parameters");
}

fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, fmi3Float64 intervals[],
                                  fmi3IntervalQualifier qualifiers[]) {
    (void)valueReferences; (void)nValueReferences; (void)intervals; (void)qualifiers;
    return bad_call((Instance *)instance, "fmi3GetIntervalDecimal", "the model has no clocks");
}

fmi3Status fmi3GetIntervalFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier qualifiers[]) {
    (void)valueReferences; (void)nValueReferences; (void)counters; (void)resolutions; (void)qualifiers;
    return bad_call((Instance *)instance, "fmi3GetIntervalFraction", "the model has no clocks");
}

fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, fmi3Float64 shifts[]) {
    (void)valueReferences; (void)nValueReferences; (void)shifts;
    return bad_call((Instance *)instance, "fmi3GetShiftDecimal", "the model has no clocks");
}

fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, fmi3UInt64 counters[], fmi3UInt64 resolutions[]) {
    (void)valueReferences; (void)nValueReferences; (void)counters; (void)resolutions;
    return bad_call((Instance *)instance, "fmi3GetShiftFraction", "the model has no clocks");
}

fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, const fmi3Float64 intervals[]) {
    (void)valueReferences; (void)nValueReferences; (void)intervals;
    return bad_call((Instance *)instance, "fmi3SetIntervalDecimal", "the model has no clocks");
}

fmi3Status fmi3SetIntervalFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, const fmi3UInt64 counters[],
                                   const fmi3UInt64 resolutions[]) {
    (void)valueReferences; (void)nValueReferences; (void)counters; (void)resolutions;
    return bad_call((Instance *)instance, "fmi3SetIntervalFraction", "the model has no clocks");
}

fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, const fmi3Float64 shifts[]) {
    (void)valueReferences; (void)nValueReferences; (void)shifts;
    return bad_call((Instance *)instance, "fmi3SetShiftDecimal", "the model has no clocks");
}

fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, const fmi3UInt64 counters[],
                                const fmi3UInt64 resolutions[]) {
    (void)valueReferences; (void)nValueReferences; (void)counters; (void)resolutions;
    return bad_call((Instance *)instance, "fmi3SetShiftFraction", "the model has no clocks");
}

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance) {
    (void)instance;
    return fmi3OK;
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime) {
    Instance *m = (Instance *)instance;
    int64_t next;
    int terminate = 0, changed;
    if (m->type != TYPE_ME) return bad_call(m, "fmi3UpdateDiscreteStates", "event mode is not supported in Co-Simulation");
    cosim_me_event(&m->m);
    changed = cosim_zc_event(&m->m, &terminate);
    next = cosim_next_event(llround(m->m.st.time * 1e9));
    *discreteStatesNeedUpdate = fmi3False;
    *terminateSimulation = terminate ? fmi3True : fmi3False;
    *nominalsOfContinuousStatesChanged = fmi3False;
    *valuesOfContinuousStatesChanged = changed ? fmi3True : fmi3False;
    *nextEventTimeDefined = next != INT64_MAX ? fmi3True : fmi3False;
    *nextEventTime = next != INT64_MAX ? (double)next * 1e-9 : 0.0;
    return check(m, "fmi3UpdateDiscreteStates");
}

/* --------------------------------------------------------------- Model Exchange */
fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) {
    ((Instance *)instance)->mode = MODE_CONT;
    return fmi3OK;
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation) {
    (void)instance; (void)noSetFMUStatePriorToCurrentPoint;
    *enterEventMode = fmi3False;
    *terminateSimulation = fmi3False;
    return fmi3OK;
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) {
    Instance *m = (Instance *)instance;
    m->m.st.time = time;
    m->m.st.dirty = 1;
    return fmi3OK;
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    Instance *m = (Instance *)instance;
    if (nContinuousStates != NX) return bad_call(m, "fmi3SetContinuousStates", "wrong number of states");
#if NX > 0
    memcpy(m->m.st.x, continuousStates, sizeof(double) * NX);
#endif
    (void)continuousStates;
    m->m.st.dirty = 1;
    return fmi3OK;
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                             size_t nContinuousStates) {
    Instance *m = (Instance *)instance;
    if (nContinuousStates != NX)
        return bad_call(m, "fmi3GetContinuousStateDerivatives", "wrong number of states");
#if NX > 0
    cosim_derivatives(&m->m);
    memcpy(derivatives, m->m.dx, sizeof(double) * NX);
#endif
    (void)derivatives;
    return check(m, "fmi3GetContinuousStateDerivatives");
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[],
                                  size_t nEventIndicators) {
    Instance *m = (Instance *)instance;
    if (nEventIndicators != NZ)
        return bad_call(m, "fmi3GetEventIndicators", "wrong number of event indicators");
#if NZ > 0
    cosim_ensure_outputs(&m->m);
    cosim_indicators(&m->m, eventIndicators);
#endif
    (void)eventIndicators;
    return check(m, "fmi3GetEventIndicators");
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
    Instance *m = (Instance *)instance;
    if (nContinuousStates != NX) return bad_call(m, "fmi3GetContinuousStates", "wrong number of states");
#if NX > 0
    memcpy(continuousStates, m->m.st.x, sizeof(double) * NX);
#endif
    (void)continuousStates;
    return fmi3OK;
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                             size_t nContinuousStates) {
    size_t i;
    (void)instance;
    for (i = 0; i < nContinuousStates; i++) nominals[i] = 1.0;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators) {
    (void)instance;
    *nEventIndicators = NZ;
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates) {
    (void)instance;
    *nContinuousStates = NX;
    return fmi3OK;
}

/* ----------------------------------------------------------------- Co-Simulation */
fmi3Status fmi3EnterStepMode(fmi3Instance instance) {
    Instance *m = (Instance *)instance;
    if (m->type != TYPE_CS) return bad_call(m, "fmi3EnterStepMode", "not a Co-Simulation instance");
    m->mode = MODE_STEP;
    return fmi3OK;
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences, const fmi3Int32 orders[], fmi3Float64 values[],
                                    size_t nValues) {
    (void)valueReferences; (void)nValueReferences; (void)orders; (void)values; (void)nValues;
    return bad_call((Instance *)instance, "fmi3GetOutputDerivatives", "not provided");
}

/* Intermediate update (providesIntermediateUpdate): before each Runge-Kutta stage and at each
 * internal step's end the importer may set the inputs flagged intermediateUpdate to their
 * values at that time (getting variables is not allowed there: the state is mid-step). */
static void intermediate_inputs(Model *M, double t) {
    Instance *c = (Instance *)M;  /* the model is the instance's first member */
    fmi3Boolean early = fmi3False;
    fmi3Float64 early_time = t;
    c->intermediate(c->env, t, fmi3True, fmi3False, fmi3False, fmi3False, &early, &early_time);
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
    Instance *m = (Instance *)instance;
    ModelState *S = &m->m.st;
    double t = currentCommunicationPoint, h = communicationStepSize;
    int64_t t0 = llround(t * 1e9), end = llround((t + h) * 1e9);
    fmi3Status status;
    (void)noSetFMUStatePriorToCurrentPoint;
    *eventHandlingNeeded = fmi3False;
    *terminateSimulation = fmi3False;
    *earlyReturn = fmi3False;
    *lastSuccessfulTime = (double)S->ticks * 1e-9;
    if (m->type != TYPE_CS || m->mode != MODE_STEP)
        return bad_call(m, "fmi3DoStep", "not in step mode of a Co-Simulation instance");
    if (t0 - S->ticks > 1 || S->ticks - t0 > 1) {
        char buf[200];
        snprintf(buf, sizeof buf, "currentCommunicationPoint %.17g s differs from the FMU time %.17g s",
                 t, (double)S->ticks * 1e-9);
        return bad_call(m, "fmi3DoStep", buf);
    }
    if (h < 0 || end < S->ticks) return bad_call(m, "fmi3DoStep", "negative step size");
    if (m->intermediate) m->m.inputs_at = intermediate_inputs;
    cosim_advance(&m->m, end);
    cosim_end_interpolation(&m->m);
    status = check(m, "fmi3DoStep");
    *lastSuccessfulTime = (double)S->ticks * 1e-9;
    return status;
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime) {
    (void)clockReference; (void)activationTime;
    return bad_call((Instance *)instance, "fmi3ActivateModelPartition", "Scheduled Execution is not supported");
}
