/** The workflow bundle's entry: every workflow type the worker serves. */
export { maintenanceWorkflow } from './maintenance.js';
export { webhookDeliveryWorkflow } from './webhook-delivery.js';
export { webhookDispatcherWorkflow } from './webhook-dispatcher.js';
export { identityWorkflow } from './identity.js';
export { linkChainWorkflow } from './link-chain.js';
export { governanceWorkflow } from './governance.js';
export { creditsWorkflow } from './credits.js';
export { pendingDiscoveryWorkflow, pendingScanWorkflow } from './pending-discovery.js';
export { intentWorkflow } from './intent.js';
export { intentExpiryWorkflow } from './intent-expiry.js';
export { intentChainWorkflow } from './intent-chain.js';
export { batcherWorkflow, batchWorkflow } from './batch.js';
export { providerKeySwitchWorkflow, providerSignWorkflow } from './provider-sign.js';
