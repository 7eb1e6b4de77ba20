// A55 "Implementation": stateful session affinity needs the application to send back the cookie the channel
// set ("a recipe for cookie management"). A cookie jar for one session: its interceptor stores the
// `set-cookie` values of every response and sends the stored cookies with every call made through it.

import { InterceptingCall, type Interceptor, type Metadata } from '@grpc/grpc-js';

/** One session's cookies (name → value). Use one jar per session; share its interceptor across calls. */
export class SessionCookieJar {
  private readonly cookies = new Map<string, string>();

  /** Pass it in a client's or a call's `interceptors`. */
  readonly interceptor: Interceptor = (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start: (metadata, _listener, next) => {
        const header = this.cookieHeader();
        if (header !== undefined) metadata.set('cookie', header);
        next(metadata, {
          onReceiveMetadata: (received, nextMetadata) => {
            this.store(received);
            nextMetadata(received);
          },
          onReceiveStatus: (status, nextStatus) => {
            this.store(status.metadata); // a trailers-only response carries the cookie in its trailers
            nextStatus(status);
          },
        });
      },
    });

  /** The `cookie` request header for the stored cookies (`a=1; b=2`), or undefined when there are none. */
  cookieHeader(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  /** The stored value of cookie `name`. */
  get(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** Stores every `set-cookie` of `metadata` (attributes such as Path and Max-Age are not kept). */
  store(metadata: Metadata): void {
    for (const value of metadata.get('set-cookie')) {
      const text = String(value);
      const pair = text.split(';', 1)[0]!;
      const eq = pair.indexOf('=');
      if (eq > 0) this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
  }

  clear(): void {
    this.cookies.clear();
  }
}
