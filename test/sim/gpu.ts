/**
 * What the node's GPU runs, as the real engine started it: the stand-in nvidia-container-runtime-hook (assets/bin)
 * appends one record per `--gpus` container start to SIM_STATE/gpu-containers.jsonl (its id, the pid of its init,
 * its command); a record is a live GPU process while that pid lives in the container's cgroup. nvidia-smi and the
 * memory model read this, never the state of a fake.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readJsonLines } from './control.js';

export interface GpuRecord {
  at: string;
  id: string;
  pid: number;
  args: string[];
  /** false: the hook failed the start (a broken driver), nothing runs. */
  ok: boolean;
}

export function gpuRecords(stateDir: string): GpuRecord[] {
  return readJsonLines<GpuRecord>(path.join(stateDir, 'gpu-containers.jsonl'));
}

/** True while `pid` is a live (not zombie) process in the cgroup of container `id`. */
export function gpuProcessAlive(rec: GpuRecord): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${rec.pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
    return fs.readFileSync(`/proc/${rec.pid}/cgroup`, 'utf8').includes(rec.id);
  } catch {
    return false;
  }
}

/** The containers that hold the GPU now. */
export function gpuProcesses(stateDir: string): GpuRecord[] {
  return gpuRecords(stateDir).filter((r) => r.ok && gpuProcessAlive(r));
}
