import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PolicyNode } from '../core/index.js';
import { type ChannelRegistry, liveChannels, type RegisteredChannel } from '../grpc-js/channel-registry.js';
import { channelPage, indexPage, STATIC_ASSETS } from './assets/pages.js';
import { type ChannelSnapshot, snapshotOf, summarize } from './channel-snapshot.js';
import { PickShares } from './pick-shares.js';

export interface AdminHandlerOptions {
  /** Where the handler is mounted in the user's server ('' or '/lbtree', …): stripped from request paths. */
  readonly basePath?: string;
  /** How often live pages get a new picture (ms, default 1000). */
  readonly updateIntervalMs?: number;
  /** The shortest window the recent share of picks is measured over (ms, default 1000). */
  readonly shareWindowMs?: number;
  /**
   * Hosts a request's Host header may name (DNS rebinding guard); undefined: any. The server made by
   * `startAdminServer` allows only loopback names unless it is told `allowRemote`.
   */
  readonly allowedHosts?: (hostname: string) => boolean;
  /** The channels shown (default: every channel lbtree's grpc-js adapter runs). */
  readonly registry?: ChannelRegistry;
  /** Wall-clock ms (default Date.now): the share windows and the times shown are read from it. */
  readonly clock?: () => number;
}

/** A request handler for node:http (or anything with the same request and response objects). */
export type AdminHandler = (request: IncomingMessage, response: ServerResponse) => void;

const CHANNEL_ID = /^[0-9]+$/;

/**
 * The live view as a request handler to mount in the user's own server. Routes (below `basePath`):
 *   GET /                      the channel list (HTML)          GET /channels.json          the list as JSON
 *   GET /channels/:id          a channel's page (HTML)          GET /channels/:id.json      its snapshot as JSON
 *   GET /events                the list, server-sent events     GET /channels/:id/events    its snapshots, server-sent events
 *   GET /channels/:id/recording.lbrec   its flight recording (404 when the channel does not record)
 *   GET /static/:file          the page's own script and style (nothing else is ever read or served)
 * An unknown channel is a 404 naming the id and the live ones; anything else is a 404 or a 405.
 */
export function createAdminHandler(options: AdminHandlerOptions = {}): AdminHandler {
  const base = (options.basePath ?? '').replace(/\/+$/, '');
  const registry = options.registry ?? liveChannels;
  const updateMs = positive(options.updateIntervalMs, 1000, 'updateIntervalMs');
  const windowMs = positive(options.shareWindowMs, 1000, 'shareWindowMs');
  const shares = new WeakMap<RegisteredChannel, PickShares>();
  const clock = options.clock ?? Date.now;

  const snapshot = (channel: RegisteredChannel): ChannelSnapshot => {
    const now = clock();
    let tracker = shares.get(channel);
    if (tracker === undefined) {
      tracker = new PickShares(windowMs, channel.createdAt);
      shares.set(channel, tracker);
    }
    const tree = describeSafely(channel);
    return snapshotOf(channel, tree, tracker.sample(tree, now), now, describeSafely(channel, true));
  };
  const list = () => ({ channels: registry.list().map((c) => summarize(c, describeSafely(c))) });

  return (request, response) => {
    try {
      const host = hostnameOf(request.headers.host);
      if (options.allowedHosts !== undefined && !options.allowedHosts(host)) {
        return send(
          response,
          403,
          'text/plain',
          `lbtree admin: requests for host "${host}" are refused (only loopback names are served; see allowRemote)\n`,
        );
      }
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.setHeader('allow', 'GET, HEAD');
        return send(
          response,
          405,
          'text/plain',
          `lbtree admin: ${request.method} is not served (GET only)\n`,
        );
      }
      const url = request.url ?? '/';
      const rawPath = url.split('?')[0]!;
      if (base !== '' && rawPath === base) return redirect(response, `${base}/`);
      if (base !== '' && !rawPath.startsWith(`${base}/`)) return notFound(response, rawPath);
      const path = rawPath.slice(base.length);
      if (path === '/') return send(response, 200, 'text/html; charset=utf-8', indexPage());
      if (path === '/channels.json') return sendJson(response, 200, list());
      if (path === '/events') return stream(request, response, updateMs, () => list());
      if (path.startsWith('/static/')) {
        const asset = STATIC_ASSETS.get(path.slice('/static/'.length));
        return asset === undefined ? notFound(response, path) : send(response, 200, asset.type, asset.body);
      }
      const match = /^\/channels\/([^/]+?)(\.json|\/events|\/recording\.lbrec)?$/.exec(path);
      if (match === null) return notFound(response, path);
      const [, id, suffix] = match;
      const channel = CHANNEL_ID.test(id!) ? registry.get(id!) : undefined;
      if (channel === undefined) return unknownChannel(response, id!, registry, suffix === undefined);
      if (suffix === '.json') return sendJson(response, 200, snapshot(channel));
      if (suffix === '/recording.lbrec') return sendRecording(response, id!, channel);
      if (suffix === '/events') {
        return stream(request, response, updateMs, () =>
          registry.get(id!) === channel ? snapshot(channel) : null,
        );
      }
      return send(response, 200, 'text/html; charset=utf-8', channelPage(id!));
    } catch (e) {
      if (!response.headersSent) send(response, 500, 'text/plain', `lbtree admin: ${(e as Error).message}\n`);
      else response.destroy();
    }
  };
}

