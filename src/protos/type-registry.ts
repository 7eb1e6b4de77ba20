import { createRegistry, type Registry } from '@bufbuild/protobuf';
import { generatedFiles } from './gen/files.js';

/**
 * Every message, enum and extension of the generated Envoy / xDS protos (and the well-known types they use):
 * what `anyPack` / `anyUnpack` and proto3 JSON need to resolve a type URL or an Any's "@type".
 */
export const xdsTypeRegistry: Registry = createRegistry(...generatedFiles);
