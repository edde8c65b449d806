/**
 * The neutral model: the plain, JSON-safe types of pulse's domain (plan, node state, step results, progress, deploy
 * result), shared by runtime, activities, workflows and cli. Type-only, and it imports nothing outside runtime/model,
 * so every room may import it and the workflow bundle gets no code from it.
 */
export type * from './plan.js';
export type * from './node-state.js';
export type * from './step-results.js';
export type * from './progress.js';
export type * from './deploy-result.js';
export type * from './rollout.js';
export type * from './watchdog.js';
