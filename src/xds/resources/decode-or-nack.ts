import type { DescMessage, MessageShape } from '@bufbuild/protobuf';
import { decodeMessage, ProtoDecodeError } from '../../protos/decode.js';
import { XdsResourceError } from './errors.js';

/** Decodes `bytes` as `schema`; malformed bytes are an {@link XdsResourceError} at `field` ('' = the resource). */
export function decodeOrNack<Desc extends DescMessage>(
  schema: Desc,
  bytes: Uint8Array,
  field = '',
): MessageShape<Desc> {
  try {
    return decodeMessage(schema, bytes);
  } catch (e) {
    if (e instanceof ProtoDecodeError) throw new XdsResourceError(field, e.message);
    throw e;
  }
}
