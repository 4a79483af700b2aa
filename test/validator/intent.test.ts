/** The canonical intent module: build, encode, parse back from stored bytes, and every refusal path. */
import { describe, expect, it } from 'vitest';
import { encodeFunctionData, keccak256, parseAbi, stringToHex, type Address, type Hex } from 'viem';
import { anchorId, canonicalJson, executionCommitment, operationId } from '../../src/chain/formulas.js';
import {
  IntentError,
  buildIntent,
  encodeCall,
  intentEntries,
  legsForChain,
  parseIntentEntries,
  planIntentAnchor,
  type IntentInput,
} from '../../src/protocol/intent/index.js';

const ACCOUNT = '0x1111111111111111111111111111111111111111' as Address;
const TARGET = '0x2222222222222222222222222222222222222222' as Address;
const BOB = '0x3333333333333333333333333333333333333333' as Address;
const ANCHOR = '0x4444444444444444444444444444444444444444' as Address;
const arg = keccak256(stringToHex('x'));

function input(over: Partial<IntentInput> = {}): IntentInput {
  return {
    intentId: 'f1d2c3b4-0000-4000-8000-000000000001',
    adiUrl: 'acc://alice.acme',
    createdAt: 1_800_000_000,
    expiresAt: 1_800_005_700,
    nonce: 'pgw_1_00',
    legs: [
      {
        legId: 'call',
        chain: 'ethereum-sepolia',
        chainId: 11155111,
        fromAddress: ACCOUNT,
        toAddress: TARGET,
        amount: '0',
        contractCall: {
          target: TARGET,
          value: '7',
          functionSignature: 'record(bytes32)',
          args: [arg],
          expectedEvents: [{ contract: TARGET, event: 'Called(address,uint256,bytes32)' }],
          expectedState: [{ account: TARGET, slot: `0x${'0'.repeat(64)}`, value: `0x${'0'.repeat(63)}1` }],
        },
      },
      { legId: 'pay', chain: 'polygon-amoy', chainId: '80002', fromAddress: ACCOUNT, toAddress: BOB, amount: 10n ** 18n },
      { legId: 'pay2', chain: 'ethereum-sepolia', chainId: 11155111n, fromAddress: ACCOUNT, toAddress: BOB, amount: '5' },
    ],
    ...over,
  };
}

const expectIntentError = (f: () => unknown, field: RegExp) => {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(IntentError);
  expect((err as IntentError).message).toMatch(field);
};

