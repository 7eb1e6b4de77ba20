// A40 CSDS with both xDS libraries in one process: @grpc/grpc-js-xds's `register()` and lbtree's
// `register({ xds })` each register a CSDS admin service with grpc-js, which serves one handler per method, so
// `addAdminServicesToServer(server)` would throw "Method handler … already provided". lbtree sees the other
// registration and serves its own xDS clients under lbtree.ClientStatusDiscoveryService instead (saying so once
// in grpc-js's log); grpc-js-xds keeps A40's name for its clients. Each library has a live channel and client
// here: the first channel is made while grpc-js-xds's resolver is the `xds:` one, the second after lbtree's
// replaced it. Its own process: grpc-js keeps one resolver per scheme and one admin service list.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import * as grpc from '@grpc/grpc-js';
import { type Backend, BackendClient, startBackends, whoami } from '../../src/cli/loopback-backends.js';
import { ControlPlane, LISTENER_TYPE_URL, xdsService } from '../../src/control-plane/index.js';
import { CSDS_SERVICE_NAME, LBTREE_CSDS_SERVICE_NAME } from '../../src/grpc-js/csds-service.js';
import { register } from '../../src/grpc-js/index.js';
import {
  ClientStatusRequestSchema,
  ClientStatusResponseSchema,
} from '../../src/protos/gen/envoy/service/status/v3/csds_pb.js';

const require = createRequire(import.meta.url);
const serialize = () =>
  Buffer.from(toBinary(ClientStatusRequestSchema, create(ClientStatusRequestSchema, {})));
const deserialize = (b: Buffer) => fromBinary(ClientStatusResponseSchema, b);

describe('A40: lbtree and @grpc/grpc-js-xds both register CSDS in one process', () => {
  const plane = new ControlPlane();
  const admin = new grpc.Server();
  const logged: string[] = [];
  let backend: Backend;
  let csds: grpc.Client;
  const channels: InstanceType<typeof BackendClient>[] = [];

  before(async () => {
    [backend] = (await startBackends(['s1'])) as [Backend];
    await plane.listen('127.0.0.1:0');
    plane.setResources(
      xdsService({
        name: 'both-svc',
        clusters: [{ name: 'both-cluster', localities: [{ endpoints: [backend.address] }] }],
      }),
    );
    grpc.setLogger({ error: (...args: unknown[]) => logged.push(args.join(' ')) } as unknown as Console);
    // grpc-js-xds reads its bootstrap from the environment when its first channel resolves.
    process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify(plane.bootstrap({ nodeId: 'grpc-js-xds-node' }));
    (require('@grpc/grpc-js-xds') as { register(): void }).register();
    const theirs = new BackendClient('xds:///both-svc', grpc.credentials.createInsecure());
    channels.push(theirs);
    assert.equal(await whoami(theirs, { waitForReady: true, deadlineMs: 15_000 }), 's1');

    register({ xds: { bootstrap: plane.bootstrap({ nodeId: 'lbtree-node' }) } });
    const ours = new BackendClient('xds:///both-svc', grpc.credentials.createInsecure());
    channels.push(ours);
    assert.equal(await whoami(ours, { waitForReady: true, deadlineMs: 15_000 }), 's1');

    grpc.addAdminServicesToServer(admin);
    const port = await new Promise<number>((resolve, reject) =>
      admin.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    csds = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    for (const c of channels) c.close();
    csds.close();
    admin.forceShutdown();
    backend.stop();
    await plane.close();
  });

  const fetch = (service: string) =>
    new Promise<ReturnType<typeof deserialize>>((resolve, reject) =>
      csds.makeUnaryRequest(`/${service}/FetchClientStatus`, serialize, deserialize, null, (e, r) =>
        e ? reject(e) : resolve(r!),
      ),
    );
  /** The Listener in the dump (grpc-js-xds writes type URLs without their `type.googleapis.com/` prefix). */
  const listenerOf = (response: ReturnType<typeof deserialize>) =>
    response.config[0]?.genericXdsConfigs.find((c) => LISTENER_TYPE_URL.endsWith(c.typeUrl))?.name;

  test('addAdminServicesToServer adds both; A40’s name answers for grpc-js-xds’s client, lbtree’s name for lbtree’s', async () => {
    const theirs = await fetch(CSDS_SERVICE_NAME);
    assert.deepEqual(
      theirs.config.map((c) => c.node?.id),
      ['grpc-js-xds-node'],
    );
    assert.equal(listenerOf(theirs), 'both-svc');
    const ours = await fetch(LBTREE_CSDS_SERVICE_NAME);
    assert.deepEqual(
      ours.config.map((c) => c.node?.id),
      ['lbtree-node'],
    );
    assert.equal(ours.config[0]?.node?.userAgentName, 'lbtree');
    assert.equal(listenerOf(ours), 'both-svc');
  });

  test('the move is said once in grpc-js’s log, naming both services', async () => {
    const lines = logged.filter((l) => l.includes('CSDS admin service'));
    assert.equal(lines.length, 1, logged.join('\n'));
    assert.ok(lines[0]!.includes(CSDS_SERVICE_NAME) && lines[0]!.includes(LBTREE_CSDS_SERVICE_NAME));
    // Another server gets the same services, without a second message.
    const second = new grpc.Server();
    grpc.addAdminServicesToServer(second);
    second.forceShutdown();
    assert.equal(logged.filter((l) => l.includes('CSDS admin service')).length, 1);
  });
});
