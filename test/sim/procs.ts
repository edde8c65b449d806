/**
 * Finding and ending every process of a simulated node. Each node's sshd runs in its own mount namespace, and
 * everything it starts (sessions, setsid'd start.sh under `env -i`, containers) inherits it: the namespace is the
 * one tag no script can drop, so stop() kills by namespace, not by name.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The mount namespace id (`mnt:[4026532178]`) of a process, or null when it is gone. */
export function mountNamespace(pid: number): string | null {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return null;
  }
}

/**
 * Pids of live processes in any of the namespaces `nsIds` whose mounts show `tag`: a namespace id is recycled once
 * its namespace is gone, so an old id alone must never select (or kill) somebody else's processes.
 */
export function processesIn(nsIds: ReadonlySet<string>, tag: string): number[] {
  if (nsIds.size === 0) return [];
  const self = mountNamespace(process.pid);
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ns = mountNamespace(Number(entry));
    if (ns !== null && ns !== self && nsIds.has(ns) && hasMount(Number(entry), tag)) out.push(Number(entry));
  }
  return out;
}

/**
 * The text every mount of a sim node shows in /proc/PID/mountinfo: `<sim dir name>/nodes/<node>/` (the mount
 * root is relative to its filesystem, so the absolute sim dir may not appear when /tmp is its own filesystem).
 */
export function mountTag(simDir: string, node = ''): string {
  return `${path.basename(simDir)}/nodes/${node ? `${node}/` : ''}`;
}

/** True when the process's mounts show `tag` (it lives in a namespace that mounts the sim's files). */
export function hasMount(pid: number, tag: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8').includes(tag);
  } catch {
    return false;
  }
}

/**
 * SIGKILLs every process `find` names until it names none (processes may fork while we kill), at most `rounds` times;
 * returns what is left. Synchronous (a short spin between rounds: dying processes leave /proc and their cgroup
 * quickly), because it also runs in process.on('exit').
 */
export function killUntilGone(find: () => number[], rounds: number): number[] {
  for (let i = 0; i < rounds; i++) {
    const pids = find();
    if (pids.length === 0) return [];
    for (const pid of pids) signalPid(pid);
    const until = Date.now() + 20;
    while (Date.now() < until) {
      /* short spin */
    }
  }
  return find();
}

/** SIGKILLs every process of processesIn(nsIds, tag) until none is left. */
export function killNamespaces(nsIds: ReadonlySet<string>, tag: string, rounds = 20): number[] {
  return killUntilGone(() => processesIn(nsIds, tag), rounds);
}

/** Sends `signal` to one pid, ignoring a process that is already gone. */
export function signalPid(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* already gone */
  }
}
