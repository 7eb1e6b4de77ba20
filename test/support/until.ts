/** Polls `condition` every 10 ms until it holds; rejects naming `what` once `deadlineMs` has passed. */
export async function until(what: string, condition: () => boolean, deadlineMs = 15_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
