import { startAdminServer } from '../../admin/index.js';
import { register } from '../../grpc-js/index.js';
import { hasIPv6Loopback } from '../loopback-backends.js';
import type { Pace } from './pace.js';
import type { Scenario, ScenarioResult } from './scenario.js';
import { LiveView, PlainView, type View } from './view.js';

export { FAST_PACE, humanPace } from './pace.js';

export interface DemoOptions {
  readonly scenarios: readonly Scenario[];
  readonly pace: Pace;
  readonly live: boolean;
  /** The port of the live view of the demo's channels (lbtree/admin, on 127.0.0.1); 0: any free port. */
  readonly adminPort: number;
}

/** Plays the scenarios in order on real loopback backends; returns whether every expectation was met. */
export async function runDemo(options: DemoOptions): Promise<boolean> {
  register();
  const ipv6 = await hasIPv6Loopback();
  const admin = await startAdminServer({ port: options.adminPort });
  console.log(`Live view of every channel (each scenario's LB tree, as the policies see it): ${admin.url}`);
  const results: { scenario: Scenario; result: ScenarioResult }[] = [];
  try {
    for (const scenario of options.scenarios) {
      const view: View = options.live ? new LiveView(process.stdout) : new PlainView(process.stdout);
      if (!options.live) view.line(`\n== ${scenario.name}: ${scenario.summary}`);
      try {
        results.push({ scenario, result: await scenario.run({ view, pace: options.pace, ipv6 }) });
      } finally {
        view.close();
      }
    }
  } finally {
    await admin.close();
  }
  console.log('\n== lbtree demo summary');
  if (!ipv6) console.log('(no IPv6 loopback here: the second address family was IPv4 too)');
  let allMet = true;
  for (const { scenario, result } of results) {
    console.log(`\n${scenario.name} — ${scenario.summary}`);
    for (const note of result.notes) console.log(`  ${note}`);
    for (const e of result.expectations) {
      allMet &&= e.met;
      console.log(`  ${e.met ? '✔' : '✘'} ${e.description}`);
    }
  }
  return allMet;
}
