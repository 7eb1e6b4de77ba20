import { posix } from 'node:path';

/**
 * Relative links of Markdown files checked against the files a package ships: users read README.md and
 * docs/*.md inside node_modules (and on the registry), where only packed files exist.
 */

/** One Markdown file: its path from the package root (posix) and its text. */
export interface MarkdownFile {
  readonly path: string;
  readonly text: string;
}

/** Text without its fenced code blocks, whose lines are neither headings nor links. */
function withoutFences(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, '');
}

/** Text without any code, so code that looks like `a[0](b)` is no link. */
function withoutCode(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, '');
}

/** The targets of the inline links `[text](target)` outside code. */
export function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const match of withoutCode(text).matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    targets.push(match[1]!);
  }
  return targets;
}

/** GitHub's anchor for a heading: lower case, punctuation and symbols dropped, each space a hyphen. */
export function headingAnchor(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a Markdown file offers (repeated headings get -1, -2, … as on GitHub). */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of withoutFences(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = headingAnchor(match[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/**
 * What is wrong with each relative link of `files`: a target outside the package, not shipped (`shipped`:
 * packed file paths; a folder is shipped when a file under it is), or an anchor its Markdown target lacks.
 * `read` gives the text of a shipped Markdown target.
 */
export function brokenLinks(
  files: readonly MarkdownFile[],
  shipped: ReadonlySet<string>,
  read: (path: string) => string,
): string[] {
  const problems: string[] = [];
  const isShipped = (path: string) =>
    shipped.has(path) || [...shipped].some((file) => file.startsWith(`${path.replace(/\/$/, '')}/`));
  for (const file of files) {
    for (const target of linkTargets(file.text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      const [pathPart = '', anchor] = target.split('#', 2);
      const path =
        pathPart === '' ? file.path : posix.normalize(posix.join(posix.dirname(file.path), pathPart));
      const at = `${file.path}: (${target})`;
      if (path.startsWith('../') || posix.isAbsolute(path)) {
        problems.push(`${at} points outside the package`);
        continue;
      }
      if (!isShipped(path)) {
        problems.push(`${at}: ${path} is not in the package`);
        continue;
      }
      if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(read(path)).has(anchor)) {
        problems.push(`${at}: ${path} has no heading #${anchor}`);
      }
    }
  }
  return problems;
}