describe('canonical intent', () => {
  it('builds four canonical parts; operation id = formulas.operationId over the stored blobs', () => {
    const i = buildIntent(input());
    expect(intentEntries(i)).toHaveLength(4);
    for (const p of i.parts) expect(canonicalJson(JSON.parse(p))).toBe(p);
    expect(i.operationId).toBe(operationId(i.parts.map((p) => JSON.parse(p))));
    expect(i.blobs.intentData).toMatchObject({ kind: 'PGW_INTENT', version: '1', adi_url: 'acc://alice.acme' });
    expect(i.blobs.replayData).toEqual({ nonce: 'pgw_1_00', created_at: 1_800_000_000, expires_at: 1_800_005_700 });
    expect(i.keyBook).toBe('acc://alice.acme/book');
    expect(i.blobs.crossChainData.legs[1]!.amount_wei).toBe('1000000000000000000');
  });

  it('derives calldata and the execution commitment per leg (contract call and native transfer)', () => {
    const i = buildIntent(input());
    const call = i.legs[0]!;
    const data = encodeFunctionData({ abi: parseAbi(['function record(bytes32)']), functionName: 'record', args: [arg] });
    expect(call).toMatchObject({ target: TARGET, value: 7n, data, isContractCall: true });
    expect(call.executionCommitment).toBe(executionCommitment({ chainId: 11155111n, target: TARGET, value: 7n, data }));
    expect(call.expectedEvents[0]!.topic0).toBe(keccak256(stringToHex('Called(address,uint256,bytes32)')));
    const pay = i.legs[1]!;
    expect(pay).toMatchObject({ target: BOB, value: 10n ** 18n, data: '0x', chainId: 80002n });
    expect(pay.executionCommitment).toBe(executionCommitment({ chainId: 80002n, target: BOB, value: 10n ** 18n, data: '0x' }));
  });

  it('parses back from stored bytes (strings, raw bytes or hex) to the same intent', () => {
    const i = buildIntent(input());
    for (const parts of [i.parts, i.parts.map((p) => new TextEncoder().encode(p)), i.parts.map((p) => Buffer.from(p).toString('hex'))]) {
      const back = parseIntentEntries(parts as never);
      expect(back.operationId).toBe(i.operationId);
      expect(back.parts).toEqual(i.parts);
      expect(back.legs).toEqual(i.legs);
    }
  });

  it('refuses a stored leg changed by one byte, naming the leg and field', () => {
    const i = buildIntent(input());
    const tamper = (from: string, to: string) => {
      expect(i.parts[1]).toContain(from);
      return [i.parts[0], i.parts[1].replace(from, to), i.parts[2], i.parts[3]];
    };
    expectIntentError(() => parseIntentEntries(tamper('"amount_wei":"5"', '"amount_wei":"6"')), /legs\[2\]\.execution\.value: leg pay2/);
    expectIntentError(() => parseIntentEntries(tamper('"chain_id":"80002"', '"chain_id":"80003"')), /legs\[1\]\.execution\.execution_commitment/);
    const c = i.blobs.crossChainData.legs[0]!.execution.execution_commitment;
    expectIntentError(() => parseIntentEntries(tamper(c, `${c.slice(0, -1)}${c.endsWith('0') ? '1' : '0'}`)), /legs\[0\]\.execution\.execution_commitment/);
    expectIntentError(() => parseIntentEntries(tamper(arg.slice(2), `${arg.slice(2, -1)}0`)), /legs\[0\]\.execution\.data/);
  });

  it('refuses non-canonical, malformed or foreign parts', () => {
    const i = buildIntent(input());
    expectIntentError(() => parseIntentEntries(i.parts.slice(0, 3)), /4 parts/);
    expectIntentError(() => parseIntentEntries([i.parts[0].replace('{', '{ '), i.parts[1], i.parts[2], i.parts[3]]), /part\[0\]: not in canonical form/);
    expectIntentError(() => parseIntentEntries(['{', i.parts[1], i.parts[2], i.parts[3]]), /part\[0\]: not JSON/);
    const b0 = { ...i.blobs.intentData, kind: 'OTHER' };
    expectIntentError(() => parseIntentEntries([canonicalJson(b0), i.parts[1], i.parts[2], i.parts[3]]), /intentData.kind/);
    const extra = { ...i.blobs.governanceData, extra: 1 };
    expectIntentError(() => parseIntentEntries([i.parts[0], i.parts[1], canonicalJson(extra), i.parts[3]]), /governanceData.extra: unknown field/);
  });

  it('validates input with leg-specific messages', () => {
    const legs = input().legs;
    expectIntentError(() => buildIntent(input({ legs: [] })), /legs: at least one/);
    expectIntentError(() => buildIntent(input({ legs: [{ ...legs[1]!, amount: '-1' }] })), /legs\[0\]\.amount/);
    expectIntentError(
      () => buildIntent(input({ legs: [{ ...legs[0]!, contractCall: { ...legs[0]!.contractCall!, functionSignature: '' } }] })),
      /legs\[0\]\.contractCall\.functionSignature/,
    );
    expectIntentError(
      () => buildIntent(input({ legs: [{ ...legs[0]!, contractCall: { ...legs[0]!.contractCall!, args: [] } }] })),
      /legs\[0\]\.contractCall\.args: expected 1 arguments/,
    );
    expectIntentError(() => buildIntent(input({ legs: [legs[0]!, { ...legs[1]!, fromAddress: BOB }] })), /legs\[1\]\.fromAddress/);
    expectIntentError(() => buildIntent(input({ legs: [legs[1]!, { ...legs[1]!, chain: 'polygon-amoy' }] })), /duplicate leg id/);
    expectIntentError(() => buildIntent(input({ intentId: 'a<b' })), /intentId/);
    expectIntentError(() => buildIntent(input({ expiresAt: 1_700_000_000 })), /expiresAt/);
    expectIntentError(() => buildIntent(input({ adiUrl: 'acc://alice.acme/data' })), /adiUrl/);
    // two expectations for one slot (the second in another case spelling): the validators would attest both, the
    // offline verifier counts proven slots and could never accept the bundle
    const st = legs[0]!.contractCall!.expectedState![0]!;
    const twice = [st, { ...st, account: st.account.toLowerCase() as Address, value: `0x${'0'.repeat(63)}2` as Hex }];
    expectIntentError(
      () => buildIntent(input({ legs: [{ ...legs[0]!, contractCall: { ...legs[0]!.contractCall!, expectedState: twice } }] })),
      /legs\[0\]\.contractCall\.expectedState\[1\]\.slot: duplicate of expectedState\[0\]/,
    );
  });

  it('encodes typed arguments from JSON (integers as strings, arrays, tuples)', () => {
    const { data, args } = encodeCall('transfer(address,uint256)', [BOB, '1000000000000000000000']);
    expect(data).toBe(encodeFunctionData({ abi: parseAbi(['function transfer(address,uint256)']), functionName: 'transfer', args: [BOB, 10n ** 21n] }));
    expect(args).toEqual([BOB, '1000000000000000000000']);
    const t = encodeCall('f((uint8 a, bool b)[],int256,string)', [[{ a: 1, b: true }, [2, false]], '-5', 'hi']);
    expect(t.args).toEqual([
      [
        ['1', true],
        ['2', false],
      ],
      '-5',
      'hi',
    ]);
    expect(() => encodeCall('f(uint256)', ['-1'])).toThrow(IntentError);
    expect(() => encodeCall('f(bytes32)', ['0x12'])).toThrow(/32 bytes/);
    expect(() => encodeCall('not a signature', [])).toThrow(IntentError);
  });

  it('refuses integer args that are fractions, out of the type range or absurdly long, naming the argument', () => {
    const at = (sig: string, v: unknown, re: RegExp) => expectIntentError(() => encodeCall(sig, [0, v], 'c'), re);
    at('f(uint8,uint256)', 1.5, /c\.args\[1\]: expected an integer for uint256, got 1\.5/);
    at('f(uint8,uint256)', Infinity, /c\.args\[1\]: expected an integer/);
    at('f(uint8,int8)', 128, /c\.args\[1\]: out of range for int8 \(-128 to 127\)/);
    at('f(uint8,int8)', '-129', /c\.args\[1\]: out of range for int8/);
    at('f(uint8,uint8)', 256, /c\.args\[1\]: out of range for uint8/);
    at('f(uint8,uint8)', -1, /c\.args\[1\]: negative value for uint8/);
    at('f(uint8,uint256)', `1${'0'.repeat(78)}`, /c\.args\[1\]: expected an integer/);
    at('f(uint8,uint256)', (1n << 256n).toString(), /c\.args\[1\]: out of range for uint256/);
    expect(encodeCall('f(int8,uint256)', [-128, ((1n << 256n) - 1n).toString()]).args).toEqual(['-128', ((1n << 256n) - 1n).toString()]);
    const t0 = performance.now();
    expectIntentError(
      () => buildIntent(input({ legs: [{ ...input().legs[1]!, amount: '9'.repeat(1_000_000) }] })),
      /legs\[0\]\.amount: does not fit in uint256/,
    );
    expect(performance.now() - t0).toBeLessThan(100);
  });

  it('refuses a mixed-case address whose EIP-55 checksum is wrong; all-lower and all-upper hex carry none', () => {
    const good = '0x52908400098527886E0F7030069857D2E4169EE7';
    const typo = '0x52908400098527886E0F7030069857D2E4169Ee7';
    const legs = input().legs;
    expect(buildIntent(input({ legs: [{ ...legs[1]!, toAddress: good.toLowerCase() as Address }] })).legs[0]!.to).toBe(good);
    expect(buildIntent(input({ legs: [{ ...legs[1]!, toAddress: `0x${good.slice(2).toUpperCase()}` as Address }] })).legs[0]!.to).toBe(good);
    expectIntentError(() => buildIntent(input({ legs: [{ ...legs[1]!, toAddress: typo as Address }] })), /legs\[0\]\.toAddress: .*EIP-55/);
    expectIntentError(() => encodeCall('f(address)', [typo], 'c'), /c\.args\[0\]: .*EIP-55/);
  });

  it('refuses at build time an intent whose legs would not fit one ledger entry part (so it could never be parsed back)', () => {
    const legs = input().legs;
    const big = {
      ...legs[0]!,
      contractCall: { ...legs[0]!.contractCall!, functionSignature: 'f(string)', args: ['a'.repeat(70_000)], expectedEvents: [], expectedState: [] },
    };
    expectIntentError(
      () => buildIntent(input({ legs: [legs[1]!, big] })),
      /legs\[1\]\.contractCall\.args: the legs take \d+ bytes in the intent, more than the 65536/,
    );
    const fits = { ...big, contractCall: { ...big.contractCall, args: ['a'.repeat(20_000)] } };
    const i = buildIntent(input({ legs: [legs[1]!, fits] }));
    expect(parseIntentEntries(i.parts).operationId).toBe(i.operationId);
  });

  it('plans the anchor of one chain: its legs in order, bound to account, ADI, operation id and ledger tx', () => {
    const i = buildIntent(input());
    expect(legsForChain(i, 11155111n).map((l) => l.legId)).toEqual(['call', 'pay2']);
    const ledgerTxHash = 'ab'.repeat(32);
    const plan = planIntentAnchor(i, { chainId: 11155111n, proofAnchor: ANCHOR, ledgerTxHash });
    expect(plan.leafCount).toBe(2n);
    expect(plan.commitments).toEqual([i.legs[0]!.executionCommitment, i.legs[2]!.executionCommitment]);
    expect(plan.anchorId).toBe(
      anchorId({
        chainId: 11155111n,
        anchor: ANCHOR,
        commitmentRoot: plan.commitmentRoot,
        operationId: i.operationId,
        ledgerTxHash: `0x${ledgerTxHash}` as Hex,
        leafCount: 2n,
      }),
    );
    expect(() => planIntentAnchor(i, { chainId: 1n, proofAnchor: ANCHOR, ledgerTxHash })).toThrow(/no leg on chain 1/);
  });
});
