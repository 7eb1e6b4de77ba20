export * from './config.js';
export * from './metrics.js';
export { OutlierDetection, outlierDetectionFactory } from './outlier-detection.js';
