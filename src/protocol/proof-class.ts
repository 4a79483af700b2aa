/**
 * The proof classes a client chooses with `proof_class` at prepare, written into the canonical intent (intentData
 * b0 proof_class) and so attested by the validators with the rest of it.
 *
 *   standard   one anchor per intent and chain: createAnchor + executeComprehensiveProof for this intent alone;
 *              the lowest latency.
 *   batched    the class whose legs share one anchor with other intents of the same chain (one Merkle root, one
 *              quorum signature, one on-chain verification, each leg executed with its own Merkle proof; the
 *              cost curve is in bench/gas.ts). The production system's names `on_demand` and `on_cadence` are
 *              accepted for it. Its chain cycles join their chain's batcher (src/workflows/batch.ts).
 *
 * The first class is the default. An alias is stored as the class it names.
 */
export const PROOF_CLASSES = ['standard', 'batched'] as const;
export type ProofClass = (typeof PROOF_CLASSES)[number];

/** Names accepted for a class besides its own. */
export const PROOF_CLASS_ALIASES = { on_demand: 'batched', on_cadence: 'batched' } as const satisfies Record<string, ProofClass>;

/** Every value `proof_class` accepts, in the order the API lists them. */
export const PROOF_CLASS_VALUES = [...PROOF_CLASSES, ...(Object.keys(PROOF_CLASS_ALIASES) as (keyof typeof PROOF_CLASS_ALIASES)[])] as const;
export type ProofClassValue = (typeof PROOF_CLASS_VALUES)[number];

/** The class a request's `proof_class` names (undefined: the default); undefined for a value that names none. */
export function proofClassOf(value: string | undefined): ProofClass | undefined {
  if (value === undefined) return PROOF_CLASSES[0];
  if ((PROOF_CLASSES as readonly string[]).includes(value)) return value as ProofClass;
  return (PROOF_CLASS_ALIASES as Record<string, ProofClass>)[value];
}

/** The class of a stored canonical intent's first part (intentData); intents from before the field read as standard. */
export function storedProofClass(intentData: string | undefined): ProofClass {
  if (!intentData) return PROOF_CLASSES[0];
  try {
    const v = (JSON.parse(intentData) as { proof_class?: unknown }).proof_class;
    return typeof v === 'string' ? (proofClassOf(v) ?? PROOF_CLASSES[0]) : PROOF_CLASSES[0];
  } catch {
    return PROOF_CLASSES[0];
  }
}
