/**
 * An xDS resource that gRPC would NACK. `field` is the path of the offending field inside the resource, in
 * proto field names (`load_balancing_policy.policies[0].typed_config (WrrLocality).endpoint_picking_policy`),
 * and the message, `field: problem`, is the NACK reason. When the resource type is known to matter (two
 * resources validated together) the message starts with it: `ClusterLoadAssignment: endpoints[0]…: …`.
 */
export class XdsResourceError extends Error {
  override readonly name = 'XdsResourceError';
  constructor(
    readonly field: string,
    readonly problem: string,
    readonly resource?: string,
  ) {
    const reason = field === '' ? problem : `${field}: ${problem}`;
    super(resource === undefined ? reason : `${resource}: ${reason}`);
  }
}
