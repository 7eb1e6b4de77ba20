import type { Pace } from './pace.js';
import type { View } from './view.js';

export interface ScenarioContext {
  readonly view: View;
  /** Human pace (phases share a duration) or fast pace (each phase until its outcome shows). */
  readonly pace: Pace;
  /** Whether [::1] can be used for the second address family. */
  readonly ipv6: boolean;
}

/** A check a scenario makes of what happened, shown in the summary. */
export interface Expectation {
  readonly description: string;
  readonly met: boolean;
}

export interface ScenarioResult {
  readonly notes: readonly string[];
  readonly expectations: readonly Expectation[];
}

export interface Scenario {
  readonly name: string;
  readonly summary: string;
  run(context: ScenarioContext): Promise<ScenarioResult>;
}
