// Where a bundle link may lead. The link comes from the platform's answer: a hostile or compromised
// answer could point the operator or a pipeline at what only they can reach (loopback, link-local
// and the cloud metadata service, the cluster's private network and API server). Such a link is
// refused before any connection: a literal address is checked before the request, a name when it
// resolves (every address it resolves to, the ones connected to), so DNS cannot swap one in later.
// Allowed anyway: the admin API's own host (the user named it and sends it the key already), and
// anything with the opt-in for a private mirror (CLI --allow-private-bundle-links).
import type { LookupAddress, LookupAllOptions } from 'node:dns';
import type { BlockList, LookupFunction } from 'node:net';
import { describeLink } from '../redact.ts';
import { ALLOW_PRIVATE_FLAG, BundleError } from './errors.ts';

export interface LinkDestinations {
  /** Links may lead to private, loopback and link-local addresses too (a private mirror). */
  allowPrivate: boolean;
  /** The admin API's host name (as its URL spells it): links there are always allowed. */
  apiHost?: string;
}

/**
 * Addresses that are not on the public internet (IANA special-purpose registries), one list per
 * family: a BlockList checks IPv4 addresses against IPv6 rules too (as IPv4-mapped addresses).
 */
const NOT_PUBLIC_V4 = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const;
const NOT_PUBLIC_V6 = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::ffff:0:0', 96], // IPv4-mapped: the IPv4 address decides, never a way around it
  ['64:ff9b::', 96], // NAT64 of IPv4 addresses
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const;

// node:net and node:dns on first use (process.getBuiltinModule, as download.ts does): loading this
// module, as the operator does at start, costs neither.
const net = () => process.getBuiltinModule('node:net');
let blockLists: { v4: BlockList; v6: BlockList } | undefined;
function notPublic(): { v4: BlockList; v6: BlockList } {
  if (blockLists) return blockLists;
  const v4 = new (net().BlockList)();
  const v6 = new (net().BlockList)();
  for (const [address, prefix] of NOT_PUBLIC_V4) v4.addSubnet(address, prefix, 'ipv4');
  for (const [address, prefix] of NOT_PUBLIC_V6) v6.addSubnet(address, prefix, 'ipv6');
  blockLists = { v4, v6 };
  return blockLists;
}

/** Whether `address` (an IP literal) is a public internet address. */
export function isPublicAddress(address: string): boolean {
  const family = net().isIP(address);
  if (family === 0) return false;
  const lists = notPublic();
  return family === 4 ? !lists.v4.check(address, 'ipv4') : !lists.v6.check(address, 'ipv6');
}

function refused(url: string, address: string): BundleError {
  return new BundleError(
    'LinkDestinationRefused',
    `the bundle link ${describeLink(url)} leads to ${address}, an address that is not public (loopback, private, ` +
      `link-local or reserved): not connected to. A private mirror is allowed with ${ALLOW_PRIVATE_FLAG}`,
  );
}

/** `[::1]` → `::1`: URL keeps the brackets of an IPv6 host. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/** The policy for links handed out by the admin API at `apiBaseUrl`: its own host, public addresses, or anything. */
export function linkDestinationsFor(apiBaseUrl: string, allowPrivate: boolean): LinkDestinations {
  return { allowPrivate, apiHost: hostOf(new URL(apiBaseUrl)) };
}

/**
 * What a request to `link` needs so that it never connects where `destinations` forbids: nothing
 * (allowed as it is), or a `lookup` that refuses a name resolving to an address not public. Throws
 * (before any connection) for a literal address that is not public.
 */
export function guardLink(link: string, destinations: LinkDestinations): { lookup?: LookupFunction } {
  const url = new URL(link);
  const host = hostOf(url);
  if (destinations.allowPrivate || (destinations.apiHost !== undefined && host === destinations.apiHost))
    return {};
  if (net().isIP(host) !== 0) {
    if (!isPublicAddress(host)) throw refused(link, host);
    return {};
  }
  const lookup = ((hostname: string, options: LookupAllOptions, callback) => {
    process
      .getBuiltinModule('node:dns')
      .lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
        if (error) return callback(error, []);
        const bad = addresses.find((a) => !isPublicAddress(a.address));
        if (bad) return callback(refused(link, bad.address), []);
        if (options.all) return callback(null, addresses);
        const first = addresses[0] as LookupAddress;
        (callback as unknown as (e: null, address: string, family: number) => void)(
          null,
          first.address,
          first.family,
        );
      });
  }) as LookupFunction;
  return { lookup };
}
