import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import { leaseXdsClient } from '../../../src/grpc-js/xds-client-pool.js';
import { ADS_METHOD, grpcXdsTransportFactory, xdsClientTrace } from '../../../src/grpc-js/xds-transport.js';
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from '../../../src/protos/gen/envoy/service/discovery/v3/discovery_pb.js';
import { parseBootstrap } from '../../../src/xds/client/bootstrap.js';
import { XdsClient } from '../../../src/xds/client/xds-client.js';
import { until } from '../../support/until.js';
import { RecordingWatcher } from './fake-ads.js';
import { type Thing, thing, wholeThingType } from './test-resource-type.js';

const WHOLE = wholeThingType.typeUrl;

/** A bare ADS server on grpc-js that records requests and answers when the test says so. */
class ScriptedAdsServer {
  readonly requests: DiscoveryRequest[] = [];
  readonly calls: ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>[] = [];
  private server: Server | undefined;
  private nonce = 0;

  async start(port = 0): Promise<number> {
    const server = new Server();
    server.addService(
      {
        StreamAggregatedResources: {
          path: ADS_METHOD,
          requestStream: true,
          responseStream: true,
          requestSerialize: (r: DiscoveryRequest) => Buffer.from(toBinary(DiscoveryRequestSchema, r)),
          requestDeserialize: (b: Buffer) => fromBinary(DiscoveryRequestSchema, b),
          responseSerialize: (r: DiscoveryResponse) => Buffer.from(toBinary(DiscoveryResponseSchema, r)),
          responseDeserialize: (b: Buffer) => fromBinary(DiscoveryResponseSchema, b),
        },
      },
      {
        StreamAggregatedResources: (call: ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>) => {
          this.calls.push(call);
          call.on('data', (r: DiscoveryRequest) => this.requests.push(r));
          call.on('error', () => {});
        },
      },
    );
    const bound = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    this.server = server;
    return bound;
  }

  respond(version: string, resources: ReturnType<typeof thing>[]): string {
    const nonce = `n${++this.nonce}`;
    this.calls[this.calls.length - 1]!.write(
      create(DiscoveryResponseSchema, { typeUrl: WHOLE, versionInfo: version, nonce, resources }),
    );
    return nonce;
  }

  stop(): void {
    this.server?.forceShutdown();
    this.server = undefined;
  }
}

describe('the grpc-js ADS transport on loopback (A27 ADS v3, A57 stream restarts)', () => {
  const cleanup: (() => void)[] = [];
  after(() => {
    for (const c of cleanup) c();
  });

  test('subscribes with the node, ACKs, NACKs, and re-subscribes with the ACKed version after a server restart', async () => {
    const ads = new ScriptedAdsServer();
    const port = await ads.start();
    cleanup.push(() => ads.stop());
    const client = new XdsClient({
      bootstrap: parseBootstrap({
        xds_servers: [{ server_uri: `127.0.0.1:${port}`, channel_creds: [{ type: 'insecure' }] }],
        node: { id: 'e2e-node' },
      }),
      transport: grpcXdsTransportFactory,
      backoff: { initialMs: 50, maxMs: 200 },
    });
    cleanup.push(() => client.close());
    const watcher = new RecordingWatcher((t: Thing) => `${t.name}=${t.value}`);
    client.watch(wholeThingType, 'a', watcher);

    await until('the first request', () => ads.requests.length >= 1);
    assert.deepEqual(ads.requests[0]!.resourceNames, ['a']);
    assert.equal(ads.requests[0]!.node?.id, 'e2e-node');
    await until('the stream to be connected', () => client.dump().stream === 'connected');

    const n1 = ads.respond('v1', [thing(WHOLE, 'a', 1)]);
    await until('the watcher to hear a=1', () => watcher.events.includes('changed a=1'));
    await until('the ACK', () => ads.requests.some((r) => r.responseNonce === n1));
    assert.equal(ads.requests.find((r) => r.responseNonce === n1)!.versionInfo, 'v1');

    const n2 = ads.respond('v2', [thing(WHOLE, 'a', -1)]);
    await until('the NACK', () => ads.requests.some((r) => r.responseNonce === n2));
    const nack = ads.requests.find((r) => r.responseNonce === n2)!;
    assert.equal(nack.versionInfo, 'v1');
    assert.match(nack.errorDetail?.message ?? '', /WholeThing "a": value: -1/);
    await until('the ambient NACK error', () => watcher.events.includes('ambient INVALID_ARGUMENT'));

    ads.stop();
    await until('the outage to be seen', () => client.dump().stream !== 'connected');
    const seen = ads.requests.length;
    await ads.start(port);
    await until('the re-subscription', () => ads.requests.length > seen);
    const resubscription = ads.requests[seen]!;
    assert.deepEqual(resubscription.resourceNames, ['a']);
    assert.equal(resubscription.versionInfo, 'v1', 'the last ACKed version');
    assert.equal(resubscription.responseNonce, '');
    assert.equal(resubscription.node?.id, 'e2e-node');
    ads.respond('v3', [thing(WHOLE, 'a', 3)]);
    await until('the watcher to hear a=3', () => watcher.events.includes('changed a=3'));
    assert.equal(client.dump().resources[0]!.status, 'ACKED');
  });
});

describe('the shared xDS client of a bootstrap (A27: one XdsClient per process)', () => {
  test('leases of one bootstrap share a client, which closes with the last release', () => {
    const bootstrap = { xds_servers: [{ server_uri: '127.0.0.1:1', channel_creds: [{ type: 'insecure' }] }] };
    const first = leaseXdsClient(bootstrap);
    const second = leaseXdsClient(JSON.parse(JSON.stringify(bootstrap)));
    const other = leaseXdsClient({ ...bootstrap, node: { id: 'other' } });
    assert.equal(first.client, second.client);
    assert.notEqual(first.client, other.client);
    first.release();
    first.release();
    assert.equal(second.client.dump().stream, 'idle');
    second.release();
    other.release();
    assert.equal(second.client.dump().stream, 'closed');
    const again = leaseXdsClient(bootstrap);
    assert.notEqual(again.client, first.client, 'a new lease after the last release makes a new client');
    again.release();
  });

  test('GRPC_TRACE=xds_client, lbtree or all turns the trace on', () => {
    const lines: string[] = [];
    const built = (env: NodeJS.ProcessEnv) => {
      lines.length = 0;
      xdsClientTrace(env)(() => {
        lines.push('built');
        return 'x';
      });
      return lines.length === 1;
    };
    assert.equal(built({}), false);
    assert.equal(built({ GRPC_TRACE: 'channel' }), false);
    assert.equal(built({ GRPC_TRACE: 'channel,xds_client' }), true);
    assert.equal(built({ GRPC_TRACE: 'lbtree' }), true);
    assert.equal(built({ GRPC_TRACE: 'all' }), true);
  });
});
