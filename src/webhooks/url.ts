/**
 * Outbound URL rules for webhook endpoints. Always: http(s), no credentials in the URL, at most 2048 characters.
 * Unless `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_URLS, an explicit opt-in): the host must not be, or resolve to, a loopback, private, link-local,
 * CGNAT, multicast or otherwise reserved address. The check runs at registration and again before every attempt
 * (a name can be re-pointed after registration); an egress proxy is still the stronger guard in production.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(net, bits, 'ipv6');

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

/** Throws UrlRejected with a message fit for an API client; returns the parsed URL. */
export async function checkWebhookUrl(raw: string, opts: { allowPrivate: boolean; resolve?: Resolver }): Promise<URL> {
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
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) {
    throw new UrlRejected('url must not point to a loopback or private address');
  }
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw new UrlRejected('url must not point to a loopback or private address');
    return url;
  }
  let addresses: string[];
  try {
    addresses = await (opts.resolve ?? dnsResolver)(host);
  } catch {
    throw new UrlRejected(`url host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new UrlRejected(`url host ${host} does not resolve`);
  if (addresses.some(isPrivateAddress)) throw new UrlRejected('url must not point to a loopback or private address');
  return url;
}
