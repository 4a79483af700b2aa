/**
 * A validator's own memory: which anchor it attested per (chain, operation id) — so it never signs a
 * conflicting anchor for the same operation — and which result records it wrote. Kept in a JSON file when a
 * path is given (survives restarts), else in memory.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

interface StoreState {
  version: 1;
  attested: Record<string, { anchorId: string; at: number }>;
  results: Record<string, { txId: string; entryHash?: string; at: number }>;
}

export interface ValidatorStore {
  attestedAnchor(chainId: bigint, operationId: string): string | undefined;
  recordAttestation(chainId: bigint, operationId: string, anchorId: string): void;
  writtenResult(resultId: string): { txId: string; entryHash?: string } | undefined;
  recordResult(resultId: string, r: { txId: string; entryHash?: string }): void;
}

export function createValidatorStore(file?: string): ValidatorStore {
  let state: StoreState = { version: 1, attested: {}, results: {} };
  if (file && existsSync(file)) state = JSON.parse(readFileSync(file, 'utf8')) as StoreState;
  const save = () => {
    if (!file) return;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(`${file}.tmp`, JSON.stringify(state));
    renameSync(`${file}.tmp`, file);
  };
  const key = (c: bigint, op: string) => `${c}:${op.toLowerCase()}`;
  return {
    attestedAnchor: (c, op) => state.attested[key(c, op)]?.anchorId,
    recordAttestation(c, op, anchorId) {
      state.attested[key(c, op)] = { anchorId: anchorId.toLowerCase(), at: Date.now() };
      save();
    },
    writtenResult: (id) => state.results[id.toLowerCase()],
    recordResult(id, r) {
      state.results[id.toLowerCase()] = { ...r, at: Date.now() };
      save();
    },
  };
}
