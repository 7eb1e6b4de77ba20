import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AttributeKey,
  Attributes,
  addressFamily,
  addressKey,
  ENDPOINT_WEIGHT,
  endpoint,
  endpointKey,
  HIERARCHICAL_PATH,
  LOCALITY,
  LOCALITY_WEIGHT,
  parseAddress,
  sameEndpointList,
  tcpAddress,
  unixAddress,
} from '../../src/core/index.js';

describe('Address (A61: IPv4, IPv6 and unix addresses)', () => {
  test('addressKey brackets IPv6 and round-trips through parseAddress', () => {
    for (const text of [
      '1.2.3.4:80',
      '[::1]:80',
      '[2001:db8::5]:443',
      'unix:/tmp/lb.sock',
      'backend.local:50051',
    ]) {
      assert.equal(addressKey(parseAddress(text)), text);
    }
    assert.equal(addressKey({ host: '::1', port: 80 }), '[::1]:80');
  });

  test('addressKey shares one port suffix per port and separator, whatever order the addresses come in', () => {
    // The suffix cache remembers the last port: IPv4 and IPv6 addresses of one port, and ports alternating,
    // must each still get their own text.
    const cases: [{ host: string; port: number }, string][] = [
      [{ host: '10.0.0.1', port: 80 }, '10.0.0.1:80'],
      [{ host: '::1', port: 80 }, '[::1]:80'],
      [{ host: '10.0.0.2', port: 80 }, '10.0.0.2:80'],
      [{ host: '10.0.0.2', port: 81 }, '10.0.0.2:81'],
      [{ host: 'fe80::1', port: 81 }, '[fe80::1]:81'],
      [{ host: '10.0.0.3', port: 80 }, '10.0.0.3:80'],
      [{ host: 'a', port: 0 }, 'a:0'],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [address, text] of cases) assert.equal(addressKey({ ...address }), text);
    }
  });

  test('addressKey works on frozen addresses and gives the same key every time', () => {
    const frozen = Object.freeze({ host: '::1', port: 8 });
    assert.equal(addressKey(frozen), '[::1]:8');
    const plain = { host: '10.1.1.1', port: 9 };
    assert.equal(addressKey(plain), addressKey(plain));
    assert.deepEqual(
      JSON.parse(JSON.stringify(plain)),
      { host: '10.1.1.1', port: 9 },
      'the cache is invisible to JSON',
    );
  });

  test('tcpAddress and unixAddress make plain addresses whose key is cached like any other (JSON shows only the fields)', () => {
    const tcp = tcpAddress('2001:db8::7', 443);
    assert.equal(tcp.host, '2001:db8::7');
    assert.equal(tcp.port, 443);
    assert.equal(addressKey(tcp), '[2001:db8::7]:443');
    assert.equal(addressKey(tcp), addressKey(tcp));
    assert.deepEqual(JSON.parse(JSON.stringify(tcp)), { host: '2001:db8::7', port: 443 });
    const unix = unixAddress('/tmp/lb.sock');
    assert.equal(addressKey(unix), 'unix:/tmp/lb.sock');
    assert.deepEqual(JSON.parse(JSON.stringify(unix)), { path: '/tmp/lb.sock' });
    // A frozen one still gives its key (computed each time, as for any frozen address).
    assert.equal(addressKey(Object.freeze(tcpAddress('10.0.0.1', 80))), '10.0.0.1:80');
  });

  test('detects the address family', () => {
    assert.equal(addressFamily(parseAddress('1.2.3.4:80')), 'ipv4');
    assert.equal(addressFamily(parseAddress('[::ffff:1.2.3.4]:80')), 'ipv6');
    assert.equal(addressFamily(parseAddress('unix:/x')), 'unix');
    assert.equal(addressFamily(parseAddress('example.com:80')), 'other');
  });

  test('rejects malformed addresses with a message naming them', () => {
    for (const bad of [
      '1.2.3.4',
      '::1:80',
      '[::1]80',
      '[nothex]:80',
      '1.2.3.4:http',
      '1.2.3.4:70000',
      'unix:',
    ]) {
      assert.throws(
        () => parseAddress(bad),
        (e: Error) => e instanceof TypeError && e.message.includes(bad),
      );
    }
  });
});

describe('Endpoint (A61 "Endpoint list updates")', () => {
  test('endpointKey is the unordered address set: [A,B] and [B,A] are one endpoint', () => {
    const a = parseAddress('10.0.0.1:80');
    const b = parseAddress('[::1]:80');
    assert.equal(endpointKey(endpoint([a, b])), endpointKey(endpoint([b, a])));
    assert.notEqual(endpointKey(endpoint([a, b])), endpointKey(endpoint([a])));
    assert.equal(endpointKey(endpoint([a])), '10.0.0.1:80');
  });

  test('endpointKey ignores attributes', () => {
    const a = parseAddress('10.0.0.1:80');
    assert.equal(endpointKey(endpoint([a], Attributes.of(ENDPOINT_WEIGHT, 3))), endpointKey(endpoint([a])));
  });
});

