// The resource cache on its own, without a stream: the subscriptions it hands its owner, and the server
// features that come with each event (with fallback, events of one cache come from several servers).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Status, unavailable } from '../../../src/core/index.js';
import { VirtualClock } from '../../../src/sim/virtual-clock.js';
import { ResourceCache, type ServerFeatures } from '../../../src/xds/client/resource-cache.js';
import { RecordingWatcher } from './fake-ads.js';
import { type Thing, thing, wholeThingType } from './test-resource-type.js';

const WHOLE = wholeThingType.typeUrl;
const PLAIN: ServerFeatures = {
  failOnDataErrors: false,
  ignoreResourceDeletion: false,
  resourceTimerIsTransientError: false,
};

function setup() {
  const clock = new VirtualClock();
  const calls: string[] = [];
  let connectivityError: Status | undefined;
  const cache = new ResourceCache({
    clock,
    trace: () => {},
    nodeId: 'node-1',
    decodeContext: undefined,
    dataErrorHandling: true,
    onWatcherError: (e) => {
      throw e;
    },
    subscriptions: {
      add: (_typeUrl, name) => calls.push(`add ${name}`),
      remove: (_typeUrl, name) => calls.push(`remove ${name}`),
      flushDue: () => calls.push('flushDue'),
    },
    connectivityError: () => connectivityError,
  });
  const watch = (name: string) => {
    const w = new RecordingWatcher((t: Thing) => `${t.name}=${t.value}`);
    return { w, cancel: cache.watch(wholeThingType, name, w) };
  };
  return {
    clock,
    cache,
    watch,
    take: () => calls.splice(0),
    setConnectivityError: (s: Status | undefined) => {
      connectivityError = s;
    },
  };
}

describe('resource cache (A27 subscriptions, A57 timers and connectivity errors, A88 data errors)', () => {
  test('a name is added at its first watch, removed at the prune after its last watch went, kept when watched again first', () => {
    const env = setup();
    const one = env.watch('a');
    const two = env.watch('a');
    assert.deepEqual(env.take(), ['add a', 'flushDue']);
    one.cancel();
    assert.deepEqual(env.take(), [], 'a watcher is left');
    two.cancel();
    assert.deepEqual(env.take(), ['flushDue']);
    const again = env.watch('a');
    env.cache.prune();
    assert.deepEqual(env.take(), [], 'watched again before the prune: kept, not added twice');
    again.cancel();
    env.cache.prune();
    assert.deepEqual(env.take(), ['flushDue', 'remove a']);
    assert.deepEqual(env.cache.dump(), []);
  });

  test('A57 / A88: the resource timer follows the server of requested(): 15 s does-not-exist, or 30 s TIMEOUT', () => {
    const env = setup();
    const a = env.watch('a');
    const b = env.watch('b');
    env.cache.requested(PLAIN, WHOLE, ['a']);
    env.cache.requested({ ...PLAIN, resourceTimerIsTransientError: true }, WHOLE, ['b']);
    env.clock.advance(14_999);
    assert.deepEqual(a.w.take(), []);
    env.clock.advance(1);
    assert.deepEqual(a.w.take(), ['error NOT_FOUND']);
    env.clock.advance(14_999);
    assert.deepEqual(b.w.take(), []);
    env.clock.advance(1);
    assert.deepEqual(b.w.take(), ['error UNAVAILABLE']);
    assert.deepEqual(
      env.cache.dump().map((r) => r.status),
      ['DOES_NOT_EXIST', 'TIMEOUT'],
    );
  });

  test('A88: a NACK keeps the cached resource as ambient unless the response’s server has fail_on_data_errors', () => {
    const env = setup();
    const a = env.watch('a');
    env.clock.runDue();
    assert.equal(env.cache.applyResponse(PLAIN, WHOLE, 'v1', [thing(WHOLE, 'a', 1)]), undefined);
    assert.deepEqual(a.w.take(), ['changed a=1']);
    const detail = env.cache.applyResponse(PLAIN, WHOLE, 'v2', [thing(WHOLE, 'a', -1)]);
    assert.match(detail ?? '', /WholeThing "a": value: -1/);
    assert.deepEqual(a.w.take(), ['ambient INVALID_ARGUMENT']);
    env.cache.applyResponse({ ...PLAIN, failOnDataErrors: true }, WHOLE, 'v3', [thing(WHOLE, 'a', -1)]);
    assert.deepEqual(a.w.take(), ['error INVALID_ARGUMENT']);
  });

  test('A57: a connectivity error is ambient for a cached resource, the failure of one not received, and told to new watchers', () => {
    const env = setup();
    const a = env.watch('a');
    const b = env.watch('b');
    env.clock.runDue();
    env.cache.applyResponse(PLAIN, WHOLE, 'v1', [thing(WHOLE, 'a', 1)]);
    a.w.take();
    const error = unavailable('xDS stream to cp failed before any response');
    env.cache.streamEnded(undefined);
    assert.deepEqual([...a.w.take(), ...b.w.take()], [], 'a stream ended after responses is no error');
    env.setConnectivityError(error);
    env.cache.streamEnded(error);
    assert.deepEqual(a.w.take(), ['ambient UNAVAILABLE']);
    assert.deepEqual(b.w.take(), ['error UNAVAILABLE']);
    const late = env.watch('c');
    env.clock.runDue();
    assert.deepEqual(late.w.take(), ['error UNAVAILABLE']);
    env.setConnectivityError(undefined);
    const later = env.watch('d');
    env.clock.runDue();
    assert.deepEqual(later.w.take(), [], 'reachable again: a new watcher waits');
  });
});
