// What lbtree's policies hand grpc-js when they create subchannels: the channel's options, not the resolver's
// per-resolution internals. grpc-js's subchannel pool shares a subchannel only between equal options, and
// GRPC_TRACE=subchannel prints them as JSON, so a config selector there (new with every xds: resolution)
// meant a second connection to an address already connected, and, with tracing on, no subchannel at all.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ChannelOptions, experimental } from '@grpc/grpc-js';
import { subchannelOptions } from '../../src/grpc-js/helper-adapter.js';
import { register } from '../../src/grpc-js/index.js';
import { idleGrpcSubchannel } from '../support/idle-grpc-subchannel.js';

test('subchannels get the channel options of the update without grpc.internal.* keys and symbols', () => {
  register();
  const created: ChannelOptions[] = [];
  const helper: experimental.ChannelControlHelper = {
    createSubchannel: (_address, options) => {
      created.push(options);
      return idleGrpcSubchannel();
    },
    updateState: () => {},
    requestReresolution: () => {},
    addChannelzChild: () => {},
    removeChannelzChild: () => {},
  };
  const policy = new experimental.ChildLoadBalancerHandler(helper);
  const config = experimental.parseLoadBalancingConfig({ lbtree_round_robin: {} });
  const update = (port: number, selector: object) =>
    policy.updateAddressList(
      experimental.statusOrFromValue([{ addresses: [{ host: '127.0.0.1', port }] }]),
      config,
      {
        'grpc.keepalive_time_ms': 10_000,
        [experimental.CHANNEL_ARGS_CONFIG_SELECTOR_KEY]: selector,
        [Symbol('resolver attribute') as never]: { cyclic: selector },
      },
      '',
    );
  // A config selector that JSON cannot print, as lbtree's (it reaches the route table's bigints) cannot.
  update(1001, { hash: 1n });
  update(1002, { hash: 2n });
  assert.equal(created.length, 2);
  for (const options of created) {
    assert.deepEqual(options, { 'grpc.keepalive_time_ms': 10_000 });
    assert.equal(Object.getOwnPropertySymbols(options).length, 0);
    assert.doesNotThrow(() => JSON.stringify(options), 'GRPC_TRACE=subchannel prints them');
  }
  policy.destroy();
});

test('subchannelOptions keeps every option that is not grpc-js-internal', () => {
  const options = { 'grpc.internal.config_selector': {}, 'grpc.primary_user_agent': 'x', 'custom.key': 1 };
  assert.deepEqual(subchannelOptions(options), { 'grpc.primary_user_agent': 'x', 'custom.key': 1 });
});
