/** A workflow that holds its workflow task for one local activity, as a proof cycle does for its steps (worker-capacity.test.ts). */
import { proxyLocalActivities } from '@temporalio/workflow';

export interface HoldActivities {
  hold(): Promise<void>;
}

const { hold } = proxyLocalActivities<HoldActivities>({ startToCloseTimeout: '1 minute' });

export async function holdWorkflow(): Promise<void> {
  await hold();
}
