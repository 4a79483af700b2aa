/** The canonical intent: its model, build, parse, per-chain anchor plan and the API request mapping. */
export * from './model.js';
export { ADDRESS_RULE, checkedAddress } from './fields.js';
export { encodeCall } from './call.js';
export { buildIntent, intentEntries } from './build.js';
export { parseIntentEntries } from './parse.js';
export { legsForChain, planIntentAnchor, type IntentAnchorPlan } from './anchor.js';
export { intentProofClass, planIntentBatch, type BatchMemberInput, type BatchPlan } from './batch.js';
export { intentLegsFromRequest, IntentRequestError, MAX_LEGS, type RequestChain, type RequestContext } from './request.js';
