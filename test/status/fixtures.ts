/** Shared fixtures of the status/state tests: temp state dirs and node states. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FleetEntry, NodeState } from '../../runtime/model/index.js';

/** A fresh temp dir and its cleanup. */
export function tempDir(prefix = 'pulse-state-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A complete NodeState with overrides. */
export function nodeState(node: string, over: Partial<NodeState> = {}): NodeState {
  return {
    node,
    state: 'up',
    action: 'up',
    profile: 'best',
    identity: { sha256: 'a'.repeat(64), profile: 'best', overlay: 'none' },
    workflowId: `pulse-model-${node}`,
    runId: 'run-1',
    at: '2026-09-23T10:15:00.000Z',
    backupPath: null,
    logPath: null,
    kvCacheLine: 'GPU KV cache size: 1048576 tokens',
    maxModelLen: 524288,
    servedModelName: 'qwen38',
    overlayManifest: null,
    error: null,
    previousProfile: null,
    ...over,
  };
}

/** A fleet entry for `node`, reachable unless told otherwise. */
export function fleetEntry(node: string, reachable = true): FleetEntry {
  return { node, gatewayUrl: `http://10.0.0.${node.length}:8888/v1`, reachable };
}
