// One resource list that uses every builder and option of src/control-plane/builders.ts, for the tests that
// check the builders' output (valid protos, and accepted by lbtree's xDS validation).
import {
  aggregateCluster,
  cluster,
  clusterLoadAssignment,
  faultFilter,
  httpFault,
  lbPolicies,
  listener,
  logicalDnsCluster,
  type ResourceJson,
  routeConfiguration,
  statefulSessionFilter,
  statefulSessionPerRoute,
} from '../../src/control-plane/index.js';

export function everyBuilder(): ResourceJson[] {
  return [
    cluster({
      name: 'legacy-ring',
      lbPolicy: 'RING_HASH',
      ringHash: { minimumRingSize: 64, maximumRingSize: 4096 },
    }),
    cluster({ name: 'least', lbPolicy: 'LEAST_REQUEST' }),
    cluster({
      name: 'a52',
      edsServiceName: 'a52-eds',
      maxRequests: 100,
      outlierDetection: { interval: '1s', baseEjectionTime: '30s' },
      loadBalancingPolicy: [
        lbPolicies.custom('type.googleapis.com/no.such.Policy', { knob: 1 }),
        lbPolicies.ringHash({ minimumRingSize: 16 }),
        lbPolicies.wrrLocality(lbPolicies.leastRequest(3), lbPolicies.roundRobin()),
        lbPolicies.pickFirst(true),
        lbPolicies.weightedRoundRobin({ blackoutPeriod: '1s' }),
      ],
    }),
    cluster({
      name: 'wrr-locality',
      loadBalancingPolicy: [lbPolicies.wrrLocality(lbPolicies.leastRequest(3))],
    }),
    cluster({ name: 'pick-first', loadBalancingPolicy: [lbPolicies.pickFirst(true)] }),
    cluster({ name: 'round-robin', loadBalancingPolicy: [lbPolicies.roundRobin()] }),
    cluster({ name: 'sessions', overrideHostStatus: ['UNKNOWN', 'HEALTHY', 'DRAINING'] }),
    aggregateCluster('agg', ['a52', 'legacy-ring']),
    logicalDnsCluster('dns', 'example.com:443'),
    clusterLoadAssignment(
      'a52-eds',
      [
        {
          zone: 'a',
          endpoints: [
            {
              address: { host: '10.0.0.1', port: 80 },
              hashKey: 'k',
              healthStatus: 'DRAINING',
              additionalAddresses: ['[::1]:80'],
            },
          ],
        },
        { zone: 'b', priority: 1, weight: 2, endpoints: ['10.0.0.2:80'] },
      ],
      { dropOverloads: [{ category: 'lb', perMillion: 1000 }] },
    ),
    listener(
      'l',
      {
        inline: [
          {
            domains: ['svc'],
            typedPerFilterConfig: { session: statefulSessionPerRoute({ name: 'vh-cookie' }) },
            routes: [
              {
                path: '/a.B/C',
                weightedClusters: [
                  {
                    name: 'a52',
                    weight: 1,
                    typedPerFilterConfig: {
                      session: statefulSessionPerRoute('disabled'),
                      fault: httpFault({ abort: { httpStatus: 503, percentage: { numerator: 50 } } }),
                    },
                  },
                ],
                hashPolicy: [{ channelId: true, terminal: true }],
                typedPerFilterConfig: {
                  fault: httpFault({
                    delay: { header: true, percentage: { numerator: 10, denominator: 'TEN_THOUSAND' } },
                    abort: { header: true, percentage: { numerator: 100 } },
                  }),
                },
              },
            ],
          },
        ],
      },
      {
        httpFilters: [
          faultFilter(
            {
              delay: { fixedMs: 200, percentage: { numerator: 1, denominator: 'MILLION' } },
              abort: { grpcStatus: 14, percentage: { numerator: 5 } },
              maxActiveFaults: 3,
            },
            'fault',
          ),
          statefulSessionFilter({ name: 'sticky', path: '/a.B', ttlSeconds: 60 }, 'session'),
        ],
      },
    ),
    routeConfiguration('r', [
      {
        routes: [
          {
            prefix: '/x',
            cluster: 'agg',
            hashPolicy: [{ header: 'x-user' }],
            typedPerFilterConfig: { session: statefulSessionPerRoute('disabled') },
          },
        ],
      },
    ]),
  ];
}
