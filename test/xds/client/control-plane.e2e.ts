import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ControlPlane, cluster, clusterLoadAssignment } from '../../../src/control-plane/index.js';
import { grpcXdsTransportFactory } from '../../../src/grpc-js/xds-transport.js';
import { parseBootstrap } from '../../../src/xds/client/bootstrap.js';
import { XdsClient } from '../../../src/xds/client/xds-client.js';
import {
  clusterResourceType,
  endpointResourceType,
  type XdsCluster,
  type XdsEndpointResource,
} from '../../../src/xds/resources/index.js';
import { until } from '../../support/until.js';
import { RecordingWatcher } from './fake-ads.js';

const CDS = clusterResourceType.typeUrl;

const showCluster = (c: XdsCluster) => `${c.name}:${JSON.stringify(c.lbPolicy)}`;
const showEndpoints = (_: XdsEndpointResource) => 'endpoints';

describe("lbtree's xDS client against lbtree's control plane on loopback (A27, A57, A88)", () => {
  const cleanup: (() => unknown)[] = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  test('subscribe, update, NACK naming the field, deletion, and a control-plane restart', async () => {
    const endpoints = clusterLoadAssignment('eds-a', [
      { zone: 'z1', endpoints: ['127.0.0.1:9001', '127.0.0.1:9002'] },
    ]);
    const controlPlane = new ControlPlane({
      resources: [cluster({ name: 'a', edsServiceName: 'eds-a' }), endpoints],
    });
    const port = await controlPlane.listen('127.0.0.1:0');
    cleanup.push(() => controlPlane.close());
    const client = new XdsClient({
      bootstrap: parseBootstrap(controlPlane.bootstrap({ nodeId: 'client-e2e' })),
      transport: grpcXdsTransportFactory,
      backoff: { initialMs: 50, maxMs: 200 },
    });
    cleanup.push(() => client.close());
    const clusterWatcher = new RecordingWatcher(showCluster);
    const edsWatcher = new RecordingWatcher(showEndpoints);
    client.watch(clusterResourceType, 'a', clusterWatcher);
    client.watch(endpointResourceType, 'eds-a', edsWatcher);

    // Subscribe: both resources arrive and are ACKed with version "1" under our node ID.
    await until('cluster a', () => clusterWatcher.events.length > 0);
    assert.match(clusterWatcher.take()[0]!, /^changed a:.*round_robin/);
    await until('eds-a', () => edsWatcher.take().includes('changed endpoints'));
    const ack = await controlPlane.waitForAck({ typeUrl: CDS, version: '1', nodeId: 'client-e2e' });
    assert.deepEqual(ack.resourceNames, ['a']);

    // Update: a new version is pushed, taken and ACKed.
    controlPlane.setResources([
      cluster({ name: 'a', edsServiceName: 'eds-a', lbPolicy: 'LEAST_REQUEST' }),
      endpoints,
    ]);
    await until('the update', () => clusterWatcher.events.length > 0);
    assert.match(clusterWatcher.take()[0]!, /^changed a:.*least_request/);
    await controlPlane.waitForAck({ typeUrl: CDS, version: '2', nodeId: 'client-e2e' });

    // NACK: the reason names the resource and the field; version "2" keeps serving (A88: ambient error).
    controlPlane.setResources([
      cluster({
        name: 'a',
        edsServiceName: 'eds-a',
        lbPolicy: 'RING_HASH',
        ringHash: { minimumRingSize: 2000, maximumRingSize: 10 },
      }),
      endpoints,
    ]);
    const nack = await controlPlane.waitForNack({ typeUrl: CDS, version: '3', nodeId: 'client-e2e' });
    assert.equal(nack.keptVersion, '2');
    assert.match(nack.reason, /Cluster "a": .*ring/i);
    await until('the ambient error', () => clusterWatcher.events.length > 0);
    assert.deepEqual(clusterWatcher.take(), ['ambient INVALID_ARGUMENT']);
    const nacked = client.dump().resources.find((r) => r.typeUrl === CDS)!;
    assert.equal(nacked.status, 'NACKED');
    assert.equal(nacked.version, '2');
    assert.equal(nacked.error?.version, '3');

    // Deletion (A88 default): the cluster keeps serving, the watcher hears an ambient NOT_FOUND.
    controlPlane.setResources([endpoints]);
    await controlPlane.waitForAck({ typeUrl: CDS, version: '4', nodeId: 'client-e2e' });
    await until('the deletion', () => clusterWatcher.events.length > 0);
    assert.deepEqual(clusterWatcher.take(), ['ambient NOT_FOUND']);
    assert.equal(client.dump().resources.find((r) => r.typeUrl === CDS)!.status, 'DOES_NOT_EXIST');

    // Restart: the stream fails, the cached resources keep serving, and the client subscribes again with
    // the versions it ACKed once the control plane is back.
    controlPlane.setResources([cluster({ name: 'a', edsServiceName: 'eds-a' }), endpoints]);
    await until('the cluster back', () => clusterWatcher.events.some((e) => e.startsWith('changed a:')));
    clusterWatcher.take();
    const acksBefore = controlPlane.acks.length;
    await controlPlane.close();
    await until('the outage to be seen', () => client.dump().stream !== 'connected');
    await controlPlane.listen(`127.0.0.1:${port}`);
    await until('the re-subscription ACKs', () =>
      controlPlane.acks.slice(acksBefore).some((a) => a.typeUrl === CDS && a.nodeId === 'client-e2e'),
    );
    const dump = client.dump();
    assert.equal(dump.stream, 'connected');
    assert.deepEqual(
      dump.resources.map((r) => r.status),
      ['ACKED', 'ACKED'],
    );
    assert.ok(
      !clusterWatcher.events.some((e) => e.startsWith('error')),
      `no data error through the restart: ${clusterWatcher.events.join(', ')}`,
    );
  });
});
