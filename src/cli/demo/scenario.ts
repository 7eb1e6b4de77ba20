import type { View } from './view.js';

export interface ScenarioContext {
  readonly view: View;
  /** How long the scenario's steady load runs. */
  readonly durationMs: number;
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
