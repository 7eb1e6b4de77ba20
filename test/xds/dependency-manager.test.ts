import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addressKey, Code, type StatusOr } from '../../src/core/index.js';
import { type DnsResolver, XdsDependencyManager } from '../../src/xds/resolver/dependency-manager.js';
import type { XdsListener, XdsRouteConfiguration } from '../../src/xds/resources/types.js';
import type { XdsConfig } from '../../src/xds/xds-config.js';
import { routeTo } from '../support/xds-routes.js';
import { FAKE_TYPES, FakeXdsWatcher } from './fake-xds-watcher.js';
import { endpointResource, locality, xdsCluster } from './xds-config-fixtures.js';

const T = FAKE_TYPES;

function listener(rds = 'routes'): XdsListener {
  return {
    name: 'echo',
    routeSource: { kind: 'rds', routeConfigName: rds },
    httpFilters: [],
    maxStreamDurationMs: undefined,
  };
}

function routes(name: string, clusters: string[], domains = ['echo']): XdsRouteConfiguration {
  return {
    name,
    virtualHosts: [
      { name: 'vh', domains, routes: clusters.map((c) => routeTo(c)), filterOverrides: new Map() },
    ],
  };
}

const eds = (name: string, ip = '10.0.0.1') => endpointResource(name, [[locality('a', 1, [`${ip}:80`])]]);

class Harness {
  readonly xds = new FakeXdsWatcher();
  readonly updates: StatusOr<XdsConfig>[] = [];
  readonly lookups: string[] = [];
  dnsAnswers = new Map<string, string[] | Error>();
  pendingDns: (() => void)[] = [];
  readonly manager: XdsDependencyManager;

  constructor() {
    const dns: DnsResolver = {
      resolve: (host) => {
        this.lookups.push(host);
        return new Promise((resolve, reject) => {
          this.pendingDns.push(() => {
            const answer = this.dnsAnswers.get(host) ?? new Error('NXDOMAIN');
            if (answer instanceof Error) reject(answer);
            else resolve(answer);
          });
        });
      },
    };
    this.manager = new XdsDependencyManager({
      watcher: this.xds,
      types: T,
      listenerName: 'echo',
      authority: 'echo',
      dns,
      onUpdate: (c) => this.updates.push(c),
    });
  }

  async answerDns(): Promise<void> {
    const pending = this.pendingDns.splice(0);
    for (const p of pending) p();
    await new Promise((r) => setImmediate(r));
  }

  get last(): XdsConfig {
    const u = this.updates.at(-1);
    assert.ok(u?.ok, `expected a config, got ${JSON.stringify(u)}`);
    return u.value;
  }
}

