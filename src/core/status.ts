/** gRPC status codes (doc/statuscodes.md). */
export enum Code {
  OK = 0,
  CANCELLED = 1,
  UNKNOWN = 2,
  INVALID_ARGUMENT = 3,
  DEADLINE_EXCEEDED = 4,
  NOT_FOUND = 5,
  ALREADY_EXISTS = 6,
  PERMISSION_DENIED = 7,
  RESOURCE_EXHAUSTED = 8,
  FAILED_PRECONDITION = 9,
  ABORTED = 10,
  OUT_OF_RANGE = 11,
  UNIMPLEMENTED = 12,
  INTERNAL = 13,
  UNAVAILABLE = 14,
  DATA_LOSS = 15,
  UNAUTHENTICATED = 16,
}

export interface Status {
  readonly code: Code;
  readonly details: string;
}

export const OK_STATUS: Status = Object.freeze({ code: Code.OK, details: '' });

export function status(code: Code, details: string): Status {
  return { code, details };
}

export function unavailable(details: string): Status {
  return { code: Code.UNAVAILABLE, details };
}

/** `UNAVAILABLE: details`, for logs and error messages. */
export function formatStatus(s: Status): string {
  return `${Code[s.code] ?? s.code}: ${s.details}`;
}
