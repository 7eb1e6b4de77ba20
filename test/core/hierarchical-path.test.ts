import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Attributes,
  addressKey,
  dealEndpoints,
  type Endpoint,
  HIERARCHICAL_PATH,
  HierarchicalSplit,
  LOCALITY,
  LOCALITY_WEIGHT,
  NO_ENDPOINTS,
  splitByHierarchicalPath,
  stripFirstPathElement,
} from '../../src/core/index.js';
import { toEndpoint } from '../../src/sim/index.js';

function withPath(address: string, path?: string[]): Endpoint {
  return toEndpoint(path ? { addresses: [address], attributes: { path } } : { addresses: [address] });
}

function show(split: HierarchicalSplit): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const name of split.names()) {
    out[name] = split.forChild(name).map((e) => {
      const path = e.attributes.get(HIERARCHICAL_PATH);
      return `${addressKey(e.addresses[0]!)}${path ? ` ${JSON.stringify(path)}` : ''}`;
    });
  }
  return out;
}

describe('hierarchical addresses (A56 "Hierarchical Addresses")', () => {
  test("the gRFC's example: priority then weighted_target each peel one path element", () => {
    const endpoints = [
      withPath('10.0.0.1:80', ['child0', 'localityA']),
      withPath('10.0.0.2:80', ['child0', 'localityB']),
      withPath('10.0.0.3:80', ['child1', 'localityC']),
      withPath('10.0.0.4:80', ['child1', 'localityD']),
    ];
    const byPriority = splitByHierarchicalPath(endpoints);
    assert.deepEqual(show(byPriority), {
      child0: ['10.0.0.1:80 ["localityA"]', '10.0.0.2:80 ["localityB"]'],
      child1: ['10.0.0.3:80 ["localityC"]', '10.0.0.4:80 ["localityD"]'],
    });
    const child0 = splitByHierarchicalPath(byPriority.forChild('child0'));
    // At the leaf the path is used up: the attribute is removed (an empty path and none mean the same).
    assert.deepEqual(show(child0), { localityA: ['10.0.0.1:80'], localityB: ['10.0.0.2:80'] });
    assert.equal(child0.forChild('localityA')[0]!.attributes, Attributes.EMPTY);
  });

  test('dealing every share at once (weighted_target) gives each child the same share as the split, stripped alike', () => {
    const endpoints = [
      withPath('10.0.0.1:80', ['t0']),
      withPath('10.0.0.2:80', ['t1', 'inner']),
      withPath('10.0.0.3:80'),
      withPath('10.0.0.4:80', ['t0', 'inner']),
      withPath('10.0.0.5:80', ['t1', 'inner']),
      withPath('10.0.0.6:80', []),
    ];
    const dealt = new Map<string, Endpoint[]>();
    dealEndpoints(endpoints, undefined, (name, e) => {
      const share = dealt.get(name);
      if (share === undefined) dealt.set(name, [e]);
      else share.push(e);
    });
    const split = HierarchicalSplit.of(endpoints);
    const shown = (list: readonly Endpoint[]) =>
      list.map((e) => {
        const path = e.attributes.get(HIERARCHICAL_PATH);
        return `${addressKey(e.addresses[0]!)}${path ? ` ${JSON.stringify(path)}` : ''}`;
      });
    assert.deepEqual(Object.fromEntries([...dealt].map(([name, list]) => [name, shown(list)])), show(split));
    assert.deepEqual(show(split), {
      t0: ['10.0.0.1:80', '10.0.0.4:80 ["inner"]'],
      t1: ['10.0.0.2:80 ["inner"]', '10.0.0.5:80 ["inner"]'],
    });
    // Equal path tails share one stripped Attributes object, across children too.
    assert.equal(dealt.get('t1')![0]!.attributes, dealt.get('t0')![1]!.attributes);
  });

  test('a parent that names the child of each endpoint itself (A52 xds_wrr_locality: its locality) gets the endpoints as they are', () => {
    const a = Attributes.of(LOCALITY, 'zone-a').with(HIERARCHICAL_PATH, ['inner']);
    const endpoints: Endpoint[] = [
      { addresses: withPath('10.0.0.1:80').addresses, attributes: a },
      { addresses: withPath('10.0.0.2:80').addresses, attributes: Attributes.EMPTY },
      { addresses: withPath('10.0.0.3:80').addresses, attributes: a },
    ];
    const asked: Attributes[] = [];
    const taken: [string, Endpoint][] = [];
    dealEndpoints(
      endpoints,
      (e) => {
        asked.push(e.attributes);
        return e.attributes.get(LOCALITY);
      },
      (name, e) => taken.push([name, e]),
    );
    assert.deepEqual(taken, [
      ['zone-a', endpoints[0]],
      ['zone-a', endpoints[2]],
    ]);
    assert.equal(taken[0]![1], endpoints[0], 'the very endpoint, not a copy');
    // Asked once per Attributes object in a row: the second endpoint's differ, the third's are the first's again.
    assert.equal(asked.length, 3);
  });

  test('a path element a parent prepended (A52 xds_wrr_locality: the locality) is peeled off to the very attributes it was added to', () => {
    const own = Attributes.of(LOCALITY, 'zone-a').with(LOCALITY_WEIGHT, 3);
    const prepended: Endpoint = {
      addresses: withPath('10.0.0.1:80').addresses,
      attributes: own.with(HIERARCHICAL_PATH, ['zone-a']),
    };
    assert.equal(stripFirstPathElement(prepended).attributes, own);
    // A path that was there before is not peeled back to some earlier object: its tail stays.
    const deeper = Attributes.of(HIERARCHICAL_PATH, ['p0', 'l0']).with(LOCALITY, 'zone-a');
    assert.deepEqual(
      stripFirstPathElement({ addresses: prepended.addresses, attributes: deeper }).attributes.get(
        HIERARCHICAL_PATH,
      ),
      ['l0'],
    );
  });

  test('endpoints without a path, or with an empty one, are dropped at that level', () => {
    const split = splitByHierarchicalPath([
      withPath('10.0.0.1:80'),
      withPath('10.0.0.2:80', []),
      withPath('10.0.0.3:80', ['a']),
    ]);
    assert.deepEqual(show(split), { a: ['10.0.0.3:80'] });
  });

  test('a child no endpoint names gets an empty list', () => {
    const split = splitByHierarchicalPath([withPath('10.0.0.1:80', ['a'])]);
    assert.equal(split.forChild('b'), NO_ENDPOINTS);
    assert.deepEqual(split.forChild('b'), []);
  });

  test('other attributes are kept; the original endpoint is not changed', () => {
    const original: Endpoint = {
      addresses: withPath('10.0.0.1:80').addresses,
      attributes: Attributes.of(HIERARCHICAL_PATH, ['p0', 'l0']).with(LOCALITY, 'zone-a'),
    };
    const stripped = stripFirstPathElement(original);
    assert.deepEqual(stripped.attributes.get(HIERARCHICAL_PATH), ['l0']);
    assert.equal(stripped.attributes.get(LOCALITY), 'zone-a');
    assert.deepEqual(original.attributes.get(HIERARCHICAL_PATH), ['p0', 'l0']);
    assert.equal(stripped.addresses, original.addresses);
  });

  test("a child's share is stripped once and then reused; shared attributes strip to shared attributes", () => {
    const shared = Attributes.of(HIERARCHICAL_PATH, ['p0', 'l0']);
    const a = { addresses: withPath('10.0.0.1:80').addresses, attributes: shared };
    const b = { addresses: withPath('10.0.0.2:80').addresses, attributes: shared };
    const split = splitByHierarchicalPath([a, b, withPath('10.0.0.3:80', ['p1'])]);
    const p0 = split.forChild('p0');
    assert.equal(split.forChild('p0'), p0);
    assert.equal(p0[0]!.attributes, p0[1]!.attributes);
    assert.deepEqual([...split.names()], ['p0', 'p1']);
  });

  test('endpoints whose only attribute is the path share stripped attributes per remaining path, and only then', () => {
    const split = splitByHierarchicalPath([
      withPath('10.0.0.1:80', ['p', 'a', 'x']),
      withPath('10.0.0.2:80', ['p', 'a', 'y']),
      withPath('10.0.0.3:80', ['p', 'a', 'x']),
      withPath('10.0.0.4:80', ['p', 'b']),
      withPath('10.0.0.5:80', ['p', 'b']),
    ]);
    assert.deepEqual(show(split), {
      p: [
        '10.0.0.1:80 ["a","x"]',
        '10.0.0.2:80 ["a","y"]',
        '10.0.0.3:80 ["a","x"]',
        '10.0.0.4:80 ["b"]',
        '10.0.0.5:80 ["b"]',
      ],
    });
    const p = split.forChild('p');
    assert.equal(p[0]!.attributes, p[2]!.attributes);
    assert.notEqual(p[0]!.attributes, p[1]!.attributes);
    assert.equal(p[3]!.attributes, p[4]!.attributes);
  });
});
