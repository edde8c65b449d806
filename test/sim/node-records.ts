/** What happened on a simulated node, read back from the files the node-side programs append to. */
import fs from 'node:fs';
import path from 'node:path';
import { readJsonLines } from './control.js';
import type { ContainerRecord } from './docker-state.js';
import { listRecords } from './docker-state.js';
import type { NodePaths } from './paths.js';

/** One HTTP request the simulated vLLM received. */
export interface RequestRecord {
  at: string;
  container: string;
  method: string;
  path: string;
  authorized: boolean;
  status: number;
  model?: string;
  requestId?: string;
}

/** The records of one node (SimNode extends this with its controls). */
export class NodeRecords {
  constructor(readonly paths: NodePaths) {}

  /** Every container record of the node (state corrected for dead processes). */
  containers(): ContainerRecord[] {
    return listRecords(this.paths.dockerDir, false);
  }
  /** HTTP requests the node's vLLM received, in order. */
  requests(): RequestRecord[] {
    return readJsonLines<RequestRecord>(path.join(this.paths.state, 'requests.jsonl'));
  }
  /** Lines of start.sh invocations (one per run, with its arguments). */
  startShCalls(): string[] {
    return readLines(path.join(this.paths.state, 'start-calls'));
  }
  stopShCalls(): string[] {
    return readLines(path.join(this.paths.state, 'stop-calls'));
  }
  /** True once anybody ran `start.sh --no-launch` on this node. */
  noLaunchCalled(): boolean {
    return fs.existsSync(path.join(this.paths.state, 'no-launch-called'));
  }
  /** Every docker CLI invocation on the node (argv). */
  dockerCalls(): { at: string; argv: string[] }[] {
    return readJsonLines(path.join(this.paths.state, 'docker-calls.jsonl'));
  }
  /** Foreground `docker run` calls (the GPU probe). */
  gpuProbeCalls(): { at: string; image: string; cmd: string[] }[] {
    return readJsonLines(path.join(this.paths.state, 'gpu-probe-calls.jsonl'));
  }
  sudoCalls(): string[] {
    return readLines(path.join(this.paths.state, 'sudo-calls'));
  }
}

function readLines(file: string): string[] {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
  } catch {
    return [];
  }
}
