/**
 * The deploy client: the CLI's Temporal side — connect (temporal.ts, the embedded server), start, describe (latest /
 * running run of a node), follow, cancel, and worker presence (including the in-process worker). A deploy command
 * hands its plan to one entry, runDeploy (run.ts). It returns data and composes no text of its own but the worker
 * notices; cli/deploy-view.ts and the commands turn that into text or --json.
 */
export { cancelDeploy, latestDeploy, runningDeploy, startDeploy, stateDiskFull, type DeployRef } from './deploys.js';
export { followDeploy, type FollowEnd, type FollowOptions } from './follow.js';
export { followWith, runDeploy, summaryOf, type DeployPlan, type DeployView, type DetachedStart, type DetachedWorker, type RunRequest } from './run.js';
export { ensureWorker, WorkerKeeper, type LocalWorker } from './local-worker.js';
export { ensureBackgroundWorker, matchBackgroundWorker, type BackgroundStart } from './background.js';
export { openDeploys, pollerAlive, queuesServed, unservedDeploy, workerPolls } from './presence.js';
export { pinnedBuildNote, unservedPinnedBuild } from './pinned-build.js';
