/** The workflow bundle entry: every workflow the worker registers (names match UP_WORKFLOW / DOWN_WORKFLOW). */
export { upWorkflow } from './up.js';
export { downWorkflow } from './down.js';
export { rollbackWorkflow } from './rollback.js';
export { rolloutWorkflow } from './rollout.js';
export { watchdogWorkflow } from './watchdog.js';
