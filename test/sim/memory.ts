/**
 * Simulated memory of a node. The sim writes its own /proc/meminfo and vm.watermark_scale_factor files, which are
 * bind-mounted over the real paths inside the node's sshd mount namespace. A bind mount pins the inode, so updates
 * rewrite the file in place: meminfo always has the same length (fixed-width numbers) and goes out in one pwrite at
 * offset 0, so a reader sees the old or the new text, never a truncated file.
 */
import fs from 'node:fs';

const GiB_KB = 1024 * 1024;

export interface MemorySettings {
  totalGiB: number;
  /** MemAvailable with no container, at watermark_scale_factor 10. */
  idleAvailableGiB: number;
  /** MemAvailable while the vLLM container runs. */
  runningAvailableGiB: number;
  /** Time after the container stops until MemAvailable is back at idle (linear). */
  recoverMs: number;
  /** Pins MemAvailable to this value regardless of containers (e.g. "memory never frees"); null = model. */
  pinnedAvailableGiB: number | null;
}

export const DEFAULT_MEMORY: MemorySettings = {
  totalGiB: 128,
  idleAvailableGiB: 118,
  runningAvailableGiB: 20,
  recoverMs: 1500,
  pinnedAvailableGiB: null,
};

/**
 * A higher watermark_scale_factor reserves more memory, so MemAvailable shrinks for the same free memory.
 * Calibrated so factor 300 costs ~20 GiB on 128 GiB (spec: ~97-99 GiB idle at 300).
 */
export function watermarkPenaltyGiB(totalGiB: number, factor: number): number {
  return Math.max(0, ((factor - 10) / 10000) * totalGiB * 5.5);
}

/** MemAvailable (GiB) at `now`, given whether a container runs and when the last one stopped. */
export function availableGiB(s: MemorySettings, running: boolean, stoppedAt: number | null, factor: number, now: number): number {
  let avail: number;
  if (s.pinnedAvailableGiB !== null) avail = s.pinnedAvailableGiB;
  else if (running) avail = s.runningAvailableGiB;
  else if (stoppedAt !== null && now - stoppedAt < s.recoverMs) {
    const f = (now - stoppedAt) / s.recoverMs;
    avail = s.runningAvailableGiB + f * (s.idleAvailableGiB - s.runningAvailableGiB);
  } else avail = s.idleAvailableGiB;
  return Math.max(0.5, avail - watermarkPenaltyGiB(s.totalGiB, factor));
}

function line(label: string, kb: number): string {
  return `${`${label}:`.padEnd(16)}${String(Math.round(kb)).padStart(10)} kB\n`;
}

/** A /proc/meminfo text of constant length for the given total and available memory. */
export function renderMeminfo(totalGiB: number, availGiB: number): string {
  const total = totalGiB * GiB_KB;
  const avail = Math.min(availGiB * GiB_KB, total);
  const cached = Math.min(avail * 0.35, 8 * GiB_KB);
  const free = Math.max(0, avail - cached * 0.9);
  return [
    line('MemTotal', total),
    line('MemFree', free),
    line('MemAvailable', avail),
    line('Buffers', 262144),
    line('Cached', cached),
    line('SwapCached', 0),
    line('Active', (total - free) * 0.6),
    line('Inactive', (total - free) * 0.3),
    line('SwapTotal', 0),
    line('SwapFree', 0),
    line('Dirty', 128),
    line('Shmem', 1048576),
    line('Slab', 2097152),
    line('CommitLimit', total / 2),
    line('HugePages_Total', 0),
    line('Hugepagesize', 2048),
  ].join('');
}

/** Rewrites `file` in place with `text` (one write at offset 0; the length never changes for meminfo). */
export function rewriteInPlace(file: string, text: string): void {
  const fd = fs.openSync(file, fs.existsSync(file) ? 'r+' : 'w');
  try {
    const buf = Buffer.from(text);
    fs.writeSync(fd, buf, 0, buf.length, 0);
    if (fs.fstatSync(fd).size !== buf.length) fs.ftruncateSync(fd, buf.length);
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads the watermark factor the node currently shows. */
export function readWatermark(file: string): number {
  try {
    return Number(fs.readFileSync(file, 'utf8').trim()) || 10;
  } catch {
    return 10;
  }
}
