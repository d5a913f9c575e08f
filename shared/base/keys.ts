// Label, annotation and taint keys, named as SimKube names them (sk-core/src/constants.rs) so that
// both codebases grep alike.

export const SIMKUBE_IO_PREFIX = "simkube.io";
export const SIMKUBE_API_VERSION = "simkube.io/v1";
export const SIMULATION_KIND = "Simulation";
export const SIMULATION_ROOT_KIND = "SimulationRoot";

export const SIMULATION_LABEL_KEY = "simkube.io/simulation";
export const VIRTUAL_LABEL_KEY = "simkube.io/virtual";

export const KWOK_STAGE_COMPLETE_KEY = "simkube.io/kwok-stage-complete";
export const KWOK_STAGE_COMPLETE_TIMESTAMP_KEY = "simkube.io/kwok-stage-complete-time";
export const KWOK_STAGE_CREATE_DELAY_KEY = "simkube.io/kwok-stage-create-delay";
export const KWOK_STAGE_CREATE_DELAY_JITTER_KEY = "simkube.io/kwok-stage-create-delay-jitter";
export const KWOK_STAGE_READY_DELAY_KEY = "simkube.io/kwok-stage-ready-delay";
export const KWOK_STAGE_READY_DELAY_JITTER_KEY = "simkube.io/kwok-stage-ready-delay-jitter";

// "static." keys survive sanitization: bare-pod rescheduling depends on them.
export const ORIG_NAMESPACE_ANNOTATION_KEY = "static.simkube.io/original-namespace";
export const ORIG_OWNER_ANNOTATION_KEY = "static.simkube.io/original-owner";
export const POD_SPEC_STABLE_HASH_KEY = "static.simkube.io/pod-spec-stable-hash";
export const POD_SEQUENCE_NUMBER_KEY = "static.simkube.io/pod-sequence-number";

export const LAST_APPLIED_CONFIG_LABEL_KEY = "kubectl.kubernetes.io/last-applied-configuration";
export const DEPL_REVISION_LABEL_KEY = "deployment.kubernetes.io/revision";

export const VIRTUAL_NODE_TOLERATION_KEY = "kwok-provider";
export const VIRTUAL_NODE_SELECTOR_KEY = "type";
export const VIRTUAL_NODE_SELECTOR_VALUE = "virtual";
