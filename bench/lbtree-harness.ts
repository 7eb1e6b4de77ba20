/**
 * Drives lbtree's round_robin with the same cheap, synchronous fake subchannels the grpc-js harness uses, so
 * the two are measured doing the same work: a root policy under a do-nothing channel, one pick_first child
 * per endpoint, subchannels pooled by address and never torn down.
 */
import { type Address, Attributes, type Endpoint, NO_CHANNEL_ARGS, ok, RoundRobin } from 'lbtree';
import { BenchChannel } from './bench-channel.js';

export interface LbtreeRoundRobinHarness {
  update(endpoints: readonly (readonly string[])[]): void;
  prepare(endpoints: readonly (readonly string[])[]): unknown;
  apply(prepared: unknown): void;
  makeAllReady(): void;
  pick(): unknown;
  readonly state: string;
  readonly subchannelsCreated: number;
  destroy(): void;
}

export function createLbtreeRoundRobin(): LbtreeRoundRobinHarness {
  const channel = new BenchChannel();
  const lb = new RoundRobin(channel);
  const pickArgs = channel.pickArgs;
  const intern = (text: string): Address => channel.intern(text);
  return {
    prepare(endpoints) {
      return endpoints.map(
        (addresses): Endpoint => ({ addresses: addresses.map(intern), attributes: Attributes.EMPTY }),
      );
    },
    apply(prepared) {
      lb.update({ endpoints: ok(prepared as Endpoint[]), config: {}, attributes: NO_CHANNEL_ARGS });
    },
    update(endpoints) {
      this.apply(this.prepare(endpoints));
    },
    makeAllReady: () => channel.makeAllReady(),
    pick: () => channel.picker.pick(pickArgs),
    get state() {
      return channel.state;
    },
    get subchannelsCreated() {
      return channel.pool.size;
    },
    destroy: () => lb.destroy(),
  };
}
