export * from './address-order.js';
export * from './config.js';
export * from './pick-first.js';
