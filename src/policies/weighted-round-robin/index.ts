export * from './config.js';
export { WeightedRoundRobin, weightedRoundRobinFactory } from './weighted-round-robin.js';
