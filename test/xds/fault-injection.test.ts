// A33 client-side fault injection with A39's filter config overrides: the HTTPFault filter's config in LDS and
// RDS (accepted, or NACKed naming the field), which config a call's route applies, and the per-call decisions
// (percentages, the `x-envoy-fault-*` headers, max_active_faults) in virtual time with scripted random numbers.
// Every literal (header names, codes, denominators) is the gRFC's or Envoy's, written out here.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type FaultSpec,
  faultFilter,
  httpFault,
  listener,
  routeConfiguration,
  type VirtualHostSpec,
} from '../../src/control-plane/index.js';
import { type CallMetadata, Code } from '../../src/core/index.js';
import { ListenerSchema } from '../../src/protos/gen/envoy/config/listener/v3/listener_pb.js';
import { RouteConfigurationSchema } from '../../src/protos/gen/envoy/config/route/v3/route_pb.js';
import { seededRandom, VirtualClock } from '../../src/sim/index.js';
import { ClusterRefs } from '../../src/xds/resolver/cluster-refs.js';
import { type RouteSelection, XdsConfigSelector } from '../../src/xds/resolver/config-selector.js';
import { ActiveFaults, FaultInjector, type InjectedFault } from '../../src/xds/resolver/fault-injection.js';
import { listenerResourceType, routeConfigurationResourceType } from '../../src/xds/resources/index.js';
import type {
  XdsFaultInjection,
  XdsHttpFilter,
  XdsRouteConfiguration,
} from '../../src/xds/resources/types.js';
import { accepted, decode, type Json, nacked, TYPE_PREFIX } from './resources/support.js';

const FILTERS_AT = 'api_listener.api_listener.http_filters';
const HTTP_FAULT = `${TYPE_PREFIX}envoy.extensions.filters.http.fault.v3.HTTPFault`;
const json = (value: unknown): Json => value as Json;

function decodeListener(filters: readonly unknown[]) {
  const l = listener('svc', { rds: 'routes' }, { httpFilters: filters as Record<string, unknown>[] });
  const { '@type': _, ...body } = l;
  return decode(listenerResourceType, ListenerSchema, json(body));
}

/** The listener's fault config, when the filter (named "fault") with `typedConfig` is accepted. */
function faultOf(typedConfig: Json): XdsFaultInjection | undefined {
  return accepted(decodeListener([{ name: 'fault', typedConfig }])).httpFilters[0]!.fault;
}

function decodeRoutes(virtualHosts: readonly VirtualHostSpec[]) {
  const { '@type': _, ...body } = routeConfiguration('routes', virtualHosts);
  return decode(routeConfigurationResourceType, RouteConfigurationSchema, json(body));
}

function metadata(headers: Record<string, string | string[]> = {}): CallMetadata {
  return {
    get: (key) => {
      const v = headers[key];
      return v === undefined ? [] : Array.isArray(v) ? v : [v];
    },
  };
}

/** Hands out `values` in order, then fails the test (a draw nobody expected). */
function scripted(...values: number[]): () => number {
  return () => {
    const v = values.shift();
    assert.ok(v !== undefined, 'an unexpected random draw');
    return v;
  };
}

const listenerFault = (spec: FaultSpec): XdsFaultInjection =>
  accepted(decodeListener([faultFilter(spec, 'fault')])).httpFilters[0]!.fault!;

function injector(spec: FaultSpec, random: () => number, active = new ActiveFaults()): FaultInjector {
  return new FaultInjector('fault', listenerFault(spec), random, active);
}

