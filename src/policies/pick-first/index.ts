export * from './address-order.js';
export * from './config.js';
export * from './metrics.js';
export * from './pick-first.js';
export * from './weighted-shuffling-flag.js';
