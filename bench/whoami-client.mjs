// The loopback backends' Whoami method (src/cli/loopback-backends.ts) as a grpc-js client class, for the benches'
// plain-JavaScript children: requests and replies pass as raw bytes.

const passThrough = (b) => b;

/** The client class of `grpc` (the child's own @grpc/grpc-js) with the one method `whoami`. */
export function whoamiClientClass(grpc) {
  return grpc.makeGenericClientConstructor(
    {
      whoami: {
        path: '/lbtree.test.Backend/Whoami',
        requestStream: false,
        responseStream: false,
        requestSerialize: passThrough,
        requestDeserialize: passThrough,
        responseSerialize: passThrough,
        responseDeserialize: passThrough,
      },
    },
    'Backend',
  );
}

const empty = Buffer.alloc(0);

/** One wait-for-ready Whoami call on `client`, with a deadline `deadlineMs` from now. */
export function whoami(client, deadlineMs) {
  return new Promise((resolve, reject) =>
    client.whoami(empty, { deadline: Date.now() + deadlineMs, waitForReady: true }, (e, reply) =>
      e ? reject(e) : resolve(reply),
    ),
  );
}
