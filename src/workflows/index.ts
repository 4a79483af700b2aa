/** The workflow bundle's entry: every workflow type the worker serves. */
export { maintenanceWorkflow } from './maintenance.js';
export { identityWorkflow } from './identity.js';
