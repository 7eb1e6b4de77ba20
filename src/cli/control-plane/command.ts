// `lbtree control-plane`: serves the Envoy resources of a file over ADS to any xDS client, follows the file
// as it changes, and prints what the clients say (ACK / NACK) and the load they report over LRS (per cluster
// and locality, every interval) until SIGTERM or Ctrl-C.
import { readFileSync, writeFileSync } from 'node:fs';
import {
  type AckRecord,
  ControlPlane,
  type ControlPlaneEvent,
  type LoadReportingRequest,
  localityName,
  parseResourceText,
  type ReceivedClusterLoad,
  type ReceivedLoadReport,
  type ResourceInput,
  shortTypeName,
  watchFileContent,
} from '../../control-plane/index.js';

export interface ControlPlaneCommandOptions {
  readonly resources: string;
  readonly host: string;
  readonly port: number;
  readonly printBootstrap: boolean;
  readonly bootstrapFile?: string;
  readonly nodeId?: string;
  /** What LRS clients are asked to report (default: every cluster, every 10 s). */
  readonly loadReporting?: LoadReportingRequest;
}

export interface CommandIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  /** Resolves when the command should stop (SIGTERM / SIGINT for the real command). */
  readonly stopped: Promise<string>;
}

/** Runs until `io.stopped`; returns the exit code. */
export async function runControlPlane(options: ControlPlaneCommandOptions, io: CommandIo): Promise<number> {
  const file = options.resources;
  let text: string;
  let resources: ResourceInput[];
  let plane: ControlPlane;
  try {
    text = readFileSync(file, 'utf8');
    resources = parseResourceText(text);
    plane = new ControlPlane({
      resources,
      ...(options.loadReporting && { loadReporting: options.loadReporting }),
    });
  } catch (e) {
    io.err(
      `lbtree control-plane: ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
    return 1;
  }
  io.out(`serving version ${plane.version} from ${file}: ${plane.resources.summary()}`);
  plane.onEvent((event) => {
    if (event.kind === 'load-report') {
      for (const line of describeLoadReport(event.report)) io.out(line);
      return;
    }
    const line = describeEvent(event, file);
    if (line) io.out(line);
  });
  try {
    await plane.listen(`${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`);
  } catch (e) {
    io.err(`lbtree control-plane: cannot listen on ${options.host}:${options.port}: ${(e as Error).message}`);
    return 1;
  }
  io.out(`listening on ${plane.address}`);
  const bootstrap = plane.bootstrap(options.nodeId ? { nodeId: options.nodeId } : {});
  if (options.bootstrapFile) {
    writeFileSync(options.bootstrapFile, `${JSON.stringify(bootstrap, null, 2)}\n`);
    io.out(`wrote bootstrap to ${options.bootstrapFile} (GRPC_XDS_BOOTSTRAP=${options.bootstrapFile})`);
  }
  if (options.printBootstrap) io.out(`bootstrap: ${JSON.stringify(bootstrap)}`);

  const stopWatching = watchFileContent(file, text, (next) => {
    try {
      plane.setResources(parseResourceText(next));
    } catch (e) {
      io.out(`${file}: not loaded: ${(e as Error).message}; still serving version ${plane.version}`);
    }
  });
  const reason = await io.stopped;
  stopWatching();
  await plane.close();
  io.out(`stopped (${reason})`);
  return 0;
}

/** One line per event worth a person's attention; responses sent are not printed (the ACK says it all). */
function describeEvent(event: ControlPlaneEvent, file: string): string | undefined {
  switch (event.kind) {
    case 'version':
      return `serving version ${event.version}: ${event.summary}`;
    case 'connected':
      return `client connected from ${event.peer} (stream ${event.streamId})`;
    case 'disconnected':
      return `client ${event.nodeId || '?'} (stream ${event.streamId}) disconnected: ${event.reason}`;
    case 'ack':
      return `ACK  ${event.ack.nodeId || '?'} ${shortTypeName(event.ack.typeUrl)} version ${event.ack.version}${subscription(event.ack)}`;
    case 'unknown-name': {
      const type = shortTypeName(event.typeUrl);
      return `client ${event.nodeId || '?'} (stream ${event.streamId}) asked for ${type} "${event.name}", which ${file} does not have (${namesThere(type, event.known)})`;
    }
    case 'nack':
      return `NACK ${event.nack.nodeId || '?'} ${shortTypeName(event.nack.typeUrl)} version ${event.nack.version}: ${event.nack.reason}`;
    case 'lrs-connected':
      return `load reports from ${event.nodeId || '?'} (${event.userAgent || 'unknown client'}, LRS stream ${event.streamId})`;
    case 'lrs-disconnected':
      return `load reports from ${event.nodeId || '?'} (LRS stream ${event.streamId}) ended: ${event.reason}`;
    default:
      return undefined;
  }
}

/** `it has Listener "a", "b"`, the first few of a long list, or `it has no Listener`. */
function namesThere(type: string, names: readonly string[]): string {
  if (names.length === 0) return `it has no ${type}`;
  const shown = names.slice(0, 5).map((n) => `"${n}"`);
  const more = names.length > shown.length ? ` and ${names.length - shown.length} more` : '';
  return `it has ${type} ${shown.join(', ')}${more}`;
}

/** ` [a, b]`, ` [*]` for a wildcard, or what an empty list that is no wildcard says: an unsubscribe. */
function subscription(ack: AckRecord): string {
  if (ack.resourceNames.length > 0) return ` [${ack.resourceNames.join(', ')}]`;
  return ack.wildcard ? ' [*]' : `; unsubscribed from all ${shortTypeName(ack.typeUrl)}s`;
}

/**
 * A report as a person reads it: per cluster, the interval and its drops; per locality, the calls and the
 * backends' metrics (average per call that reported it).
 */
export function describeLoadReport(report: ReceivedLoadReport): string[] {
  const lines: string[] = [];
  for (const c of report.clusters) {
    lines.push(
      `load ${report.nodeId || '?'} ${clusterTitle(c)} over ${(c.intervalMs / 1000).toFixed(1)} s${drops(c)}`,
    );
    for (const l of c.localities) {
      const metrics = Object.entries({
        ...l.metrics,
        ...(l.cpuUtilization && { cpu_utilization: l.cpuUtilization }),
        ...(l.memUtilization && { mem_utilization: l.memUtilization }),
        ...(l.applicationUtilization && { application_utilization: l.applicationUtilization }),
      }).map(
        ([name, m]) => `${name} ${formatAverage(m.total / Math.max(1, m.requests))} (${m.requests} calls)`,
      );
      lines.push(
        `  ${localityName(l)}: ${l.issued} issued, ${l.succeeded} ok, ${l.errored} failed, ${l.inProgress} in progress` +
          (metrics.length > 0 ? `; ${metrics.join(', ')}` : ''),
      );
    }
  }
  return lines;
}

function clusterTitle(c: ReceivedClusterLoad): string {
  return c.edsServiceName ? `cluster ${c.cluster} (EDS ${c.edsServiceName})` : `cluster ${c.cluster}`;
}

function drops(c: ReceivedClusterLoad): string {
  if (c.totalDrops === 0) return '';
  const byCategory = Object.entries(c.drops).map(([category, n]) => `${category} ${n}`);
  return `, ${c.totalDrops} dropped${byCategory.length > 0 ? ` (${byCategory.join(', ')})` : ''}`;
}

function formatAverage(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toPrecision(3);
}
