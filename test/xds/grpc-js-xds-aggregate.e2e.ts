// An aggregate cluster (A37) under the real @grpc/grpc-js-xds client with lbtree registered (issue 9):
// grpc-js-xds's cds builds a `priority` (lbtree's) whose children are `cds` policies — a name only grpc-js
// knows, which lbtree's parent resolves through grpc-js's registry and runs as a grpc-js child policy. Each
// leaf cluster's tree is lbtree's again (priority → xds_wrr_locality → …). Traffic goes to the first leaf,
// moves to the second when the first has no endpoints left, and comes back.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cp, rpcsUntil, servedByExactly, XdsHarness } from './grpc-js-xds-harness.js';

describe('lbtree policies under @grpc/grpc-js-xds: an aggregate cluster (A37, issue 9)', () => {
  const h = new XdsHarness();
  before(() => h.start(['x1', 'y1']));
  after(() => h.close());

  test('priority (lbtree) over cds children (grpc-js) follows the leaf clusters in order', async () => {
    const mark = h.traceMark();
    const resources = (leaf1Endpoints: string[]) => [
      cp.listener('agg', { inline: [{ routes: [{ cluster: 'agg-cluster' }] }] }),
      cp.aggregateCluster('agg-cluster', ['leaf-1', 'leaf-2']),
      cp.cluster({ name: 'leaf-1' }),
      cp.clusterLoadAssignment('leaf-1', [{ zone: 'a', endpoints: leaf1Endpoints }]),
      cp.cluster({ name: 'leaf-2' }),
      cp.clusterLoadAssignment('leaf-2', [{ zone: 'b', endpoints: [h.backend('y1').address] }]),
    ];
    h.publish('agg', resources([h.backend('x1').address]));
    const client = h.channel('agg', 'agg-node');
    await rpcsUntil(client, servedByExactly(['x1']));
    const seen = h.lbtreeTraces(mark);
    assert.match(seen, /priority: child policy cds created/, 'grpc-js-xds’s cds ran under lbtree’s priority');
    assert.match(
      seen,
      /priority: child policy xds_wrr_locality_experimental created/,
      'the leaf tree is lbtree’s',
    );
    h.publish('agg', resources([]));
    await rpcsUntil(client, servedByExactly(['y1']), { deadlineMs: 30_000 });
    h.publish('agg', resources([h.backend('x1').address]));
    await rpcsUntil(client, servedByExactly(['x1']), { deadlineMs: 30_000 });
    assert.deepEqual(h.plane.nacks, []);
  });
});
