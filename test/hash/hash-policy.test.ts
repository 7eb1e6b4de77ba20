import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type CallMetadata, ConfigError } from '../../src/core/index.js';
import {
  CHANNEL_ID_FILTER_STATE_KEY,
  type HashPolicy,
  newChannelId,
  RegexRewrite,
  RequestHasher,
  xxh64,
} from '../../src/hash/index.js';
import { seededRandom } from '../../src/sim/index.js';

const MASK = (1n << 64n) - 1n;
const rotl1 = (h: bigint) => ((h << 1n) | (h >> 63n)) & MASK;

function metadata(values: Record<string, string | readonly (string | Uint8Array)[]>): CallMetadata {
  return {
    get: (key) => {
      const v = values[key.toLowerCase()];
      return v === undefined ? [] : typeof v === 'string' ? [v] : v;
    },
  };
}

const CHANNEL = 0x0123456789abcdefn;
const NO_RANDOM = () => {
  throw new Error('no random hash expected');
};

function hash(policies: HashPolicy[], md: Record<string, string | readonly (string | Uint8Array)[]>): bigint {
  return new RequestHasher(policies).hash(metadata(md), CHANNEL, NO_RANDOM);
}

describe('request hash policies (A42 "Hash Policy")', () => {
  test('header: XXH64 (seed 0) of the header value', () => {
    assert.equal(hash([{ type: 'header', headerName: 'x-user' }], { 'x-user': 'alice' }), xxh64('alice'));
  });

  test('header: several values are joined with ","; the header name is case-insensitive', () => {
    assert.equal(
      hash([{ type: 'header', headerName: 'X-User' }], { 'x-user': ['alice', 'bob'] }),
      xxh64('alice,bob'),
    );
  });

  test('header: a missing header produces nothing (so the hash is random)', () => {
    const hasher = new RequestHasher([{ type: 'header', headerName: 'x-user' }]);
    const a = hasher.hash(metadata({}), CHANNEL, seededRandom(1));
    const b = hasher.hash(metadata({}), CHANNEL, seededRandom(2));
    assert.notEqual(a, b);
    assert.equal(
      hasher.hash(metadata({}), CHANNEL, seededRandom(1)),
      a,
      'the random hash comes from the given source',
    );
  });

  test('header: "-bin" headers are ignored as if absent (A28 header matching, which A42 follows)', () => {
    const hasher = new RequestHasher([
      { type: 'header', headerName: 'trace-bin' },
      { type: 'header', headerName: 'x-user' },
    ]);
    assert.equal(
      hasher.hash(metadata({ 'trace-bin': 'AAEC', 'x-user': 'alice' }), CHANNEL, NO_RANDOM),
      xxh64('alice'),
    );
  });

  test('header: content-type, absent from call metadata, is taken as "application/grpc" (A28)', () => {
    assert.equal(hash([{ type: 'header', headerName: 'content-type' }], {}), xxh64('application/grpc'));
  });

  test('header: the regex rewrite (RE2 semantics, \\N substitutions) applies before hashing', () => {
    const policy: HashPolicy = {
      type: 'header',
      headerName: ':path',
      regexRewrite: { pattern: '^/(\\w+)\\.(\\w+)/.*$', substitution: '\\2@\\1' },
    };
    assert.equal(hash([policy], { ':path': '/pkg.Service/Method' }), xxh64('Service@pkg'));
    // The rewrite applies to the joined value.
    const all: HashPolicy = {
      type: 'header',
      headerName: 'x-id',
      regexRewrite: { pattern: '[0-9]', substitution: '#' },
    };
    assert.equal(hash([all], { 'x-id': ['a1', 'b22'] }), xxh64('a#,b##'));
  });

  test('filter_state io.grpc.channel_id: the channel id itself, the same for every call on the channel', () => {
    const policy: HashPolicy = { type: 'filter_state', key: CHANNEL_ID_FILTER_STATE_KEY };
    assert.equal(hash([policy], {}), CHANNEL);
    assert.equal(hash([policy], { 'x-user': 'someone' }), CHANNEL);
    const ids = new Set(Array.from({ length: 20 }, (_, i) => newChannelId(seededRandom(i + 1))));
    assert.equal(ids.size, 20, 'channel ids are random per channel');
    for (const id of ids) assert.ok(id >= 0n && id <= MASK);
  });

  test('filter_state with another key, cookie, connection_properties, query_parameter and unknown produce nothing', () => {
    for (const type of ['cookie', 'connection_properties', 'query_parameter', 'unknown'] as const) {
      assert.equal(
        hash([{ type }, { type: 'header', headerName: 'x-user' }], { 'x-user': 'a' }),
        xxh64('a'),
        type,
      );
    }
    assert.equal(
      hash(
        [
          { type: 'filter_state', key: 'envoy.other' },
          { type: 'header', headerName: 'x-user' },
        ],
        { 'x-user': 'a' },
      ),
      xxh64('a'),
    );
  });

  test('several results combine as gRPC and Envoy do: rotate the running hash left by 1, XOR the new one', () => {
    const policies: HashPolicy[] = [
      { type: 'header', headerName: 'a' },
      { type: 'cookie' },
      { type: 'header', headerName: 'b' },
      { type: 'header', headerName: 'c' },
    ];
    const expected = rotl1(rotl1(xxh64('1')) ^ xxh64('2')) ^ xxh64('3');
    assert.equal(hash(policies, { a: '1', b: '2', c: '3' }), expected);
    // Two identical policies do not cancel out.
    const twice = hash(
      [
        { type: 'header', headerName: 'a' },
        { type: 'header', headerName: 'a' },
      ],
      { a: 'x' },
    );
    assert.equal(twice, rotl1(xxh64('x')) ^ xxh64('x'));
    assert.notEqual(twice, 0n);
  });

  test('terminal: once a hash exists, a terminal policy stops the walk; a terminal policy without a hash does not', () => {
    const policies: HashPolicy[] = [
      { type: 'header', headerName: 'a', terminal: true },
      { type: 'header', headerName: 'b' },
    ];
    assert.equal(hash(policies, { a: '1', b: '2' }), xxh64('1'), 'a produced a hash and is terminal');
    assert.equal(hash(policies, { b: '2' }), xxh64('2'), 'a produced nothing: go on');
    // Upstream A42 (and Envoy): a terminal policy stops the walk when a hash already exists, even if it
    // produced none itself.
    const later: HashPolicy[] = [
      { type: 'header', headerName: 'a' },
      { type: 'cookie', terminal: true },
      { type: 'header', headerName: 'b' },
    ];
    assert.equal(hash(later, { a: '1', b: '2' }), xxh64('1'));
  });

  test('no policy at all, or none producing a result: a random hash from the given source', () => {
    const hasher = new RequestHasher([]);
    const seen = new Set<bigint>();
    const random = seededRandom(7);
    for (let i = 0; i < 50; i++) seen.add(hasher.hash(metadata({}), CHANNEL, random));
    assert.equal(seen.size, 50);
    for (const h of seen) assert.ok(h >= 0n && h <= MASK);
    assert.ok(
      [...seen].some((h) => h >= 1n << 63n),
      'the top bit is random too',
    );
  });
});

