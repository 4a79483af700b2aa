/**
 * Legs calling TestTarget.record(bytes32) (contracts/test/TestTarget.sol): it emits Called(from, value, arg) and
 * stores the argument in slot 3 (lastArg). Shared by the validator, transaction and chaos tests and the benches.
 */
import { keccak256, stringToHex, type Address, type Hex } from 'viem';

export const CALLED_EVENT = 'Called(address,uint256,bytes32)';

/** A distinct bytes32 argument per label. */
export const arg = (s: string): Hex => keccak256(stringToHex(s));

/** A record(a) leg from `account`, expecting the Called event (topic: the account) and lastArg = a. */
export function testTargetLeg(p: {
  chain: { name: string; chainId: number };
  account: Address;
  target: Address;
  arg: Hex;
  value?: string;
  legId?: string;
  over?: Record<string, unknown>;
}) {
  const value = p.value ?? '0';
  return {
    legId: p.legId ?? `rec-${p.chain.name}-${p.arg.slice(2, 8)}`,
    chain: p.chain.name,
    chainId: p.chain.chainId,
    fromAddress: p.account,
    toAddress: p.target,
    amount: value,
    contractCall: {
      target: p.target,
      value,
      functionSignature: 'record(bytes32)',
      args: [p.arg],
      expectedEvents: [{ contract: p.target, event: CALLED_EVENT, topics: [`0x${p.account.slice(2).toLowerCase().padStart(64, '0')}` as Hex] }],
      expectedState: [{ account: p.target, slot: `0x${'0'.repeat(63)}3` as Hex, value: p.arg }],
      ...p.over,
    },
  };
}
