/**
 * Custom search attributes (registered by temporal-dev.yml in development; `temporal operator search-attribute
 * create` on a real cluster). Workflows set them so operators can find any resource in the Temporal UI.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const OrgIdKey = defineSearchAttributeKey('OrgId', SearchAttributeType.KEYWORD);
export const IdentityIdKey = defineSearchAttributeKey('IdentityId', SearchAttributeType.KEYWORD);
export const IntentIdKey = defineSearchAttributeKey('IntentId', SearchAttributeType.KEYWORD);
export const StageKey = defineSearchAttributeKey('Stage', SearchAttributeType.KEYWORD);
/** A batched intent's chain cycle: the batch (its workflow id) its legs are anchored in. */
export const BatchIdKey = defineSearchAttributeKey('BatchId', SearchAttributeType.KEYWORD);
/** A batch workflow: the intents whose legs it anchors. */
export const BatchIntentsKey = defineSearchAttributeKey('BatchIntents', SearchAttributeType.KEYWORD_LIST);

export const SEARCH_ATTRIBUTE_KEYS = [OrgIdKey, IdentityIdKey, IntentIdKey, StageKey, BatchIdKey, BatchIntentsKey];
