// Resources shaped as istiod's gRPC generator (pilot/pkg/networking/grpcgen in istio/istio) sends them to a
// proxyless gRPC client of `xds:///HOST:PORT`: the Listener `HOST:PORT` whose HttpConnectionManager fetches the
// RouteConfiguration `outbound|PORT||HOST` over ADS and runs [envoy.filters.http.fault (HTTPFault{}),
// envoy.filters.http.router], neither is_optional; a virtual host with the service's domains; the EDS Cluster
// `outbound|PORT||HOST` with istio metadata; the ClusterLoadAssignment with a locality, HEALTHY endpoints and
// their istio metadata. A VirtualService's fault becomes the route's typed_per_filter_config.
// (Builders and type URLs only: this module loads no grpc-js, so a test may import it statically.)
import { parseHostPort } from '../../src/control-plane/builders.js';
import type { ResourceJson } from '../../src/control-plane/index.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
  CLUSTER_TYPE_URL,
  LISTENER_TYPE_URL,
  ROUTE_CONFIGURATION_TYPE_URL,
} from '../../src/protos/type-urls.js';

const TYPE = 'type.googleapis.com/';
export const ISTIO_FAULT_FILTER = 'envoy.filters.http.fault';

export interface IstiodServiceSpec {
  /** The service's host, e.g. `echo.default.svc.cluster.local`. */
  readonly host: string;
  readonly port: number;
  /** The endpoints, `127.0.0.1:5000`. */
  readonly endpoints: readonly string[];
  /** The route's typed_per_filter_config (a VirtualService's fault: `{ [ISTIO_FAULT_FILTER]: httpFault(…) }`). */
  readonly routeFilterConfig?: Record<string, unknown>;
}

/** `echo.default.svc.cluster.local` → the short names istiod lists as domains too (with and without the port). */
function domains(host: string, port: number): string[] {
  const parts = host.split('.');
  const names = [host];
  // name, name.namespace, name.namespace.svc: istiod's generateVirtualHostDomains for a cluster-local host.
  for (let n = 1; n < parts.length && n <= 3; n++) names.push(parts.slice(0, n).join('.'));
  return names.flatMap((d) => [d, `${d}:${port}`]);
}

/** `outbound|PORT||HOST`: istiod's name for the route configuration, the cluster and its EDS service. */
export function istioClusterName(host: string, port: number): string {
  return `outbound|${port}||${host}`;
}

/** The four resources of one service, as istiod's grpcgen writes them. */
export function istiodService(spec: IstiodServiceSpec): ResourceJson[] {
  const name = istioClusterName(spec.host, spec.port);
  const [service, namespace] = spec.host.split('.');
  const listener: ResourceJson = {
    '@type': LISTENER_TYPE_URL,
    name: `${spec.host}:${spec.port}`,
    apiListener: {
      apiListener: {
        '@type': `${TYPE}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
        rds: { configSource: { ads: {}, resourceApiVersion: 'V3' }, routeConfigName: name },
        httpFilters: [
          {
            name: ISTIO_FAULT_FILTER,
            typedConfig: { '@type': `${TYPE}envoy.extensions.filters.http.fault.v3.HTTPFault` },
          },
          {
            name: 'envoy.filters.http.router',
            typedConfig: { '@type': `${TYPE}envoy.extensions.filters.http.router.v3.Router` },
          },
        ],
      },
    },
  };
  const routes: ResourceJson = {
    '@type': ROUTE_CONFIGURATION_TYPE_URL,
    name,
    virtualHosts: [
      {
        name: `${spec.host}:${spec.port}`,
        domains: domains(spec.host, spec.port),
        routes: [
          {
            name: 'default',
            match: { prefix: '/' },
            route: { cluster: name, timeout: '0s', maxGrpcTimeout: '0s' },
            ...(spec.routeFilterConfig !== undefined ? { typedPerFilterConfig: spec.routeFilterConfig } : {}),
          },
        ],
      },
    ],
  };
  const cluster: ResourceJson = {
    '@type': CLUSTER_TYPE_URL,
    name,
    type: 'EDS',
    edsClusterConfig: { edsConfig: { ads: {}, resourceApiVersion: 'V3' }, serviceName: name },
    connectTimeout: '10s',
    lbPolicy: 'ROUND_ROBIN',
    metadata: {
      filterMetadata: {
        istio: {
          services: [{ host: spec.host, name: service, namespace }],
          default_original_port: spec.port,
        },
      },
    },
  };
  const endpoints: ResourceJson = {
    '@type': CLUSTER_LOAD_ASSIGNMENT_TYPE_URL,
    clusterName: name,
    endpoints: [
      {
        locality: { region: 'region-1', zone: 'zone-1', subZone: 'sub-1' },
        loadBalancingWeight: spec.endpoints.length,
        lbEndpoints: spec.endpoints.map((address, i) => {
          const { host, port } = parseHostPort(address);
          return {
            endpoint: { address: { socketAddress: { address: host, portValue: port } } },
            healthStatus: 'HEALTHY',
            loadBalancingWeight: 1,
            metadata: {
              filterMetadata: {
                istio: { workload: `${service}-v1-${i};${namespace};${service};v1;Kubernetes` },
              },
            },
          };
        }),
      },
    ],
  };
  return [listener, routes, cluster, endpoints];
}
