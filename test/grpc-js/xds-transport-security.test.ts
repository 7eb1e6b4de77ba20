// gRFC A29: how a cluster's TLS config reaches grpc-js. cds takes the cluster's object from its xDS client's
// registry (one per cluster and TLS config, shared by the client's channels), xds_cluster_impl puts it on the subchannels it
// creates, and the helper adapter hands it to grpc-js in the subchannel's options, where XdsChannelCredentials
// reads it. Subchannels of one cluster to one address are shared; another cluster's are not.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChannelOptions } from '@grpc/grpc-js';
import { RE2JS } from 're2js';
import { Attributes, parseAddress } from '../../src/core/index.js';
import { GrpcHelperAdapter } from '../../src/grpc-js/helper-adapter.js';
import { XDS_TRANSPORT_SECURITY_OPTION } from '../../src/grpc-js/xds-security-options.js';
import type { XdsUpstreamTls } from '../../src/xds/resources/tls-context.js';
import type { XdsStringMatcher } from '../../src/xds/resources/types.js';
import {
  ClusterTransportSecurityRegistry,
  XDS_TRANSPORT_SECURITY,
} from '../../src/xds/transport-security.js';
import { idleGrpcSubchannel } from '../support/idle-grpc-subchannel.js';

test('A29: the cluster object travels in the subchannel options; one grpc-js subchannel per cluster and address', () => {
  const created: ChannelOptions[] = [];
  const adapter = new GrpcHelperAdapter(
    {
      createSubchannel: (_address, options) => {
        created.push(options);
        return idleGrpcSubchannel();
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
  const c1 = registry.acquire('outbound|8080||echo', undefined);
  const c2 = registry.acquire('outbound|8080||other', undefined);
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

const tls = (sans: XdsStringMatcher[]): XdsUpstreamTls => ({
  caCertificates: { kind: 'provider', provider: { instanceName: 'default', certificateName: 'ROOTCA' } },
  identityCertificate: { instanceName: 'default', certificateName: 'default' },
  matchSubjectAltNames: sans,
});

test('the registry: one object per cluster and config while held, a fresh one after the last release', () => {
  const registry = new ClusterTransportSecurityRegistry();
  const a = registry.acquire('c', undefined);
  const b = registry.acquire('c', undefined);
  assert.equal(a, b);
  registry.release(a);
  assert.equal(registry.acquire('c', undefined), a, 'still held once');
  registry.release(a);
  registry.release(b);
  assert.notEqual(registry.acquire('c', undefined), a);
  // An equal config parsed again (a re-sent Cluster): the same object; another config: another object.
  const exact = (value: string): XdsStringMatcher => ({ kind: 'exact', value, ignoreCase: false });
  const regex = (r: string): XdsStringMatcher => ({ kind: 'safe_regex', regex: RE2JS.compile(r) });
  const t1 = registry.acquire('c', tls([exact('spiffe://td/echo'), regex('spiffe://td/.*')]));
  assert.equal(registry.acquire('c', tls([exact('spiffe://td/echo'), regex('spiffe://td/.*')])), t1);
  assert.notEqual(registry.acquire('c', tls([exact('spiffe://td/other')])), t1);
  assert.notEqual(registry.acquire('c', tls([exact('spiffe://td/echo'), regex('spiffe://td/e.*')])), t1);
  assert.notEqual(registry.acquire('c', undefined), t1);
  assert.notEqual(registry.acquire('d', tls([exact('spiffe://td/echo'), regex('spiffe://td/.*')])), t1);
});
