// @grpc/grpc-js is an optional peer dependency: `lbtree --help` and `lbtree simulate` run without it, and the
// commands that start real servers and channels load it only when they run, through `withGrpcJs`.

/** Why a command could not start: @grpc/grpc-js is not installed where lbtree can resolve it. */
export class MissingPeerError extends Error {
  constructor(command: string) {
    super(
      `lbtree ${command} needs @grpc/grpc-js, an optional peer dependency of lbtree that is not installed here.\n` +
        'Install it beside lbtree:  npm install @grpc/grpc-js@^1.14',
    );
  }
}

function isGrpcJsMissing(e: unknown): boolean {
  const error = e as { code?: string; message?: string };
  return (
    (error.code === 'ERR_MODULE_NOT_FOUND' || error.code === 'MODULE_NOT_FOUND') &&
    (error.message ?? '').includes('@grpc/grpc-js')
  );
}

/**
 * Checks that @grpc/grpc-js resolves, then loads the command's module (which imports it statically). Throws
 * MissingPeerError, naming the command and what to install, when it does not.
 */
export async function withGrpcJs<T>(command: string, load: () => Promise<T>): Promise<T> {
  try {
    await import('@grpc/grpc-js');
  } catch (e) {
    if (isGrpcJsMissing(e)) throw new MissingPeerError(command);
    throw e;
  }
  return load();
}
