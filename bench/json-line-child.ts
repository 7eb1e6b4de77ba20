import { spawn } from 'node:child_process';

/**
 * Runs `node <args>` with `env` added to this process's and returns the last line it printed on stdout, which
 * must start with `startsWith` (a JSON document); its stderr passes through. `what` names the child in errors.
 */
export async function runJsonLineChild(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  startsWith: string,
  what: string,
): Promise<string> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s: string) => {
    out += s;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const last = out.trim().split('\n').pop() ?? '';
  if (code !== 0 || !last.startsWith(startsWith)) throw new Error(`${what} ended with ${code}: ${last}`);
  return last;
}
