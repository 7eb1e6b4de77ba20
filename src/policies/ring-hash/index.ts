export * from './config.js';
export { RingHashPicker } from './picker.js';
export { buildRing, entriesPerEndpoint, Ring } from './ring.js';
export * from './ring-hash.js';
export { RingView } from './ring-view.js';
