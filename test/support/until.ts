/**
 * Polls `condition` every 10 ms until it holds; rejects naming `what` (and `detail()`, what was seen) once
 * `deadlineMs` has passed.
 */
export async function until(
  what: string,
  condition: () => boolean,
  deadlineMs = 15_000,
  detail: () => string = () => '',
): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > deadlineMs) throw new Error(`timed out waiting for ${what} ${detail()}`.trim());
    await new Promise((r) => setTimeout(r, 10));
  }
}
