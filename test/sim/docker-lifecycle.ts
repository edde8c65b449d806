/**
 * The docker subcommands of the simulator that change a container's state: stop, kill, rm, pause, unpause. They
 * follow moby daemon/stop.go, kill.go, delete.go and pause.go: stop of a container that does not run is a
 * success (304), a paused container gets the signal and is then resumed, a restarting one only has its restart
 * cancelled; rm refuses a running or paused container without -f and a removal already in progress. Exits are
 * recorded by the container's monitor (docker-shim.js); these commands wait for that record, as the daemon waits
 * for the exit event.
 */
import fs from 'node:fs';
import { readControl, writeControl } from './control.js';
import { takeFlag, takeOption, DockerExit } from './docker-args.js';
import type { ContainerRecord } from './docker-state.js';
import { SIDE, findRecord, loadRecord, processAlive, removeRecord, sidePath, updateRecord } from './docker-state.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nameOf = (rec: ContainerRecord) => rec.Name.slice(1);

/** Signals the container's process group (it runs in its own session), like docker signals the cgroup's init. */
function signalContainer(pid: number, signal: NodeJS.Signals): void {
  if (pid <= 0) return;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
      return;
    } catch {
      /* no such group: try the pid itself */
    }
  }
}

/** Waits until the record says not running (or is gone); false after `ms` (ms < 0: forever). */
async function waitNotRunning(dockerDir: string, rec: ContainerRecord, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    const now = loadRecord(dockerDir, nameOf(rec));
    if (!now || now.Id !== rec.Id || !now.State.Running) return true;
    if (ms >= 0 && Date.now() >= end) return false;
    await sleep(50);
  }
}

/** ExitOnNext / HasBeenManuallyStopped: the monitor restarts it no more. */
function markManualStop(dockerDir: string, rec: ContainerRecord): void {
  fs.writeFileSync(sidePath(dockerDir, nameOf(rec), SIDE.manualStop), '');
}

/** killWithSignal: a restarting container gets no signal; a paused one is resumed after the signal. */
async function sendSignal(dockerDir: string, rec: ContainerRecord, signal: NodeJS.Signals): Promise<void> {
  markManualStop(dockerDir, rec);
  if (rec.State.Restarting) return;
  signalContainer(rec.State.Pid, signal);
  if (rec.State.Paused) {
    signalContainer(rec.State.Pid, 'SIGCONT');
    await updateRecord(dockerDir, nameOf(rec), (r) => (r.State.Paused = false));
  }
}

/** daemon.kill: SIGKILL and wait for the exit (10 s), then a direct SIGKILL and 2 s more. */
async function killAndWait(dockerDir: string, rec: ContainerRecord): Promise<void> {
  await sendSignal(dockerDir, rec, 'SIGKILL');
  if (await waitNotRunning(dockerDir, rec, 10_000)) return;
  signalContainer(rec.State.Pid, 'SIGKILL');
  await waitNotRunning(dockerDir, rec, 2000);
}

/** containerStop: the stop signal, `t` seconds, then kill. */
async function stopOne(dockerDir: string, rec: ContainerRecord, timeoutS: number, signal: NodeJS.Signals): Promise<void> {
  if (!rec.State.Running) return;
  await sendSignal(dockerDir, rec, signal);
  if (await waitNotRunning(dockerDir, rec, timeoutS < 0 ? -1 : timeoutS * 1000)) return;
  const now = loadRecord(dockerDir, nameOf(rec)) ?? rec;
  await killAndWait(dockerDir, now);
}

const sigName = (s: string) => s.toUpperCase().replace(/^(?!SIG)/, 'SIG') as NodeJS.Signals;

/** `docker stop [-t N] [-s SIG]`. */
export async function stop(dockerDir: string, args: string[]): Promise<number> {
  const t = Number(takeOption(args, ['-t', '--time', '--timeout']) ?? 10);
  const sig = sigName(takeOption(args, ['-s', '--signal']) ?? 'SIGTERM');
  if (!args.length) throw new DockerExit('"docker stop" requires at least 1 argument.', 1);
  let code = 0;
  for (const ref of args) {
    const rec = findRecord(dockerDir, ref);
    if (!rec) {
      process.stderr.write(`Error response from daemon: No such container: ${ref}\n`);
      code = 1;
      continue;
    }
    await stopOne(dockerDir, rec, t, sig);
    console.log(ref);
  }
  return code;
}

/** `docker kill [-s SIG]`: SIGKILL waits for the exit; another signal is only sent. */
export async function kill(dockerDir: string, args: string[]): Promise<number> {
  const sig = sigName(takeOption(args, ['-s', '--signal']) ?? 'SIGKILL');
  if (!args.length) throw new DockerExit('"docker kill" requires at least 1 argument.', 1);
  let code = 0;
  for (const ref of args) {
    const rec = findRecord(dockerDir, ref);
    if (!rec || !rec.State.Running) {
      process.stderr.write(rec ? `Error response from daemon: cannot kill container: ${ref}: container ${rec.Id} is not running\n` : `Error response from daemon: No such container: ${ref}\n`);
      code = 1;
      continue;
    }
    if (sig === 'SIGKILL') await killAndWait(dockerDir, rec);
    else await sendSignal(dockerDir, rec, sig);
    console.log(ref);
  }
  return code;
}

