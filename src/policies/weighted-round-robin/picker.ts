import type { CallEndDetails, CompletePick, PickArgs, Picker, PickResult, Status } from '../../core/index.js';
import type { ArraySnapshot } from '../shared/snapshot-array.js';
import type { EndpointWeight } from './endpoint-weight.js';
import { OobWatchedSubchannel } from './oob-watched-subchannel.js';
import type { StaticStrideScheduler } from './static-stride-scheduler.js';

/**
 * One READY endpoint as the picker sees it: its pick_first picker and its weight. When per-call load reports
 * are on, its complete result carries a call-end hook feeding the weight (A58 "Per-Call Load Reporting");
 * that result is built once per child result, so picks do not allocate.
 */
export class WeightedEndpoint {
  private base: CompletePick | null = null;
  private perCall = false;
  private result: CompletePick | null = null;

  constructor(
    readonly picker: Picker,
    readonly weight: EndpointWeight,
  ) {}

  /**
   * `base` with the weight's per-call hook when `perCall` (out-of-band reporting off), and the channel's own
   * subchannel in place of the policy's wrapper.
   */
  reported(base: CompletePick, perCall: boolean): CompletePick {
    if (base !== this.base || perCall !== this.perCall) {
      this.base = base;
      this.perCall = perCall;
      this.result = resultFor(base, perCall, this.weight);
    }
    return this.result!;
  }
}

function resultFor(base: CompletePick, perCall: boolean, weight: EndpointWeight): CompletePick {
  const wrapper = base.subchannel;
  const subchannel = wrapper instanceof OobWatchedSubchannel ? wrapper.inner : wrapper;
  if (!perCall && subchannel === wrapper) return base;
  const ended = base.onCallEnded;
  return Object.freeze({
    type: 'complete',
    subchannel,
    onCallStarted: base.onCallStarted,
    onCallEnded: perCall
      ? (status: Status, details?: CallEndDetails) => {
          ended?.(status, details);
          // A58: a missing report changes nothing.
          const report = details?.backendMetrics;
          if (report) weight.onReport(report);
        }
      : ended,
  });
}

/** Picks made by a policy's pickers since its last scheduler rebuild (what pays for a rebuild on a first pick). */
export class PickCount {
  picks = 0;
}

/** A scheduler, or how to build one from the weights known when the picker first picks. */
export type SchedulerSource = StaticStrideScheduler | null | (() => StaticStrideScheduler | null);

/**
 * weighted_round_robin's picker: the static stride scheduler over the READY endpoints' weights, or plain
 * rotation when fewer than two weights are known (A58: "behave the same as round_robin"). It reads the
 * policy's READY snapshot directly, so building one is O(1). Given a builder, it asks it for its scheduler on
 * its first pick (the one allocation a pick may make). Every pick counts in the policy's {@link PickCount}.
 */
export class WeightedRoundRobinPicker implements Picker {
  private readonly n: number;
  private next: number;
  private scheduler: StaticStrideScheduler | null;
  private build: (() => StaticStrideScheduler | null) | null;

  constructor(
    private readonly endpoints: ArraySnapshot<WeightedEndpoint>,
    scheduler: SchedulerSource,
    private readonly perCall: boolean,
    start: number,
    private readonly count: PickCount,
  ) {
    this.n = endpoints.length;
    this.next = start % this.n;
    this.scheduler = typeof scheduler === 'function' ? null : scheduler;
    this.build = typeof scheduler === 'function' ? scheduler : null;
  }

  pick(args: PickArgs): PickResult {
    this.count.picks++;
    if (this.build !== null) {
      this.scheduler = this.build();
      this.build = null;
    }
    let i: number;
    if (this.scheduler) {
      i = this.scheduler.pick();
    } else {
      i = this.next;
      if (++this.next === this.n) this.next = 0;
    }
    const endpoint = this.endpoints.at(i);
    const result = endpoint.picker.constantResult ?? endpoint.picker.pick(args);
    return result.type === 'complete' ? endpoint.reported(result, this.perCall) : result;
  }
}
