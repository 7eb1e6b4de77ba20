export * from './child.js';
export * from './config.js';
export * from './picker.js';
export * from './ready-weights.js';
export * from './weighted-target.js';