describe('regex rewrite (A42 header policy: Envoy RegexMatchAndSubstitute with RE2 semantics)', () => {
  const rewrite = (pattern: string, substitution: string, input: string) =>
    new RegexRewrite(pattern, substitution).apply(input);

  test('replaces every non-overlapping match; \\0 is the whole match, \\\\ a backslash', () => {
    assert.equal(rewrite('o', '0', 'foo boo'), 'f00 b00');
    assert.equal(rewrite('(a)(b)?', '[\\1|\\2|\\0]', 'ac ab'), '[a||a]c [a|b|ab]');
    assert.equal(rewrite('x', '\\\\', 'axb'), 'a\\b');
    assert.equal(rewrite('x', '$1', 'axb'), 'a$1b', '$ is not special in RE2 substitutions');
  });

  test('empty matches follow RE2 GlobalReplace (not JavaScript replace)', () => {
    assert.equal(rewrite('x*', '-', 'abc'), '-a-b-c-');
    // JavaScript's replace would give "-a--c-": RE2 allows no empty match right after a match.
    assert.equal(rewrite('b*', '-', 'abc'), '-a-c-');
    assert.equal(rewrite('', '-', '🙂x'), '-🙂-x-', 'an empty match steps over a whole code point');
  });

  test('^ anchors at the start of the input only', () => {
    assert.equal(rewrite('^a', 'b', 'aaa'), 'baa');
    assert.equal(rewrite('a$', 'b', 'aaa'), 'aab');
  });

  test('no match leaves the input as is', () => {
    assert.equal(rewrite('z', 'y', 'abc'), 'abc');
  });

  test('RE2 syntax is accepted; backtracking-only constructs are rejected with the pattern path', () => {
    assert.equal(rewrite('(?P<word>[[:alpha:]]+)\\d', '\\1', 'abc1'), 'abc');
    for (const bad of ['(?=a)', '(a)\\1', 'a(b', '(?<!a)b']) {
      assert.throws(
        () => new RegexRewrite(bad, '', '$.pattern.regex'),
        (e: unknown) => e instanceof ConfigError && e.path === '$.pattern.regex',
        bad,
      );
    }
  });

  test('linear time on a pattern that makes backtracking engines explode', () => {
    const started = performance.now();
    assert.equal(rewrite('(a+)+$', 'x', `${'a'.repeat(40)}!`), `${'a'.repeat(40)}!`);
    assert.ok(performance.now() - started < 1000);
  });

  test('invalid substitutions are rejected: a group the pattern lacks, a bad escape, a lone backslash', () => {
    for (const [substitution, message] of [
      ['\\2', /capture group \\2, but the pattern has 1 capture group/],
      ['\\n', /invalid escape/],
      ['abc\\', /lone backslash/],
    ] as const) {
      assert.throws(
        () => new RegexRewrite('(a)', substitution, '$.p', '$.s'),
        (e: unknown) => e instanceof ConfigError && e.path === '$.s' && message.test(e.problem),
      );
    }
  });
});
