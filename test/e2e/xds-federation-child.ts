// Run by ./xds-federation.e2e.test.ts in a child process: the federation scenario on @grpc/grpc-js-xds's `xds:`
// resolver alone (the test process has lbtree's resolver on the `xds:` scheme; grpc-js keeps one per scheme).
// Argument: `{ bootstrap, targets, calls }` as JSON; prints, per target, the answers by backend and the
// failures, as one JSON line.
import { createRequire } from 'node:module';
import * as grpc from '@grpc/grpc-js';
import { BackendClient, whoami } from '../../src/cli/loopback-backends.js';

const { bootstrap, targets, calls } = JSON.parse(process.argv[2]!) as {
  bootstrap: unknown;
  targets: string[];
  calls: number;
};
createRequire(import.meta.url)('@grpc/grpc-js-xds').register();

const results: { target: string; byBackend: Record<string, number>; failures: string[] }[] = [];
for (const target of targets) {
  const client = new BackendClient(target, grpc.credentials.createInsecure(), {
    // grpc-js-xds's per-channel bootstrap: this channel's own xDS client.
    'grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config': JSON.stringify(bootstrap),
  });
  const byBackend: Record<string, number> = {};
  const failures: string[] = [];
  for (let i = 0; i < calls; i++) {
    try {
      const name = await whoami(client, { waitForReady: true, deadlineMs: 20_000 });
      byBackend[name] = (byBackend[name] ?? 0) + 1;
    } catch (e) {
      const err = e as grpc.ServiceError;
      failures.push(`${err.code}: ${err.details}`);
    }
  }
  client.close();
  results.push({ target, byBackend, failures });
}
process.stdout.write(`${JSON.stringify(results)}\n`);
process.exit(0);
