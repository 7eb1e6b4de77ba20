import { spawnSync } from 'node:child_process';
import { nodeEval } from './child-node.js';

/**
 * Runs the ES module snippet `script` in a fresh Node process whose module resolution throws
 * "<fragment> was loaded" for any module whose specifier or resolved URL contains one of `fragments`: a test
 * that what a user imports stays light.
 */
export function runRefusing(fragments: readonly string[], script: string) {
  const hooks = `const refused = ${JSON.stringify(fragments)};
    export async function resolve(specifier, context, next) {
      const resolved = await next(specifier, context);
      for (const f of refused) if (specifier.includes(f) || resolved.url.includes(f)) throw new Error(f + ' was loaded (imported by ' + context.parentURL + ')');
      return resolved;
    }`;
  const register = `import { register } from 'node:module';
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}));`;
  return spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, ...nodeEval(script)],
    { encoding: 'utf8', timeout: 60_000 },
  );
}
