/**
 * The longest NACK reason lbtree produces, in characters (4 KiB). A reason is sent to the control plane in
 * `error_detail` and kept in the client's cache dump, so a resource built to produce a huge one (100,000
 * unsupported policy entries) must not: longer reasons end with `… (N more characters)`.
 */
export const MAX_NACK_REASON_LENGTH = 4096;

/** `text` cut to {@link MAX_NACK_REASON_LENGTH} characters, saying how much was left out. */
export function capNackReason(text: string): string {
  if (text.length <= MAX_NACK_REASON_LENGTH) return text;
  // Reserve room for the suffix so the result stays within the limit.
  const keep = MAX_NACK_REASON_LENGTH - 40;
  return `${text.slice(0, keep)}… (${text.length - keep} more characters)`;
}

/**
 * `a, b, c, … (N more)`: as many items as fit in `budget` characters, for reasons that list what was found
 * (the skipped policy types), so that building the reason is bounded too.
 */
export function listWithin(items: readonly string[], budget = 1024): string {
  let out = '';
  for (let i = 0; i < items.length; i++) {
    const next = i === 0 ? items[i]! : `, ${items[i]}`;
    if (out.length + next.length > budget) return `${out}, … (${items.length - i} more)`;
    out += next;
  }
  return out;
}

/**
 * An xDS resource that gRPC would NACK. `field` is the path of the offending field inside the resource, in
 * proto field names (`load_balancing_policy.policies[0].typed_config (WrrLocality).endpoint_picking_policy`),
 * and the message, `field: problem`, is the NACK reason (at most {@link MAX_NACK_REASON_LENGTH} characters).
 * When the resource type is known to matter (two resources validated together) the message starts with it:
 * `ClusterLoadAssignment: endpoints[0]…: …`.
 */
export class XdsResourceError extends Error {
  override readonly name = 'XdsResourceError';
  constructor(
    readonly field: string,
    readonly problem: string,
    readonly resource?: string,
  ) {
    const reason = field === '' ? problem : `${field}: ${problem}`;
    super(capNackReason(resource === undefined ? reason : `${resource}: ${reason}`));
  }
}
