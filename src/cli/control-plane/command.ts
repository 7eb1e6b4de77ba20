// `lbtree control-plane`: serves the Envoy resources of a file over ADS to any xDS client, follows the file
// as it changes, and prints what the clients say (ACK / NACK) until SIGTERM or Ctrl-C.
import { readFileSync, writeFileSync } from 'node:fs';
import {
  type AckRecord,
  ControlPlane,
  type ControlPlaneEvent,
  parseResourceText,
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
    plane = new ControlPlane({ resources });
  } catch (e) {
    io.err(
      `lbtree control-plane: ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
    return 1;
  }
  io.out(`serving version ${plane.version} from ${file}: ${plane.resources.summary()}`);
  plane.onEvent((event) => {
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
