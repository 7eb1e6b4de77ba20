// A40: lbtree's xDS clients as the CSDS service (envoy.service.status.v3.ClientStatusDiscoveryService),
// registered with grpc-js's admin services so that `addAdminServicesToServer(server)` serves it, as it does for
// @grpc/grpc-js-xds. Registering loads nothing heavy: the definition passes messages through as bytes, and the
// first request loads the generated protos and the client pool (csds-response.ts) to decode and answer it.

import {
  experimental,
  Metadata,
  type ServerDuplexStream,
  type ServerUnaryCall,
  type ServiceDefinition,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';

const SERVICE = '/envoy.service.status.v3.ClientStatusDiscoveryService';
const passThrough = (bytes: Buffer) => bytes;

/** The service with its messages as bytes (csds-response.ts decodes and encodes them). */
export const CSDS_SERVICE: ServiceDefinition = {
  StreamClientStatus: {
    path: `${SERVICE}/StreamClientStatus`,
    requestStream: true,
    responseStream: true,
    requestSerialize: passThrough,
    requestDeserialize: passThrough,
    responseSerialize: passThrough,
    responseDeserialize: passThrough,
  },
  FetchClientStatus: {
    path: `${SERVICE}/FetchClientStatus`,
    requestStream: false,
    responseStream: false,
    requestSerialize: passThrough,
    requestDeserialize: passThrough,
    responseSerialize: passThrough,
    responseDeserialize: passThrough,
  },
};

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

/** Adds the CSDS service to grpc-js's admin services (once per process). */
export function registerCsdsAdminService(): void {
  if (registered) return;
  registered = true;
  experimental.registerAdminService(
    () => CSDS_SERVICE,
    () => CSDS_HANDLERS as never,
  );
}