/** The removal itself: slow (control removeDelayMs) or failing (removeFailures) like a busy overlay unmount. */
async function removeOne(dockerDir: string, stateDir: string, rec: ContainerRecord): Promise<string | null> {
  const control = readControl(stateDir);
  if (control.removeDelayMs > 0) await sleep(control.removeDelayMs);
  if (control.removeFailures > 0) {
    writeControl(stateDir, { removeFailures: control.removeFailures - 1 });
    const why = `driver "overlayfs" failed to remove root filesystem: unlinkat /var/lib/docker/rootfs/overlayfs/${rec.Id}: device or resource busy`;
    await updateRecord(dockerDir, nameOf(rec), (r) => {
      r.State.Dead = true;
      r.State.Error = why;
    });
    return why;
  }
  removeRecord(dockerDir, nameOf(rec));
  return null;
}

/** `docker rm [-f]` (containerRm in moby daemon/delete.go; the CLI ignores "no such container" with -f). */
export async function rm(dockerDir: string, stateDir: string, args: string[]): Promise<number> {
  const force = takeFlag(args, ['-f', '--force']);
  takeFlag(args, ['-v', '--volumes']);
  if (!args.length) throw new DockerExit('"docker rm" requires at least 1 argument.', 1);
  let code = 0;
  const fail = (msg: string) => {
    process.stderr.write(`Error response from daemon: ${msg}\n`);
    code = 1;
  };
  for (const ref of args) {
    const rec = findRecord(dockerDir, ref);
    if (!rec) {
      if (!force) fail(`No such container: ${ref}`);
      continue;
    }
    const removing = sidePath(dockerDir, nameOf(rec), SIDE.removing);
    try {
      fs.mkdirSync(removing);
    } catch {
      fail(`removal of container ${ref} is already in progress`);
      continue;
    }
    try {
      if (rec.State.Running && !force) {
        fail(`cannot remove container "${ref}": ${rec.State.Paused ? 'container is paused and must be unpaused first' : `container is ${rec.State.Status}: stop the container before removing or force remove`}`);
        continue;
      }
      if (rec.State.Running) await killAndWait(dockerDir, rec);
      const why = await removeOne(dockerDir, stateDir, rec);
      if (why) fail(`cannot remove container "${ref}": ${why}`);
      else console.log(ref);
    } finally {
      fs.rmSync(removing, { recursive: true, force: true });
    }
  }
  return code;
}

/** `docker pause` / `docker unpause` (the cgroup freezer; here SIGSTOP/SIGCONT of the container's group). */
export async function pause(dockerDir: string, args: string[], resume: boolean): Promise<number> {
  if (!args.length) throw new DockerExit(`"docker ${resume ? 'unpause' : 'pause'}" requires at least 1 argument.`, 1);
  let code = 0;
  for (const ref of args) {
    const rec = findRecord(dockerDir, ref);
    const problem = !rec
      ? `No such container: ${ref}`
      : resume
        ? !rec.State.Paused ? `Container ${rec.Id} is not paused` : null
        : !rec.State.Running || !processAlive(rec.State.Pid, rec.Id) ? `container ${rec.Id} is not running` : rec.State.Paused ? `container ${rec.Id} is already paused` : null;
    if (!rec || problem) {
      process.stderr.write(`Error response from daemon: ${problem}\n`);
      code = 1;
      continue;
    }
    signalContainer(rec.State.Pid, resume ? 'SIGCONT' : 'SIGSTOP');
    await updateRecord(dockerDir, nameOf(rec), (r) => (r.State.Paused = !resume));
    console.log(ref);
  }
  return code;
}

/**
 * `docker wait`: blocks until each container no longer runs (a restart by its policy keeps it running), then prints
 * its exit code (moby ContainerWait, condition not-running; the CLI prints StatusCode). A container that is gone
 * before its exit was seen is "No such container", exit 1.
 */
export async function wait(dockerDir: string, args: string[]): Promise<number> {
  if (!args.length) throw new DockerExit('"docker wait" requires at least 1 argument.', 1);
  let code = 0;
  for (const ref of args) {
    const rec = findRecord(dockerDir, ref);
    let now = rec;
    while (now && now.Id === rec?.Id && now.State.Running) {
      await sleep(5);
      now = loadRecord(dockerDir, nameOf(now));
    }
    if (!rec || !now || now.Id !== rec.Id) {
      process.stderr.write(`Error response from daemon: No such container: ${ref}\n`);
      code = 1;
      continue;
    }
    console.log(now.State.ExitCode);
  }
  return code;
}