describe('A33 "Overview" / A39 "HTTP Filter Registry": the HTTPFault filter in LDS', () => {
  test("istiod's listener — HTTPFault{} then the router, neither is_optional — is accepted and injects nothing", () => {
    const l = accepted(
      decodeListener([{ name: 'envoy.filters.http.fault', typedConfig: { '@type': HTTP_FAULT } }]),
    );
    assert.deepEqual(
      l.httpFilters.map((f) => f.typeName),
      ['envoy.extensions.filters.http.fault.v3.HTTPFault', 'envoy.extensions.filters.http.router.v3.Router'],
    );
    assert.deepEqual(l.httpFilters[0]!.fault, {
      delay: undefined,
      abort: undefined,
      maxActiveFaults: undefined,
    });
  });

  test('"RPC delay injection": fixed_delay with its percentage, over each denominator', () => {
    const delay = (fixedDelay: string, percentage: Json) =>
      faultOf({ '@type': HTTP_FAULT, delay: { fixedDelay, percentage } })!.delay;
    assert.deepEqual(delay('0.200s', { numerator: 25, denominator: 'HUNDRED' }), {
      kind: 'fixed',
      delayMs: 200,
      percentage: { numerator: 25, denominator: 100 },
    });
    assert.deepEqual(delay('1.5s', { numerator: 7, denominator: 'TEN_THOUSAND' })?.percentage, {
      numerator: 7,
      denominator: 10_000,
    });
    assert.deepEqual(delay('3s', { numerator: 9, denominator: 'MILLION' })?.percentage, {
      numerator: 9,
      denominator: 1_000_000,
    });
    // A percentage left unset is Envoy's default, 0 / 100: no call is delayed.
    assert.deepEqual(faultOf({ '@type': HTTP_FAULT, delay: { fixedDelay: '1s' } })!.delay?.percentage, {
      numerator: 0,
      denominator: 100,
    });
  });

  test('"Header matching": header_delay and header_abort read the call\'s headers', () => {
    const f = faultOf({
      '@type': HTTP_FAULT,
      delay: { headerDelay: {}, percentage: { numerator: 40 } },
      abort: { headerAbort: {}, percentage: { numerator: 60, denominator: 'MILLION' } },
    })!;
    assert.deepEqual(f.delay, { kind: 'header', percentage: { numerator: 40, denominator: 100 } });
    assert.deepEqual(f.abort, { kind: 'header', percentage: { numerator: 60, denominator: 1_000_000 } });
  });

  test('"RPC abort injection": grpc_status is the code, 0 (OK) to 16 (UNAUTHENTICATED)', () => {
    for (const code of [0, 3, 14, 16]) {
      const abort = faultOf({
        '@type': HTTP_FAULT,
        abort: { grpcStatus: code, percentage: { numerator: 1 } },
      })!.abort;
      assert.deepEqual(abort, {
        kind: 'status',
        code,
        httpStatus: undefined,
        percentage: { numerator: 1, denominator: 100 },
      });
    }
  });

  test('"Status Code Mapping": http_status becomes the gRPC code of gRPC\'s HTTP to gRPC status mapping', () => {
    const table: [number, Code][] = [
      [400, Code.INTERNAL],
      [401, Code.UNAUTHENTICATED],
      [403, Code.PERMISSION_DENIED],
      [404, Code.UNIMPLEMENTED],
      [429, Code.UNAVAILABLE],
      [502, Code.UNAVAILABLE],
      [503, Code.UNAVAILABLE],
      [504, Code.UNAVAILABLE],
      // "200/OK Error Injection": 200 aborts with UNKNOWN, as any status the table does not name.
      [200, Code.UNKNOWN],
      [500, Code.UNKNOWN],
      [599, Code.UNKNOWN],
    ];
    for (const [httpStatus, code] of table) {
      const abort = faultOf({
        '@type': HTTP_FAULT,
        abort: { httpStatus, percentage: { numerator: 100 } },
      })!.abort;
      assert.equal(abort?.kind === 'status' && abort.code, code, `HTTP ${httpStatus}`);
      assert.equal(abort?.kind === 'status' && abort.httpStatus, httpStatus);
    }
    assert.equal(Code.INTERNAL, 13);
    assert.equal(Code.UNAVAILABLE, 14);
    assert.equal(Code.UNKNOWN, 2);
  });

  test('"Maximum active faults": max_active_faults is read, 0 included; unset is no limit', () => {
    assert.equal(faultOf({ '@type': HTTP_FAULT, maxActiveFaults: 3 })!.maxActiveFaults, 3);
    assert.equal(faultOf({ '@type': HTTP_FAULT, maxActiveFaults: 0 })!.maxActiveFaults, 0);
    assert.equal(faultOf({ '@type': HTTP_FAULT })!.maxActiveFaults, undefined);
  });

  test('NACKs name the field: codes out of range (grpc_status > 16, http_status outside [200, 600))', () => {
    const abortAt = `${FILTERS_AT}[0].typed_config.abort`;
    const withAbort = (abort: Json) =>
      decodeListener([{ name: 'f', typedConfig: { '@type': HTTP_FAULT, abort } }]);
    nacked(withAbort({ grpcStatus: 17 }), `${abortAt}.grpc_status`, '17 is not a gRPC status code (0-16)');
    nacked(withAbort({ httpStatus: 199 }), `${abortAt}.http_status`, '199 is out of range [200, 600)');
    nacked(withAbort({ httpStatus: 600 }), `${abortAt}.http_status`, '600 is out of range [200, 600)');
    accepted(withAbort({ httpStatus: 200 }));
    accepted(withAbort({ httpStatus: 599 }));
    accepted(withAbort({ grpcStatus: 16 }));
  });

  test('NACKs name the field: a delay or abort without its kind, a bad Duration, an unknown denominator, a TypedStruct', () => {
    const at = `${FILTERS_AT}[0].typed_config`;
    const with_ = (config: Json) =>
      decodeListener([{ name: 'f', typedConfig: { '@type': HTTP_FAULT, ...config } }]);
    nacked(
      with_({ delay: { percentage: { numerator: 1 } } }),
      `${at}.delay.fault_delay_secifier`,
      'expected fixed_delay or header_delay',
    );
    nacked(
      with_({ abort: { percentage: { numerator: 1 } } }),
      `${at}.abort.error_type`,
      'expected http_status, grpc_status or header_abort',
    );
    nacked(with_({ delay: { fixedDelay: '-1s' } }), `${at}.delay.fixed_delay.seconds`, 'out of range');
    nacked(
      with_({ delay: { fixedDelay: '1s', percentage: { numerator: 1, denominator: 3 } } }),
      `${at}.delay.percentage.denominator`,
      'unknown value 3',
    );
    nacked(
      with_({ abort: { headerAbort: {}, percentage: { numerator: 1, denominator: 7 } } }),
      `${at}.abort.percentage.denominator`,
      'unknown value 7',
    );
    const typedStruct = {
      name: 'f',
      typedConfig: { '@type': `${TYPE_PREFIX}xds.type.v3.TypedStruct`, typeUrl: HTTP_FAULT, value: {} },
    };
    nacked(decodeListener([typedStruct]), at, 'must be given as itself, not in a TypedStruct');
  });
});

