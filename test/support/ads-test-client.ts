// A bare ADS client over a real grpc-js stream, for tests that speak the protocol request by request:
// it sends exactly the DiscoveryRequests a test writes and hands back each DiscoveryResponse in order.
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import * as grpc from '@grpc/grpc-js';
import { ADS_SERVICE } from '../../src/control-plane/index.js';
import { NodeSchema } from '../../src/protos/gen/envoy/config/core/v3/base_pb.js';
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from '../../src/protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import { xdsTypeRegistry } from '../../src/protos/type-registry.js';

const AdsClient = grpc.makeGenericClientConstructor(ADS_SERVICE, 'AggregatedDiscoveryService');

export class AdsTestClient {
  private readonly client: InstanceType<typeof AdsClient>;
  private readonly call: grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>;
  private readonly received: DiscoveryResponse[] = [];
  private readonly waiting: ((r: DiscoveryResponse) => void)[] = [];
  private firstRequest = true;
  /** The stream's final status (the control plane went away, or cancelled it). */
  private readonly status: Promise<grpc.StatusObject>;

  constructor(
    address: string,
    readonly nodeId = 'test-node',
  ) {
    this.client = new AdsClient(address, grpc.credentials.createInsecure());
    this.call = (
      this.client as unknown as {
        streamAggregatedResources(): grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>;
      }
    ).streamAggregatedResources();
    this.call.on('data', (response: DiscoveryResponse) => {
      const waiter = this.waiting.shift();
      if (waiter) waiter(response);
      else this.received.push(response);
    });
    this.status = new Promise((resolve) => this.call.on('status', resolve));
    this.call.on('error', () => {});
  }

  /** Sends a request; the first one carries the node. */
  send(request: MessageInitShape<typeof DiscoveryRequestSchema>): void {
    const message = create(DiscoveryRequestSchema, request);
    if (this.firstRequest) message.node = create(NodeSchema, { id: this.nodeId });
    this.firstRequest = false;
    this.call.write(message);
  }

  /** ACKs `response` (its version and nonce) keeping `names` subscribed. */
  ack(response: DiscoveryResponse, names: readonly string[] = []): void {
    this.send({
      typeUrl: response.typeUrl,
      versionInfo: response.versionInfo,
      responseNonce: response.nonce,
      resourceNames: [...names],
    });
  }

  /** NACKs `response` with `reason`, keeping `keptVersion`. */
  nack(response: DiscoveryResponse, reason: string, keptVersion = '', names: readonly string[] = []): void {
    this.send({
      typeUrl: response.typeUrl,
      versionInfo: keptVersion,
      responseNonce: response.nonce,
      resourceNames: [...names],
      errorDetail: { code: grpc.status.INVALID_ARGUMENT, message: reason },
    });
  }

  /** The next response of the stream (in arrival order); rejects after `timeoutMs`. */
  next(timeoutMs = 5000): Promise<DiscoveryResponse> {
    const ready = this.received.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(new Error(`no DiscoveryResponse within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (r: DiscoveryResponse) => {
        clearTimeout(timer);
        resolve(r);
      };
      this.waiting.push(waiter);
    });
  }

  /** The stream's status once it has ended; rejects after `timeoutMs`. */
  ended(timeoutMs = 5000): Promise<grpc.StatusObject> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`stream still open after ${timeoutMs} ms`)), timeoutMs);
    });
    return Promise.race([this.status, timeout]).finally(() => clearTimeout(timer));
  }

  close(): void {
    this.call.cancel();
    this.client.close();
  }
}

/** The names of the resources a response carries (name, or cluster_name for EDS). */
export function namesIn(response: DiscoveryResponse): string[] {
  return response.resources.map((any) => {
    const message = anyUnpack(any, xdsTypeRegistry) as { name?: string; clusterName?: string } | undefined;
    return message?.name ?? message?.clusterName ?? '?';
  });
}
