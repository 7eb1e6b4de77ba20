import type { PickArgs, Picker, PickResult } from '../../core/index.js';
import { EjectableSubchannel } from './ejectable-subchannel.js';

/**
 * The child's picker with each complete result mapped to its raw subchannel and, when an algorithm is
 * configured, a hook that counts the call's result for its endpoint (A50 "delegates to the child policy's
 * picker, and when the request finishes, increment the corresponding counter").
 */
export class OutlierDetectionPicker implements Picker {
  readonly constantResult?: PickResult;

  constructor(
    private readonly child: Picker,
    private readonly counting: boolean,
  ) {
    const constant = child.constantResult;
    if (constant !== undefined) this.constantResult = this.map(constant);
  }

  pick(args: PickArgs): PickResult {
    return this.map(this.child.pick(args));
  }

  private map(result: PickResult): PickResult {
    if (result.type !== 'complete' || !(result.subchannel instanceof EjectableSubchannel)) return result;
    return result.subchannel.resultFor(result, this.counting);
  }
}
