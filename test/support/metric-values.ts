import type { InstrumentValues } from '../../src/metrics/index.js';

const SDK_TYPE: Readonly<Record<string, string>> = {
  counter: 'SUM',
  up_down_counter: 'SUM',
  histogram: 'HISTOGRAM',
  gauge: 'GAUGE',
};

/**
 * The values lbtree keeps for the live view in the shape of OtelMetrics.asValues(): the instruments with
 * points, by name, with the SDK's data point type.
 */
export function valuesAsSdk(
  values: readonly InstrumentValues[],
): Map<string, { type: string; unit: string; points: unknown[] }> {
  const out = new Map<string, { type: string; unit: string; points: unknown[] }>();
  for (const i of values) {
    if (i.points.length > 0)
      out.set(i.name, { type: SDK_TYPE[i.type]!, unit: i.unit, points: [...i.points] });
  }
  return out;
}
