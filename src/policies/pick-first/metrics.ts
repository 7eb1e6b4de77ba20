import { registerInstrument, TARGET_LABEL } from '../../core/index.js';

// A78's pick_first metrics, from the policy's side (a connection Happy Eyeballs does not choose is not
// counted). A94 moves them to grpc.subchannel.* and asks implementations to report both for a while; all
// are experimental, so off by default.

export const PICK_FIRST_DISCONNECTIONS = registerInstrument({
  name: 'grpc.lb.pick_first.disconnections',
  description: 'Number of times the selected subchannel becomes disconnected.',
  unit: '{disconnection}',
  type: 'counter',
  labels: [TARGET_LABEL],
  optionalLabels: [],
  enabledByDefault: false,
});
export const PICK_FIRST_CONNECTION_ATTEMPTS_SUCCEEDED = registerInstrument({
  name: 'grpc.lb.pick_first.connection_attempts_succeeded',
  description: 'Number of successful connection attempts.',
  unit: '{attempt}',
  type: 'counter',
  labels: [TARGET_LABEL],
  optionalLabels: [],
  enabledByDefault: false,
});
export const PICK_FIRST_CONNECTION_ATTEMPTS_FAILED = registerInstrument({
  name: 'grpc.lb.pick_first.connection_attempts_failed',
  description: 'Number of failed connection attempts.',
  unit: '{attempt}',
  type: 'counter',
  labels: [TARGET_LABEL],
  optionalLabels: [],
  enabledByDefault: false,
});