describe('A39 "Filter Config Overrides": HTTPFault in typed_per_filter_config', () => {
  const abort = (grpcStatus: number): Json =>
    json(httpFault({ abort: { grpcStatus, percentage: { numerator: 100 } } }));

  test('overrides on the virtual host, route and weighted cluster are validated and parsed, bare or in a FilterConfig', () => {
    const rc = accepted(
      decodeRoutes([
        {
          typedPerFilterConfig: { fault: abort(1) },
          routes: [
            {
              weightedClusters: [{ name: 'a', weight: 1, typedPerFilterConfig: { fault: abort(3) } }],
              typedPerFilterConfig: {
                fault: { '@type': `${TYPE_PREFIX}envoy.config.route.v3.FilterConfig`, config: abort(2) },
              },
            },
          ],
        },
      ]),
    );
    const vh = rc.virtualHosts[0]!;
    const route = vh.routes[0]!;
    const code = (f: XdsFaultInjection | undefined) =>
      f?.abort?.kind === 'status' ? f.abort.code : undefined;
    assert.equal(code(vh.filterOverrides.get('fault')?.fault), 1);
    assert.equal(code(route.filterOverrides.get('fault')?.fault), 2);
    assert.equal(
      route.action.kind === 'weighted_clusters' &&
        code(route.action.clusters[0]!.filterOverrides.get('fault')?.fault),
      3,
    );
  });

  test('an invalid override is a NACK naming its path (through a FilterConfig too)', () => {
    nacked(
      decodeRoutes([
        {
          routes: [
            {
              weightedClusters: [
                {
                  name: 'a',
                  weight: 1,
                  typedPerFilterConfig: { f: { '@type': HTTP_FAULT, abort: { grpcStatus: 99 } } },
                },
              ],
            },
          ],
        },
      ]),
      'virtual_hosts[0].routes[0].route.weighted_clusters.clusters[0].typed_per_filter_config["f"].abort.grpc_status',
      '99 is not a gRPC status code',
    );
    nacked(
      decodeRoutes([
        {
          typedPerFilterConfig: {
            f: {
              '@type': `${TYPE_PREFIX}envoy.config.route.v3.FilterConfig`,
              config: {
                '@type': HTTP_FAULT,
                delay: { headerDelay: {}, percentage: { numerator: 1, denominator: 9 } },
              },
            },
          },
          routes: [{ cluster: 'a' }],
        },
      ]),
      'virtual_hosts[0].typed_per_filter_config["f"].config.delay.percentage.denominator',
    );
  });
});

