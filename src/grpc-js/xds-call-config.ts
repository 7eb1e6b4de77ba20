import { type experimental, status as GrpcStatus } from '@grpc/grpc-js';
import {
  XDS_CLUSTER_CALL_ATTRIBUTE,
  XDS_OVERRIDE_HOST_CALL_ATTRIBUTE,
  XDS_ROUTE_CALL_ATTRIBUTE,
} from '../xds/balancer/index.js';
import { XDS_PATH_CALL_ATTRIBUTE } from '../xds/call-attributes.js';
import type { RoutedCall } from '../xds/resolver/routed-call.js';
import type { StatefulSessionCall } from '../xds/resolver/stateful-session.js';
import { CALL_RETRY_TRACER, type TrackedCall } from './call-retry-tracking.js';
import { HASH_PICK_INFO_KEY } from './picker-adapter.js';

type CallConfig = ReturnType<experimental.ConfigSelector['invoke']>;

/**
 * The pick information of a call the xDS config selector routed (grpc-js hands every pick of the call this very
 * object): the cluster_manager child (A31), the route and path (the flight recorder), the request hash (A42: the
 * routed call, computed when first read), the A55 session and the A96 tracer. grpc-js types pick information as
 * strings; lbtree's picker adapter reads the values untyped.
 */
export class XdsPickInformation {
  readonly [XDS_CLUSTER_CALL_ATTRIBUTE]: string;
  readonly [XDS_ROUTE_CALL_ATTRIBUTE]: string;
  readonly [XDS_PATH_CALL_ATTRIBUTE]: string;
  readonly [HASH_PICK_INFO_KEY]: RoutedCall;
  readonly [XDS_OVERRIDE_HOST_CALL_ATTRIBUTE]: StatefulSessionCall | undefined;
  readonly [CALL_RETRY_TRACER]: TrackedCall | undefined;

  constructor(routed: RoutedCall, path: string, tracer: TrackedCall | undefined) {
    this[XDS_CLUSTER_CALL_ATTRIBUTE] = routed.clusterChild;
    this[XDS_ROUTE_CALL_ATTRIBUTE] = routed.route;
    this[XDS_PATH_CALL_ATTRIBUTE] = path;
    this[HASH_PICK_INFO_KEY] = routed;
    this[XDS_OVERRIDE_HOST_CALL_ATTRIBUTE] = routed.session;
    this[CALL_RETRY_TRACER] = tracer;
  }

  /** As grpc-js types pick information. */
  get asPickInformation(): Record<string, string> {
    return this as unknown as Record<string, string>;
  }
}

/**
 * The config grpc-js gets for a call the xDS config selector routed, which is also the call's pick information
 * and the end of the call's hold on its cluster (grpc-js calls `onCommitted` on the config). With its
 * {@link RoutedCall}, the only objects routing a call makes.
 */
export class XdsCallConfig extends XdsPickInformation implements CallConfig {
  readonly status = GrpcStatus.OK;
  readonly pickInformation: Record<string, string> = this.asPickInformation;

  constructor(
    routed: RoutedCall,
    path: string,
    readonly methodConfig: CallConfig['methodConfig'],
    readonly dynamicFilterFactories: CallConfig['dynamicFilterFactories'],
    tracer: TrackedCall | undefined,
  ) {
    super(routed, path, tracer);
  }

  /** The call is committed to an attempt: it is done picking, so its hold on its cluster ends. */
  onCommitted(): void {
    this[HASH_PICK_INFO_KEY].release();
  }
}
