// xDS resource types (A27 LDS / RDS / CDS / EDS): the validated values and the pure helpers over them.
export { selectVirtualHost } from './select-virtual-host.js';
export * from './types.js';
