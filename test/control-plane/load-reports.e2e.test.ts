// `lbtree control-plane`'s LRS side (A27): what it asks clients for (--lrs-interval, --lrs-clusters), and the
// lines it prints per cluster and locality when lbtree's LRS client (over the grpc-js transport) reports.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { runControlPlane } from '../../src/cli/control-plane/command.js';
import { loadStatsResponse, xdsService } from '../../src/control-plane/index.js';
import { completeBackendMetricReport } from '../../src/core/index.js';
import { grpcXdsTransportFactory } from '../../src/grpc-js/xds-transport.js';
import { parseBootstrap } from '../../src/xds/client/bootstrap.js';
import { LrsClient } from '../../src/xds/lrs/lrs-client.js';
import { parseBackendMetricPropagation } from '../../src/xds/resources/backend-metric-propagation.js';
import { until } from '../support/until.js';

test('the LoadStatsResponse asks for every cluster (send_all_clusters) or the ones listed, at the interval given', () => {
  const all = loadStatsResponse({ intervalMs: 1500 });
  assert.deepEqual([all.sendAllClusters, all.clusters], [true, []]);
  assert.deepEqual([all.loadReportingInterval?.seconds, all.loadReportingInterval?.nanos], [1n, 500_000_000]);
  const listed = loadStatsResponse({ clusters: ['c1', 'c2'] });
  assert.deepEqual([listed.sendAllClusters, listed.clusters], [false, ['c1', 'c2']]);
  assert.equal(listed.loadReportingInterval?.seconds, 10n, 'default 10 s');
});

test('lbtree control-plane prints each client report per cluster and locality, drops and metrics included', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'lbtree-lrs-')), 'resources.yaml');
  writeFileSync(
    file,
    stringify(
      xdsService({ name: 'svc', clusters: [{ name: 'c1', localities: [{ endpoints: ['127.0.0.1:1'] }] }] }),
    ),
  );
  const lines: string[] = [];
  let stop: (reason: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const exit = runControlPlane(
    {
      resources: file,
      host: '127.0.0.1',
      port: 0,
      printBootstrap: false,
      loadReporting: { intervalMs: 1000, clusters: ['c1'] },
    },
    { out: (l) => lines.push(l), err: (l) => lines.push(l), stopped },
  );
  await until('listening', () => lines.some((l) => l.startsWith('listening on ')));
  const address = lines.find((l) => l.startsWith('listening on '))!.slice('listening on '.length);
  const client = new LrsClient({
    bootstrap: parseBootstrap({
      xds_servers: [{ server_uri: address, channel_creds: [{ type: 'insecure' }] }],
      node: { id: 'cli-node' },
    }),
    transport: grpcXdsTransportFactory,
  });
  try {
    const c1 = client.acquireClusterLoad('c1', '');
    const c2 = client.acquireClusterLoad('c2', 'eds2');
    const zone = { region: 'us', zone: 'a', subZone: '' };
    const counter = c1.locality(zone, parseBackendMetricPropagation(['named_metrics.*']));
    const report = { backendMetrics: completeBackendMetricReport({ namedMetrics: { queue: 3 } }) };
    for (let i = 0; i < 4; i++) {
      counter.callStarted();
      counter.callEnded(i !== 0, report);
    }
    counter.callStarted();
    c1.recordDrop('lb');
    c1.recordUncategorizedDrop();
    c2.locality(zone, parseBackendMetricPropagation([])).callStarted();
    await until('the report to be printed', () =>
      lines.some((l) => l.startsWith('load cli-node cluster c1')),
    );
    await until('the locality line', () => lines.some((l) => l.startsWith('  {region=us')));
    assert.ok(
      lines.some((l) => /^load reports from cli-node \(lbtree, LRS stream \d+\)$/.test(l)),
      lines.join('\n'),
    );
    const header = lines.find((l) => l.startsWith('load cli-node cluster c1'))!;
    assert.match(header, /^load cli-node cluster c1 over \d+\.\d s, 2 dropped \(lb 1\)$/);
    assert.equal(
      lines.find((l) => l.startsWith('  {region=us')),
      '  {region=us,zone=a,sub_zone=}: 5 issued, 3 ok, 1 failed, 1 in progress; named_metrics.queue 3 (4 calls)',
    );
    // --lrs-clusters c1: c2's load is not asked for, so not printed.
    assert.equal(lines.filter((l) => l.includes('cluster c2')).length, 0, lines.join('\n'));
  } finally {
    client.close();
    stop('test over');
    assert.equal(await exit, 0);
  }
});
