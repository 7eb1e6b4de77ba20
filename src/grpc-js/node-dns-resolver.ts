import { lookup } from 'node:dns/promises';
import type { DnsResolver } from '../xds/resolver/dependency-manager.js';

/** LOGICAL_DNS names (A37) resolved with Node's resolver: every IPv4 and IPv6 address, in the order it gives. */
export const nodeDnsResolver: DnsResolver = {
  async resolve(hostname: string): Promise<readonly string[]> {
    const addresses = await lookup(hostname, { all: true, verbatim: true });
    return addresses.map((a) => a.address);
  },
};
