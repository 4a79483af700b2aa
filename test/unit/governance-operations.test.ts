/** Governance operations: kinds, field validation and the quorum-reachability guard (pure functions). */
import { describe, expect, it } from 'vitest';
import {
  accountAuthOps,
  authorityQuorumProblem,
  authorityStepProblem,
  effectiveAuthoritiesAfter,
  governanceBody,
  GovernanceInputError,
  intentAccountProblem,
  keepInheritedAuthorities,
  keyPageOps,
  keyPageQuorumProblem,
  keyPageStepProblem,
  operationsKind,
  resolveTokenAccountOps,
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
    expect(operationsKind([{ type: 'create_token_account' }])).toBe('create_token_account');
    expect(() => operationsKind([{ type: 'create_token_account' }, { type: 'add_key' }])).toThrow(/create_token_account, key_page/);
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

describe('create_token_account', () => {
  const adi = 'acc://Alice.acme';
  const fieldOf = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      if (e instanceof GovernanceInputError) return e.field;
      throw e;
    }
    return undefined;
  };
  it('the account defaults to <adi>/tokens; a given one is kept (normalized)', () => {
    expect(resolveTokenAccountOps([{ type: 'create_token_account' }], adi)).toEqual([{ type: 'create_token_account', url: 'acc://alice.acme/tokens' }]);
    expect(resolveTokenAccountOps([{ type: 'create_token_account', url: 'acc://ALICE.acme/Savings' }], adi)).toEqual([
      { type: 'create_token_account', url: 'acc://alice.acme/savings' },
    ]);
  });
  it('the account must be directly under the ADI (its principal), one per request', () => {
    for (const url of ['acc://bob.acme/tokens', 'acc://alice.acme', 'acc://alice.acme/a/b', 'not a url', 'acc://alice.acmex/tokens'])
      expect(
        fieldOf(() => resolveTokenAccountOps([{ type: 'create_token_account', url }], adi)),
        url,
      ).toBe('operations[0].url');
    expect(fieldOf(() => resolveTokenAccountOps([{ type: 'create_token_account' }, { type: 'create_token_account', url: `${adi}/b` }], adi))).toBe(
      'operations',
    );
  });
  it('builds a CreateTokenAccount for ACME at the resolved account', () => {
    const body = governanceBody('create_token_account', resolveTokenAccountOps([{ type: 'create_token_account' }], adi)).asObject() as Record<string, unknown>;
    expect(body.type).toBe('createTokenAccount');
    expect(String(body.url).toLowerCase()).toBe('acc://alice.acme/tokens');
    expect(String(body.tokenUrl).toLowerCase()).toBe('acc://acme');
    // stored operations lacking the account (never written so) are refused, not built with a guess
    expect(fieldOf(() => governanceBody('create_token_account', [{ type: 'create_token_account' }]))).toBe('operations[0].url');
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

describe('an operation that changes nothing is refused alike, named by its index', () => {
  const step = (p: ReturnType<typeof page>, ops: GovernanceOperation[]) => keyPageStepProblem(p, keyPageOps(ops));
  it.each([
    ['add_key of a key on the page', [{ type: 'add_key', public_key_hash: h('a') }], /key a{64} is already on the key page/],
    ['remove_key of an absent key', [{ type: 'remove_key', public_key_hash: h('c') }], /key c{64} is not on the key page/],
    ['add_delegate present', [{ type: 'add_delegate', delegate_url: 'acc://D.acme/book' }], /delegate acc:\/\/d\.acme\/book is already/],
    ['remove_delegate absent', [{ type: 'remove_delegate', delegate_url: 'acc://e.acme/book' }], /delegate acc:\/\/e\.acme\/book is not on/],
    ['set_threshold to the current value', [{ type: 'set_threshold', threshold: 2 }], /threshold is already 2/],
  ] as [string, GovernanceOperation[], RegExp][])('%s', (_name, ops, message) => {
    const p = step(page(['a', 'b'], 2, ['acc://d.acme/book']), ops);
    expect(p).toMatchObject({ field: 'operations[0]', message: expect.stringMatching(message) });
    expect(p!.message).toMatch(/the operation changes nothing$/);
  });
  it('steps apply in order: a removal clamps the threshold, so setting the clamped value changes nothing', () => {
    const p = page(['a', 'b'], 2);
    expect(step(p, [{ type: 'set_threshold', threshold: 1 }])).toBeNull();
    expect(
      step(p, [
        { type: 'remove_key', public_key_hash: h('b') },
        { type: 'set_threshold', threshold: 1 },
      ]),
    ).toMatchObject({ field: 'operations[1]' });
    expect(
      step(p, [
        { type: 'add_key', public_key_hash: h('c') },
        { type: 'remove_key', public_key_hash: h('c') },
      ]),
    ).toBeNull();
  });
  it('authorities: adding a present one or removing an absent one; an inheriting account names what it inherits', () => {
    const acc = { url: 'acc://x.acme/data', authorities: [{ url: 'acc://x.acme/book', disabled: false }] };
    const auth = (ops: GovernanceOperation[], a = acc, from?: string) => authorityStepProblem(a, accountAuthOps(ops), from);
    expect(auth([{ type: 'add_authority', authority_url: 'acc://X.acme/book' }])?.message).toMatch(
      /^acc:\/\/x\.acme\/book is already an authority of acc:\/\/x\.acme\/data: the operation changes nothing$/,
    );
    expect(auth([{ type: 'remove_authority', authority_url: 'acc://y.acme/book' }])).toMatchObject({ field: 'operations[0]' });
    expect(auth([{ type: 'add_authority', authority_url: 'acc://y.acme/book' }])).toBeNull();
    const inheriting = { url: 'acc://x.acme/data', authorities: [] };
    expect(auth([{ type: 'remove_authority', authority_url: 'acc://x.acme/book' }], inheriting, 'acc://x.acme')?.message).toMatch(
      /not an authority of acc:\/\/x\.acme\/data \(it has no authorities of its own: it inherits those of acc:\/\/x\.acme\)/,
    );
    expect(
      auth(
        [
          { type: 'add_authority', authority_url: 'acc://y.acme/book' },
          { type: 'add_authority', authority_url: 'acc://y.acme/book' },
        ],
        inheriting,
      ),
    ).toMatchObject({ field: 'operations[1]' });
  });
});

describe('adding an authority to an account that inherits keeps the inherited book', () => {
  const adi = { url: 'acc://x.acme', authorities: [{ url: 'acc://x.acme/book', disabled: false }] };
  const data = { url: 'acc://x.acme/data', authorities: [] as { url: string; disabled: boolean }[] };
  const add = (url: string): GovernanceOperation => ({ type: 'add_authority', authority_url: url });

  it('the inherited enabled books are added first, in the same transaction', () => {
    expect(keepInheritedAuthorities(data, adi.authorities, [add('acc://y.acme/book')])).toEqual({
      operations: [add('acc://x.acme/book'), add('acc://y.acme/book')],
      kept: ['acc://x.acme/book'],
    });
    // already named by the request, or the account has authorities of its own: unchanged
    expect(keepInheritedAuthorities(data, adi.authorities, [add('acc://X.acme/book')]).kept).toEqual([]);
    const own = { ...data, authorities: [{ url: 'acc://z.acme/book', disabled: false }] };
    expect(keepInheritedAuthorities(own, adi.authorities, [add('acc://y.acme/book')]).kept).toEqual([]);
  });

  it('as the ledger applies it, the new book alone would lock the identity out of its data account; kept, it stays', () => {
    const lone = accountAuthOps([add('acc://y.acme/book')]);
    expect([...effectiveAuthoritiesAfter([data, adi], data.url, lone)]).toEqual(['acc://y.acme/book']);
    expect(intentAccountProblem([data, adi], data.url, lone, 'acc://x.acme/book')).toMatch(
      /acc:\/\/x\.acme\/book would no longer be an authority of acc:\/\/x\.acme\/data/,
    );
    const kept = accountAuthOps(keepInheritedAuthorities(data, adi.authorities, [add('acc://y.acme/book')]).operations);
    expect(intentAccountProblem([data, adi], data.url, kept, 'acc://x.acme/book')).toBeNull();
    expect([...effectiveAuthoritiesAfter([data, adi], data.url, kept)].sort()).toEqual(['acc://x.acme/book', 'acc://y.acme/book']);
  });

  it('the guard covers the data account when the ADI it inherits from changes', () => {
    const shared = { ...adi, authorities: [...adi.authorities, { url: 'acc://y.acme/book', disabled: false }] };
    const drop = accountAuthOps([{ type: 'remove_authority', authority_url: 'acc://x.acme/book' }]);
    // the ADI keeps an authority, so its own check passes, but the inheriting data account loses the identity's book
    expect(authorityQuorumProblem(shared.authorities, drop)).toBeNull();
    expect(intentAccountProblem([data, shared], shared.url, drop, 'acc://x.acme/book')).toMatch(/could not sign its intents/);
    // a data account with its own authorities is not affected by the ADI's
    const ownData = { ...data, authorities: [{ url: 'acc://x.acme/book', disabled: false }] };
    expect(intentAccountProblem([ownData, shared], shared.url, drop, 'acc://x.acme/book')).toBeNull();
    // nor is an account the identity already could not sign for
    expect(
      intentAccountProblem([{ ...data, authorities: [{ url: 'acc://z.acme/book', disabled: false }] }, shared], data.url, [], 'acc://x.acme/book'),
    ).toBeNull();
  });
});
