import { type InstrumentDescriptor, type MetricsRecorder, registeredInstruments } from '../core/index.js';
import { ChannelMetricsRecorder, type InstrumentValues } from '../metrics/index.js';
import { XDS_CLIENT_INSTRUMENTS } from '../xds/client/metrics.js';

/**
 * A channel's metrics as the live view shows them: the channel's own values, with the XdsClient's instruments
 * read from the recorder the client records through. Channels share a client (A71: per target; lbtree also
 * shares one across targets when no server list can fall back), and the client records through the first
 * channel's recorder only (A79), under that channel's `grpc.target` (as C-core labels a client's metrics with
 * the target it was created for): every channel using the client shows those same series, the ones a
 * MeterProvider receives once. Undefined when neither records anything.
 */
export function channelInstrumentValues(
  own: MetricsRecorder | undefined,
  xdsClient: MetricsRecorder | undefined,
): readonly InstrumentValues[] | undefined {
  const mine = own instanceof ChannelMetricsRecorder ? own.values : undefined;
  const client = xdsClient instanceof ChannelMetricsRecorder ? xdsClient.values : undefined;
  if (client === undefined || client === mine) return mine?.read();
  const shared = client.read(XDS_CLIENT_INSTRUMENTS);
  const kept = (mine?.read() ?? []).filter((i) => !XDS_CLIENT_INSTRUMENT_NAMES.has(i.name));
  return [...kept, ...shared].sort((a, b) => registryOrder(a.name) - registryOrder(b.name));
}

const XDS_CLIENT_INSTRUMENT_NAMES: ReadonlySet<string> = new Set(
  [...XDS_CLIENT_INSTRUMENTS].map((i: InstrumentDescriptor) => i.name),
);

function registryOrder(name: string): number {
  return registeredInstruments().find((i) => i.name === name)?.index ?? Number.MAX_SAFE_INTEGER;
}
