/**
 * Outbound URL rules for webhook endpoints. Always: http(s), no credentials in the URL, at most 2048 characters.
 * The host must not be, or resolve to, a loopback, private, link-local, CGNAT, multicast or otherwise reserved
 * address, except as `allowPrivate` (PrivateUrls) lets it: WEBHOOK_ALLOW_PRIVATE_URLS, an explicit opt-in for a
 * devnet whose receivers run on the same machine, allows loopback receivers only (127.0.0.0/8, ::1, localhost);
 * WEBHOOK_PRIVATE_URL_ALLOWLIST names any further hosts or CIDRs. Link-local (169.254.169.254, the cloud metadata
 * address) and the other private ranges stay refused unless listed. The check runs at registration, and on every attempt at connect
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

function inList(list: BlockList, ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return list.check(mapped[1], 'ipv4');
  const family = isIP(ip);
  if (family === 4) return list.check(ip, 'ipv4');
  if (family === 6) return list.check(ip, 'ipv6');
  return false;
}

/** Whether an IP literal is loopback, private or reserved (IPv4-mapped IPv6 is judged as its IPv4). */
export function isPrivateAddress(ip: string): boolean {
  return inList(blocked, ip);
}

/**
 * Which private receivers are allowed: false none; true loopback only (127.0.0.0/8, ::1, localhost); `{ allow }`
 * loopback and the listed entries, each an IP address, a CIDR (`10.1.2.0/24`, `fd00::/64`) or a host name (any
 * address it resolves to is then accepted).
 */
export type PrivateUrls = boolean | { allow: readonly string[] };

interface PrivatePolicy {
  nets: BlockList;
  names: Set<string>;
}

function normaliseHost(host: string): string {
  return host
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
}

/** An allow-list entry as `{ net, bits, family }` (an address is a /32 or /128), a host name, or undefined when malformed. */
export function parseAllowEntry(raw: string): { net: string; bits: number; family: 'ipv4' | 'ipv6' } | { name: string } | undefined {
  const entry = raw.trim();
  const [addr, bitsText, extra] = entry.split('/');
  const family = isIP(addr);
  if (family !== 0) {
    const max = family === 4 ? 32 : 128;
    const bits = bitsText === undefined ? max : Number(bitsText);
    if (extra !== undefined || !Number.isInteger(bits) || bits < 0 || bits > max || (bitsText !== undefined && !/^\d+$/.test(bitsText))) return undefined;
    return { net: addr, bits, family: family === 4 ? 'ipv4' : 'ipv6' };
  }
  const name = normaliseHost(entry);
  return /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(name) ? { name } : undefined;
}

function privatePolicy(p: PrivateUrls): PrivatePolicy | undefined {
  if (p === false) return undefined;
  const nets = new BlockList();
  nets.addSubnet('127.0.0.0', 8, 'ipv4');
  nets.addAddress('::1', 'ipv6');
  const names = new Set<string>();
  for (const raw of p === true ? [] : p.allow) {
    const entry = parseAllowEntry(raw);
    if (!entry) continue; // the configuration refuses malformed entries at start-up
    if ('name' in entry) names.add(entry.name);
    else nets.addSubnet(entry.net, entry.bits, entry.family);
  }
  return { nets, names };
}

function addressAllowed(ip: string, policy: PrivatePolicy | undefined): boolean {
  return !isPrivateAddress(ip) || (policy !== undefined && inList(policy.nets, ip));
}

/** Whether a webhook may connect to this IP literal under `allowPrivate`. */
export function privateAddressAllowed(ip: string, allowPrivate: PrivateUrls): boolean {
  return addressAllowed(ip, privatePolicy(allowPrivate));
}

function refusal(policy: PrivatePolicy | undefined): UrlRejected {
  return new UrlRejected(
    policy
      ? 'url must not point to a private address: this gateway allows loopback receivers only, and hosts its operator lists'
      : 'url must not point to a loopback or private address',
  );
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
export function guardedLookup(opts: { allowPrivate: PrivateUrls; resolve?: Resolver; timeoutMs?: number }): LookupFunction {
  const policy = privatePolicy(opts.allowPrivate);
  return (hostname, options, callback) => {
    const host = hostname.replace(/^\[|\]$/g, '');
    const listedName = policy?.names.has(normaliseHost(host)) ?? false;
    resolveWithin(opts.resolve ?? dnsResolver, host, opts.timeoutMs ?? DNS_TIMEOUT_MS)
      .then((addresses) => {
        if (addresses.length === 0) throw new UrlRejected(`url host ${host} does not resolve`);
        if (!listedName && addresses.some((a) => !addressAllowed(a, policy))) throw refusal(policy);
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
    allowPrivate: PrivateUrls;
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
  const policy = privatePolicy(opts.allowPrivate);

  // a fully qualified name's trailing dot ("localhost.") names the same host
  const host = normaliseHost(url.hostname);
  if (policy?.names.has(host)) return url; // listed by the operator: whatever it resolves to
  const loopbackName = host === 'localhost' || host.endsWith('.localhost');
  if ((loopbackName && !policy) || host.endsWith('.local') || host.endsWith('.internal')) throw refusal(policy);
  if (isIP(host)) {
    if (!addressAllowed(host, policy)) throw refusal(policy);
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
  if (addresses.some((a) => !addressAllowed(a, policy))) throw refusal(policy);
  return url;
}
