// Run by ./xds-retry.e2e.test.ts in a child process: the retry scenarios on @grpc/grpc-js-xds's `xds:` resolver
// alone (the test process has lbtree's resolver on the `xds:` scheme; grpc-js keeps one per scheme). Argument:
// `{ bootstrap, steps }` as JSON; prints the outcome of each step, in order, as one JSON line.
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import { BackendClient, whoami } from '../../src/cli/loopback-backends.js';
import { type RetryStep, runStep, type StepOutcome } from './xds-retry-plan.js';

const { bootstrap, steps } = JSON.parse(process.argv[2]!) as {
  bootstrap: unknown;
  steps: RetryStep[];
};
createRequire(import.meta.url)('@grpc/grpc-js-xds').register();

const outcomes: StepOutcome[] = [];
for (const step of steps) {
  const client = new BackendClient(`xds:///${step.service}`, grpc.credentials.createInsecure(), {
    // grpc-js-xds's per-channel bootstrap: this channel's own xDS client.
    'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config': JSON.stringify(bootstrap),
    ...(step.enableRetries !== undefined ? { 'grpc.enable_retries': step.enableRetries } : {}),
  });
  try {
    outcomes.push(
      await runStep(step, (headers) => whoami(client, { waitForReady: true, deadlineMs: 10_000, headers })),
    );
  } finally {
    client.close();
  }
}
process.stdout.write(`${JSON.stringify(outcomes)}\n`);
process.exit(0);
