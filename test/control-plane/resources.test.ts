// The resources a control plane takes: the file formats (YAML / JSON list, `resources:`, one per document),
// the builders (every builder's output is a valid proto3 JSON resource of its type, with unknown fields
// rejected), and the file watcher that follows an editor's saves.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { anyUnpack } from '@bufbuild/protobuf/wkt';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  LISTENER_TYPE_URL,
  parseHostPort,
  parseResourceText,
  ResourceSet,
  ROUTE_CONFIGURATION_TYPE_URL,
  watchFileContent,
  xdsService,
} from '../../src/control-plane/index.js';
import type { Cluster } from '../../src/protos/gen/envoy/config/cluster/v3/cluster_pb.js';
import type { ClusterLoadAssignment } from '../../src/protos/gen/envoy/config/endpoint/v3/endpoint_pb.js';
import type { Listener } from '../../src/protos/gen/envoy/config/listener/v3/listener_pb.js';
import { xdsTypeRegistry } from '../../src/protos/type-registry.js';
import { everyBuilder } from './every-builder.js';

const decoded = <T>(set: ResourceSet, typeUrl: string, name: string): T =>
  anyUnpack(set.ofType(typeUrl).get(name)!.any, xdsTypeRegistry) as T;

test('resource files: a YAML list, JSON, `resources:`, several documents; only an explicit empty list is no resources', () => {
  const yamlList = '- "@type": type.googleapis.com/envoy.config.cluster.v3.Cluster\n  name: a\n';
  assert.equal((parseResourceText(yamlList)[0] as { name: string }).name, 'a');
  const json = JSON.stringify({ resources: [{ '@type': CLUSTER_TYPE_URL, name: 'b' }] });
  assert.equal((parseResourceText(json)[0] as { name: string }).name, 'b');
  const docs = `"@type": ${CLUSTER_TYPE_URL}\nname: c\n---\n- "@type": ${CLUSTER_TYPE_URL}\n  name: d\n`;
  assert.deepEqual(
    parseResourceText(docs).map((r) => (r as { name: string }).name),
    ['c', 'd'],
  );
  // An empty or comments-only text is what a file holds while it is rewritten: refused, not "no resources".
  for (const nothing of ['', '\n  \n', '# resources go here\n# soon\n', '---\n', '# a\n---\n---\n'])
    assert.throws(
      () => parseResourceText(nothing),
      /holds no resources .*write "resources: \[\]"/,
      JSON.stringify(nothing),
    );
  for (const none of ['resources: []', '[]', '# none on purpose\nresources: []\n', '---\n[]\n'])
    assert.deepEqual(parseResourceText(none), [], JSON.stringify(none));
  assert.throws(() => parseResourceText('just text'), /expected a list of resources/);
  assert.throws(() => parseResourceText('- a\n -b: [\n'), /line \d+/);
});

test('the example file is a valid resource set: listener → routes → cluster → endpoints', () => {
  const set = ResourceSet.build(
    '1',
    parseResourceText(readFileSync('examples/control-plane/resources.yaml', 'utf8')),
  );
  assert.equal(set.summary(), '1 Listener, 1 RouteConfiguration, 1 Cluster, 1 ClusterLoadAssignment');
  const cla = decoded<ClusterLoadAssignment>(set, CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, 'hello-cluster');
  assert.deepEqual(
    cla.endpoints.map((l) => [l.locality?.zone, l.priority, l.loadBalancingWeight]),
    [
      ['a', 0, 3],
      ['b', 0, 1],
      ['fallback', 1, 1],
    ],
  );
});

test('builders: xdsService is a whole RDS chain; inline routes put the route configuration in the listener', () => {
  const rds = ResourceSet.build(
    '1',
    xdsService({
      name: 'svc',
      clusters: [
        { name: 'c1', weight: 3, localities: [{ zone: 'a', endpoints: ['127.0.0.1:1', '[::1]:2'] }] },
        {
          name: 'c2',
          localities: [{ zone: 'b', priority: 1, endpoints: [{ address: '127.0.0.1:3', weight: 5 }] }],
        },
      ],
      hashPolicy: [{ header: 'x-user' }],
    }),
  );
  assert.equal(rds.summary(), '1 Listener, 1 RouteConfiguration, 2 Clusters, 2 ClusterLoadAssignments');
  const route = rds.ofType(ROUTE_CONFIGURATION_TYPE_URL).get('svc-routes');
  assert.ok(route);
  const c1 = decoded<ClusterLoadAssignment>(rds, CLUSTER_LOAD_ASSIGNMENT_TYPE_URL, 'c1');
  const addresses = c1.endpoints[0]!.lbEndpoints.map((e) => {
    const ep = e.hostIdentifier.case === 'endpoint' ? e.hostIdentifier.value : undefined;
    const sa = ep?.address?.address.case === 'socketAddress' ? ep.address.address.value : undefined;
    return `${sa?.address}:${sa?.portSpecifier.value}`;
  });
  assert.deepEqual(addresses, ['127.0.0.1:1', '::1:2']);
  const inline = ResourceSet.build(
    '1',
    xdsService({ name: 'svc', inlineRoutes: true, clusters: [{ name: 'c', localities: [] }] }),
  );
  assert.equal(inline.ofType(ROUTE_CONFIGURATION_TYPE_URL).size, 0);
  const l = decoded<Listener>(inline, LISTENER_TYPE_URL, 'svc');
  assert.ok(l.apiListener?.apiListener?.typeUrl.endsWith('HttpConnectionManager'));
});

test('builders: every LB policy, ring hash, aggregate and LOGICAL_DNS clusters are valid Cluster resources', () => {
  const set = ResourceSet.build('1', everyBuilder());
  const ring = decoded<Cluster>(set, CLUSTER_TYPE_URL, 'legacy-ring');
  assert.equal(ring.lbConfig.case === 'ringHashLbConfig' && ring.lbConfig.value.minimumRingSize, 64n);
  const a52 = decoded<Cluster>(set, CLUSTER_TYPE_URL, 'a52');
  assert.equal(a52.loadBalancingPolicy?.policies.length, 5);
  assert.equal(a52.edsClusterConfig?.serviceName, 'a52-eds');
});

test('parseHostPort: IPv4, [IPv6], and a clear error without a port', () => {
  assert.deepEqual(parseHostPort('10.0.0.1:80'), { host: '10.0.0.1', port: 80 });
  assert.deepEqual(parseHostPort('[::1]:443'), { host: '::1', port: 443 });
  assert.throws(() => parseHostPort('10.0.0.1'), /"10\.0\.0\.1" is not host:port/);
});

test('watchFileContent sees an in-place write and a rename over the file, once per new content', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-watch-'));
  const file = join(dir, 'r.yaml');
  writeFileSync(file, 'one');
  const seen: string[] = [];
  let notify: (() => void) | undefined;
  const next = () => new Promise<void>((resolve) => (notify = resolve));
  const stop = watchFileContent(
    file,
    'one',
    (text) => {
      seen.push(text);
      notify?.();
    },
    20,
  );
  try {
    let changed = next();
    writeFileSync(file, 'two');
    await changed;
    changed = next();
    writeFileSync(join(dir, 'r.yaml.tmp'), 'three');
    renameSync(join(dir, 'r.yaml.tmp'), file);
    await changed;
    writeFileSync(join(dir, 'unrelated.txt'), 'x');
    changed = next();
    writeFileSync(file, 'three'); // same content: no call
    writeFileSync(file, 'four');
    await changed;
    assert.deepEqual(seen, ['two', 'three', 'four']);
  } finally {
    stop();
  }
});
