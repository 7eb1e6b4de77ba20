// The config grpc-js gets for a call lbtree's xDS config selector routed (A31): it is the call's pick information
// (grpc-js hands each pick of the call `config.pickInformation`), carries the request hash computed when first
// read (A42), and releases the call's hold on its cluster when grpc-js commits the call (`config.onCommitted()`).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metadata } from '@grpc/grpc-js';
import { type CallMetadata, type PickArgs, QUEUE } from '../../src/core/index.js';
import { GrpcPickerAdapter } from '../../src/grpc-js/picker-adapter.js';
import { XdsCallConfig } from '../../src/grpc-js/xds-call-config.js';
import type { HashPolicy } from '../../src/hash/index.js';
import {
  selectedCluster,
  XDS_PATH_CALL_ATTRIBUTE,
  XDS_ROUTE_CALL_ATTRIBUTE,
} from '../../src/xds/call-attributes.js';
import { ClusterRefs } from '../../src/xds/resolver/cluster-refs.js';
import { XdsConfigSelector } from '../../src/xds/resolver/config-selector.js';
import { routeTo } from '../support/xds-routes.js';

function routedCall(hashPolicies: HashPolicy[], headers: Record<string, string>, random: () => number) {
  const released: string[] = [];
  const refs = new ClusterRefs((c) => released.push(c));
  const selector = new XdsConfigSelector(
    {
      name: 'vh',
      domains: ['*'],
      routes: [routeTo('c1', hashPolicies)],
      filterOverrides: new Map(),
    },
    refs,
    { channelId: 7n, random },
  );
  const metadata: CallMetadata = { get: (key) => (headers[key] === undefined ? [] : [headers[key]!]) };
  const selection = selector.select('/pkg.Echo/Say', metadata);
  assert.ok(selection.ok);
  selector.release();
  return { selection, refs, released };
}

function picks(config: XdsCallConfig, times: number) {
  const seen: unknown[][] = [];
  const adapter = new GrpcPickerAdapter({
    pick(args: PickArgs) {
      seen.push([
        selectedCluster(args),
        args.callAttributes?.get(XDS_ROUTE_CALL_ATTRIBUTE),
        args.callAttributes?.get(XDS_PATH_CALL_ATTRIBUTE),
        args.hash,
      ]);
      return QUEUE;
    },
  });
  for (let i = 0; i < times; i++)
    adapter.pick({ metadata: new Metadata(), extraPickInfo: config.pickInformation });
  return seen;
}

test('A31: a routed call’s config is its own pick information, with the cluster, route and path; A42: its hash is drawn at the first read and the same on every pick', () => {
  let draws = 0;
  const { selection } = routedCall([], {}, () => {
    draws++;
    return 0.25;
  });
  const config = new XdsCallConfig(selection, '/pkg.Echo/Say', { name: [] }, [], undefined);
  assert.equal(config.pickInformation, config);
  assert.equal(draws, 0, 'routing draws no hash');
  const seen = picks(config, 2);
  assert.equal(draws, 2, 'one random hash: two 32-bit draws');
  assert.deepEqual(seen, [
    ['cluster:c1', '0', '/pkg.Echo/Say', 0x4000000040000000n],
    ['cluster:c1', '0', '/pkg.Echo/Say', 0x4000000040000000n],
  ]);
});

test('A42: a header hash policy hashes the headers the call was routed with, at routing', () => {
  const headers: Record<string, string> = { 'session-id': 'abc' };
  const policy: HashPolicy = { type: 'header', headerName: 'session-id' };
  const { selection } = routedCall([policy], headers, () => 0.5);
  headers['session-id'] = 'changed after routing';
  const config = new XdsCallConfig(selection, '/pkg.Echo/Say', { name: [] }, [], undefined);
  const [[, , , routedHash]] = picks(config, 1) as [[unknown, unknown, unknown, bigint]];
  const { selection: again } = routedCall([policy], { 'session-id': 'abc' }, () => 0.5);
  const [[, , , sameHeaders]] = picks(new XdsCallConfig(again, '/p/m', { name: [] }, [], undefined), 1) as [
    [unknown, unknown, unknown, bigint],
  ];
  const { selection: other } = routedCall([policy], { 'session-id': 'xyz' }, () => 0.5);
  const [[, , , otherHeaders]] = picks(new XdsCallConfig(other, '/p/m', { name: [] }, [], undefined), 1) as [
    [unknown, unknown, unknown, bigint],
  ];
  assert.equal(routedHash, sameHeaders);
  assert.notEqual(routedHash, otherHeaders);
});

test('A31: grpc-js committing the call (config.onCommitted()) ends its hold on its cluster, once', () => {
  const { selection, refs, released } = routedCall([], {}, () => 0.5);
  const config = new XdsCallConfig(selection, '/pkg.Echo/Say', { name: [] }, [], undefined);
  assert.ok(refs.has('c1'), 'the call holds its cluster after the selector let go');
  config.onCommitted();
  assert.deepEqual(released, ['c1']);
  config.onCommitted();
  selection.release();
  assert.deepEqual(released, ['c1'], 'released once');
});
