// One registry entry per channel (issue 24 §2/§3), keyed by what lbtree's own resolvers say: each resolver
// (grpc-js makes one per channel) puts one key object on every result, errors included, and every root policy
// of the channel finds its entry by it — without reading grpc-js's private fields.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ChannelOptions, experimental } from '@grpc/grpc-js';
import { CHANNEL_KEY_OPTION, CHANNEL_TARGET_OPTION } from '../../src/grpc-js/channel-registry.js';
import { subchannelOptions } from '../../src/grpc-js/helper-adapter.js';
import { liveChannels, register } from '../../src/grpc-js/index.js';

/** A grpc-js channel's helper. */
function plainHelper(): experimental.ChannelControlHelper {
  return {
    createSubchannel: () => {
      throw new Error('no subchannels in this test');
    },
    updateState: () => {},
    requestReresolution: () => {},
    addChannelzChild: () => {},
    removeChannelzChild: () => {},
  };
}

/**
 * A root policy as grpc-js runs it, given one update (an empty list: no subchannels) with these options. Each
 * has a ChildLoadBalancerHandler of its own, as roots of different channels do: only the key can tie them.
 */
function rootWith(policy: string, options: ChannelOptions): experimental.ChildLoadBalancerHandler {
  const config = experimental.parseLoadBalancingConfig({ [policy]: {} });
  const root = new experimental.ChildLoadBalancerHandler(plainHelper());
  root.updateAddressList(experimental.statusOrFromValue([]), config, options, '');
  return root;
}

const idsOf = (target: string) =>
  liveChannels
    .list()
    .filter((c) => c.target === target)
    .map((c) => c.id);

/** What a resolver of this target reports first: its attributes. */
function firstAttributes(target: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const resolver = experimental.createResolver(
      parse(target),
      (_endpoints, attributes) => {
        resolver.destroy();
        resolve(attributes);
        return true;
      },
      {},
    );
    resolver.updateResolution();
  });
}

function parse(target: string): experimental.GrpcUri {
  const colon = target.indexOf(':');
  return { scheme: target.slice(0, colon), path: target.slice(colon + 1) };
}

test('the roots of one channel share its entry through the channel key; another key is another channel', () => {
  register();
  const target = 'endpoints:channel-key-shared';
  const key = Object.freeze({});
  const first = rootWith('lbtree_round_robin', {
    [CHANNEL_TARGET_OPTION]: target,
    [CHANNEL_KEY_OPTION]: key,
  });
  // grpc-js switches the channel to another root policy (a service config naming pick_first).
  const second = rootWith('lbtree_pick_first', {
    [CHANNEL_TARGET_OPTION]: target,
    [CHANNEL_KEY_OPTION]: key,
  });
  const other = rootWith('lbtree_round_robin', {
    [CHANNEL_TARGET_OPTION]: target,
    [CHANNEL_KEY_OPTION]: Object.freeze({}),
  });
  try {
    const ids = idsOf(target);
    assert.equal(ids.length, 2, `two channels listed, got ${JSON.stringify(ids)}`);
    // The switched-to root's entry is the first root's: destroying the first keeps the channel listed.
    first.destroy();
    assert.deepEqual(idsOf(target).length, 2);
    second.destroy();
    assert.equal(idsOf(target).length, 1, 'the first channel left with its last root');
  } finally {
    first.destroy();
    second.destroy();
    other.destroy();
  }
  assert.deepEqual(idsOf(target), []);
});

test('without a key (a resolver not lbtree’s), roots of different grpc-js handlers are different entries', () => {
  register();
  const target = 'endpoints:channel-key-none';
  const a = rootWith('lbtree_round_robin', { [CHANNEL_TARGET_OPTION]: target });
  const b = rootWith('lbtree_round_robin', { [CHANNEL_TARGET_OPTION]: target });
  try {
    assert.equal(idsOf(target).length, 2);
  } finally {
    a.destroy();
    b.destroy();
  }
});

test('a channel idle and back keeps its id through its key', () => {
  register();
  const target = 'endpoints:channel-key-idle';
  const key = Object.freeze({});
  const options = { [CHANNEL_TARGET_OPTION]: target, [CHANNEL_KEY_OPTION]: key };
  const before = rootWith('lbtree_round_robin', options);
  const [id] = idsOf(target);
  before.destroy();
  assert.deepEqual(idsOf(target), [], 'idle: not listed');
  const after = rootWith('lbtree_round_robin', options);
  try {
    assert.deepEqual(idsOf(target), [id]);
  } finally {
    after.destroy();
  }
});

test("lbtree's resolvers put one key per resolver (so per channel) on their results; subchannels never see it", async () => {
  register();
  for (const target of ['endpoints:127.0.0.1:1', 'dns:localhost:1']) {
    const one = await firstAttributes(target);
    const two = await firstAttributes(target);
    const key = one[CHANNEL_KEY_OPTION];
    assert.equal(typeof key, 'object', `${target}: a key object`);
    assert.notEqual(key, null);
    assert.notEqual(two[CHANNEL_KEY_OPTION], key, `${target}: another resolver, another key`);
    assert.equal(subchannelOptions({ ...one })[CHANNEL_KEY_OPTION], undefined);
  }
  // One resolver gives its key on every result.
  const seen: unknown[] = [];
  await new Promise<void>((resolve) => {
    const resolver = experimental.createResolver(
      parse('endpoints:127.0.0.1:1'),
      (_e, attributes) => {
        seen.push(attributes[CHANNEL_KEY_OPTION]);
        if (seen.length === 2) resolve();
        else {
          resolver.destroy();
          resolver.updateResolution();
        }
        return true;
      },
      {},
    );
    resolver.updateResolution();
  });
  assert.equal(seen[0], seen[1]);
});
