/** A contract call of a leg: its function signature parsed, its JSON arguments coerced by ABI type and encoded. */
import { encodeFunctionData, parseAbiItem, type AbiFunction, type AbiParameter, type Hex } from 'viem';
import { address, fail, FORBIDDEN, text } from './fields.js';

function parseFunction(sig: string, field: string): AbiFunction {
  const s = text(sig, field, 1024).trim();
  try {
    const item = parseAbiItem(s.startsWith('function ') ? s : `function ${s}`) as AbiFunction;
    if (item.type !== 'function') throw new Error('not a function');
    return item;
  } catch (e) {
    fail(field, `not a function signature (${(e as Error).message.split('\n')[0]})`);
  }
}

/** Coerce JSON args to viem values by ABI type (integers from decimal strings); returns [viem, canonical JSON]. */
function coerceArg(p: AbiParameter, v: unknown, field: string): [unknown, unknown] {
  const t = p.type;
  const arr = /^(.*)\[(\d*)\]$/.exec(t);
  if (arr) {
    if (!Array.isArray(v)) fail(field, `expected an array for ${t}`);
    if (arr[2] && v.length !== Number(arr[2])) fail(field, `expected ${arr[2]} elements for ${t}`);
    const inner = { ...p, type: arr[1]! } as AbiParameter;
    const out = v.map((x, i) => coerceArg(inner, x, `${field}[${i}]`));
    return [out.map((o) => o[0]), out.map((o) => o[1])];
  }
  if (t === 'tuple') {
    const comps = (p as { components?: readonly AbiParameter[] }).components ?? [];
    const vals = Array.isArray(v) ? v : comps.map((c) => (v as Record<string, unknown> | null)?.[c.name ?? '']);
    if (!Array.isArray(v) && (typeof v !== 'object' || v === null)) fail(field, 'expected an array or object for a tuple');
    if (vals.length !== comps.length) fail(field, `expected ${comps.length} tuple components`);
    const out = comps.map((c, i) => coerceArg(c, vals[i], `${field}.${c.name || i}`));
    return [out.map((o) => o[0]), out.map((o) => o[1])];
  }
  const int = /^(u?)int(\d*)$/.exec(t);
  if (int) {
    const signed = !int[1];
    const bits = Number(int[2] || 256);
    let b: bigint;
    if (typeof v === 'bigint') b = v;
    else if (typeof v === 'number') {
      if (!Number.isInteger(v)) fail(field, `expected an integer for ${t}, got ${v}`);
      if (!Number.isSafeInteger(v)) fail(field, 'integers beyond 2^53 must be strings');
      b = BigInt(v);
    } else if (typeof v === 'string' && /^-?(0|[1-9][0-9]{0,77})$/.test(v)) b = BigInt(v);
    else fail(field, `expected an integer (decimal string) for ${t}`);
    const [min, max] = signed ? [-(1n << BigInt(bits - 1)), (1n << BigInt(bits - 1)) - 1n] : [0n, (1n << BigInt(bits)) - 1n];
    if (b < min || b > max) fail(field, `${b < 0n && !signed ? 'negative value' : 'out of range'} for ${t} (${min} to ${max})`);
    return [b, b.toString()];
  }
  if (t === 'bool') {
    if (typeof v !== 'boolean') fail(field, 'expected a boolean');
    return [v, v];
  }
  if (t === 'address') {
    const a = address(v, field);
    return [a, a];
  }
  if (t === 'string') {
    if (typeof v !== 'string' || FORBIDDEN.test(v)) fail(field, 'expected a string without <, >, &, U+2028, U+2029');
    return [v, v];
  }
  if (/^bytes\d*$/.test(t)) {
    if (typeof v !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(v)) fail(field, `expected hex bytes for ${t}`);
    const n = t === 'bytes' ? undefined : Number(t.slice(5));
    if (n !== undefined && v.length !== 2 + 2 * n) fail(field, `expected ${n} bytes for ${t}`);
    const h = v.toLowerCase();
    return [h, h];
  }
  fail(field, `unsupported ABI type ${t}`);
}

export function encodeCall(functionSignature: string, args: readonly unknown[], field = 'contractCall'): { data: Hex; args: unknown[] } {
  const fn = parseFunction(functionSignature, `${field}.functionSignature`);
  if (args.length !== fn.inputs.length) fail(`${field}.args`, `expected ${fn.inputs.length} arguments, got ${args.length}`);
  const out = fn.inputs.map((p, i) => coerceArg(p, args[i], `${field}.args[${i}]`));
  try {
    const data = encodeFunctionData({ abi: [fn], functionName: fn.name, args: out.map((o) => o[0]) as never });
    return { data, args: out.map((o) => o[1]) };
  } catch (e) {
    fail(`${field}.args`, (e as Error).message.split('\n')[0]!);
  }
}
