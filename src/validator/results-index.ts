/**
 * The results account of the protocol ADI as an index: result id -> every entry that claims it, in ledger order
 * (anyone with write access can add one). Read once, then only where it grew: a lookup costs the entries appended
 * since the last one, not the whole account (which only ever grows).
 */
import type { LedgerClient } from '../ledger/index.js';
import { parseProofResult, type ProofResultRecord } from '../protocol/result-record.js';

export interface ResultsIndex {
  /** The first entry of the results account for this result id that `accept` takes. */
  find(
    resultId: string,
    accept: (r: ProofResultRecord, entryHash: string) => boolean,
  ): Promise<{ txId: string; entryHash: string; record: ProofResultRecord } | undefined>;
}

export function createResultsIndex(ledger: LedgerClient, resultsAccount: string): ResultsIndex {
  // The results account read once and then only where it grew: result id -> where its record is. A lookup costs
  // the entries appended since the last one, not the whole account (which only ever grows).
  /** result id → every entry of the results account that claims it, in ledger order (anyone with write access can add one) */
  const resultIndex = new Map<string, { index: number; txId: string; entryHash: string }[]>();
  let resultsScanned = 0;
  let scanning: Promise<void> = Promise.resolve();
  function scanResults(): Promise<void> {
    scanning = scanning
      .catch(() => {})
      .then(async () => {
        for (;;) {
          const page = await ledger.readDataEntries(resultsAccount, { start: resultsScanned, count: 100 });
          for (const [i, e] of page.entries()) {
            const r = parseProofResult(e.data, true);
            if (!r) continue;
            const hits = resultIndex.get(r.result_id.toLowerCase()) ?? [];
            hits.push({
              index: resultsScanned + i,
              txId: e.txHash ? `acc://${e.txHash}@${resultsAccount.replace(/^acc:\/\//, '')}` : '',
              entryHash: e.entryHash,
            });
            resultIndex.set(r.result_id.toLowerCase(), hits);
          }
          resultsScanned += page.length;
          if (page.length < 100) return;
        }
      });
    return scanning;
  }

  /** The first entry of the results account for this result id that `accept` takes. */
  async function findWrittenResult(
    resultId: string,
    accept: (r: ProofResultRecord, entryHash: string) => boolean,
  ): Promise<{ txId: string; entryHash: string; record: ProofResultRecord } | undefined> {
    await scanResults();
    for (const hit of resultIndex.get(resultId.toLowerCase()) ?? []) {
      const [e] = await ledger.readDataEntries(resultsAccount, { start: hit.index, count: 1 });
      const record = e ? parseProofResult(e.data, true) : undefined;
      if (!record || record.result_id.toLowerCase() !== resultId.toLowerCase())
        throw new Error(`results entry ${hit.index} no longer holds result ${resultId}`);
      if (accept(record, hit.entryHash)) return { txId: hit.txId, entryHash: hit.entryHash, record };
    }
    return undefined;
  }

  return { find: findWrittenResult };
}
