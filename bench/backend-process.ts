// Runs loopback backends in their own process for the QPS benchmark, so that the client being measured
// has the core it runs on to itself. Prints the addresses as one JSON line; exits when stdin closes.
import { startBackends } from '../src/cli/loopback-backends.js';

const count = Number(process.argv[2] ?? 4);
const backends = await startBackends(Array.from({ length: count }, (_, i) => `s${i + 1}`));
process.stdout.write(`${JSON.stringify(backends.map((b) => b.address))}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  for (const b of backends) b.stop();
  process.exit(0);
});
