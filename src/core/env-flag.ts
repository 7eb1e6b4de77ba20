/** `true` / `false` (any case, surrounding spaces ignored); anything else, or unset, gives the default. */
export function envFlag(name: string, defaultValue: boolean): boolean {
  const raw = process.env[name]?.trim().toLowerCase();
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  return defaultValue;
}
