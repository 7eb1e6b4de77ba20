// Regexes from the control plane are bounded (issue 22 §4): every RE2 pattern a RouteConfiguration carries —
// a route's safe_regex, a header matcher's safe_regex_match, a string_match.safe_regex, a hash policy's
// regex_rewrite — may compile to at most 10,000 re2js instructions, and the distinct regexes of one resource
// to at most 25,000 counting 16 more per regex; over that the resource is NACKed naming the field. (re2js
// itself refuses repeat counts over 1,000, as Go's regexp does.) Sizes below are re2js's own programSize().
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RE2JS } from 're2js';
import { RouteConfigurationSchema } from '../../../src/protos/gen/envoy/config/route/v3/route_pb.js';
import { routeConfigurationResourceType } from '../../../src/xds/resources/index.js';
import { estimateRe2Size } from '../../../src/xds/resources/re2-limits.js';
import { accepted, decode, type Json, nacked } from './support.js';

const decodeRc = (routes: Json[]) =>
  decode(routeConfigurationResourceType, RouteConfigurationSchema, {
    name: 'routes',
    virtualHosts: [{ name: 'vh', domains: ['*'], routes }],
  });

/** The four places a RouteConfiguration carries a regex, and the field each NACK must name. */
const SHAPES: { name: string; route: (regex: string) => Json; field: string }[] = [
  {
    name: 'route safe_regex',
    route: (regex) => ({ match: { safeRegex: { regex } }, route: { cluster: 'c' } }),
    field: 'match.safe_regex.regex',
  },
  {
    name: 'header matcher safe_regex_match',
    route: (regex) => ({
      match: { prefix: '', headers: [{ name: 'h', safeRegexMatch: { regex } }] },
      route: { cluster: 'c' },
    }),
    field: 'match.headers[0].safe_regex_match.regex',
  },
  {
    name: 'header string_match.safe_regex',
    route: (regex) => ({
      match: { prefix: '', headers: [{ name: 'h', stringMatch: { safeRegex: { regex } } }] },
      route: { cluster: 'c' },
    }),
    field: 'match.headers[0].string_match.safe_regex.regex',
  },
  {
    name: 'hash policy regex_rewrite',
    route: (regex) => ({
      match: { prefix: '' },
      route: {
        cluster: 'c',
        hashPolicy: [
          { header: { headerName: 'h', regexRewrite: { pattern: { regex }, substitution: 'x' } } },
        ],
      },
    }),
    field: 'route.hash_policy[0].header.regex_rewrite.pattern.regex',
  },
];

const AT_LIMIT = `${'x{1000}'.repeat(9)}x{997}`;
const OVER_LIMIT = 'x{1000}'.repeat(10);

describe('control-plane regexes are bounded: 10,000 instructions per regex, 25,000 per resource', () => {
  test('the fixtures: re2js compiles them to 9,999 and 10,002 instructions', () => {
    assert.equal(RE2JS.compile(AT_LIMIT).programSize(), 9_999);
    assert.equal(RE2JS.compile(OVER_LIMIT).programSize(), 10_002);
  });

  for (const shape of SHAPES) {
    test(`${shape.name}: 9,999 instructions are accepted, 10,002 are a NACK naming the field`, () => {
      accepted(decodeRc([shape.route(AT_LIMIT)]));
      nacked(
        decodeRc([shape.route(OVER_LIMIT)]),
        `virtual_hosts[0].routes[0].${shape.field}`,
        'compiles to 10002 instructions, more than the 10000 allowed per regex',
      );
    });

    test(`${shape.name}: the issue's 7 KB pattern (x{1000} 1,000 times, a million instructions) is refused before compiling`, () => {
      const reason = nacked(
        decodeRc([shape.route('x{1000}'.repeat(1000))]),
        `virtual_hosts[0].routes[0].${shape.field}`,
        'would compile to about 1000003 instructions, more than the 10000 allowed per regex',
      );
      assert.ok(reason.length < 400, 'the reason quotes only the start of the pattern');
    });
  }

  test('re2js refuses a repeat count over 1,000 (as Go does), and nested repeats whose product is over 1,000', () => {
    accepted(decodeRc([SHAPES[0]!.route('x{1000}')]));
    nacked(
      decodeRc([SHAPES[0]!.route('x{1001}')]),
      'virtual_hosts[0].routes[0].match.safe_regex.regex',
      'invalid repeat count',
    );
    nacked(decodeRc([SHAPES[0]!.route('(x{100}){11}')]), 'virtual_hosts[0].routes[0].match.safe_regex.regex');
  });

  test('per resource: distinct regexes count their instructions plus 16 each, up to 25,000; the route that crosses it is NACKed', () => {
    const patterns = Array.from({ length: 40 }, (_, i) => `x{950}y${i}`);
    const costs = patterns.map((p) => RE2JS.compile(p).programSize() + 16);
    let total = 0;
    let crossing = -1;
    for (let i = 0; i < costs.length; i++) {
      total += costs[i]!;
      if (total > 25_000) {
        crossing = i;
        break;
      }
    }
    assert.ok(crossing > 0);
    accepted(decodeRc(patterns.slice(0, crossing).map((p) => SHAPES[0]!.route(p))));
    nacked(
      decodeRc(patterns.map((p) => SHAPES[0]!.route(p))),
      `virtual_hosts[0].routes[${crossing}].match.safe_regex.regex`,
      'more than the 25000 allowed per resource',
    );
  });

  test('per resource: a pattern repeated costs once (100 routes with the same 1,002-instruction regex are accepted)', () => {
    accepted(decodeRc(Array.from({ length: 100 }, () => SHAPES[0]!.route('x{1000}'))));
  });

  test('the budget is per resource: a second resource starts from zero', () => {
    const near = Array.from({ length: 20 }, (_, i) => SHAPES[0]!.route(`x{1000}y${i}`));
    accepted(decodeRc(near));
    accepted(decodeRc(near));
  });

  test("the estimate (Go's size rule) is close to re2js's compiled size and never far below it", () => {
    for (const p of [
      'a',
      'x{1000}',
      'abc.*def',
      '^/svc\\.[a-z]+/Method[0-9]*$',
      '(?i)hello',
      '(?P<n>a+)b?',
      '\\Qa.b\\E{3}',
      '[[:alpha:]]{10,20}',
      '\\pL{5}',
      'a|bc|def',
      '(x{10}){100}',
      'ü{100}',
      '(?s:.){3,}',
    ]) {
      const actual = RE2JS.compile(p).programSize();
      const estimate = estimateRe2Size(p);
      assert.ok(estimate >= actual && estimate <= actual + 3, `${p}: estimate ${estimate}, re2js ${actual}`);
    }
  });
});
