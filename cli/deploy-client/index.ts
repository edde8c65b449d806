/**
 * The deploy client: everything the commands ask Temporal about deploys — start, describe (latest / running run
 * of a node), follow, cancel, and worker presence (including the in-process worker). It returns data and prints
 * nothing of its own; cli/deploy-view.ts and the commands turn that into text or --json.
 */
export { cancelDeploy, latestDeploy, runningDeploy, startDeploy, stateDiskFull, type DeployRef } from './deploys.js';
export { followDeploy, type Followed, type FollowOptions, type WorkerRole } from './follow.js';
export { ensureWorker, WorkerKeeper, type LocalWorker } from './local-worker.js';
export { ensureBackgroundWorker, matchBackgroundWorker, type BackgroundStart } from './background.js';
export { openDeploys, pollerAlive, queuesServed, unservedDeploy, workerPolls } from './presence.js';
export { pinnedBuildNote, unservedPinnedBuild } from './pinned-build.js';
