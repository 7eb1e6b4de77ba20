export * from './config.js';
export * from './metrics.js';
export * from './utilization-metrics.js';
export { WeightedRoundRobin, weightedRoundRobinFactory } from './weighted-round-robin.js';