describe('A39 "Filter Config Overrides": the most specific config applies to a call', () => {
  const abort = (grpcStatus: number) => httpFault({ abort: { grpcStatus, percentage: { numerator: 100 } } });

  function selector(rc: XdsRouteConfiguration, filters: readonly XdsHttpFilter[]): XdsConfigSelector {
    return new XdsConfigSelector(rc.virtualHosts[0]!, new ClusterRefs(() => {}), {
      channelId: 1n,
      random: seededRandom(3),
      httpFilters: filters,
      activeFaults: new ActiveFaults(),
    });
  }

  /** The abort code of each fault filter that applies to a call of `path` (its config, no draw). */
  function codes(selection: RouteSelection): (Code | undefined)[] {
    assert.ok(selection.ok);
    return selection.faults.map((f) => (f.config.abort?.kind === 'status' ? f.config.abort.code : undefined));
  }

  const filters = (spec: FaultSpec = {}) =>
    accepted(decodeListener([faultFilter(spec, 'fault')])).httpFilters;

  test('weighted cluster, else route, else virtual host, else the listener', () => {
    const rc = accepted(
      decodeRoutes([
        {
          typedPerFilterConfig: { fault: abort(Code.ABORTED) },
          routes: [
            {
              path: '/p.S/Cluster',
              weightedClusters: [
                { name: 'a', weight: 1, typedPerFilterConfig: { fault: abort(Code.DATA_LOSS) } },
              ],
              typedPerFilterConfig: { fault: abort(Code.NOT_FOUND) },
            },
            { path: '/p.S/Route', cluster: 'a', typedPerFilterConfig: { fault: abort(Code.NOT_FOUND) } },
            { path: '/p.S/VirtualHost', cluster: 'a' },
          ],
        },
      ]),
    );
    const s = selector(rc, filters({ abort: { grpcStatus: Code.INTERNAL, percentage: { numerator: 100 } } }));
    assert.deepEqual(codes(s.select('/p.S/Cluster', metadata())), [Code.DATA_LOSS]);
    assert.deepEqual(codes(s.select('/p.S/Route', metadata())), [Code.NOT_FOUND]);
    assert.deepEqual(codes(s.select('/p.S/VirtualHost', metadata())), [Code.ABORTED]);
    const noOverrides = accepted(decodeRoutes([{ routes: [{ cluster: 'a' }] }]));
    assert.deepEqual(
      codes(
        selector(
          noOverrides,
          filters({ abort: { grpcStatus: Code.INTERNAL, percentage: { numerator: 100 } } }),
        ).select('/p.S/M', metadata()),
      ),
      [Code.INTERNAL],
    );
  });

  test("istiod's shape: HTTPFault{} in the listener injects nothing (no filter per call); a route override turns faults on", () => {
    const rc = accepted(
      decodeRoutes([
        {
          routes: [
            {
              path: '/p.S/Faulty',
              cluster: 'a',
              typedPerFilterConfig: { 'envoy.filters.http.fault': abort(Code.UNAVAILABLE) },
            },
            { prefix: '', cluster: 'a' },
          ],
        },
      ]),
    );
    const istiod = accepted(decodeListener([faultFilter()])).httpFilters;
    const s = selector(rc, istiod);
    assert.deepEqual(codes(s.select('/p.S/Healthy', metadata())), []);
    assert.deepEqual(codes(s.select('/p.S/Faulty', metadata())), [Code.UNAVAILABLE]);
  });

  test("an empty override (HTTPFault{}) turns the listener's fault off in its scope; an override for another filter name does not", () => {
    const rc = accepted(
      decodeRoutes([
        {
          routes: [
            { path: '/p.S/Off', cluster: 'a', typedPerFilterConfig: { fault: httpFault() } },
            { path: '/p.S/Other', cluster: 'a', typedPerFilterConfig: { 'other-fault': httpFault() } },
          ],
        },
      ]),
    );
    const s = selector(rc, filters({ abort: { grpcStatus: Code.INTERNAL, percentage: { numerator: 100 } } }));
    assert.deepEqual(codes(s.select('/p.S/Off', metadata())), []);
    assert.deepEqual(codes(s.select('/p.S/Other', metadata())), [Code.INTERNAL]);
  });

  test('A39: several fault filter instances apply in filter order, each with its own overrides', () => {
    const twoFilters = accepted(
      decodeListener([
        faultFilter({ abort: { grpcStatus: Code.INTERNAL, percentage: { numerator: 100 } } }, 'first'),
        faultFilter({ abort: { grpcStatus: Code.UNKNOWN, percentage: { numerator: 100 } } }, 'second'),
      ]),
    ).httpFilters;
    const rc = accepted(
      decodeRoutes([{ routes: [{ cluster: 'a', typedPerFilterConfig: { second: abort(Code.ABORTED) } }] }]),
    );
    const selection = selector(rc, twoFilters).select('/p.S/M', metadata());
    assert.deepEqual(codes(selection), [Code.INTERNAL, Code.ABORTED]);
    assert.ok(selection.ok);
    assert.deepEqual(
      selection.faults.map((f) => f.filterName),
      ['first', 'second'],
    );
  });
});

