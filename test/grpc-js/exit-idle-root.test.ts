// grpc-js calls exitIdle() on the channel's root policy before every call. The adapter's root passes it to the
// lbtree tree only while the tree's root says its exitIdle() would wake something (Helper.updateWakeable);
// a root that never says gets every call, as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { experimental } from '@grpc/grpc-js';
import { type Helper, type PolicyFactory, Registry } from '../../src/core/index.js';
import { grpcPolicyClasses } from '../../src/grpc-js/policy-adapter.js';

/** A root policy that counts the exitIdle() calls reaching it; `helper` is what it was given. */
function probe(): { factory: PolicyFactory; helper: () => Helper; calls: () => number } {
  let helper: Helper | null = null;
  let calls = 0;
  const factory: PolicyFactory = {
    name: 'exit_idle_probe',
    parseConfig: () => ({}),
    create(h) {
      helper = h;
      return {
        update: () => true,
        exitIdle: () => {
          calls++;
        },
        resetBackoff: () => {},
        destroy: () => {},
      };
    },
  };
  return { factory, helper: () => helper!, calls: () => calls };
}

const CHANNEL: experimental.ChannelControlHelper = {
  createSubchannel: () => {
    throw new Error('not in this test');
  },
  updateState: () => {},
  requestReresolution: () => {},
  addChannelzChild: () => {},
  removeChannelzChild: () => {},
};

test('the grpc-js adapter root: exitIdle() reaches the tree only while its root says it would wake something', () => {
  const p = probe();
  const classes = grpcPolicyClasses('exit_idle_probe', p.factory, new Registry());
  const Root = classes.LoadBalancer as unknown as new (
    helper: experimental.ChannelControlHelper,
  ) => experimental.LoadBalancer;
  const root = new Root(CHANNEL);
  root.updateAddressList(
    experimental.statusOrFromValue([{ addresses: [{ host: '127.0.0.1', port: 1 }] }]),
    classes.Config.createFromJson({}),
    {},
    '',
  );
  root.exitIdle();
  assert.equal(p.calls(), 1, 'a root that has not said is taken as wakeable');
  p.helper().updateWakeable?.(false);
  for (let i = 0; i < 100; i++) root.exitIdle();
  assert.equal(p.calls(), 1);
  p.helper().updateWakeable?.(true);
  root.exitIdle();
  assert.equal(p.calls(), 2);
  root.destroy();
});
