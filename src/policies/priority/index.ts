export * from './child.js';
export * from './config.js';
export * from './priority.js';
