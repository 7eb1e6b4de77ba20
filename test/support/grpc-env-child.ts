import { execFile } from 'node:child_process';
import { nodeEval } from './child-node.js';

export interface ChildRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The variables grpc-js reads its logging from when it loads. */
const GRPC_LOG_VARIABLES = ['GRPC_TRACE', 'GRPC_NODE_TRACE', 'GRPC_VERBOSITY', 'GRPC_NODE_VERBOSITY'];

/**
 * Runs the ES module `code` (see nodeEval) in a child Node process whose grpc-js logging variables are exactly
 * `grpcEnv` (the test run's own are removed), and resolves when it exits. Children run at once, side by side.
 */
export function runWithGrpcEnv(
  code: string,
  grpcEnv: Readonly<Record<string, string>> = {},
): Promise<ChildRun> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of GRPC_LOG_VARIABLES) delete env[name];
  Object.assign(env, grpcEnv);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      nodeEval(code),
      { env, encoding: 'utf8', timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ status, stdout, stderr });
      },
    );
  });
}
