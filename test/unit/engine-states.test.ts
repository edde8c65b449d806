/**
 * What the real Docker engine shows, read by pulse's pure code (issue 28): a container that never started (`created`,
 * docker's zero StartedAt, State.Error), an exited one's FinishedAt, the GPU probe's error line under the 28.x CLI's
 * closing advice, a daemon that does not answer (exit 15 → docker-down, never "no such container"), and the watchdog
 * that will not heal while the daemon is down. The same behaviours through the product on the sim's real engine:
 * test/status/engine-states-sim.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { probeLine } from '../../runtime/status/probe.js';
import { containerOf, timeOf } from '../../runtime/status/parse.js';
import { containerText } from '../../runtime/status/table.js';
import { failureBlockLines, type FailureFacts } from '../../cli/failure-block.js';
import { failureOf } from '../../runtime/node/outcome.js';
import { FAILURES } from '../../runtime/failures.js';
import { SCRIPT_EXIT, type RemoteResult } from '../../runtime/node/types.js';
import { healDecision, judge, nextRecord } from '../../runtime/fleet/watchdog.js';
import type { NodeState, WatchdogCheck, WatchdogRequest } from '../../runtime/model/index.js';
import type { NodeStatus } from '../../runtime/status/types.js';

const ZERO = '0001-01-01T00:00:00Z';
const HOOK_ERROR =
  'failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: ' +
  'error running hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown';
const NOW = new Date('2026-12-04T22:00:00Z');

/** A `container` record as status.sh writes it for a container whose start failed (read from dockerd 20.10.24). */
const CREATED = {
  kind: 'container', recipe: 'qwen38', name: 'vllm-qwen38', exists: true, running: false, status: 'created', startedAt: ZERO, image: 'vllm:1',
  exitCode: 128, restartCount: 0, finishedAt: ZERO, oomKilled: false, exitMeaning: '', logConfig: '{"Type":"json-file","Config":{}}',
  error: JSON.stringify(HOOK_ERROR),
};

test('a container that never started: no zero time, "never started", State.Error in the line and the JSON', () => {
  const c = containerOf(CREATED);
  assert.equal(c.startedAt, null);
  assert.equal(c.finishedAt, null);
  assert.equal(c.error, HOOK_ERROR);
  const line = containerText(c, null, NOW);
  assert.doesNotMatch(line, /0001-01-01|\d+d\d+h ago/);
  assert.match(line, /^vllm-qwen38 created, never started, image vllm:1; error: .*nvml error: driver not loaded/);
  assert.equal(timeOf(ZERO), null);
  assert.equal(timeOf('garbage'), null);
  assert.equal(timeOf('2026-12-04T21:00:00.5Z'), '2026-12-04T21:00:00.5Z');
});

test('an exited container shows since its FinishedAt, a running one since its StartedAt', () => {
  const exited = containerOf({ ...CREATED, status: 'exited', startedAt: '2026-12-04T20:00:00Z', finishedAt: '2026-12-04T21:00:00Z', exitCode: 1, exitMeaning: 'exit 1: the server failed (see docker logs)', error: '""' });
  assert.match(containerText(exited, null, NOW), /^vllm-qwen38 exited since 2026-12-04T21:00:00Z \(1h00m ago\), image vllm:1; exit 1/);
  const running = containerOf({ ...CREATED, status: 'running', running: true, startedAt: '2026-12-04T20:00:00Z', exitCode: 0, error: '""' });
  assert.match(containerText(running, null, NOW), /^vllm-qwen38 running since 2026-12-04T20:00:00Z \(2h00m ago\), image vllm:1$/);
});

test('a daemon that does not answer is named, never "no such container"', () => {
  const down = 'the Docker daemon does not answer: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?';
  const unknown = containerOf({ kind: 'container', recipe: 'qwen38', name: 'vllm-qwen38', exists: false, running: false, status: 'unknown', startedAt: null, image: null });
  assert.equal(containerText(unknown, down, NOW), `vllm-qwen38: unknown (${down})`);
  const absent = containerOf({ kind: 'container', recipe: 'qwen38', name: 'vllm-qwen38', exists: false, running: false, status: 'absent', startedAt: null, image: null });
  assert.equal(containerText(absent, null, NOW), 'vllm-qwen38: no such container');
  // The script's exit 15 is its own kind with its own exit code, not a precondition (5) nor a script failure (9).
  const result: RemoteResult = {
    node: 'spark1', step: 'preflight', exitCode: SCRIPT_EXIT.dockerDown, signal: null, records: [{ kind: 'error', message: down }], stderrTail: '', rawRecords: [], durationMs: 1,
  };
  const err = failureOf(result);
  assert.equal(err?.kind, 'docker-down');
  // In words only: the script's own number (15) is never shown as if it were pulse's exit code (issue 30 item 3).
  assert.match(err?.message ?? '', /step preflight: the Docker daemon on the node does not answer: the Docker daemon does not answer: Cannot connect/);
  assert.doesNotMatch(err?.message ?? '', /exit 15/);
  assert.equal(FAILURES['docker-down'].exit, 14);
});

