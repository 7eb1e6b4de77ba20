import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Runs the ES module snippet `script` in a fresh Node process (no loader of the tests' own) and returns the URL
 * of every module it resolved through the ESM loader, in order, with the child's status: what a user's
 * process loads when it imports the same thing. CommonJS `require`s inside a package are not seen. The child
 * finds the list so far in the file LBTREE_LOADED_MODULES names (one URL a line), to wait for a module.
 */
export function modulesLoadedBy(script: string): { status: number | null; stderr: string; urls: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'lbtree-loaded-'));
  const log = join(dir, 'urls');
  try {
    const hooks = `import { appendFileSync } from 'node:fs';
      export async function resolve(specifier, context, next) {
        const resolved = await next(specifier, context);
        appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n');
        return resolved;
      }`;
    const register = `import { register } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}));`;
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        `data:text/javascript,${encodeURIComponent(register)}`,
        '--input-type=module',
        '-e',
        script,
      ],
      { encoding: 'utf8', timeout: 60_000, env: { ...process.env, LBTREE_LOADED_MODULES: log } },
    );
    let urls: string[] = [];
    try {
      urls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    } catch {
      // Nothing resolved (the child failed first): the status says why.
    }
    return { status: child.status, stderr: child.stderr, urls };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
