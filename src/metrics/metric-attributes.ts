import { type InstrumentDescriptor, type MetricLabels, TARGET_LABEL } from '../core/index.js';
import type { MetricAttributesShape } from './meter-provider-shape.js';

/**
 * The attributes one recording carries: the descriptor's labels, `grpc.target` first, then the optional ones
 * `optionalLabels` names and the recording has. The OpenTelemetry plugin and the live view's values make them
 * alike, so both show the same series.
 */
export function metricAttributes(
  instrument: InstrumentDescriptor,
  labels: MetricLabels,
  target: string,
  optionalLabels: ReadonlySet<string>,
): MetricAttributesShape {
  const attributes: MetricAttributesShape = {};
  for (const key of instrument.labels) {
    attributes[key] = key === TARGET_LABEL ? target : (labels[key] ?? '');
  }
  for (const key of instrument.optionalLabels) {
    const value = labels[key];
    if (value !== undefined && optionalLabels.has(key)) attributes[key] = value;
  }
  return attributes;
}
