import type { Status } from './status.js';

/** A value or the error that replaced it (a resolver's endpoint list or its error). */
export type StatusOr<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly status: Status };

export function ok<T>(value: T): StatusOr<T> {
  return { ok: true, value };
}

export function err<T>(status: Status): StatusOr<T> {
  return { ok: false, status };
}
