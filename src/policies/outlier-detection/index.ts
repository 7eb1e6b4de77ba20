export * from './config.js';
export { OutlierDetection, outlierDetectionFactory } from './outlier-detection.js';