test('status --gpu-probe: the error line, not the 28.x CLI\'s closing advice', () => {
  const out = `docker: Error response from daemon: ${HOOK_ERROR}\n\nRun 'docker run --help' for more information\n`;
  assert.match(probeLine(out, 125) ?? '', /^docker: Error response from daemon: .*nvml error: driver not loaded: unknown$/);
  assert.equal(probeLine('GPU 0: NVIDIA GB10 (UUID: GPU-1)\n', 0), 'GPU 0: NVIDIA GB10 (UUID: GPU-1)');
  assert.equal(probeLine('', 1), null);
  assert.equal(probeLine('just some words\n\n', 2), 'just some words');
});

function facts(c: Record<string, unknown>, dockerDown: string | null = null): FailureFacts {
  const status = { node: 'spark1', container: containerOf({ ...CREATED, ...c }), memory: null, dockerDown } as unknown as NodeStatus;
  return { node: 'spark1', status, startLog: null, lines: [], logSource: null, problem: null };
}

test('the failure block: the start that failed with State.Error, a crash loop and how to end it, a daemon that does not answer', () => {
  assert.match(failureBlockLines(facts({}))[0] ?? '', /^container vllm-qwen38: created, never started: docker could not start it: .*nvml error: driver not loaded/);
  const loop = failureBlockLines(facts({ status: 'restarting', running: true, restartCount: 4, startedAt: '2026-12-04T21:59:00Z', error: '""' }))[0] ?? '';
  assert.match(loop, /restarted it 4 time\(s\) and it loops until stopped.*pulse model down --node spark1/);
  const down = failureBlockLines(facts({ exists: false, status: 'unknown' }, 'the Docker daemon does not answer: permission denied'))[0] ?? '';
  assert.equal(down, 'container: unknown, the Docker daemon does not answer: permission denied');
});

const STATE: NodeState = {
  node: 'spark2', state: 'up', action: 'up', profile: 'stable', identity: null, workflowId: 'w', runId: 'r', at: '2026-12-03T02:00:00Z', backupPath: null,
  logPath: null, kvCacheLine: null, maxModelLen: 262144, servedModelName: 'qwen38', overlayManifest: null, error: null, previousProfile: null,
};
const DOWN: WatchdogCheck = {
  node: 'spark2', answered: true, error: null, container: { name: 'vllm-qwen38', exists: false, running: false, state: 'unknown', restartCount: null, exitMeaning: null },
  http: true, httpSkipped: null, httpStatus: null, healthOk: false, servedModels: [], maxModelLen: null, drift: false, envProfile: 'stable', memoryWarning: null, locked: null,
  dockerDown: 'the Docker daemon does not answer: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?',
};
const REQ: WatchdogRequest = { action: 'watchdog', version: 1, node: 'spark2', everyS: 60, after: 1, heal: true, healsPerHour: 2, confirmed: false };

test('the watchdog names a daemon that does not answer, and does not spend a heal on it', () => {
  const j = judge(DOWN, STATE);
  assert.equal(j.verdict, 'down');
  assert.equal(j.reason, DOWN.dockerDown);
  assert.doesNotMatch(j.reason ?? '', /gone/);
  const rec = nextRecord(null, j, DOWN, REQ, '2026-12-03T02:14:00Z');
  const d = healDecision(rec, REQ, false, '2026-12-03T02:14:00Z', j.noHeal);
  assert.equal(d.heal, false);
  assert.match(d.heal ? '' : (d.why ?? ''), /no heal while the node's Docker daemon does not answer.*systemctl start docker/);
  // With live-restore the server may still serve while dockerd is down: HTTP decides, and a note says so.
  const serving = judge({ ...DOWN, httpStatus: 200, healthOk: true, healthRoute: 200, servedModels: ['qwen38'], maxModelLen: 262144 }, STATE);
  assert.equal(serving.verdict, 'ok');
  assert.match(serving.notes.join('\n'), /does not answer.*still answers/);
});
