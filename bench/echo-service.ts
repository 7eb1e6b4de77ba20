// The unary echo service the metrics benches call (one byte each way), its client class, and a load loop.
import * as grpc from '@grpc/grpc-js';

export const echo = {
  call: {
    path: '/bench.Echo/Call',
    requestStream: false,
    responseStream: false,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  },
} as const;

export const EchoClientClass = grpc.makeGenericClientConstructor(echo, 'Echo');
export type EchoClient = InstanceType<typeof EchoClientClass> & {
  call(request: Buffer, callback: (e: grpc.ServiceError | null, r?: Buffer) => void): void;
};

/** `n` unary calls, `concurrency` in flight. */
export async function calls(client: EchoClient, n: number, concurrency: number): Promise<void> {
  let next = 0;
  const payload = Buffer.from('x');
  const worker = async () => {
    while (next++ < n) {
      await new Promise<void>((resolve, reject) => client.call(payload, (e) => (e ? reject(e) : resolve())));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
