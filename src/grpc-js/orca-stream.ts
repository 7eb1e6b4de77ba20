import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { durationFromMs } from '@bufbuild/protobuf/wkt';
import {
  ChannelCredentials,
  Client,
  type ClientReadableStream,
  connectivityState,
  type experimental,
  type ServiceError,
} from '@grpc/grpc-js';
import {
  type BackendMetricsListener,
  OobMetricsStream,
  type OpenOrcaStream,
  realClock,
  type Unwatch,
} from '../core/index.js';
import { OrcaLoadReportSchema } from '../protos/gen/xds/data/orca/v3/orca_load_report_pb.js';
import { OrcaLoadReportRequestSchema } from '../protos/gen/xds/service/orca/v3/orca_pb.js';
import { toBackendMetricReport } from './backend-metrics.js';

/** The ORCA out-of-band method (A51). */
export const STREAM_CORE_METRICS = '/xds.service.orca.v3.OpenRcaService/StreamCoreMetrics';

type RealSubchannel = ReturnType<experimental.SubchannelInterface['getRealSubchannel']>;

/** One ORCA stream per grpc-js connection, shared by every lbtree handle on it (A51). */
const streams = new WeakMap<RealSubchannel, SubchannelOrcaStream>();

/**
 * Watches the out-of-band backend metrics of the grpc-js subchannel `grpc`: the StreamCoreMetrics call runs
 * on that very connection (grpc-js's subchannel channel), opened while it is READY.
 */
export function watchSubchannelBackendMetrics(
  grpc: experimental.SubchannelInterface,
  periodMs: number,
  listener: BackendMetricsListener,
): Unwatch {
  const real = grpc.getRealSubchannel();
  let stream = streams.get(real);
  if (stream === undefined) {
    stream = new SubchannelOrcaStream(real, () => streams.delete(real));
    streams.set(real, stream);
  }
  return stream.watch(periodMs, listener);
}

class SubchannelOrcaStream {
  private readonly stream: OobMetricsStream;
  private client: Client | null = null;
  private readonly onState: experimental.ConnectivityStateListener = (_sub, _prev, next) =>
    this.stream.setReady(next === connectivityState.READY);

  constructor(
    private readonly real: RealSubchannel,
    private readonly onIdle: () => void,
  ) {
    const address = real.getAddress();
    this.stream = new OobMetricsStream(
      (periodMs, handlers) => this.open(periodMs, handlers),
      realClock,
      (message) => console.error(`lbtree: ${address}: ${message}`),
    );
  }

  watch(periodMs: number, listener: BackendMetricsListener): Unwatch {
    if (!this.stream.watching) {
      this.real.addConnectivityStateListener(this.onState);
      this.stream.setReady(this.real.getConnectivityState() === connectivityState.READY);
    }
    const unwatch = this.stream.watch(periodMs, listener);
    return () => {
      unwatch();
      if (!this.stream.watching) {
        this.real.removeConnectivityStateListener(this.onState);
        this.client = null; // the subchannel's own channel stays with the subchannel
        this.onIdle();
      }
    };
  }

  private open: OpenOrcaStream = (periodMs, handlers) => {
    this.client ??= new Client('orca', ChannelCredentials.createInsecure(), {
      channelOverride: this.real.getChannel(),
    });
    const request = create(OrcaLoadReportRequestSchema, { reportInterval: durationFromMs(periodMs) });
    const call: ClientReadableStream<ReturnType<typeof toBackendMetricReport>> =
      this.client.makeServerStreamRequest(
        STREAM_CORE_METRICS,
        (r: typeof request) => Buffer.from(toBinary(OrcaLoadReportRequestSchema, r)),
        (bytes: Buffer) => toBackendMetricReport(fromBinary(OrcaLoadReportSchema, bytes)),
        request,
      );
    call.on('data', (report) => handlers.report(report));
    call.on('error', (e: ServiceError) => handlers.end({ code: e.code as number, details: e.details }));
    call.on('end', () => handlers.end({ code: 0, details: 'the server ended the ORCA stream' }));
    return () => call.cancel();
  };
}
