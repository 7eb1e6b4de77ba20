import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Code } from '../../src/core/index.js';
import { XdsResolution, type XdsResolutionResult } from '../../src/xds/resolver/xds-resolution.js';
import type { XdsListener, XdsRouteConfiguration } from '../../src/xds/resources/types.js';
import { routeTo } from '../support/xds-routes.js';
import { FakeXdsWatcher, FAKE_TYPES as T } from './fake-xds-watcher.js';
import { endpointResource, locality, xdsCluster } from './xds-config-fixtures.js';

const NO_METADATA = { get: () => [] };

const routes = (cluster: string): XdsRouteConfiguration => ({
  name: 'routes',
  virtualHosts: [{ name: 'vh', domains: ['echo'], routes: [routeTo(cluster)], filterOverrides: new Map() }],
});
const listener: XdsListener = {
  name: 'echo',
  routeSource: { kind: 'rds', routeConfigName: 'routes' },
  httpFilters: [],
  maxStreamDurationMs: undefined,
};

/** A channel stand-in: takes each result, and releases the router it replaces, as grpc-js does. */
class Channel {
  readonly results: XdsResolutionResult[] = [];
  readonly deferred: (() => void)[] = [];
  readonly xds = new FakeXdsWatcher();
  readonly resolution = new XdsResolution({
    watcher: this.xds,
    types: T,
    authority: 'echo',
    listenerName: 'echo',
    dns: { resolve: async () => [] },
    channelId: 1n,
    random: () => 0.5,
    defer: (fn) => this.deferred.push(fn),
    onResult: (r) => {
      this.results.at(-1)?.router.release();
      this.results.push(r);
      return true;
    },
  });

  get last(): XdsResolutionResult {
    return this.results.at(-1)!;
  }

  children(): string[] {
    const config = this.last.lbConfig[0]!.xds_cluster_manager_experimental as {
      children: Record<string, unknown>;
    };
    return Object.keys(config.children);
  }

  runDeferred(): void {
    for (const fn of this.deferred.splice(0)) fn();
  }

  serve(cluster: string): void {
    this.xds.set(T.cluster, cluster, xdsCluster(cluster));
    this.xds.set(T.endpoint, cluster, endpointResource(cluster, [[locality('a', 1, ['10.0.0.1:80'])]]));
  }
}

describe('xds resolution: service config and config selector (A31, A74)', () => {
  test('A31: the LB config is xds_cluster_manager with a cds child per cluster; the selector routes calls to them', () => {
    const ch = new Channel();
    ch.xds.set(T.listener, 'echo', listener);
    ch.xds.set(T.routeConfiguration, 'routes', routes('c1'));
    ch.serve('c1');
    assert.deepEqual(ch.children(), ['cluster:c1']);
    assert.deepEqual(ch.last.lbConfig, [
      {
        xds_cluster_manager_experimental: {
          children: { 'cluster:c1': { childPolicy: [{ cds_experimental: { cluster: 'c1' } }] } },
        },
      },
    ]);
    const call = ch.last.router.select('/echo.Echo/Call', NO_METADATA);
    assert.ok(call.ok);
    assert.equal(call.clusterChild, 'cluster:c1');
    assert.ok(ch.last.xdsConfig?.clusters.get('c1')?.ok);
  });

  test('A31 two-step removal: a cluster left by the routes stays while a call still holds it, then goes', () => {
    const ch = new Channel();
    ch.xds.set(T.listener, 'echo', listener);
    ch.xds.set(T.routeConfiguration, 'routes', routes('c1'));
    ch.serve('c1');
    const inFlight = ch.last.router.select('/echo.Echo/Call', NO_METADATA);
    assert.ok(inFlight.ok);
    ch.serve('c2');
    ch.xds.set(T.routeConfiguration, 'routes', routes('c2'));
    assert.deepEqual(
      ch.children().sort(),
      ['cluster:c1', 'cluster:c2'],
      'the new selector cannot pick c1, the LB still has it',
    );
    assert.ok(
      ch.last.xdsConfig?.clusters.get('c1')?.ok,
      "c1's last entry is kept for the calls still using it",
    );
    ch.runDeferred();
    assert.deepEqual(ch.children().sort(), ['cluster:c1', 'cluster:c2']);
    inFlight.release();
    ch.runDeferred();
    assert.deepEqual(ch.children(), ['cluster:c2']);
  });

  test('A88: a listener that does not exist fails every call with a status naming it', () => {
    const ch = new Channel();
    ch.xds.error(T.listener, 'echo', { code: Code.UNAVAILABLE, details: 'Listener echo: does not exist' });
    const call = ch.last.router.select('/echo.Echo/Call', NO_METADATA);
    assert.equal(call.ok, false);
    assert.match(!call.ok ? call.status.details : '', /Listener echo: does not exist/);
    assert.deepEqual(ch.children(), []);
  });
});
