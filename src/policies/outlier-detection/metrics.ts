import { BACKEND_SERVICE_LABEL, registerInstrument, TARGET_LABEL } from '../../core/index.js';

// A91's outlier detection metrics: experimental, so off by default.

export const DETECTION_METHOD_LABEL = 'grpc.lb.outlier_detection.detection_method';
export const UNENFORCED_REASON_LABEL = 'grpc.lb.outlier_detection.unenforced_reason';

/** A91's detection_method values. */
export type DetectionMethod = 'success_rate' | 'failure_percentage';
/** A91's unenforced_reason values. */
export type UnenforcedReason = 'enforcement_percentage' | 'max_ejection_overflow';

export const EJECTIONS_ENFORCED = registerInstrument({
  name: 'grpc.lb.outlier_detection.ejections_enforced',
  description: 'Enforced outlier ejections by ejection reason',
  unit: '{ejection}',
  type: 'counter',
  labels: [TARGET_LABEL, DETECTION_METHOD_LABEL],
  optionalLabels: [BACKEND_SERVICE_LABEL],
  enabledByDefault: false,
});
export const EJECTIONS_UNENFORCED = registerInstrument({
  name: 'grpc.lb.outlier_detection.ejections_unenforced',
  description: 'Unenforced outlier ejections due to either max ejection percentage or enforcement_percentage',
  unit: '{ejection}',
  type: 'counter',
  labels: [TARGET_LABEL, DETECTION_METHOD_LABEL, UNENFORCED_REASON_LABEL],
  optionalLabels: [BACKEND_SERVICE_LABEL],
  enabledByDefault: false,
});