describe('A33 per-call decisions', () => {
  const HUNDRED_PERCENT = { numerator: 100 };

  test('"Evaluate Possibility Fraction": the delay and the abort each draw their own random number', () => {
    const spec: FaultSpec = {
      delay: { fixedMs: 10, percentage: { numerator: 20 } },
      abort: { grpcStatus: Code.UNAVAILABLE, percentage: { numerator: 5 } },
    };
    // Draws in order: delay, then abort. 0.1 < 20 % delays; 0.9 ≥ 5 % does not abort.
    let fault = injector(spec, scripted(0.1, 0.9)).decide(metadata());
    assert.equal(fault?.delayMs, 10);
    assert.equal(fault?.abort, undefined);
    // 0.5 ≥ 20 %: no delay; 0.04 < 5 %: abort.
    fault = injector(spec, scripted(0.5, 0.04)).decide(metadata());
    assert.equal(fault?.delayMs, 0);
    assert.equal(fault?.abort?.code, Code.UNAVAILABLE);
    assert.equal(injector(spec, scripted(0.2, 0.05)).decide(metadata()), undefined);
  });

  test('a percentage applies when random × denominator < numerator, for each denominator (both sides)', () => {
    const cases: [FaultSpec['abort'], number, number][] = [
      [{ grpcStatus: 14, percentage: { numerator: 50, denominator: 'HUNDRED' } }, 0.49, 0.5],
      [{ grpcStatus: 14, percentage: { numerator: 2500, denominator: 'TEN_THOUSAND' } }, 0.2499, 0.25],
      [{ grpcStatus: 14, percentage: { numerator: 250_000, denominator: 'MILLION' } }, 0.249999, 0.25],
    ];
    for (const [abort, hit, miss] of cases) {
      assert.equal(injector({ abort }, scripted(hit)).decide(metadata())?.abort?.code, 14);
      assert.equal(injector({ abort }, scripted(miss)).decide(metadata()), undefined);
    }
    // 100 % always, 0 % never (the draw's largest value is just under 1).
    assert.ok(
      injector({ abort: { grpcStatus: 14, percentage: HUNDRED_PERCENT } }, scripted(0.999999)).decide(
        metadata(),
      ),
    );
    assert.equal(
      injector({ abort: { grpcStatus: 14, percentage: { numerator: 0 } } }, scripted(0)).decide(metadata()),
      undefined,
    );
  });

  test('the abort status: the configured code, with the filter name (and the HTTP status) in its details', () => {
    const grpcAbort = injector({ abort: { grpcStatus: 8, percentage: HUNDRED_PERCENT } }, scripted(0));
    assert.deepEqual(grpcAbort.decide(metadata())?.abort, {
      code: Code.RESOURCE_EXHAUSTED,
      details: 'fault injected by the HTTP filter "fault"',
    });
    const httpAbort = injector({ abort: { httpStatus: 503, percentage: HUNDRED_PERCENT } }, scripted(0));
    assert.deepEqual(httpAbort.decide(metadata())?.abort, {
      code: Code.UNAVAILABLE,
      details: 'fault injected by the HTTP filter "fault" (HTTP 503)',
    });
  });

  test('"200/OK Error Injection": grpc_status 0 ends the call with OK', () => {
    const ok = injector({ abort: { grpcStatus: 0, percentage: HUNDRED_PERCENT } }, scripted(0));
    assert.equal(ok.decide(metadata())?.abort?.code, Code.OK);
  });

  test('"Header matching": x-envoy-fault-delay-request gives the delay in ms; invalid values are ignored', () => {
    const spec: FaultSpec = { delay: { header: true, percentage: HUNDRED_PERCENT } };
    assert.equal(
      injector(spec, scripted(0)).decide(metadata({ 'x-envoy-fault-delay-request': '53' }))?.delayMs,
      53,
    );
    // No header, or no valid value: no delay and no draw.
    assert.equal(injector(spec, scripted()).decide(metadata()), undefined);
    for (const bad of ['abc', '-5', '5ms', '1.5', '', '0']) {
      assert.equal(
        injector(spec, scripted()).decide(metadata({ 'x-envoy-fault-delay-request': bad })),
        undefined,
        `"${bad}"`,
      );
    }
    // Of several values the first valid one is used.
    assert.equal(
      injector(spec, scripted(0)).decide(metadata({ 'x-envoy-fault-delay-request': ['x', '7', '9'] }))
        ?.delayMs,
      7,
    );
  });

  test('"Header matching": x-envoy-fault-delay-request-percentage sets the numerator, capped by the config\'s', () => {
    const spec: FaultSpec = { delay: { header: true, percentage: { numerator: 50 } } };
    const delayed = (percentage: string, draw: number) =>
      injector(spec, scripted(draw)).decide(
        metadata({
          'x-envoy-fault-delay-request': '10',
          'x-envoy-fault-delay-request-percentage': percentage,
        }),
      ) !== undefined;
    assert.equal(delayed('20', 0.19), true);
    assert.equal(delayed('20', 0.2), false);
    // 80 is capped at the config's 50.
    assert.equal(delayed('80', 0.49), true);
    assert.equal(delayed('80', 0.5), false);
    // An invalid percentage header is ignored: the config's 50 applies.
    assert.equal(delayed('lots', 0.49), true);
    assert.equal(delayed('lots', 0.5), false);
  });

  test('"Header matching": x-envoy-fault-abort-grpc-request, else x-envoy-fault-abort-request mapped; invalid values ignored', () => {
    const spec: FaultSpec = { abort: { header: true, percentage: HUNDRED_PERCENT } };
    const code = (headers: Record<string, string>) =>
      injector(spec, () => 0).decide(metadata(headers))?.abort?.code;
    assert.equal(code({ 'x-envoy-fault-abort-grpc-request': '3' }), Code.INVALID_ARGUMENT);
    assert.equal(code({ 'x-envoy-fault-abort-request': '503' }), Code.UNAVAILABLE);
    assert.equal(code({ 'x-envoy-fault-abort-request': '404' }), Code.UNIMPLEMENTED);
    assert.equal(code({ 'x-envoy-fault-abort-request': '200' }), Code.UNKNOWN);
    assert.equal(
      code({ 'x-envoy-fault-abort-grpc-request': '10', 'x-envoy-fault-abort-request': '503' }),
      Code.ABORTED,
      'the gRPC code wins',
    );
    assert.equal(
      code({ 'x-envoy-fault-abort-grpc-request': '17', 'x-envoy-fault-abort-request': '401' }),
      Code.UNAUTHENTICATED,
      'no gRPC code 17: the HTTP status is used',
    );
    assert.equal(code({ 'x-envoy-fault-abort-grpc-request': '16' }), Code.UNAUTHENTICATED);
    assert.equal(code({ 'x-envoy-fault-abort-request': '600' }), undefined);
    assert.equal(code({ 'x-envoy-fault-abort-request': '199' }), undefined);
    assert.equal(code({ 'x-envoy-fault-abort-grpc-request': 'UNAVAILABLE' }), undefined);
    assert.equal(code({}), undefined);
  });

  test('"Header matching": x-envoy-fault-abort-request-percentage sets the numerator over the config\'s denominator, capped', () => {
    const spec: FaultSpec = {
      abort: { header: true, percentage: { numerator: 5000, denominator: 'TEN_THOUSAND' } },
    };
    const aborted = (percentage: string, draw: number) =>
      injector(spec, scripted(draw)).decide(
        metadata({
          'x-envoy-fault-abort-grpc-request': '14',
          'x-envoy-fault-abort-request-percentage': percentage,
        }),
      ) !== undefined;
    // 1000 / 10,000 = 10 %.
    assert.equal(aborted('1000', 0.0999), true);
    assert.equal(aborted('1000', 0.1), false);
    // 9000 is capped at 5000: 50 %.
    assert.equal(aborted('9000', 0.4999), true);
    assert.equal(aborted('9000', 0.5), false);
  });

  test('"Maximum active faults": at most max_active_faults calls have a fault in progress, across channels', () => {
    const clock = new VirtualClock();
    const active = new ActiveFaults();
    const spec: FaultSpec = { delay: { fixedMs: 200, percentage: HUNDRED_PERCENT }, maxActiveFaults: 2 };
    // Two channels' injectors share the process's counter.
    const channelA = injector(spec, () => 0, active);
    const channelB = injector(spec, () => 0, active);
    const done: string[] = [];
    const start = (inj: FaultInjector, name: string): InjectedFault | undefined => {
      const fault = inj.decide(metadata());
      fault?.run(clock, () => done.push(name));
      return fault;
    };
    assert.ok(start(channelA, 'a1'));
    assert.ok(start(channelB, 'b1'));
    assert.equal(active.active, 2);
    assert.equal(start(channelA, 'a2'), undefined, 'a third fault while two are active');
    clock.advance(199);
    assert.deepEqual(done, []);
    assert.equal(start(channelB, 'b2'), undefined);
    clock.advance(1);
    assert.deepEqual(done, ['a1', 'b1']);
    assert.equal(active.active, 0);
    assert.ok(start(channelA, 'a3'), 'a fault again once the delays are over');
    // max_active_faults 0: never; unset: no limit.
    assert.equal(injector({ ...spec, maxActiveFaults: 0 }, () => 0).decide(metadata()), undefined);
    const unlimited = injector({ delay: spec.delay! }, () => 0, new ActiveFaults());
    for (let i = 0; i < 100; i++) assert.ok(unlimited.decide(metadata()));
  });

  test('"RPC delay injection" then abort: the delay runs first on the clock, then the abort status is handed over', () => {
    const clock = new VirtualClock();
    const active = new ActiveFaults();
    const both = injector(
      {
        delay: { fixedMs: 200, percentage: HUNDRED_PERCENT },
        abort: { grpcStatus: Code.UNAVAILABLE, percentage: HUNDRED_PERCENT },
      },
      () => 0,
      active,
    );
    const outcomes: (Code | undefined)[] = [];
    both.decide(metadata())!.run(clock, (abort) => outcomes.push(abort?.code));
    clock.advance(199);
    assert.equal(outcomes.length, 0);
    assert.equal(active.active, 1);
    clock.advance(1);
    assert.deepEqual([...outcomes], [Code.UNAVAILABLE]);
    assert.equal(active.active, 0);
    // An abort without a delay is over at once.
    const abortOnly = injector({ abort: { grpcStatus: 4, percentage: HUNDRED_PERCENT } }, () => 0, active);
    abortOnly.decide(metadata())!.run(clock, (abort) => outcomes.push(abort?.code));
    assert.deepEqual(outcomes, [Code.UNAVAILABLE, Code.DEADLINE_EXCEEDED]);
    assert.equal(active.active, 0);
  });

  test('a call that ends during its delay cancels it: the fault is over, and the call is never started', () => {
    const clock = new VirtualClock();
    const active = new ActiveFaults();
    const delay = injector({ delay: { fixedMs: 200, percentage: HUNDRED_PERCENT } }, () => 0, active);
    let started = false;
    const cancel = delay.decide(metadata())!.run(clock, () => {
      started = true;
    });
    clock.advance(50);
    cancel();
    assert.equal(active.active, 0);
    cancel();
    assert.equal(active.active, 0, 'cancelling twice counts once');
    clock.advance(1000);
    assert.equal(started, false);
  });
});
