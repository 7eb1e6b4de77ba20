// The flight recorder (issue 24 §3): a bounded ring of what one channel's LB tree saw and did, its file
// format, and the reader `lbtree simulate --replay` uses.
export {
  DEFAULT_INTERVAL_MS,
  DEFAULT_MAX_EVENTS,
  EndpointCalls,
  FlightRecorder,
  type FlightRecorderOptions,
} from './flight-recorder.js';
export { readRecording } from './read-recording.js';
export * from './recording-format.js';
