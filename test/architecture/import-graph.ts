// The import graph of src/, read by the TypeScript parser (so an import in a comment or a string is not one):
// every static `import … from` / `export … from`, every `import('…')` call, and every `import('…')` type.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';

export interface Import {
  /** The importing file, from the repository root: `src/xds/client/index.ts`. */
  readonly from: string;
  /** The specifier as written: `../../core/index.js`, `node:events`, `@grpc/grpc-js`. */
  readonly specifier: string;
  /** The file a relative specifier names (`.js` read as its `.ts` source); undefined for a package. */
  readonly target: string | undefined;
  /** `import type` / `export type` / an `import('…')` type: erased by the compiler, it loads nothing. */
  readonly typeOnly: boolean;
  /** 1-based, for messages. */
  readonly line: number;
}

/** Every `.ts` file under `dir`, as a `/`-separated path. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = posix.join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(path);
      return entry.name.endsWith('.ts') ? [path] : [];
    })
    .sort();
}

/** The imports of one source file. `computed` collects `import(expression)` calls whose target no test can know. */
export function importsOf(file: string, computed: string[] = []): Import[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
  const found: Import[] = [];
  const add = (specifier: string, typeOnly: boolean, node: ts.Node) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push({ from: file, specifier, target: resolveRelative(file, specifier), typeOnly, line });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.importClause?.isTypeOnly ?? false, node);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier.text, node.isTypeOnly, node);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument && ts.isStringLiteralLike(argument)) add(argument.text, false, node);
      else {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        computed.push(`${file}:${line}`);
      }
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      add(node.argument.literal.text, true, node);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const path = posix.normalize(posix.join(posix.dirname(from), specifier));
  const source = path.replace(/\.js$/, '.ts');
  return existsSync(join(...source.split('/'))) ? source : path;
}

/** The files `start` reaches through its imports (`start` included), each mapped to the file that imported it. */
export function importClosure(
  start: string,
  edges: ReadonlyMap<string, readonly Import[]>,
): Map<string, string> {
  const reachedFrom = new Map<string, string>([[start, start]]);
  const queue = [start];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const { target } of edges.get(file) ?? []) {
      if (target === undefined || reachedFrom.has(target)) continue;
      reachedFrom.set(target, file);
      queue.push(target);
    }
  }
  return reachedFrom;
}

/** `start`'s import chain to `file`, for a message: `a.ts → b.ts → file`. */
export function chainTo(file: string, reachedFrom: ReadonlyMap<string, string>): string {
  const chain = [file];
  for (let at = file; reachedFrom.get(at) !== at; ) {
    at = reachedFrom.get(at)!;
    chain.unshift(at);
  }
  return chain.join(' → ');
}
