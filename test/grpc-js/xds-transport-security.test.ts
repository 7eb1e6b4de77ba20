// gRFC A29: how a cluster's TLS config reaches grpc-js. cds takes the cluster's object from its xDS client's
// registry (one per cluster, shared by the client's channels), xds_cluster_impl puts it on the subchannels it
// creates, and the helper adapter hands it to grpc-js in the subchannel's options, where XdsChannelCredentials
// reads it. Subchannels of one cluster to one address are shared; another cluster's are not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ChannelOptions, connectivityState, type experimental } from '@grpc/grpc-js';
import { Attributes, parseAddress } from '../../src/core/index.js';
import { GrpcHelperAdapter } from '../../src/grpc-js/helper-adapter.js';
import { XDS_TRANSPORT_SECURITY_OPTION } from '../../src/grpc-js/xds-security-options.js';
import {
  ClusterTransportSecurityRegistry,
  XDS_TRANSPORT_SECURITY,
} from '../../src/xds/transport-security.js';

function idleSubchannel(): experimental.SubchannelInterface {
  return new Proxy({} as experimental.SubchannelInterface, {
    get: (_target, name) =>
      name === 'getConnectivityState'
        ? () => connectivityState.IDLE
        : name === 'isHealthy'
          ? () => true
          : () => undefined,
  });
}

test('A29: the cluster object travels in the subchannel options; one grpc-js subchannel per cluster and address', () => {
  const created: ChannelOptions[] = [];
  const adapter = new GrpcHelperAdapter(
    {
      createSubchannel: (_address, options) => {
        created.push(options);
        return idleSubchannel();
      },
      updateState: () => {},
      requestReresolution: () => {},
      addChannelzChild: () => {},
      removeChannelzChild: () => {},
    },
    'test',
  );
  adapter.channelOptions = { 'grpc.keepalive_time_ms': 10_000 };
  const registry = new ClusterTransportSecurityRegistry();
  const c1 = registry.acquire('outbound|8080||echo');
  const c2 = registry.acquire('outbound|8080||other');
  const address = parseAddress('127.0.0.1:8080');

  adapter.createSubchannel(address, Attributes.EMPTY);
  assert.deepEqual(created[0], { 'grpc.keepalive_time_ms': 10_000 }, 'no cluster: the channel options only');
  adapter.createSubchannel(address, Attributes.of(XDS_TRANSPORT_SECURITY, c1));
  assert.equal(created.length, 2);
  assert.equal(created[1]![XDS_TRANSPORT_SECURITY_OPTION], c1);
  assert.equal(created[1]!['grpc.keepalive_time_ms'], 10_000);
  assert.equal(
    JSON.stringify(created[1]),
    '{"grpc.keepalive_time_ms":10000,"lbtree.xds_transport_security":"xDS transport security of cluster outbound|8080||echo"}',
  );
  // The same cluster again (another priority child, another policy): the same grpc-js subchannel.
  adapter.createSubchannel(address, Attributes.of(XDS_TRANSPORT_SECURITY, c1));
  assert.equal(created.length, 2);
  // Another cluster to the same address: its own subchannel, with its own config.
  adapter.createSubchannel(address, Attributes.of(XDS_TRANSPORT_SECURITY, c2));
  assert.equal(created.length, 3);
  assert.equal(created[2]![XDS_TRANSPORT_SECURITY_OPTION], c2);
});

test('the registry: one object per cluster while held, a fresh one after the last release', () => {
  const registry = new ClusterTransportSecurityRegistry();
  const a = registry.acquire('c');
  const b = registry.acquire('c');
  assert.equal(a, b);
  registry.release(a);
  assert.equal(registry.acquire('c'), a, 'still held once');
  registry.release(a);
  registry.release(b);
  assert.notEqual(registry.acquire('c'), a);
});
