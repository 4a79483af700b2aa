/**
 * What a proven receipt's logs show of an intent leg's execution: the account's Executed event for the committed
 * leaf, and each event the intent expects. Validators check them before they sign an observation; the offline
 * verifier checks them again from the logs a bundle carries.
 */
import { decodeAbiParameters, getAddress, keccak256, toEventSelector, type Address, type Hex } from 'viem';
import type { ResultLog } from '../formulas.js';

const EXECUTED_TOPIC = toEventSelector('Executed(bytes32,uint256,bytes32)');

/** An event an intent expects of a leg: emitting contract, topic0, indexed topics (null: any), keccak256 of the data. */
export interface ExpectedLog {
  contract: Address;
  topic0: Hex;
  topics?: (Hex | null)[];
  data_hash?: Hex;
}

/** The account's Executed(anchorId, leafIndex, executionCommitment) log among `logs` (a proven receipt's), if any. */
export function findExecutedEvent(
  logs: readonly ResultLog[],
  p: { account: Address; anchorId: Hex; leafIndex: bigint; executionCommitment: Hex },
): ResultLog | undefined {
  return logs.find(
    (l) =>
      getAddress(l.address) === getAddress(p.account) &&
      l.topics[0]?.toLowerCase() === EXECUTED_TOPIC &&
      l.topics[1]?.toLowerCase() === p.anchorId.toLowerCase() &&
      (() => {
        try {
          const [li, ec] = decodeAbiParameters([{ type: 'uint256' }, { type: 'bytes32' }], l.data);
          return li === p.leafIndex && ec.toLowerCase() === p.executionCommitment.toLowerCase();
        } catch {
          return false;
        }
      })(),
  );
}

/** Whether an intent's expected event (contract, topic0, indexed topics, data hash) is among `logs`. */
export function expectedEventEmitted(logs: readonly ResultLog[], ev: ExpectedLog): boolean {
  return logs.some(
    (l) =>
      getAddress(l.address) === getAddress(ev.contract) &&
      l.topics[0]?.toLowerCase() === ev.topic0.toLowerCase() &&
      (ev.topics ?? []).every((t, i) => t === null || l.topics[i + 1]?.toLowerCase() === t.toLowerCase()) &&
      (!ev.data_hash || keccak256(l.data).toLowerCase() === ev.data_hash.toLowerCase()),
  );
}
