export * from './address-map.js';
export * from './config.js';
export * from './override-host.js';
export * from './picker.js';