describe('Attributes (A61: per-endpoint attributes)', () => {
  test('are immutable: with() returns a new map and leaves the original alone', () => {
    const key = new AttributeKey<number>('test.n');
    const one = Attributes.of(key, 1);
    const two = one.with(key, 2);
    assert.equal(one.get(key), 1);
    assert.equal(two.get(key), 2);
    assert.equal(Attributes.EMPTY.get(key), undefined);
    assert.equal(two.without(key).size, 0);
  });

  test('without() the key with() just added gives back the original map itself; any other removal copies', () => {
    const a = new AttributeKey<number>('test.a');
    const b = new AttributeKey<number>('test.b');
    const base = Attributes.of(a, 1);
    const added = base.with(b, 2);
    assert.equal(added.without(b), base);
    assert.equal(added.without(a).get(b), 2);
    assert.equal(added.without(a).get(a), undefined);
    // Replacing a value is no addition: removing it leaves the other keys, in a new map.
    const replaced = added.with(b, 3);
    assert.notEqual(replaced.without(b), base);
    assert.equal(replaced.without(b).get(a), 1);
    assert.equal(replaced.without(b).has(b), false);
  });

  test('keys are typed objects: two keys with one name never collide', () => {
    const k1 = new AttributeKey<string>('same');
    const k2 = new AttributeKey<string>('same');
    const attrs = Attributes.of(k1, 'x');
    assert.equal(attrs.get(k2), undefined);
    assert.equal(attrs.has(k1), true);
  });
});

describe('Equal endpoint lists (a resolver re-delivering its list, A61 "Endpoint list updates")', () => {
  const locality = (name: string, weight: number) =>
    Attributes.of(LOCALITY, name).with(LOCALITY_WEIGHT, weight).with(HIERARCHICAL_PATH, ['p0', name]);

  test('Attributes.equals: the same keys in the same order with equal values; paths compare element by element', () => {
    // Fresh objects and fresh strings, as a resolver builds them on each resolution.
    assert.ok(locality(`l${1}`, 2).equals(locality('l1', 2)));
    assert.ok(Attributes.EMPTY.equals(Attributes.EMPTY));
    assert.equal(locality('l1', 2).equals(locality('l1', 3)), false, 'another weight');
    assert.equal(locality('l1', 2).equals(locality('l2', 2)), false, 'another locality (and path)');
    const path = (p: string[]) => Attributes.of(HIERARCHICAL_PATH, p);
    assert.ok(path(['p0', 'x']).equals(path(['p0', 'x'])));
    assert.equal(path(['p0', 'x']).equals(path(['p0', 'y'])), false);
    assert.equal(path(['p0', 'x']).equals(path(['p0'])), false, 'a shorter path');
    assert.equal(
      locality('l1', 2).equals(locality('l1', 2).without(HIERARCHICAL_PATH)),
      false,
      'one key fewer',
    );
    const a = Attributes.of(LOCALITY, 'l1').with(LOCALITY_WEIGHT, 1);
    const b = Attributes.of(LOCALITY_WEIGHT, 1).with(LOCALITY, 'l1');
    assert.equal(
      a.equals(b),
      false,
      'the same pairs in another order count as different (not worth sorting)',
    );
    const key = new AttributeKey<object>('object');
    const value = { x: 1 };
    assert.ok(Attributes.of(key, value).equals(Attributes.of(key, value)), 'the same object');
    assert.equal(
      Attributes.of(key, value).equals(Attributes.of(key, { x: 1 })),
      false,
      'only the same object',
    );
    assert.ok(Attributes.of(ENDPOINT_WEIGHT, Number.NaN).equals(Attributes.of(ENDPOINT_WEIGHT, Number.NaN)));
  });

  test('sameEndpointList: the same endpoints in the same order, addresses in order, attributes equal', () => {
    const list = (attributes: Attributes[] = [locality('l1', 2), locality('l2', 1)]) => [
      endpoint([parseAddress('10.0.0.1:80'), parseAddress('[::1]:80')], attributes[0]),
      endpoint([parseAddress('10.0.0.2:80')], attributes[1]),
    ];
    assert.ok(sameEndpointList(list(), list()));
    assert.ok(sameEndpointList([], []));
    assert.equal(sameEndpointList(list(), list().slice(0, 1)), false, 'one endpoint fewer');
    assert.equal(sameEndpointList(list(), list().reverse()), false, 'another order');
    const swapped = list();
    swapped[0] = endpoint([parseAddress('[::1]:80'), parseAddress('10.0.0.1:80')], swapped[0]!.attributes);
    assert.equal(sameEndpointList(list(), swapped), false, "another order of one endpoint's addresses");
    assert.equal(
      sameEndpointList(list(), list([locality('l1', 2), locality('l2', 5)])),
      false,
      'another locality weight on the second endpoint',
    );
    // Endpoints sharing one Attributes object on both sides are compared once; a change after them still shows.
    const shared = locality('l1', 1);
    const run = (last: Attributes) => [
      endpoint([parseAddress('10.0.0.1:80')], shared),
      endpoint([parseAddress('10.0.0.2:80')], shared),
      endpoint([parseAddress('10.0.0.3:80')], last),
    ];
    assert.ok(sameEndpointList(run(shared), run(locality('l1', 1))));
    assert.equal(sameEndpointList(run(shared), run(locality('l1', 9))), false);
  });
});
