// A40 CSDS end to end: `register({ xds })` adds lbtree's CSDS service to grpc-js's admin services, so a server
// given `addAdminServicesToServer` answers envoy.service.status.v3.ClientStatusDiscoveryService with what
// lbtree's xDS client holds — read here by a real CSDS client over loopback (messages by @bufbuild/protobuf).
// Its own process: grpc-js keeps one resolver per scheme and one admin service list.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { create, fromBinary, type MessageInitShape, toBinary } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { type Backend, BackendClient, startBackends, whoami } from '../../src/cli/loopback-backends.js';
import {
  CLUSTER_TYPE_URL,
  ControlPlane,
  LISTENER_TYPE_URL,
  ROUTE_CONFIGURATION_TYPE_URL,
  xdsService,
} from '../../src/control-plane/index.js';
import { register } from '../../src/grpc-js/index.js';
import { ClientResourceStatus } from '../../src/protos/gen/envoy/admin/v3/config_dump_shared_pb.js';
import {
  type ClientStatusRequest,
  ClientStatusRequestSchema,
  type ClientStatusResponse,
  ClientStatusResponseSchema,
} from '../../src/protos/gen/envoy/service/status/v3/csds_pb.js';
import { NodeMatcherSchema } from '../../src/protos/gen/envoy/type/matcher/v3/node_pb.js';

const NODE = 'lbtree-csds-e2e';
const SERVICE = '/envoy.service.status.v3.ClientStatusDiscoveryService';
const serialize = (r: ClientStatusRequest) => Buffer.from(toBinary(ClientStatusRequestSchema, r));
const deserialize = (b: Buffer) => fromBinary(ClientStatusResponseSchema, b);

describe('A40: CSDS through grpc-js admin services (addAdminServicesToServer)', () => {
  const plane = new ControlPlane();
  const admin = new grpc.Server();
  let backend: Backend;
  let csds: grpc.Client;
  let channel: InstanceType<typeof BackendClient>;

  before(async () => {
    [backend] = (await startBackends(['s1'])) as [Backend];
    await plane.listen('127.0.0.1:0');
    register({ xds: { bootstrap: plane.bootstrap({ nodeId: NODE }) } });
    grpc.addAdminServicesToServer(admin);
    const port = await new Promise<number>((resolve, reject) =>
      admin.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    csds = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    plane.setResources(
      xdsService({
        name: 'csds-svc',
        clusters: [{ name: 'csds-cluster', localities: [{ endpoints: [backend.address] }] }],
      }),
    );
    channel = new BackendClient('xds:///csds-svc', grpc.credentials.createInsecure());
    assert.equal(await whoami(channel, { waitForReady: true, deadlineMs: 15_000 }), 's1');
  });
  after(async () => {
    channel.close();
    csds.close();
    admin.forceShutdown();
    backend.stop();
    await plane.close();
  });

  function fetch(
    request: MessageInitShape<typeof ClientStatusRequestSchema> = {},
  ): Promise<ClientStatusResponse> {
    return new Promise((resolve, reject) =>
      csds.makeUnaryRequest(
        `${SERVICE}/FetchClientStatus`,
        serialize,
        deserialize,
        create(ClientStatusRequestSchema, request),
        (e, r) => (e ? reject(e) : resolve(r!)),
      ),
    );
  }

  test('FetchClientStatus: the node (A40 "Generated Node Information") and every resource ACKED with its version and contents', async () => {
    const response = await fetch();
    assert.equal(response.config.length, 1, 'one xDS client');
    const config = response.config[0]!;
    assert.equal(config.node?.id, NODE);
    assert.equal(config.node?.userAgentName, 'lbtree');
    assert.ok(config.node?.clientFeatures.includes('envoy.lb.does_not_support_overprovisioning'));
    const byType = (typeUrl: string, name: string) =>
      config.genericXdsConfigs.find((c) => c.typeUrl === typeUrl && c.name === name);
    for (const [typeUrl, name] of [
      [LISTENER_TYPE_URL, 'csds-svc'],
      [ROUTE_CONFIGURATION_TYPE_URL, 'csds-svc-routes'],
      [CLUSTER_TYPE_URL, 'csds-cluster'],
    ] as const) {
      const entry = byType(typeUrl, name);
      assert.ok(entry, `${name} is in the dump`);
      assert.equal(entry.clientStatus, ClientResourceStatus.ACKED);
      assert.equal(entry.versionInfo, '1');
      assert.equal(
        entry.xdsConfig?.typeUrl,
        typeUrl,
        'the resource as received (A40 "Expose xDS Config As Is")',
      );
      assert.ok((entry.xdsConfig?.value.length ?? 0) > 0);
      assert.ok(entry.lastUpdated !== undefined);
    }
    const without = await fetch({ excludeResourceContents: true });
    assert.ok(without.config[0]!.genericXdsConfigs.every((c) => c.xdsConfig === undefined));
  });

  test('a NACKed update: NACKED with the error state (A40 "xDS Config Error State"), the accepted version still shown', async () => {
    plane.setResources([
      { '@type': LISTENER_TYPE_URL, name: 'csds-svc' },
      ...xdsService({
        name: 'csds-svc',
        clusters: [{ name: 'csds-cluster', localities: [{ endpoints: [backend.address] }] }],
      }).slice(1),
    ]);
    await plane.waitForNack({});
    let listener: ClientStatusResponse['config'][number]['genericXdsConfigs'][number] | undefined;
    const deadline = Date.now() + 10_000;
    while (listener?.clientStatus !== ClientResourceStatus.NACKED && Date.now() < deadline) {
      listener = (await fetch()).config[0]!.genericXdsConfigs.find(
        (c) => c.typeUrl === LISTENER_TYPE_URL && c.name === 'csds-svc',
      );
    }
    assert.equal(listener?.clientStatus, ClientResourceStatus.NACKED);
    assert.equal(listener.versionInfo, '1', 'the version in use');
    assert.equal(listener.errorState?.versionInfo, '2', 'the rejected version');
    assert.match(listener.errorState?.details ?? '', /api_listener/);
    assert.ok(listener.errorState?.lastUpdateAttempt !== undefined);
  });

  test('node_matchers are refused with INVALID_ARGUMENT (A40 "Node Matching")', async () => {
    await assert.rejects(fetch({ nodeMatchers: [create(NodeMatcherSchema, {})] }), (e: grpc.ServiceError) => {
      assert.equal(e.code, grpc.status.INVALID_ARGUMENT);
      return true;
    });
  });

  test('StreamClientStatus: one response per request, in order, on one stream', async () => {
    const call = csds.makeBidiStreamRequest(`${SERVICE}/StreamClientStatus`, serialize, deserialize);
    const responses: ClientStatusResponse[] = [];
    call.on('data', (r: ClientStatusResponse) => responses.push(r));
    const ended = new Promise<void>((resolve, reject) => {
      call.on('end', resolve);
      call.on('error', reject);
    });
    call.write(create(ClientStatusRequestSchema, {}));
    call.write(create(ClientStatusRequestSchema, { excludeResourceContents: true }));
    call.end();
    await ended;
    assert.equal(responses.length, 2);
    assert.equal(responses[0]!.config[0]?.node?.id, NODE);
    assert.ok(responses[0]!.config[0]!.genericXdsConfigs.some((c) => c.xdsConfig !== undefined));
    assert.ok(responses[1]!.config[0]!.genericXdsConfigs.every((c) => c.xdsConfig === undefined));
  });
});
