// The version `lbtree --version` prints: lbtree's own package.json, found by walking up from this module, which
// sits in src/cli (run through tsx), dist/cli (installed) or .build/src/cli (the tests' build).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'lbtree' && typeof pkg.version === 'string') return pkg.version;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('lbtree’s package.json was not found above its own module');
    dir = parent;
  }
}
