// gRFC A47 "xds Resolver Changes": the Listener a channel's `xds:` target subscribes to.

import type { XdsBootstrap } from './bootstrap.js';
import { percentEncodePath, XDSTP_SCHEME } from './xdstp-name.js';

/** A47: an `xds://authority/…` target whose authority the bootstrap's `authorities` lacks. */
export class UnknownXdsAuthorityError extends Error {
  constructor(readonly authority: string) {
    super(`xDS authority "${authority}" is not in the bootstrap's "authorities" (gRFC A47)`);
    this.name = 'UnknownXdsAuthorityError';
  }
}

/**
 * The Listener name of the target `xds://<targetAuthority>/<name>` (`targetAuthority` undefined or '' for
 * `xds:///<name>`). With an authority: that authority's template, the name percent-encoded; without: the
 * top-level template, the name percent-encoded only when the template is an xdstp: one. Throws
 * UnknownXdsAuthorityError for an authority the bootstrap lacks.
 */
export function clientListenerResourceName(
  bootstrap: XdsBootstrap,
  targetAuthority: string | undefined,
  name: string,
): string {
  if (targetAuthority !== undefined && targetAuthority !== '') {
    const authority = bootstrap.authorities.get(targetAuthority);
    if (!authority) throw new UnknownXdsAuthorityError(targetAuthority);
    return expandTemplate(authority.clientListenerResourceNameTemplate, percentEncodePath(name));
  }
  const template = bootstrap.clientDefaultListenerResourceNameTemplate;
  return expandTemplate(template, template.startsWith(XDSTP_SCHEME) ? percentEncodePath(name) : name);
}

/** Every "%s" of the template replaced (A47: "the token", which a template may also leave out). */
function expandTemplate(template: string, value: string): string {
  return template.split('%s').join(value);
}
