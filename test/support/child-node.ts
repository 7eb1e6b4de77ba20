/**
 * How a test starts lbtree in a child process: the same way the test itself runs. `npm test` runs the
 * compiled tree (.build/, see scripts/test-build.mjs), so a child runs compiled JavaScript too; a test run
 * from source through tsx starts its children through tsx. Paths are relative to the repository root (the
 * tests' working directory).
 */
const compiled = import.meta.url.endsWith('.js');

/** `src/cli/main.ts` → the module path to import or run in this mode. */
export function sourceModule(sourcePath: string): string {
  return compiled ? `./.build/${sourcePath.replace(/\.ts$/, '.js')}` : `./${sourcePath}`;
}

/** `node` arguments that run the script `sourcePath` (e.g. `src/cli/main.ts`) followed by `args`. */
export function nodeScript(sourcePath: string, ...args: string[]): string[] {
  return [...loader(), sourceModule(sourcePath), ...args];
}

/** `node` arguments that evaluate the ES module `code` (which imports via `sourceModule`). */
export function nodeEval(code: string): string[] {
  return [...loader(), '--input-type=module', '-e', code];
}

function loader(): string[] {
  return compiled ? [] : ['--import', 'tsx'];
}
