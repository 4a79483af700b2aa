#!/usr/bin/env node
// The package registry reachable here serves only the linux-x64 builds of platform-specific optional packages
// (anvil, swc). npm then leaves the other platforms out of package-lock.json, and `npm ci` refuses the lock as
// "out of sync". A lock made against the full registry lists them, marked with their os/cpu, and npm skips them
// on other platforms without fetching. This script adds those entries. Run it after `npm install`.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const pkgs = lock.packages;
const OS = { darwin: 'darwin', linux: 'linux', win32: 'win32', freebsd: 'freebsd', android: 'android' };
const CPU = { amd64: 'x64', x64: 'x64', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64', s390x: 's390x', ia32: 'ia32' };
let added = 0;
for (const [where, meta] of Object.entries(pkgs)) {
  for (const [name, spec] of Object.entries(meta.optionalDependencies ?? {})) {
    // npm resolves from the nearest node_modules upwards; present anywhere on that path = fine
    const parts = where ? where.split('/node_modules/') : [''];
    const candidates = [];
    for (let i = parts.length; i >= 0; i--) {
      const base = parts.slice(0, i).join('/node_modules/');
      candidates.push(base ? `${base}/node_modules/${name}` : `node_modules/${name}`);
    }
    if (candidates.some((c) => pkgs[c])) continue;
    const tail = name.split('/').pop();
    const os = Object.keys(OS).find((o) => tail.includes(`-${o}`));
    const cpu = Object.keys(CPU).find((c) => new RegExp(`-${c}(-|$)`).test(tail));
    if (!os || !cpu) continue;
    const libc = /-gnu/.test(tail) ? ['glibc'] : /-musl/.test(tail) ? ['musl'] : undefined;
    pkgs[`node_modules/${name}`] = {
      version: spec.replace(/^[\^~=]/, ''),
      optional: true,
      ...(where && pkgs[where]?.dev ? { dev: true } : {}),
      os: [OS[os]],
      cpu: [CPU[cpu]],
      ...(libc ? { libc } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform-specific optional entries to package-lock.json`);
