/**
 * Outbound URL rules for webhook endpoints. Always: http(s), no credentials in the URL, at most 2048 characters.
 * Unless `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_URLS, an explicit opt-in): the host must not be, or resolve to, a loopback, private, link-local,
 * CGNAT, multicast or otherwise reserved address. The check runs at registration, and on every attempt at connect
 * time: the sender connects through `guardedLookup`, so the address judged is the address connected to (a name
 * re-pointed after registration, or a rebinding resolver answering differently per query, gains nothing). An
 * egress proxy is still the stronger guard in production.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  // ::/96 IPv4-compatible (deprecated; ::7f00:1 is 127.0.0.1), ::ffff:0:0:0/96 IPv4-translated, 2002::/16 6to4
  // (embeds an IPv4 address; relays are deprecated), 64:ff9b::/96 and 64:ff9b:1::/48 NAT64 (reach IPv4 through a
  // translator, private ranges included): all refused whole rather than judged by the IPv4 inside
  ['::', 96],
  ['::1', 128],
  ['::ffff:0:0:0', 96],
  ['2002::', 16],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, bits, 'ipv6');

/** Whether an IP literal is loopback, private or reserved (IPv4-mapped IPv6 is judged as its IPv4). */
export function isPrivateAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return blocked.check(mapped[1], 'ipv4');
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family === 6) return blocked.check(ip, 'ipv6');
  return false;
}

export class UrlRejected extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UrlRejected';
  }
}

export type Resolver = (host: string) => Promise<string[]>;
const dnsResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** The default DNS lookup timeout of webhook hosts. */
export const DNS_TIMEOUT_MS = 5_000;

/** Resolve with a deadline: a slow or silent resolver must not hold a worker slot for long. */
export async function resolveWithin(resolve: Resolver, host: string, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      resolve(host),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new UrlRejected(`url host ${host} did not resolve within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A `lookup` for http(s).request: resolves the name (with a deadline) and, unless `allowPrivate`, refuses the
 * connection when any address is private. The socket connects to an address this function returned, so the check
 * and the connection see the same answer. (IP-literal hosts are not looked up: check them before connecting.)
 */
export function guardedLookup(opts: { allowPrivate: boolean; resolve?: Resolver; timeoutMs?: number }): LookupFunction {
  return (hostname, options, callback) => {
    const host = hostname.replace(/^\[|\]$/g, '');
    resolveWithin(opts.resolve ?? dnsResolver, host, opts.timeoutMs ?? DNS_TIMEOUT_MS)
      .then((addresses) => {
        if (addresses.length === 0) throw new UrlRejected(`url host ${host} does not resolve`);
        if (!opts.allowPrivate && addresses.some(isPrivateAddress)) {
          throw new UrlRejected('url must not point to a loopback or private address');
        }
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const list = addresses.map((address) => ({ address, family: isIP(address) })).filter((a) => a.family !== 0 && (wanted === 0 || a.family === wanted));
        if (list.length === 0) throw new UrlRejected(`url host ${host} has no IPv${wanted} address`);
        if (options.all) (callback as unknown as (e: null, a: typeof list) => void)(null, list);
        else callback(null, list[0].address, list[0].family);
      })
      .catch((err: Error) => callback(err instanceof UrlRejected ? err : new UrlRejected(`url host ${host} does not resolve`), '', 0));
  };
}

/** Throws UrlRejected with a message fit for an API client; returns the parsed URL. */
export async function checkWebhookUrl(
  raw: string,
  opts: {
    allowPrivate: boolean;
    resolve?: Resolver;
    dnsTimeoutMs?: number /** false: the static rules only (the sender checks at connect time) */;
    dns?: boolean;
  },
): Promise<URL> {
  if (raw.length > 2048) throw new UrlRejected('url must be at most 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRejected('url is not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UrlRejected('url must use http or https');
  if (url.username || url.password) throw new UrlRejected('url must not contain credentials');
  if (opts.allowPrivate) return url;

  // a fully qualified name's trailing dot ("localhost.") names the same host
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) {
    throw new UrlRejected('url must not point to a loopback or private address');
  }
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw new UrlRejected('url must not point to a loopback or private address');
    return url;
  }
  if (opts.dns === false) return url;
  let addresses: string[];
  try {
    addresses = await resolveWithin(opts.resolve ?? dnsResolver, host, opts.dnsTimeoutMs ?? DNS_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof UrlRejected) throw err;
    throw new UrlRejected(`url host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new UrlRejected(`url host ${host} does not resolve`);
  if (addresses.some(isPrivateAddress)) throw new UrlRejected('url must not point to a loopback or private address');
  return url;
}
