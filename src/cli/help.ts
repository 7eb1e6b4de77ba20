// The text of `lbtree --help` and of each command's own help (`lbtree simulate --help`): one table of the
// commands (usage, description, options) that both are written from, so they cannot tell different stories.
import { SCENARIOS } from './demo/catalog.js';

type Rows = readonly (readonly [string, string])[];

interface CommandHelp {
  readonly usage: string;
  readonly description: string;
  readonly options: Rows;
  /** Sections only this command has (the demo's scenario list). */
  readonly more?: () => readonly (readonly [title: string, rows: Rows])[];
}

export type CommandName = 'demo' | 'simulate' | 'control-plane';

const HELP_OPTION = ['-h, --help', 'This text'] as const;

const COMMANDS: Readonly<Record<CommandName, CommandHelp>> = {
  demo: {
    usage:
      'lbtree demo [--scenario NAME[,NAME…]] [--duration SECONDS | --fast] [--plain] [--admin-port PORT]',
    description:
      'Starts real gRPC servers on loopback (IPv4, and IPv6 when available), a client channel that\n' +
      'balances with lbtree, and plays scripted scenarios under steady RPC load. On a terminal it shows\n' +
      'a live view; otherwise (or with --plain) it prints progress lines. Ends with a summary.\n' +
      'It first prints the address of the live view of its channels (lbtree/admin): open it in a\n' +
      'browser to watch the LB tree of each scenario change.\n' +
      'Needs @grpc/grpc-js installed beside lbtree.',
    options: [
      ['--scenario NAME,…', 'Scenarios to play, comma-separated (default: all)'],
      [
        '--duration SECONDS',
        'Seconds of load per scenario, 6 to 600 (default 12; Happy Eyeballs uses at most 4)',
      ],
      [
        '--fast',
        'Each phase only until its outcome shows, with 100 ms reconnect backoff (for tests and CI;\n' +
          'the same checks, in a few seconds)',
      ],
      ['--plain', 'Progress lines even on a terminal'],
      ['--admin-port PORT', 'Port of the live view on 127.0.0.1 (default: any free port)'],
    ],
    more: () => [['Demo scenarios', SCENARIOS.map((s) => [s.name, s.summary] as const)]],
  },
  simulate: {
    usage:
      'lbtree simulate --cluster FILE --endpoints FILE --scenario FILE [--html OUT.html]\n' +
      '       lbtree simulate --replay RECORDING [--config LB.yaml] [--xds-cluster NAME] [--html OUT.html]',
    description:
      'Runs an xDS cluster in the deterministic simulator: an Envoy Cluster and ClusterLoadAssignment\n' +
      '(proto3 JSON or YAML) become lbtree’s policy tree (A52 LB policy registry, EDS → priority tree),\n' +
      'driven by a request rate and a scripted scenario (endpoints, localities or priorities failing,\n' +
      'hanging, recovering). Prints a timeline and the traffic share per priority / locality /\n' +
      'endpoint; --html writes a self-contained page with charts. Examples: examples/simulate/.',
    options: [
      ['--cluster FILE', 'The Envoy Cluster resource (YAML or proto3 JSON)'],
      ['--endpoints FILE', 'Its ClusterLoadAssignment'],
      ['--scenario FILE', 'Rate, step, duration and timed events (see examples/simulate/)'],
      ['--html OUT.html', 'Also write a self-contained page with charts'],
      [
        '--replay RECORDING',
        'Replay a flight recording (README "Record and replay"): recorded beside simulated',
      ],
      [
        '--config LB.yaml',
        'With --replay: the same inputs under another LB config (an xDS cluster’s policy)',
      ],
      ['--xds-cluster NAME', 'With --replay: replay this xDS cluster alone (its calls), not every cluster'],
    ],
  },
  'control-plane': {
    usage:
      'lbtree control-plane --resources FILE [--port N] [--host H] [--print-bootstrap] [--bootstrap-file OUT] [--lrs-interval S] [--lrs-clusters A,B]',
    description:
      'An xDS control plane (ADS v3, state of the world) on grpc-js serving the Envoy resources in\n' +
      'FILE (YAML or JSON: a list of proto3 JSON resources with "@type") to any gRPC xDS client.\n' +
      'Prints "listening on HOST:PORT", reloads FILE when it changes (a new version for every\n' +
      'client; a file that does not load, or is empty, is reported and the last good set keeps\n' +
      'serving; "resources: []" serves none on purpose), prints every client\'s ACK and NACK and\n' +
      'the load it reports over LRS (A27: per cluster and locality, every interval), and\n' +
      'stops on SIGTERM / Ctrl-C. Example: examples/control-plane/.\n' +
      'Needs @grpc/grpc-js installed beside lbtree.',
    options: [
      ['--resources FILE', 'The resources file (required)'],
      ['--port N', 'Port to listen on (default 18000; 0 picks a free one)'],
      ['--host H', 'Address to listen on (default 127.0.0.1)'],
      ['--print-bootstrap', 'Print a client bootstrap JSON (for GRPC_XDS_BOOTSTRAP_CONFIG) once listening'],
      ['--bootstrap-file OUT', 'Write that bootstrap to a file (for GRPC_XDS_BOOTSTRAP)'],
      ['--node-id ID', 'node.id in the bootstrap (default lbtree-client)'],
      ['--lrs-interval S', 'How often clients report their load, in seconds (default 10)'],
      ['--lrs-clusters A,B', "Ask for these clusters' load only (default: every cluster)"],
    ],
  },
};

const NAMES = Object.keys(COMMANDS) as CommandName[];

export function isCommandName(name: string): name is CommandName {
  return (NAMES as string[]).includes(name);
}

/** Two aligned columns: each term padded to the longest, descriptions wrapped under one another. */
function columns(rows: Rows, indent = 2): string {
  const width = Math.max(...rows.map(([term]) => term.length)) + 2;
  return rows
    .map(([term, text]) =>
      text
        .split('\n')
        .map((line, i) => `${' '.repeat(indent)}${(i === 0 ? term : '').padEnd(width)}${line}`)
        .join('\n'),
    )
    .join('\n');
}

const section = (title: string, rows: Rows) => `${title}:\n${columns(rows)}\n`;

const titled = (name: CommandName) => `${name[0]!.toUpperCase()}${name.slice(1)} options`;

/** `lbtree --help`: every command, its options, and the demo's scenarios. */
export function globalHelp(): string {
  return [
    'lbtree — gRPC client-side load balancing for Node.js\n',
    `Usage:\n${NAMES.map((n) => `  ${COMMANDS[n].usage}`).join('\n')}\n  lbtree COMMAND --help\n  lbtree --help | --version\n`,
    section(
      'Commands',
      NAMES.map((n) => [n, COMMANDS[n].description]),
    ),
    ...NAMES.map((n) => section(titled(n), COMMANDS[n].options)),
    section('Other options', [
      ['-h, --help', 'This text; after a command, that command’s help'],
      ['-v, --version', 'The version of lbtree'],
    ]),
    ...NAMES.flatMap((n) => COMMANDS[n].more?.().map(([title, rows]) => section(title, rows)) ?? []),
  ].join('\n');
}

/** `lbtree simulate --help`: that command's usage, description and options only. */
export function commandHelp(name: CommandName): string {
  const help = COMMANDS[name];
  return [
    `Usage:\n  ${help.usage}\n`,
    `${help.description}\n`,
    section('Options', [...help.options, HELP_OPTION]),
    ...(help.more?.().map(([title, rows]) => section(title, rows)) ?? []),
    'Every command: lbtree --help\n',
  ].join('\n');
}
