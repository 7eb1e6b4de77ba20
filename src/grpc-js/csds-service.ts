// A40: lbtree's xDS clients as the CSDS service (envoy.service.status.v3.ClientStatusDiscoveryService),
// registered with grpc-js's admin services so that `addAdminServicesToServer(server)` serves it, as it does for
// @grpc/grpc-js-xds. Registering loads nothing heavy: the definition passes messages through as bytes, and the
// first request loads the generated protos and the client pool (csds-response.ts) to decode and answer it.
// When @grpc/grpc-js-xds registered A40's service too (both libraries in one process), lbtree's moves to its own
// service name, since grpc-js serves one handler per method and would otherwise refuse the second.

import {
  addAdminServicesToServer,
  experimental,
  logVerbosity,
  Metadata,
  type Server,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';

/** A40's service name. */
export const CSDS_SERVICE_NAME = 'envoy.service.status.v3.ClientStatusDiscoveryService';
/**
 * Where lbtree's CSDS answers when another library (@grpc/grpc-js-xds) registered A40's service name in the same
 * process: the same methods and messages under lbtree's own name, since grpc-js serves one handler per method.
 */
export const LBTREE_CSDS_SERVICE_NAME = 'lbtree.ClientStatusDiscoveryService';
const passThrough = (bytes: Buffer) => bytes;

/** The service with its messages as bytes (csds-response.ts decodes and encodes them), under `name`. */
function csdsService(name: string): ServiceDefinition {
  const method = (methodName: string, stream: boolean) => ({
    path: `/${name}/${methodName}`,
    requestStream: stream,
    responseStream: stream,
    requestSerialize: passThrough,
    requestDeserialize: passThrough,
    responseSerialize: passThrough,
    responseDeserialize: passThrough,
  });
  return {
    StreamClientStatus: method('StreamClientStatus', true),
    FetchClientStatus: method('FetchClientStatus', false),
  };
}

export const CSDS_SERVICE: ServiceDefinition = csdsService(CSDS_SERVICE_NAME);
export const LBTREE_CSDS_SERVICE: ServiceDefinition = csdsService(LBTREE_CSDS_SERVICE_NAME);

let responder: Promise<typeof import('./csds-response.js')> | undefined;
const loadResponder = () => (responder ??= import('./csds-response.js'));

/** One request's answer: the response bytes, or the status to fail with. */
async function answer(request: Buffer): Promise<{ bytes: Buffer } | { code: status; details: string }> {
  try {
    return (await loadResponder()).clientStatusResponse(request);
  } catch (e) {
    return { code: status.INTERNAL, details: `CSDS: ${(e as Error).message}` };
  }
}

const failure = (s: { code: status; details: string }) => ({ ...s, metadata: new Metadata() });

export const CSDS_HANDLERS = {
  FetchClientStatus(call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void {
    void answer(call.request).then((a) => ('bytes' in a ? callback(null, a.bytes) : callback(failure(a))));
  },
  StreamClientStatus(call: ServerDuplexStream<Buffer, Buffer>): void {
    // Answers in request order: each request waits for the previous answer.
    let previous: Promise<unknown> = Promise.resolve();
    let failed = false;
    call.on('data', (request: Buffer) => {
      previous = previous.then(async () => {
        if (failed) return;
        const a = await answer(request);
        if ('bytes' in a) call.write(a.bytes);
        else {
          failed = true;
          call.emit('error', failure(a));
        }
      });
    });
    call.on('end', () => {
      void previous.then(() => {
        if (!failed) call.end();
      });
    });
  },
};

let registered = false;
let probing = false;
let toldOfOther = false;

/**
 * Whether another admin service registered with grpc-js serves A40's CSDS (@grpc/grpc-js-xds's `register()`
 * does). grpc-js keeps its registrations to itself, so they are all handed to a server that only records the
 * method paths; lbtree's own registration is recognised by its definition and left out.
 */
function anotherCsdsRegistered(): boolean {
  const paths = new Set<string>();
  const recorder = {
    addService(service: ServiceDefinition) {
      if (service === CSDS_SERVICE) return;
      for (const method of Object.values(service)) paths.add(method.path);
    },
  };
  probing = true;
  try {
    addAdminServicesToServer(recorder as unknown as Server);
  } finally {
    probing = false;
  }
  return paths.has(CSDS_SERVICE.FetchClientStatus!.path) || paths.has(CSDS_SERVICE.StreamClientStatus!.path);
}

/**
 * lbtree's CSDS for `addAdminServicesToServer`: under A40's name, or — when another library registered that
 * name, which grpc-js cannot serve twice — under {@link LBTREE_CSDS_SERVICE_NAME}, said once in grpc-js's log.
 */
function csdsDefinition(): ServiceDefinition {
  if (probing || !anotherCsdsRegistered()) return CSDS_SERVICE;
  if (!toldOfOther) {
    toldOfOther = true;
    experimental.log(
      logVerbosity.ERROR,
      `lbtree: another library (@grpc/grpc-js-xds?) registered the CSDS admin service ${CSDS_SERVICE_NAME}, which answers for its own xDS clients; lbtree's xDS clients are served by ${LBTREE_CSDS_SERVICE_NAME} (the same methods and messages)`,
    );
  }
  return LBTREE_CSDS_SERVICE;
}

/** Adds the CSDS service to grpc-js's admin services (once per process). */
export function registerCsdsAdminService(): void {
  if (registered) return;
  registered = true;
  experimental.registerAdminService(csdsDefinition, () => CSDS_HANDLERS as never);
}
