// A node:test reporter (run-tests.mjs adds it beside the spec reporter): writes, as JSON, how long each test
// file's top-level tests took in all, so the next run can start the longest files first (test-order.mjs).
import { relative } from 'node:path';

export default async function* durationsReporter(source) {
  const byFile = {};
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || !file) continue;
    const key = relative('.build', relative(process.cwd(), file)).replace(/\.js$/, '.ts');
    byFile[key] = (byFile[key] ?? 0) + (details?.duration_ms ?? 0);
  }
  yield `${JSON.stringify(byFile)}\n`;
}
