// pick_first watches its subchannels through the object form of the Subchannel watches when a subchannel offers
// it (no function per watch), and through watchConnectivity / watchHealth on one that does not (a third party's
// subchannel or wrapper). Either way it reaches READY, watches the chosen connection's health (A61 "Generic
// Health Reporting"), and stops watching a subchannel before releasing it (A62: a new list replaces the old).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Address,
  type Attributes,
  childHelper,
  type Helper,
  type LbUpdate,
  type PolicyFactory,
  type StateListener,
  type Subchannel,
  type Unwatch,
} from '../../src/core/index.js';
import { HEALTH_WATCH_ARG, PickFirst, type PickFirstConfig } from '../../src/policies/index.js';
import { Simulation, type SubchannelHandle } from '../../src/sim/index.js';

/** A subchannel written before the object form existed: only the function forms. */
class FunctionFormOnly implements Subchannel {
  watchCalls = 0;
  unwatchCalls = 0;
  constructor(readonly inner: Subchannel) {}
  get address(): Address {
    return this.inner.address;
  }
  get key(): string {
    return this.inner.key;
  }
  get state() {
    return this.inner.state;
  }
  get health() {
    return this.inner.health;
  }
  watchConnectivity(listener: StateListener): Unwatch {
    return this.counted(this.inner.watchConnectivity(listener));
  }
  watchHealth(listener: StateListener): Unwatch {
    return this.counted(this.inner.watchHealth(listener));
  }
  private counted(unwatch: Unwatch): Unwatch {
    this.watchCalls++;
    return () => {
      this.unwatchCalls++;
      unwatch();
    };
  }
  requestConnection(): void {
    this.inner.requestConnection();
  }
  resetBackoff(): void {
    this.inner.resetBackoff();
  }
  release(): void {
    this.inner.release();
  }
}

function picked(sim: Simulation): string {
  const pick = sim.pick();
  return pick.type === 'complete' ? pick.address : pick.type;
}

interface Seen {
  readonly handle: SubchannelHandle;
  readonly wrapper: FunctionFormOnly | null;
  /** The sim handle's watchers when the policy released it (before the handle clears its own). */
  atRelease: { state: number; health: number } | null;
  /** Function-form watches made directly on the sim handle. */
  functionWatches: number;
}

/**
 * A simulation whose root is pick_first with the A61 health watch on, under a helper that hands it either the
 * simulator's handles (object form) or those handles behind {@link FunctionFormOnly}.
 */
function harness(wrap: boolean) {
  const seen: Seen[] = [];
  const sim = new Simulation();
  const factory: PolicyFactory<PickFirstConfig> = {
    name: 'pick_first_watch_probe',
    parseConfig: () => ({ shuffleAddressList: false }),
    create: (helper: Helper) => {
      const probing = childHelper(helper, {
        createSubchannel: (address: Address, attributes: Attributes) => {
          const handle = helper.createSubchannel(address, attributes) as SubchannelHandle;
          const wrapper = wrap ? new FunctionFormOnly(handle) : null;
          const entry: Seen = { handle, wrapper, atRelease: null, functionWatches: 0 };
          seen.push(entry);
          const release = handle.release.bind(handle);
          handle.release = () => {
            entry.atRelease ??= handle.watcherCounts;
            release();
          };
          const watchConnectivity = handle.watchConnectivity.bind(handle);
          handle.watchConnectivity = (listener) => {
            entry.functionWatches++;
            return watchConnectivity(listener);
          };
          const watchHealth = handle.watchHealth.bind(handle);
          handle.watchHealth = (listener) => {
            entry.functionWatches++;
            return watchHealth(listener);
          };
          return wrapper ?? handle;
        },
      });
      const policy = new PickFirst(probing);
      return {
        update: (u: LbUpdate<PickFirstConfig>) =>
          policy.update({ ...u, attributes: { ...u.attributes, [HEALTH_WATCH_ARG]: true } }),
        exitIdle: () => policy.exitIdle(),
        resetBackoff: () => policy.resetBackoff(),
        destroy: () => policy.destroy(),
      };
    },
  };
  sim.registry.register(factory);
  sim.script('10.0.0.1:80', { connectAfterMs: 10 });
  sim.script('10.0.0.2:80', { connectAfterMs: 10 });
  return { sim, seen, config: [{ pick_first_watch_probe: {} }] };
}

describe('pick_first subchannel watches: object form where offered, function form otherwise', () => {
  for (const wrap of [false, true]) {
    const form = wrap
      ? 'a subchannel with only the function forms'
      : 'the simulator subchannel (object form)';
    test(`${form}: READY, health heard (A61 "Generic Health Reporting"), watches stopped before release (A62)`, () => {
      const { sim, seen, config } = harness(wrap);
      sim.update(['10.0.0.1:80'], config);
      sim.advance(10);
      assert.equal(sim.state, 'READY');
      assert.deepEqual(picked(sim), '10.0.0.1:80');
      const first = seen[0]!;
      assert.deepEqual(
        first.handle.watcherCounts,
        { state: 1, health: 1 },
        'connectivity and health watched',
      );
      if (wrap) {
        // The attempt's connectivity watch, then (once chosen) pick_first's own connectivity and health watches.
        assert.equal(first.wrapper!.watchCalls, 3, 'the wrapper was watched through its function forms');
        assert.equal(
          first.wrapper!.unwatchCalls,
          1,
          "the attempt's watch stopped when its connection was chosen",
        );
        assert.equal(first.functionWatches, 3, 'and it passed them on as function forms');
      } else {
        assert.equal(first.functionWatches, 0, 'no function-form watch on a subchannel with the object form');
      }

      // A61: the chosen connection's health is what pick_first reports.
      sim.subchannel('10.0.0.1:80').setHealth('TRANSIENT_FAILURE');
      assert.equal(sim.state, 'TRANSIENT_FAILURE');
      sim.subchannel('10.0.0.1:80').setHealth('READY');
      assert.equal(sim.state, 'READY');

      // A new list without the address: pick_first moves on and lets the old subchannel go.
      sim.update(['10.0.0.2:80'], config);
      sim.advance(10);
      assert.deepEqual(picked(sim), '10.0.0.2:80');
      assert.deepEqual(first.atRelease, { state: 0, health: 0 }, 'every watch stopped before the release');
      if (wrap) assert.equal(first.wrapper!.unwatchCalls, 3);
      const states = sim.history.length;
      sim.subchannel('10.0.0.2:80').setHealth('TRANSIENT_FAILURE');
      assert.equal(sim.history.length, states + 1, 'the new subchannel is heard');
      sim.destroy();
      assert.deepEqual(seen[1]!.atRelease, { state: 0, health: 0 }, 'destroy stops the watches too');
    });
  }
});
