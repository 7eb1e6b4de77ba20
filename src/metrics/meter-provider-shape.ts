// The part of @opentelemetry/api's MeterProvider that lbtree calls, as structural types: lbtree never
// imports @opentelemetry/api (an optional peer dependency), so it loads without it and its declarations
// do not require it. A MeterProvider from @opentelemetry/sdk-metrics (or any API 1.x implementation) fits.

export type MetricAttributesShape = Record<string, string>;

export interface InstrumentOptionsShape {
  description?: string;
  unit?: string;
  /** OpenTelemetry API 1.7+: a histogram's bucket boundaries, which the SDK uses unless a view sets others. */
  advice?: { explicitBucketBoundaries?: number[] };
}

export interface ObservableResultShape {
  observe(value: number, attributes?: MetricAttributesShape): void;
}

export interface MeterShape {
  createCounter(
    name: string,
    options?: InstrumentOptionsShape,
  ): { add(value: number, attributes?: MetricAttributesShape): void };
  createUpDownCounter(
    name: string,
    options?: InstrumentOptionsShape,
  ): { add(value: number, attributes?: MetricAttributesShape): void };
  createHistogram(
    name: string,
    options?: InstrumentOptionsShape,
  ): { record(value: number, attributes?: MetricAttributesShape): void };
  createObservableGauge(
    name: string,
    options?: InstrumentOptionsShape,
  ): {
    addCallback(callback: (result: ObservableResultShape) => void): void;
    removeCallback(callback: (result: ObservableResultShape) => void): void;
  };
}

export interface MeterProviderShape {
  getMeter(name: string, version?: string): MeterShape;
}
