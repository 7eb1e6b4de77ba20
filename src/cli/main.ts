#!/usr/bin/env node
// The `lbtree` command. `lbtree demo` plays scripted load-balancing scenarios on real loopback backends.
import { parseArgs } from 'node:util';
import { runControlPlane } from './control-plane/command.js';
import { runDemo, SCENARIOS } from './demo/run-demo.js';
import { simulate } from './simulate/command.js';

const HELP = `lbtree — gRPC client-side load balancing for Node.js

Usage:
  lbtree demo [--scenario NAME[,NAME…]] [--duration SECONDS] [--plain]
  lbtree simulate --cluster FILE --endpoints FILE --scenario FILE [--html OUT.html]
  lbtree control-plane --resources FILE [--port N] [--host H] [--print-bootstrap] [--bootstrap-file OUT]
  lbtree --help

demo    Starts real gRPC servers on loopback (IPv4, and IPv6 when available), a client channel that
        balances with lbtree, and plays scripted scenarios under steady RPC load. On a terminal it shows a
        live view; otherwise (or with --plain) it prints progress lines. Ends with a summary.

simulate
        Runs an xDS cluster in the deterministic simulator: an Envoy Cluster and ClusterLoadAssignment
        (proto3 JSON or YAML) become lbtree's policy tree (A52 LB policy registry, EDS → priority tree),
        driven by a request rate and a scripted scenario (endpoints, localities or priorities failing,
        hanging, recovering). Prints a timeline and the traffic share per priority / locality / endpoint;
        --html writes a self-contained page with charts. Examples: examples/simulate/.

control-plane
        An xDS control plane (ADS v3, state of the world) on grpc-js serving the Envoy resources in FILE
        (YAML or JSON: a list of proto3 JSON resources with "@type") to any gRPC xDS client. Prints
        "listening on HOST:PORT", reloads FILE when it changes (a new version for every client; a file
        that does not load is reported and the last good set keeps serving), prints every client's ACK
        and NACK, and stops on SIGTERM / Ctrl-C. Example: examples/control-plane/.

Control-plane options:
  --resources        The resources file (required)
  --port             Port to listen on (default 18000; 0 picks a free one)
  --host             Address to listen on (default 127.0.0.1)
  --print-bootstrap  Print a client bootstrap JSON (for GRPC_XDS_BOOTSTRAP_CONFIG) once listening
  --bootstrap-file   Write that bootstrap to a file (for GRPC_XDS_BOOTSTRAP)
  --node-id          node.id in the bootstrap (default lbtree-client)

Demo options:
  --scenario    Scenarios to play, comma-separated (default: all): ${SCENARIOS.map((s) => s.name).join(', ')}
  --duration    Seconds of load per scenario, 6 to 600 (default 12; Happy Eyeballs uses at most 4)
  --plain       Progress lines even on a terminal
  -h, --help    This text

Scenarios:
${SCENARIOS.map((s) => `  ${s.name.padEnd(16)} ${s.summary}`).join('\n')}
`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      scenario: { type: 'string' },
      duration: { type: 'string' },
      plain: { type: 'boolean', default: false },
      cluster: { type: 'string' },
      endpoints: { type: 'string' },
      html: { type: 'string' },
      resources: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'print-bootstrap': { type: 'boolean', default: false },
      'bootstrap-file': { type: 'string' },
      'node-id': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const command = positionals[0];
  if (values.help || command === undefined || command === 'help') {
    process.stdout.write(HELP);
    return values.help || command === 'help' ? 0 : 2;
  }
  if (command === 'simulate') {
    const { cluster, endpoints, scenario, html } = values;
    if (!cluster || !endpoints || !scenario) {
      process.stderr.write('lbtree simulate: --cluster, --endpoints and --scenario are required\n');
      return 2;
    }
    try {
      simulate({ cluster, endpoints, scenario, ...(html ? { html } : {}) }, (text) =>
        process.stdout.write(text),
      );
    } catch (e) {
      // Invalid resources and scenarios are the user's input: show the reason, not a stack.
      process.stderr.write(`lbtree simulate: ${(e as Error).message}\n`);
      return 1;
    }
    return 0;
  }
  if (command === 'control-plane') return controlPlane(values);
  if (command !== 'demo') {
    process.stderr.write(`lbtree: unknown command "${command}"\n\n${HELP}`);
    return 2;
  }
  const durationS = values.duration === undefined ? 12 : Number(values.duration);
  // At least 6 s: a backend that returns is reconnected after its subchannel's backoff (1 s, then 1.6 s, …).
  if (!Number.isFinite(durationS) || durationS < 6 || durationS > 600) {
    process.stderr.write('lbtree: --duration must be a number of seconds between 6 and 600\n');
    return 2;
  }
  const names = values.scenario?.split(',').map((s) => s.trim()) ?? SCENARIOS.map((s) => s.name);
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0) {
    process.stderr.write(
      `lbtree: unknown scenario ${unknown.join(', ')} (have: ${SCENARIOS.map((s) => s.name).join(', ')})\n`,
    );
    return 2;
  }
  const ok = await runDemo({
    scenarios: SCENARIOS.filter((s) => names.includes(s.name)),
    durationMs: durationS * 1000,
    live: process.stdout.isTTY === true && !values.plain,
  });
  return ok ? 0 : 1;
}

async function controlPlane(values: {
  resources?: string | undefined;
  port?: string | undefined;
  host?: string | undefined;
  'print-bootstrap'?: boolean | undefined;
  'bootstrap-file'?: string | undefined;
  'node-id'?: string | undefined;
}): Promise<number> {
  if (!values.resources) {
    process.stderr.write('lbtree control-plane: --resources FILE is required\n');
    return 2;
  }
  const port = values.port === undefined ? 18000 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write('lbtree control-plane: --port must be a port number (0 to 65535)\n');
    return 2;
  }
  const stopped = new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  return runControlPlane(
    {
      resources: values.resources,
      host: values.host ?? '127.0.0.1',
      port,
      printBootstrap: values['print-bootstrap'] === true,
      ...(values['bootstrap-file'] ? { bootstrapFile: values['bootstrap-file'] } : {}),
      ...(values['node-id'] ? { nodeId: values['node-id'] } : {}),
    },
    {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
      stopped,
    },
  );
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`lbtree: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);
