/** Governance operations: kinds, field validation and the quorum-reachability guard (pure functions). */
import { describe, expect, it } from 'vitest';
import {
  authorityQuorumProblem,
  governanceBody,
  GovernanceInputError,
  keyPageOps,
  keyPageQuorumProblem,
  operationsKind,
  type GovernanceOperation,
} from '../../src/governance/operations.js';

const h = (c: string) => c.repeat(64);
const page = (keys: string[], acceptThreshold: number, delegates: string[] = []) => ({
  acceptThreshold,
  keys: [...keys.map((k) => ({ publicKeyHash: h(k), lastUsedOn: 0 })), ...delegates.map((d) => ({ delegate: d, lastUsedOn: 0 }))],
});
const problem = (p: ReturnType<typeof page>, ops: GovernanceOperation[]) => keyPageQuorumProblem(p, keyPageOps(ops));

describe('operationsKind', () => {
  it('one kind per request; mixing names the kinds', () => {
    expect(operationsKind([{ type: 'add_key' }, { type: 'set_threshold' }])).toBe('key_page');
    expect(operationsKind([{ type: 'add_authority' }])).toBe('authority');
    expect(operationsKind([{ type: 'create_key_page' }])).toBe('create_key_page');
    expect(() => operationsKind([{ type: 'add_key' }, { type: 'remove_authority' }])).toThrow(/key_page, authority/);
    expect(() => operationsKind([])).toThrow(/^operations: at least one/);
    expect(() => operationsKind([{ type: 'nope' as never }])).toThrow(/^operations\[0\]\.type: unknown operation type/);
  });
});

describe('field validation names the field', () => {
  const field = (ops: GovernanceOperation[]) => {
    try {
      governanceBody(operationsKind(ops), ops);
    } catch (e) {
      if (e instanceof GovernanceInputError) return e.field;
      throw e;
    }
    return undefined;
  };
  it.each([
    [[{ type: 'add_key', public_key_hash: 'abc' }], 'operations[0].public_key_hash'],
    [[{ type: 'add_key' }], 'operations[0].public_key_hash'],
    [
      [
        { type: 'add_key', public_key_hash: h('a') },
        { type: 'set_threshold', threshold: 0 },
      ],
      'operations[1].threshold',
    ],
    [[{ type: 'set_threshold', threshold: 1.5 }], 'operations[0].threshold'],
    [[{ type: 'add_delegate' }], 'operations[0].delegate_url'],
    [[{ type: 'add_authority', authority_url: 'not a url' }], 'operations[0].authority_url'],
    [[{ type: 'create_key_page', public_key_hashes: [] }], 'operations[0].public_key_hashes'],
  ] as [GovernanceOperation[], string][])('%j → %s', (ops, expected) => {
    expect(field(ops)).toBe(expected);
  });
  it('valid operations build the ledger body', () => {
    expect(
      governanceBody('key_page', [
        { type: 'add_key', public_key_hash: h('a') },
        { type: 'set_threshold', threshold: 2 },
      ]).type,
    ).toBeDefined();
    expect(field([{ type: 'add_delegate', delegate_url: 'acc://x.acme/book' }])).toBeUndefined();
  });
});

describe('keyPageQuorumProblem', () => {
  it('threshold above the number of entries is refused', () => {
    expect(problem(page(['a', 'b'], 1), [{ type: 'set_threshold', threshold: 3 }])).toMatch(/threshold 3 is above the 2 key/);
    expect(problem(page(['a', 'b'], 1), [{ type: 'set_threshold', threshold: 2 }])).toBeNull();
    expect(
      problem(page(['a'], 1), [
        { type: 'add_key', public_key_hash: h('b') },
        { type: 'set_threshold', threshold: 2 },
      ]),
    ).toBeNull();
  });
  it('removing the last entry is refused; a delegate counts as an entry', () => {
    expect(problem(page(['a'], 1), [{ type: 'remove_key', public_key_hash: h('a') }])).toMatch(/last key/);
    expect(problem(page(['a'], 1, ['acc://d.acme/book']), [{ type: 'remove_key', public_key_hash: h('a') }])).toBeNull();
    expect(problem(page([], 1, ['acc://d.acme/book']), [{ type: 'remove_delegate', delegate_url: 'acc://D.acme/book' }])).toMatch(/last key/);
  });
  it('removing a key clamps the threshold as the ledger does, so 2-of-2 minus a key is 1-of-1', () => {
    expect(problem(page(['a', 'b'], 2), [{ type: 'remove_key', public_key_hash: h('b') }])).toBeNull();
    expect(
      problem(page(['a', 'b'], 2), [
        { type: 'remove_key', public_key_hash: h('b') },
        { type: 'set_threshold', threshold: 2 },
      ]),
    ).toMatch(/above the 1 key/);
  });
});

describe('authorityQuorumProblem', () => {
  it('the last enabled authority cannot be removed', () => {
    const auths = [{ url: 'acc://a.acme/book', disabled: false }];
    expect(authorityQuorumProblem(auths, [{ type: 'removeAuthority', authority: 'acc://a.acme/book' }])).toMatch(/last authority/);
    expect(
      authorityQuorumProblem(auths, [
        { type: 'addAuthority', authority: 'acc://b.acme/book' },
        { type: 'removeAuthority', authority: 'acc://a.acme/book' },
      ]),
    ).toBeNull();
    expect(
      authorityQuorumProblem([...auths, { url: 'acc://c.acme/book', disabled: true }], [{ type: 'removeAuthority', authority: 'acc://A.acme/book' }]),
    ).toMatch(/last authority/);
  });
});
