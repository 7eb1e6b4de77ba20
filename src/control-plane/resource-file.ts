// A resources file: YAML or JSON (YAML reads both), holding a list of resources in proto3 JSON with
// "@type" — as a top-level list, under a `resources:` key, or one resource per YAML document. Watched for
// changes so a running control plane serves what the file says now.
import { type FSWatcher, readFileSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { ResourceInput } from './resource-set.js';

/**
 * Reads the resource list from YAML / JSON text; throws with the reason (and line) when it cannot. A text with
 * no resource list at all (empty, or only comments) is refused rather than read as "no resources": it is
 * what a file looks like for a moment while an editor or `gen > file` rewrites it, and serving it would
 * delete every resource for every client. Serving none is said on purpose, with `resources: []` (or `[]`).
 */
export function parseResourceText(text: string): ResourceInput[] {
  const documents = parseAllDocuments(text);
  // parseAllDocuments returns an EmptyStream (not an array) for a file with no document at all.
  const list = Array.isArray(documents) ? documents : [];
  const resources: ResourceInput[] = [];
  let saysList = false;
  list.forEach((document, d) => {
    const [error] = document.errors;
    if (error) throw new Error(error.message);
    const where = list.length > 1 ? `document ${d + 1}: ` : '';
    const found = resourceList(document.toJS(), where);
    if (found) {
      saysList = true;
      resources.push(...found);
    }
  });
  if (!saysList)
    throw new Error(
      'holds no resources (it is empty, or only comments); to serve no resources on purpose, write "resources: []"',
    );
  return resources;
}

/** The resources of one document; undefined for a document with nothing in it. */
function resourceList(value: unknown, where: string): ResourceInput[] | undefined {
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) return value as ResourceInput[];
  if (typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if ('@type' in object) return [object as unknown as ResourceInput];
    if (Array.isArray(object.resources)) return object.resources as ResourceInput[];
  }
  throw new Error(
    `${where}expected a list of resources (or "resources:" with a list), each with "@type"; got ${JSON.stringify(value).slice(0, 80)}`,
  );
}

/** Reads and parses the file; errors name the file. */
export function loadResourceFile(path: string): ResourceInput[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`${path}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return parseResourceText(text);
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
}

/**
 * Calls `onChange(text)` whenever the file's content differs from the last seen text. Watches the
 * directory, so editors that save by writing a new file and renaming it over the old one are seen too;
 * events are coalesced for `settleMs` so a save in several writes is read once. Returns stop().
 */
export function watchFileContent(
  path: string,
  initialText: string,
  onChange: (text: string) => void,
  settleMs = 100,
): () => void {
  let last = initialText;
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    timer = undefined;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      return; // between a delete and the rename that replaces it: the next event reads the new file
    }
    if (text === last) return;
    last = text;
    onChange(text);
  };
  const name = basename(path);
  const watcher: FSWatcher = watch(dirname(path), (_event, file) => {
    if (file !== null && file !== name) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(check, settleMs);
  });
  return () => {
    if (timer) clearTimeout(timer);
    watcher.close();
  };
}
