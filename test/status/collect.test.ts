/**
 * collectStatus with fake node sessions: every node is asked at the same time (proven with a barrier that opens only
 * when all scripts have started), the protected-node HTTP rule reaches the script as PULSE_HTTP=0, and a node that
 * fails to connect becomes `answered: false` without hiding the others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseNodesConfig } from '../../runtime/config/nodes.js';
import { PulseError, isPulseError } from '../../runtime/errors.js';
import { collectStatus, selectNodes } from '../../runtime/status/collect.js';
import type { NodeSession, NodeTarget, RemoteResult, RunOptions, StepName } from '../../runtime/node/types.js';
import { tempDir } from './fixtures.js';
import { REPO_ROOT } from '../helpers/paths.js';

/** The example nodes.json with extra unprotected copies of spark2 (spark3..sparkN). */
function config(extra: number) {
  const json = JSON.parse(readFileSync(path.join(REPO_ROOT, 'runtime/nodes.example.json'), 'utf8')) as { nodes: Record<string, unknown> };
  for (let i = 3; i < 3 + extra; i++) json.nodes[`spark${i}`] = { ...(json.nodes['spark2'] as object), ssh: `spark${i}`, gatewayTunnel: undefined };
  return parseNodesConfig(JSON.stringify(json), 'nodes.json');
}

function result(node: string, step: StepName): RemoteResult {
  const records = [
    { kind: 'container', recipe: 'qwen38-flash', name: 'vllm-qwen38', exists: true, running: true, status: 'running', startedAt: null, image: 'img' },
    { kind: 'primary', recipe: 'qwen38-flash' },
    { kind: 'memory', availableKiB: 1024 * 1024 * 110, totalKiB: 1024 * 1024 * 128, watermarkScaleFactor: 10 },
  ];
  return { node, step, exitCode: 0, signal: null, records, stderrTail: '', rawRecords: [], durationMs: 1 };
}

test('every node is asked at the same time: no script finishes before all have started', async () => {
  const cfg = config(6); // 8 nodes
  const names = Object.keys(cfg.nodes);
  let started = 0;
  let openBarrier: () => void = () => undefined;
  const barrier = new Promise<void>((r) => (openBarrier = r));
  const inputs = new Map<string, Record<string, string>>();
  const open = async (target: NodeTarget): Promise<NodeSession> => ({
    target,
    close: async () => undefined,
    run: async (step: StepName, opts?: RunOptions) => {
      // Only the status script counts: the lock query that follows it on each node comes after the barrier.
      if (step !== 'status') return result(target.name, step);
      inputs.set(target.name, opts?.env ?? {});
      if (++started === names.length) openBarrier();
      // A sequential collector would wait here forever; the timeout turns that into a clear failure.
      await Promise.race([barrier, new Promise((_, rej) => setTimeout(() => rej(new Error(`only ${started} of ${names.length} started`)), 10_000).unref())]);
      return result(target.name, step);
    },
  });
  const { dir, cleanup } = tempDir();
  try {
    const report = await collectStatus(cfg, { node: undefined, http: true, gpuProbe: false, yes: false }, { open, stateDir: dir });
    assert.equal(report.allAnswered, true, report.nodes.map((n) => n.error).join('; '));
    assert.equal(started, 8);
    assert.equal(inputs.get('spark1')?.['PULSE_HTTP'], '0', 'protected spark1: the script is told to send no request');
    assert.equal(inputs.get('spark2')?.['PULSE_HTTP'], '1');
  } finally {
    cleanup();
  }
});

test('a node that cannot be reached is answered:false with the reason; the others are complete', async () => {
  const open = async (target: NodeTarget): Promise<NodeSession> => {
    if (target.name === 'spark2') throw new PulseError('unreachable', 'spark2: connect ECONNREFUSED');
    return { target, close: async () => undefined, run: async (step: StepName) => result(target.name, step) };
  };
  const { dir, cleanup } = tempDir();
  try {
    const report = await collectStatus(config(1), { node: undefined, http: true, gpuProbe: false, yes: true }, { open, stateDir: dir });
    assert.deepEqual(report.nodes.map((n) => [n.node, n.answered]), [['spark1', true], ['spark2', false], ['spark3', true]]);
    assert.equal(report.nodes[1]?.error, 'unreachable: spark2: connect ECONNREFUSED');
    assert.equal(report.allAnswered, false);
  } finally {
    cleanup();
  }
});

test('selectNodes: unknown --node is a config error (exit 3 in every command); --gpu-probe on a protected --node needs --yes', () => {
  const cfg = config(0);
  const base = { http: true, gpuProbe: false, yes: false };
  assert.deepEqual(selectNodes(cfg, { ...base, node: undefined }), ['spark1', 'spark2']);
  assert.throws(() => selectNodes(cfg, { ...base, node: 'nope' }), (e) => isPulseError(e) && e.kind === 'config');
  assert.throws(() => selectNodes(cfg, { ...base, node: 'spark1', gpuProbe: true }), (e) => isPulseError(e) && e.kind === 'refused');
  assert.deepEqual(selectNodes(cfg, { ...base, node: 'spark1', gpuProbe: true, yes: true }), ['spark1']);
  assert.deepEqual(selectNodes(cfg, { ...base, node: 'spark2', gpuProbe: true }), ['spark2']);
});
