// The adapter's channel registry (lbtree/admin's list): ids, listeners, removal, and a listener that throws.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChannelRegistry, type RegisteredChannel } from '../../src/grpc-js/channel-registry.js';

function channel(registry: ChannelRegistry, target: string): RegisteredChannel {
  return {
    id: registry.nextId(),
    target,
    createdAt: 0,
    describe: () => undefined,
    xdsDump: () => undefined,
    xdsConfig: () => undefined,
  };
}

test('channels are listed oldest first, found by id, and leave on remove; listeners hear both', () => {
  const registry = new ChannelRegistry();
  const heard: string[] = [];
  const stop = registry.subscribe({
    channelAdded: (c) => heard.push(`+${c.target}`),
    channelRemoved: (c) => heard.push(`-${c.target}`),
  });
  const a = channel(registry, 'a');
  const b = channel(registry, 'b');
  registry.add(a);
  registry.add(b);
  assert.notEqual(a.id, b.id);
  assert.deepEqual(
    registry.list().map((c) => c.target),
    ['a', 'b'],
  );
  assert.equal(registry.get(b.id), b);
  registry.remove(a);
  registry.remove(a); // twice: nothing more
  assert.equal(registry.get(a.id), undefined);
  stop();
  registry.remove(b);
  assert.deepEqual(heard, ['+a', '+b', '-a']);
  assert.deepEqual(registry.list(), []);
});

test('a listener that throws never reaches the caller (a channel): it becomes a process warning', async () => {
  const registry = new ChannelRegistry();
  registry.subscribe({
    channelAdded: () => {
      throw new Error('listener bug');
    },
  });
  const warned = new Promise<Error>((resolve) => process.once('warning', resolve));
  const a = channel(registry, 'a');
  assert.doesNotThrow(() => registry.add(a));
  assert.equal(registry.get(a.id), a);
  const warning = await warned;
  assert.equal(warning.name, 'LbtreeWarning');
  assert.match(warning.message, /a channel registry listener threw: Error: listener bug/);
});
