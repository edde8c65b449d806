/**
 * Finding and ending every process of a simulated node. Each node's sshd runs in its own mount namespace, and
 * everything it starts (sessions, setsid'd start.sh under `env -i`, containers) inherits it: the namespace is the
 * one tag no script can drop, so stop() kills by namespace, not by name.
 */
import fs from 'node:fs';

/** The mount namespace id (`mnt:[4026532178]`) of a process, or null when it is gone. */
export function mountNamespace(pid: number): string | null {
  try {
    return fs.readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return null;
  }
}

/** Pids of live processes in any of the namespaces `nsIds`. */
export function processesIn(nsIds: ReadonlySet<string>): number[] {
  if (nsIds.size === 0) return [];
  const self = mountNamespace(process.pid);
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const ns = mountNamespace(Number(entry));
    if (ns !== null && ns !== self && nsIds.has(ns)) out.push(Number(entry));
  }
  return out;
}

/** SIGKILLs every process in the namespaces until none is left (processes may fork while we kill). */
export function killNamespaces(nsIds: ReadonlySet<string>, rounds = 20): number[] {
  for (let i = 0; i < rounds; i++) {
    const pids = processesIn(nsIds);
    if (pids.length === 0) return [];
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    const until = Date.now() + 20;
    while (Date.now() < until) {
      /* short spin: dying processes leave /proc quickly, and this also runs in process.on('exit') */
    }
  }
  return processesIn(nsIds);
}

/** Sends `signal` to one pid, ignoring a process that is already gone. */
export function signalPid(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* already gone */
  }
}