/** The channel's flight recording as a download, or a 404 saying how to turn the recorder on. */
function sendRecording(response: ServerResponse, id: string, channel: RegisteredChannel): void {
  const file = channel.exportRecording?.();
  if (file === undefined) {
    send(
      response,
      404,
      'text/plain; charset=utf-8',
      `lbtree admin: channel ${id} does not record (give it the lbtree.flight_recorder channel option, or register({ recorder: true }))\n`,
    );
    return;
  }
  response.setHeader('content-disposition', `attachment; filename="channel-${id}.lbrec"`);
  send(response, 200, 'application/x-ndjson; charset=utf-8', file);
}

/**
 * A policy's describe() that throws shows as no tree rather than failing the page (or the channel).
 * `pending`: the tree of the root grpc-js is switching the channel to, if it is switching.
 */
function describeSafely(channel: RegisteredChannel, pending = false): PolicyNode | undefined {
  try {
    return pending ? channel.describePending?.() : channel.describe();
  } catch {
    return undefined;
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!(Number.isFinite(value) && value > 0)) {
    throw new RangeError(`lbtree admin: ${name} must be a positive number of ms, got ${value}`);
  }
  return value;
}

/** The hostname of a Host header ("127.0.0.1:8080" → "127.0.0.1", "[::1]:80" → "::1"). */
export function hostnameOf(host: string | undefined): string {
  if (host === undefined) return '';
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return (colon < 0 ? host : host.slice(0, colon)).toLowerCase();
}

function send(response: ServerResponse, code: number, type: string, body: string): void {
  response.writeHead(code, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  response.end(body);
}

function sendJson(response: ServerResponse, code: number, body: unknown): void {
  send(response, code, 'application/json; charset=utf-8', `${JSON.stringify(body, null, 2)}\n`);
}

function redirect(response: ServerResponse, location: string): void {
  response.writeHead(301, { location });
  response.end();
}

function notFound(response: ServerResponse, path: string): void {
  sendJson(response, 404, { error: `lbtree admin: nothing at ${JSON.stringify(path)}` });
}

function unknownChannel(
  response: ServerResponse,
  id: string,
  registry: ChannelRegistry,
  html: boolean,
): void {
  const live = registry.list().map((c) => c.id);
  const message =
    `lbtree admin: no channel with id ${JSON.stringify(id)}` +
    (live.length === 0 ? ' (no channel is live)' : ` (live channels: ${live.join(', ')})`);
  if (html) send(response, 404, 'text/plain; charset=utf-8', `${message}\n`);
  else sendJson(response, 404, { error: message });
}

/**
 * Server-sent events: the picture now, then a new one whenever it changed, checked every `intervalMs`; a
 * comment line keeps idle connections open. `read` returning null (the channel closed) ends the stream with a
 * `gone` event.
 */
function stream(
  request: IncomingMessage,
  response: ServerResponse,
  intervalMs: number,
  read: () => unknown | null,
): void {
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
  });
  let last = '';
  let quiet = 0;
  const push = () => {
    const value = read();
    if (value === null) {
      response.end('event: gone\ndata: {}\n\n');
      stop();
      return;
    }
    const text = JSON.stringify(value);
    if (text !== last) {
      last = text;
      quiet = 0;
      response.write(`data: ${text}\n\n`);
    } else if (++quiet * intervalMs >= 15_000) {
      quiet = 0;
      response.write(': still here\n\n');
    }
  };
  const timer = setInterval(push, intervalMs);
  timer.unref();
  const stop = () => clearInterval(timer);
  request.on('close', stop);
  response.on('close', stop);
  push();
}