describe('XdsDependencyManager (A74 "Changes in xds Resolver")', () => {
  test('A74: nothing is reported until the listener, routes, clusters and endpoints are all known', () => {
    const h = new Harness();
    h.xds.set(T.listener, 'echo', listener());
    h.xds.set(T.routeConfiguration, 'routes', routes('routes', ['c1']));
    assert.equal(h.updates.length, 0);
    h.xds.set(T.cluster, 'c1', xdsCluster('c1'));
    assert.equal(h.updates.length, 0, 'the cluster has no endpoints yet');
    h.xds.set(T.endpoint, 'c1', eds('c1'));
    assert.equal(h.updates.length, 1);
    const entry = h.last.clusters.get('c1');
    assert.ok(entry?.ok && entry.value.children.kind === 'endpoints');
    const address = entry.value.children.endpoints?.priorities[0]?.[0]?.endpoints[0]?.addresses[0];
    assert.equal(address && addressKey(address), '10.0.0.1:80');
    assert.equal(h.last.virtualHost.name, 'vh');
  });

  test('A74: a route to a new cluster is held back until that cluster and its endpoints arrive (no torn config)', () => {
    const h = new Harness();
    h.xds.set(T.listener, 'echo', listener());
    h.xds.set(T.routeConfiguration, 'routes', routes('routes', ['c1']));
    h.xds.set(T.cluster, 'c1', xdsCluster('c1'));
    h.xds.set(T.endpoint, 'c1', eds('c1'));
    const before = h.updates.length;
    h.xds.set(T.routeConfiguration, 'routes', routes('routes', ['c2']));
    h.xds.set(T.cluster, 'c2', xdsCluster('c2'));
    assert.equal(h.updates.length, before, 'still waiting for c2 endpoints');
    h.xds.set(T.endpoint, 'c2', eds('c2', '10.0.0.2'));
    assert.deepEqual([...h.last.clusters.keys()], ['c2']);
    assert.ok(
      !h.xds.active.has('cds/c1') && !h.xds.active.has('eds/c1'),
      'watches of the dropped cluster end',
    );
  });

  test('A74 + A31: a subscribed cluster stays in the config after the routes stop naming it', () => {
    const h = new Harness();
    h.xds.set(T.listener, 'echo', listener());
    h.xds.set(T.routeConfiguration, 'routes', routes('routes', ['c1']));
    h.xds.set(T.cluster, 'c1', xdsCluster('c1'));
    h.xds.set(T.endpoint, 'c1', eds('c1'));
    const release = h.manager.subscribe('c1');
    h.xds.set(T.cluster, 'c2', xdsCluster('c2'));
    h.xds.set(T.endpoint, 'c2', eds('c2'));
    h.xds.set(T.routeConfiguration, 'routes', routes('routes', ['c2']));
    assert.deepEqual(new Set(h.last.clusters.keys()), new Set(['c1', 'c2']));
    release();
    assert.deepEqual([...h.last.clusters.keys()], ['c2']);
  });

  test('A88 / A74: a listener or route configuration data error replaces the config with an error naming it; an ambient error changes nothing', () => {
    const h = new Harness();
    h.xds.set(T.listener, 'echo', listener());
    h.xds.set(T.routeConfiguration, 'routes', routes('routes', ['c1']));
    h.xds.set(T.cluster, 'c1', xdsCluster('c1'));
    h.xds.set(T.endpoint, 'c1', eds('c1'));
    const count = h.updates.length;
    h.xds.ambient(T.routeConfiguration, 'routes', { code: Code.UNAVAILABLE, details: 'stream closed' });
    assert.equal(h.updates.length, count);
    h.xds.error(T.routeConfiguration, 'routes', { code: Code.NOT_FOUND, details: 'does not exist' });
    const last = h.updates.at(-1)!;
    assert.equal(last.ok, false);
    assert.match(!last.ok ? last.status.details : '', /RouteConfiguration routes: does not exist/);
  });

  test("A74: no virtual host for the authority is an error; a cluster data error is that cluster's entry only", () => {
    const h = new Harness();
    h.xds.set(T.listener, 'echo', listener());
    h.xds.set(T.routeConfiguration, 'routes', routes('routes', ['c1'], ['other.example']));
    const u = h.updates.at(-1)!;
    assert.equal(u.ok, false);
    assert.match(!u.ok ? u.status.details : '', /no virtual host matches "echo"/);
    h.xds.set(T.routeConfiguration, 'routes', routes('routes', ['c1', 'c2']));
    h.xds.error(T.cluster, 'c1', { code: Code.UNAVAILABLE, details: 'Cluster c1: does not exist' });
    h.xds.set(T.cluster, 'c2', xdsCluster('c2'));
    h.xds.set(T.endpoint, 'c2', eds('c2'));
    const c1 = h.last.clusters.get('c1');
    assert.equal(c1?.ok, false);
    assert.ok(h.last.clusters.get('c2')?.ok);
  });

  test('A37 / A75: aggregate clusters flatten to leaf clusters in order, without repeats, loops skipped, depth limited', () => {
    const h = new Harness();
    const agg = (name: string, clusters: string[]) =>
      xdsCluster(name, { discovery: { kind: 'aggregate', clusters } });
    h.xds.set(T.listener, 'echo', listener());
    h.xds.set(T.routeConfiguration, 'routes', routes('routes', ['top']));
    h.xds.set(T.cluster, 'top', agg('top', ['b', 'inner', 'b']));
    h.xds.set(T.cluster, 'inner', agg('inner', ['d', 'top', 'gone']));
    h.xds.set(T.cluster, 'b', xdsCluster('b'));
    h.xds.set(T.cluster, 'd', xdsCluster('d'));
    h.xds.error(T.cluster, 'gone', { code: Code.UNAVAILABLE, details: 'Cluster gone: does not exist' });
    h.xds.set(T.endpoint, 'b', eds('b'));
    assert.equal(h.updates.length, 0);
    h.xds.set(T.endpoint, 'd', eds('d', '10.0.0.4'));
    const top = h.last.clusters.get('top');
    assert.ok(top?.ok && top.value.children.kind === 'aggregate');
    assert.deepEqual(top.value.children.leafClusters, ['b', 'd'], 'A74: a missing cluster is skipped');
    assert.equal(h.last.clusters.get('gone')?.ok, false);

    // A chain of 17 aggregates exceeds A37's depth limit of 16.
    const deep = new Harness();
    deep.xds.set(T.listener, 'echo', listener());
    deep.xds.set(T.routeConfiguration, 'routes', routes('routes', ['a0']));
    for (let i = 0; i < 17; i++) deep.xds.set(T.cluster, `a${i}`, agg(`a${i}`, [`a${i + 1}`]));
    deep.xds.set(T.cluster, 'a17', xdsCluster('a17'));
    deep.xds.set(T.endpoint, 'a17', eds('a17'));
    const a16 = deep.last.clusters.get('a16');
    assert.equal(a16?.ok, false);
    assert.match(!a16?.ok ? a16!.status.details : '', /deeper than 16/);
    assert.equal(deep.last.clusters.get('a0')?.ok, false, 'no usable leaf clusters above it');
  });

  test('A37 + A61: a LOGICAL_DNS cluster resolves to one endpoint with every address; re-resolution asks DNS again', async () => {
    const h = new Harness();
    h.dnsAnswers.set('backend.example', ['10.1.0.1', '10.1.0.2']);
    h.xds.set(T.listener, 'echo', listener());
    h.xds.set(T.routeConfiguration, 'routes', routes('routes', ['dns']));
    h.xds.set(
      T.cluster,
      'dns',
      xdsCluster('dns', { discovery: { kind: 'logical_dns', hostname: 'backend.example', port: 8080 } }),
    );
    assert.equal(h.updates.length, 0);
    await h.answerDns();
    const entry = h.last.clusters.get('dns');
    assert.ok(entry?.ok && entry.value.children.kind === 'endpoints');
    const endpoints = entry.value.children.endpoints!.priorities[0]![0]!.endpoints;
    assert.equal(endpoints.length, 1);
    assert.deepEqual(endpoints[0]!.addresses, [
      { host: '10.1.0.1', port: 8080 },
      { host: '10.1.0.2', port: 8080 },
    ]);
    h.dnsAnswers.set('backend.example', new Error('SERVFAIL') as never);
    h.manager.requestReresolution();
    await h.answerDns();
    assert.deepEqual(h.lookups, ['backend.example', 'backend.example']);
    const after = h.last.clusters.get('dns');
    assert.ok(after?.ok && after.value.children.kind === 'endpoints');
    assert.ok(after.value.children.endpoints, 'the last good addresses keep serving');
    assert.match(after.value.children.resolutionNote, /SERVFAIL/);
  });

  test('an inline route configuration needs no RDS watch', () => {
    const h = new Harness();
    h.xds.set(T.listener, 'echo', {
      ...listener(),
      routeSource: { kind: 'inline', routeConfig: routes('inline', ['c1']) },
    });
    h.xds.set(T.cluster, 'c1', xdsCluster('c1'));
    h.xds.set(T.endpoint, 'c1', eds('c1'));
    assert.equal(h.last.routeConfig.name, 'inline');
    assert.ok(![...h.xds.active].some((k) => k.startsWith('rds/')));
  });
});
