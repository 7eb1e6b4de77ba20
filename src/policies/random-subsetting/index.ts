export * from './config.js';
export * from './random-subsetting.js';
export * from './rendezvous-subset.js';
