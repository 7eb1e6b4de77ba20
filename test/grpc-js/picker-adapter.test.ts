import assert from 'node:assert/strict';
import { test } from 'node:test';
import { experimental, Metadata } from '@grpc/grpc-js';
import { FailPicker, type PickArgs, QUEUE, unavailable } from '../../src/core/index.js';
import { GrpcPickerAdapter } from '../../src/grpc-js/picker-adapter.js';
import { RequestHasher } from '../../src/hash/index.js';
import {
  type OverrideHostCallState,
  overrideHostState,
  selectedCluster,
  XDS_CLUSTER_CALL_ATTRIBUTE,
  XDS_OVERRIDE_HOST_CALL_ATTRIBUTE,
  XDS_ROUTE_CALL_ATTRIBUTE,
} from '../../src/xds/call-attributes.js';

test('the request hash comes from extraPickInfo.hash, a decimal string from a config selector (A42)', () => {
  const seen: (bigint | undefined)[] = [];
  const adapter = new GrpcPickerAdapter({
    pick(args: PickArgs) {
      seen.push(args.hash);
      return QUEUE;
    },
  });
  const metadata = new Metadata();
  adapter.pick({ metadata, extraPickInfo: { hash: '18446744073709551615' } });
  adapter.pick({ metadata, extraPickInfo: {} });
  adapter.pick({ metadata, extraPickInfo: { hash: 'not a number' } });
  assert.deepEqual(seen, [2n ** 64n - 1n, undefined, undefined]);
});

test("lbtree's xds resolver hands the request hash as a CallRequestHash: drawn when a picker reads it, the same on each pick of the call (A42)", () => {
  let draws = 0;
  const random = () => {
    draws++;
    return 0.25;
  };
  const callHash = new RequestHasher([]).forCall({ get: () => [] }, 7n, random);
  const extraPickInfo = { hash: callHash } as unknown as Record<string, string>;
  const metadata = new Metadata();
  const seen: (bigint | undefined)[] = [];
  new GrpcPickerAdapter({ pick: () => QUEUE }).pick({ metadata, extraPickInfo });
  assert.equal(draws, 0, 'a picker that does not read args.hash costs the call no hash');
  const reading = new GrpcPickerAdapter({
    pick(args: PickArgs) {
      seen.push(args.hash);
      return QUEUE;
    },
  });
  reading.pick({ metadata, extraPickInfo });
  reading.pick({ metadata, extraPickInfo });
  assert.equal(draws, 2);
  assert.deepEqual(seen, [0x4000000040000000n, 0x4000000040000000n]);
});

test("the config selector's pick information reaches pickers as call attributes: the cluster (A31), the session object (A55), any other key, each call's own", () => {
  const session: OverrideHostCallState = { cookieAddresses: ['10.0.0.1:80'], setActualAddressList() {} };
  const seen: unknown[][] = [];
  const adapter = new GrpcPickerAdapter({
    pick(args: PickArgs) {
      seen.push([
        selectedCluster(args),
        overrideHostState(args),
        args.callAttributes?.get(XDS_ROUTE_CALL_ATTRIBUTE),
        args.callAttributes?.get(Symbol('not a pick information key')),
      ]);
      return QUEUE;
    },
  });
  const metadata = new Metadata();
  const routed = {
    [XDS_CLUSTER_CALL_ATTRIBUTE]: 'cluster:a',
    [XDS_ROUTE_CALL_ATTRIBUTE]: '0',
    [XDS_OVERRIDE_HOST_CALL_ATTRIBUTE]: session,
  } as unknown as Record<string, string>;
  adapter.pick({ metadata, extraPickInfo: routed });
  adapter.pick({ metadata, extraPickInfo: { [XDS_CLUSTER_CALL_ATTRIBUTE]: 'cluster:b' } });
  adapter.pick({ metadata, extraPickInfo: {} });
  assert.deepEqual(seen, [
    ['cluster:a', session, '0', undefined],
    ['cluster:b', undefined, undefined, undefined],
    [undefined, undefined, undefined, undefined],
  ]);
  assert.equal(seen[0]![1], session, 'the session is the object the config selector made, not a copy');
});

test('fail results become TRANSIENT_FAILURE picks carrying the status; queue stays queue', () => {
  const failing = new GrpcPickerAdapter(new FailPicker(unavailable('failed to connect to all addresses')));
  const result = failing.pick({ metadata: new Metadata(), extraPickInfo: {} });
  assert.equal(result.pickResultType, experimental.PickResultType.TRANSIENT_FAILURE);
  assert.equal(result.status?.code, 14);
  assert.equal(result.status?.details, 'failed to connect to all addresses');
  assert.equal(
    failing.pick({ metadata: new Metadata(), extraPickInfo: {} }),
    result,
    'converted once, reused',
  );
  const queued = new GrpcPickerAdapter({ pick: () => QUEUE }).pick({
    metadata: new Metadata(),
    extraPickInfo: {},
  });
  assert.equal(queued.pickResultType, experimental.PickResultType.QUEUE);
});

test('call hooks reach grpc-js (least_request counters), converted once per result', () => {
  const events: string[] = [];
  const subchannel = { grpc: { id: 'grpc-subchannel' } };
  const result = Object.freeze({
    type: 'complete' as const,
    subchannel: subchannel as never,
    onCallStarted: () => events.push('started'),
    onCallEnded: (s: { code: number; details: string }) => events.push(`ended ${s.code} ${s.details}`),
  });
  const adapter = new GrpcPickerAdapter({ pick: () => result });
  const first = adapter.pick({ metadata: new Metadata(), extraPickInfo: {} });
  assert.equal(first.pickResultType, experimental.PickResultType.COMPLETE);
  assert.equal(first.subchannel, subchannel.grpc as never);
  first.onCallStarted?.();
  first.onCallEnded?.(0, 'OK', new Metadata());
  assert.deepEqual(events, ['started', 'ended 0 OK']);
  assert.equal(
    adapter.pick({ metadata: new Metadata(), extraPickInfo: {} }),
    first,
    'no allocation per pick',
  );
});
