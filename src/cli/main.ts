#!/usr/bin/env node
// The `lbtree` command. `lbtree demo` plays scripted load-balancing scenarios on real loopback backends;
// `lbtree simulate` runs an xDS cluster in the deterministic simulator; `lbtree control-plane` serves xDS
// resources. Only the commands that need real servers (demo, control-plane) load @grpc/grpc-js (an optional
// peer), and only when they run.
import { parseArgs } from 'node:util';
import { SCENARIOS } from './demo/catalog.js';
import { commandHelp, globalHelp, isCommandName } from './help.js';
import { MissingPeerError, withGrpcJs } from './optional-peer.js';
import { packageVersion } from './package-version.js';

/** Which options each command takes (the rest are usage errors). */
const COMMAND_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  demo: ['scenario', 'duration', 'fast', 'plain', 'admin-port'],
  simulate: ['cluster', 'endpoints', 'scenario', 'html', 'replay', 'config', 'xds-cluster'],
  'control-plane': [
    'resources',
    'port',
    'host',
    'print-bootstrap',
    'bootstrap-file',
    'node-id',
    'lrs-interval',
    'lrs-clusters',
  ],
};

class UsageError extends Error {}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        scenario: { type: 'string' },
        duration: { type: 'string' },
        plain: { type: 'boolean' },
        'admin-port': { type: 'string' },
        fast: { type: 'boolean' },
        cluster: { type: 'string' },
        endpoints: { type: 'string' },
        html: { type: 'string' },
        replay: { type: 'string' },
        config: { type: 'string' },
        'xds-cluster': { type: 'string' },
        resources: { type: 'string' },
        port: { type: 'string' },
        host: { type: 'string' },
        'print-bootstrap': { type: 'boolean' },
        'bootstrap-file': { type: 'string' },
        'node-id': { type: 'string' },
        'lrs-interval': { type: 'string' },
        'lrs-clusters': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (e) {
    // node:util's messages name the option; its stack is of no use to someone who mistyped a flag.
    const code = (e as { code?: string }).code ?? '';
    if (!code.startsWith('ERR_PARSE_ARGS')) throw e;
    const unknown = /Unknown option '([^']+)'/.exec((e as Error).message);
    throw new UsageError(unknown ? `unknown option ${unknown[1]}` : (e as Error).message);
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv);
  const command = positionals[0];
  if (values.version) {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  // `lbtree simulate --help` and `lbtree help simulate`: that command's help; otherwise every command's.
  const helpOf = command === 'help' ? positionals[1] : values.help ? command : undefined;
  if (values.help || command === 'help') {
    if (helpOf !== undefined && !isCommandName(helpOf)) throw new UsageError(`unknown command "${helpOf}"`);
    process.stdout.write(helpOf === undefined ? globalHelp() : commandHelp(helpOf));
    return 0;
  }
  if (command === undefined) throw new UsageError('no command given');
  const allowed = COMMAND_OPTIONS[command];
  if (!allowed) throw new UsageError(`unknown command "${command}"`);
  if (positionals.length > 1)
    throw new UsageError(`unexpected argument "${positionals[1]}" after ${command}`);
  for (const option of Object.keys(values))
    if (!allowed.includes(option)) throw new UsageError(`${command} takes no --${option} option`);

  if (command === 'simulate' && values.replay !== undefined) {
    const mixed = (['cluster', 'endpoints', 'scenario'] as const).filter((o) => values[o] !== undefined);
    if (mixed.length > 0)
      throw new UsageError(
        `simulate --replay takes no --${mixed[0]} (the recording holds the tree and its inputs)`,
      );
    const { simulateReplay } = await import('./simulate/replay-command.js');
    try {
      simulateReplay(
        {
          replay: values.replay,
          ...(values.config !== undefined ? { config: values.config } : {}),
          ...(values['xds-cluster'] !== undefined ? { xdsCluster: values['xds-cluster'] } : {}),
          ...(values.html !== undefined ? { html: values.html } : {}),
        },
        (text) => process.stdout.write(text),
      );
    } catch (e) {
      process.stderr.write(`lbtree simulate: ${(e as Error).message}\n`);
      return 1;
    }
    return 0;
  }

  if (command === 'simulate') {
    if (values.config !== undefined || values['xds-cluster'] !== undefined)
      throw new UsageError('--config and --xds-cluster go with --replay FILE');
    const { cluster, endpoints, scenario, html } = values;
    if (!cluster || !endpoints || !scenario)
      throw new UsageError('simulate needs --cluster, --endpoints and --scenario');
    const { simulate } = await import('./simulate/command.js');
    try {
      simulate(
        {
          cluster,
          endpoints,
          scenario,
          ...(html ? { html } : {}),
        },
        (text) => process.stdout.write(text),
      );
    } catch (e) {
      // Invalid resources and scenarios are the user's input: show the reason, not a stack.
      process.stderr.write(`lbtree simulate: ${(e as Error).message}\n`);
      return 1;
    }
    return 0;
  }

  if (command === 'control-plane') return controlPlane(values);

  if (values.fast && values.duration !== undefined)
    throw new UsageError('--fast plays each phase until its outcome shows: it takes no --duration');
  const durationS = values.duration === undefined ? 12 : Number(values.duration);
  // At least 6 s: a backend that returns is reconnected after its subchannel's backoff (1 s, then 1.6 s, …).
  if (!Number.isFinite(durationS) || durationS < 6 || durationS > 600)
    throw new UsageError('--duration must be a number of seconds between 6 and 600');
  const names = values.scenario?.split(',').map((s) => s.trim()) ?? SCENARIOS.map((s) => s.name);
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0)
    throw new UsageError(
      `unknown scenario ${unknown.join(', ')} (have: ${SCENARIOS.map((s) => s.name).join(', ')})`,
    );
  const adminPort = values['admin-port'] === undefined ? 0 : Number(values['admin-port']);
  if (!Number.isInteger(adminPort) || adminPort < 0 || adminPort > 65535)
    throw new UsageError('--admin-port must be a port number (0 to 65535)');
  const { runDemo, FAST_PACE, humanPace } = await withGrpcJs('demo', () => import('./demo/run-demo.js'));
  const ok = await runDemo({
    scenarios: SCENARIOS.filter((s) => names.includes(s.name)),
    pace: values.fast ? FAST_PACE : humanPace(durationS * 1000),
    live: process.stdout.isTTY === true && !values.plain,
    adminPort,
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
  'lrs-interval'?: string | undefined;
  'lrs-clusters'?: string | undefined;
}): Promise<number> {
  if (!values.resources) throw new UsageError('control-plane needs --resources FILE');
  const intervalS = values['lrs-interval'] === undefined ? 10 : Number(values['lrs-interval']);
  if (!(intervalS > 0) || !Number.isFinite(intervalS))
    throw new UsageError('--lrs-interval must be a number of seconds above 0 (e.g. 10 or 0.5)');
  const clusters = values['lrs-clusters']
    ?.split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  if (values['lrs-clusters'] !== undefined && clusters?.length === 0)
    throw new UsageError('--lrs-clusters needs cluster names separated by commas');
  const port = values.port === undefined ? 18000 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError('--port must be a port number (0 to 65535)');
  const { runControlPlane } = await withGrpcJs('control-plane', () => import('./control-plane/command.js'));
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
      loadReporting: { intervalMs: intervalS * 1000, clusters: clusters ?? 'all' },
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
    if (e instanceof UsageError) {
      process.stderr.write(`lbtree: ${e.message}\nRun "lbtree --help" for usage.\n`);
      process.exit(2);
    }
    if (e instanceof MissingPeerError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`lbtree: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);
