/**
 * What a resource type needs besides the bytes to decode and validate one resource (feature switches, the
 * A52 registry). Opaque to the client, which loads no LB policy: its owner passes it as
 * `XdsClientOptions.decodeContext` and every decoder gets it as it is (undefined when none was given).
 */
export type XdsDecodeContext = unknown;

export type XdsDecodeResult<T> =
  | { readonly ok: true; readonly name: string; readonly value: T }
  /** name when it could be read (so the error is tied to that resource, A88), error = NACK reason naming the field. */
  | { readonly ok: false; readonly name: string | undefined; readonly error: string };

/** One xDS resource type (LDS, RDS, CDS, EDS, …) as the xDS client sees it. */
export interface XdsResourceType<T> {
  /** e.g. 'type.googleapis.com/envoy.config.listener.v3.Listener' */
  readonly typeUrl: string;
  /** LDS and CDS: true (a resource missing from a SotW response is deleted); RDS and EDS: false. */
  readonly allResourcesRequiredInSotW: boolean;
  /** Decodes and validates one resource (the Any's value bytes, already unwrapped from discovery.v3.Resource). */
  decode(bytes: Uint8Array, context: XdsDecodeContext): XdsDecodeResult<T>;
  /** Same resource content (to skip notifying watchers); default: compare the bytes. */
  equal?(a: T, b: T): boolean;
}
