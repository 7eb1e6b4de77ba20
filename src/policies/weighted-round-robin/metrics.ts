import { BACKEND_SERVICE_LABEL, LOCALITY_LABEL, registerInstrument, TARGET_LABEL } from '../../core/index.js';

// A78's weighted_round_robin metrics, with A89's backend service label: experimental, so off by default.
// grpc.lb.locality is optional in A78's table, and so is grpc.lb.backend_service in A89's.

const OPTIONAL = [LOCALITY_LABEL, BACKEND_SERVICE_LABEL];

export const WRR_RR_FALLBACK = registerInstrument({
  name: 'grpc.lb.wrr.rr_fallback',
  description:
    'Number of scheduler updates in which there were not enough endpoints with valid weight, which caused the WRR policy to fall back to RR behavior.',
  unit: '{update}',
  type: 'counter',
  labels: [TARGET_LABEL],
  optionalLabels: OPTIONAL,
  enabledByDefault: false,
});
export const WRR_ENDPOINT_WEIGHT_NOT_YET_USABLE = registerInstrument({
  name: 'grpc.lb.wrr.endpoint_weight_not_yet_usable',
  description:
    "Number of endpoints from each scheduler update that don't yet have usable weight information (i.e., either the load report has not yet been received, or it is within the blackout period).",
  unit: '{endpoint}',
  type: 'counter',
  labels: [TARGET_LABEL],
  optionalLabels: OPTIONAL,
  enabledByDefault: false,
});
export const WRR_ENDPOINT_WEIGHT_STALE = registerInstrument({
  name: 'grpc.lb.wrr.endpoint_weight_stale',
  description:
    'Number of endpoints from each scheduler update whose latest weight is older than the expiration period.',
  unit: '{endpoint}',
  type: 'counter',
  labels: [TARGET_LABEL],
  optionalLabels: OPTIONAL,
  enabledByDefault: false,
});
export const WRR_ENDPOINT_WEIGHTS = registerInstrument({
  name: 'grpc.lb.wrr.endpoint_weights',
  description:
    'Weight of each endpoint, recorded on every scheduler update. Endpoints without usable weights will be recorded as weight 0.',
  unit: '{weight}',
  type: 'histogram',
  labels: [TARGET_LABEL],
  optionalLabels: OPTIONAL,
  enabledByDefault: false,
});
