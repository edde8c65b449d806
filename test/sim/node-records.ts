/** What happened on a simulated node, read back from the files the node-side programs append to. */
import fs from 'node:fs';
import path from 'node:path';
import { readJsonLines } from './control.js';
import { execFileSync } from 'node:child_process';
import { DOCKER_CLIENT, enginePaths } from './engine.js';
import { gpuRecords } from './gpu.js';
import type { NodePaths } from './paths.js';

/** The part of `docker inspect` (moby's ContainerJSON) tests read. */
export interface ContainerRecord {
  Id: string;
  Name: string;
  Created: string;
  Path: string;
  Args: string[];
  State: {
    Status: 'created' | 'running' | 'paused' | 'restarting' | 'removing' | 'exited' | 'dead';
    Running: boolean;
    Paused: boolean;
    Restarting: boolean;
    OOMKilled: boolean;
    Dead: boolean;
    Pid: number;
    ExitCode: number;
    Error: string;
    StartedAt: string;
    FinishedAt: string;
  };
  Image: string;
  LogPath: string;
  RestartCount: number;
  HostConfig: {
    Binds: string[] | null;
    NetworkMode: string;
    AutoRemove: boolean;
    RestartPolicy: { Name: string; MaximumRetryCount: number };
    LogConfig: { Type: string; Config: Record<string, string> };
  };
  Mounts: { Type: string; Source: string; Destination: string; Mode: string; RW: boolean; Propagation: string }[];
  Config: { Hostname: string; Image: string; Env: string[]; Cmd: string[] | null; Labels: Record<string, string> | null };
}

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

  /** Every container of the node as its engine shows it (`docker inspect`), oldest first; [] when it does not answer. */
  containers(): ContainerRecord[] {
    const host = `unix://${enginePaths(this.paths.dockerDir).sock}`;
    const run = (args: string[]) => execFileSync(DOCKER_CLIENT, ['--host', host, ...args], { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
    try {
      const ids = run(['container', 'ls', '-aq', '--no-trunc']).split('\n').filter((l) => l !== '');
      if (ids.length === 0) return [];
      const recs = JSON.parse(run(['container', 'inspect', ...ids])) as ContainerRecord[];
      return recs.sort((a, b) => a.Created.localeCompare(b.Created));
    } catch {
      return [];
    }
  }
  /** HTTP requests the node's vLLM received, in order. */
  requests(): RequestRecord[] {
    return readJsonLines<RequestRecord>(path.join(this.paths.state, 'requests.jsonl'));
  }
  /** When the node's vLLM began to listen (each start), in order. */
  listens(): { at: string; container: string }[] {
    return readJsonLines<{ at: string; container: string }>(path.join(this.paths.state, 'listening.jsonl'));
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
  /** GPU probes: containers started with the GPU whose command is nvidia-smi (the GPU hook's records). */
  gpuProbeCalls(): { at: string; cmd: string[]; ok: boolean }[] {
    return gpuRecords(this.paths.state)
      .filter((r) => r.args[0] === 'nvidia-smi')
      .map((r) => ({ at: r.at, cmd: r.args, ok: r.ok }));
  }
  /** Every start of a container with the GPU (`--gpus`) on the node, as the GPU hook saw it. */
  gpuContainers(): { at: string; id: string; pid: number; args: string[]; ok: boolean }[] {
    return gpuRecords(this.paths.state);
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
