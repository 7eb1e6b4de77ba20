import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RE2JS } from 're2js';
import { canonicalIp, parseSubjectAltNames, sansMatch } from '../../src/grpc-js/san-check.js';
import type { XdsStringMatcher } from '../../src/xds/resources/types.js';

// gRFC A29 "Server Authorization aka Subject-Alt-Name Checks".

const exact = (value: string, ignoreCase = false): XdsStringMatcher => ({ kind: 'exact', value, ignoreCase });

describe('A29 "Server Authorization": the SANs of the leaf certificate', () => {
  test("Node's subjectaltname text: DNS, URI, email and IP address entries; other types left out", () => {
    assert.deepEqual(
      parseSubjectAltNames(
        'DNS:echo.default.svc, URI:spiffe://cluster.local/ns/default/sa/echo, email:ops@example.com, IP Address:10.0.0.1, DirName:CN=x',
      ),
      [
        { type: 'DNS', value: 'echo.default.svc' },
        { type: 'URI', value: 'spiffe://cluster.local/ns/default/sa/echo' },
        { type: 'email', value: 'ops@example.com' },
        { type: 'IP', value: '10.0.0.1' },
      ],
    );
    // A value with a comma is a JSON string in Node's text.
    assert.deepEqual(parseSubjectAltNames('DNS:"a,b.example", URI:x'), [
      { type: 'DNS', value: 'a,b.example' },
      { type: 'URI', value: 'x' },
    ]);
    assert.deepEqual(parseSubjectAltNames(undefined), []);
  });

  test('an IPv6 address is compared in canonical form (RFC 5952): "2001:DB8:0::01" is "2001:db8::1"', () => {
    assert.equal(canonicalIp('2001:DB8:0::01'), '2001:db8::1');
    assert.equal(canonicalIp('2001:DB8:0:0:0:0:0:1'), '2001:db8::1');
    assert.equal(canonicalIp('10.0.0.1'), '10.0.0.1');
    const sans = parseSubjectAltNames('IP Address:2001:DB8:0:0:0:0:0:1');
    assert.equal(sansMatch(sans, [exact('2001:db8::1')]), true);
    assert.equal(sansMatch(sans, [exact('2001:DB8:0:0:0:0:0:1')]), false);
  });

  test('an empty match_subject_alt_names passes; no SAN (or only empty ones) fails any matcher', () => {
    assert.equal(sansMatch([], []), true);
    assert.equal(sansMatch([], [exact('a')]), false);
    assert.equal(
      sansMatch([{ type: 'DNS', value: '' }], [{ kind: 'prefix', value: '', ignoreCase: false }]),
      false,
    );
  });

  test('any SAN matching any matcher passes: exact / prefix / suffix / contains, ignore_case, safe_regex', () => {
    const sans = parseSubjectAltNames('DNS:Echo.Default.svc, URI:spiffe://cluster.local/ns/default/sa/echo');
    assert.equal(sansMatch(sans, [exact('echo.default.svc')]), false);
    assert.equal(sansMatch(sans, [exact('echo.default.svc', true)]), true);
    assert.equal(
      sansMatch(sans, [{ kind: 'prefix', value: 'spiffe://cluster.local/', ignoreCase: false }]),
      true,
    );
    assert.equal(sansMatch(sans, [{ kind: 'suffix', value: '/sa/echo', ignoreCase: false }]), true);
    assert.equal(sansMatch(sans, [{ kind: 'contains', value: '/ns/default/', ignoreCase: false }]), true);
    assert.equal(sansMatch(sans, [{ kind: 'contains', value: '/ns/other/', ignoreCase: false }]), false);
    const regex = (r: string): XdsStringMatcher => ({ kind: 'safe_regex', regex: RE2JS.compile(r) });
    // The regex matches the whole SAN.
    assert.equal(sansMatch(sans, [regex('spiffe://[a-z.]+/ns/default/sa/.*')]), true);
    assert.equal(sansMatch(sans, [regex('ns/default')]), false);
    assert.equal(sansMatch(sans, [exact('nope'), exact('spiffe://cluster.local/ns/default/sa/echo')]), true);
  });

  test('exact matches a wildcard DNS SAN for one label in its place, and only a DNS SAN', () => {
    const wildcard = parseSubjectAltNames('DNS:*.example.com');
    assert.equal(sansMatch(wildcard, [exact('foo.example.com')]), true);
    assert.equal(sansMatch(wildcard, [exact('FOO.EXAMPLE.COM', true)]), true);
    assert.equal(sansMatch(wildcard, [exact('a.b.example.com')]), false);
    assert.equal(sansMatch(wildcard, [exact('example.com')]), false);
    assert.equal(sansMatch(wildcard, [exact('.example.com')]), false);
    assert.equal(
      sansMatch(wildcard, [{ kind: 'suffix', value: 'foo.example.com', ignoreCase: false }]),
      false,
    );
    assert.equal(sansMatch(parseSubjectAltNames('URI:*.example.com'), [exact('foo.example.com')]), false);
  });
});
