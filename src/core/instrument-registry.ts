/**
 * A79's global instruments registry: every metric lbtree's components may record is described here once,
 * by the component that records it, before any stats plugin sees it. Plugins (the OpenTelemetry one in
 * src/metrics) turn descriptors into their own instruments; components record through a
 * {@link MetricsRecorder} with the descriptor as the handle, so they never see a plugin.
 */

/** A79's instrument types; `up_down_counter` is A94's `grpc.subchannel.open_connections`. */
export type InstrumentType = 'counter' | 'up_down_counter' | 'histogram' | 'gauge';

export interface InstrumentDescriptor<Type extends InstrumentType = InstrumentType> {
  readonly name: string;
  readonly description: string;
  /** OpenTelemetry unit text, e.g. `{update}`. */
  readonly unit: string;
  readonly type: Type;
  /** Labels present on every recording. */
  readonly labels: readonly string[];
  /** Labels a plugin records only when its user asks for them (A79 "Optional Labels"). */
  readonly optionalLabels: readonly string[];
  /** A79: experimental metrics are off by default; a user enables them by name. */
  readonly enabledByDefault: boolean;
  /** A histogram's recommended bucket boundaries, handed to OpenTelemetry as advice (A66, A96). */
  readonly bucketBoundaries?: readonly number[];
  /** Position in the registry: lets a plugin keep its instruments in an array. */
  readonly index: number;
}

export type CounterInstrument = InstrumentDescriptor<'counter'>;
export type UpDownCounterInstrument = InstrumentDescriptor<'up_down_counter'>;
export type HistogramInstrument = InstrumentDescriptor<'histogram'>;
export type GaugeInstrument = InstrumentDescriptor<'gauge'>;

export type InstrumentSpec<Type extends InstrumentType> = Omit<InstrumentDescriptor<Type>, 'index'>;

const instruments: InstrumentDescriptor[] = [];
const byName = new Map<string, InstrumentDescriptor>();

/**
 * Registers an instrument. A second registration under a name is an error (A79), unless it describes the
 * same instrument (a module loaded twice, as from both the package and its sources in tests): then the first
 * descriptor is the handle.
 */
export function registerInstrument<Type extends InstrumentType>(
  spec: InstrumentSpec<Type>,
): InstrumentDescriptor<Type> {
  const existing = byName.get(spec.name);
  if (existing !== undefined) {
    if (sameSpec(existing, spec)) return existing as InstrumentDescriptor<Type>;
    throw new Error(`metric instrument ${spec.name} is already registered with another description`);
  }
  const descriptor: InstrumentDescriptor<Type> = Object.freeze({
    ...spec,
    labels: Object.freeze([...spec.labels]),
    optionalLabels: Object.freeze([...spec.optionalLabels]),
    ...(spec.bucketBoundaries !== undefined
      ? { bucketBoundaries: Object.freeze([...spec.bucketBoundaries]) }
      : {}),
    index: instruments.length,
  });
  instruments.push(descriptor);
  byName.set(descriptor.name, descriptor);
  return descriptor;
}

/** Every registered instrument, in registration order. */
export function registeredInstruments(): readonly InstrumentDescriptor[] {
  return instruments;
}

export function findInstrument(name: string): InstrumentDescriptor | undefined {
  return byName.get(name);
}

function sameSpec(a: InstrumentDescriptor, b: InstrumentSpec<InstrumentType>): boolean {
  return (
    a.type === b.type &&
    a.unit === b.unit &&
    a.description === b.description &&
    a.enabledByDefault === b.enabledByDefault &&
    a.labels.join() === b.labels.join() &&
    a.optionalLabels.join() === b.optionalLabels.join() &&
    a.bucketBoundaries?.join() === b.bucketBoundaries?.join()
  );
}
