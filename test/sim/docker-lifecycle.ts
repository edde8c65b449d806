/** The docker subcommands of the simulator that end containers: stop, kill, rm. */
import { takeFlag, takeOption, DockerExit } from './docker-args.js';
import type { ContainerRecord } from './docker-state.js';
import { dockerNow, findRecord, processAlive, removeRecord, saveRecord } from './docker-state.js';

async function waitGone(rec: ContainerRecord, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!processAlive(rec.State.Pid, rec.Id)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !processAlive(rec.State.Pid, rec.Id);
}

/** Signals the container's process group (it runs in its own session), like docker signals the whole cgroup. */
function signalContainer(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
      return;
    } catch {
      /* no such group: try the pid itself */
    }
  }
}

async function stopOne(dockerDir: string, rec: ContainerRecord, timeoutS: number, signal: NodeJS.Signals): Promise<void> {
  if (!rec.State.Running) return;
  signalContainer(rec.State.Pid, signal);
  if (!(await waitGone(rec, timeoutS * 1000))) {
    signalContainer(rec.State.Pid, 'SIGKILL');
    await waitGone(rec, 2000);
  }
  if (signal === 'SIGKILL' || !processAlive(rec.State.Pid, rec.Id)) signalContainer(rec.State.Pid, 'SIGKILL');
  const after = findRecord(dockerDir, rec.Id) ?? rec;
  if (after.State.Running) {
    after.State = { ...after.State, Status: 'exited', Running: false, Pid: 0, ExitCode: 137, FinishedAt: dockerNow() };
    saveRecord(dockerDir, after);
  }
}

/** `docker stop` (SIGTERM, SIGKILL after -t seconds) and `docker kill`. */
export async function stop(dockerDir: string, args: string[], kill: boolean): Promise<number> {
  const t = Number(takeOption(args, ['-t', '--time', '--timeout']) ?? 10);
  const sig = (takeOption(args, ['-s', '--signal']) ?? (kill ? 'SIGKILL' : 'SIGTERM')).replace(/^(?!SIG)/, 'SIG') as NodeJS.Signals;
  if (!args.length) throw new DockerExit(`"docker ${kill ? 'kill' : 'stop'}" requires at least 1 argument.`, 1);
  let code = 0;
  for (const ref of args) {
    const rec = findRecord(dockerDir, ref);
    if (!rec) {
      process.stderr.write(`Error response from daemon: No such container: ${ref}\n`);
      code = 1;
      continue;
    }
    await stopOne(dockerDir, rec, kill ? 0 : t, sig);
    console.log(ref);
  }
  return code;
}

/** `docker rm [-f]`. */
export async function rm(dockerDir: string, args: string[]): Promise<number> {
  const force = takeFlag(args, ['-f', '--force']);
  takeFlag(args, ['-v', '--volumes']);
  if (!args.length) throw new DockerExit('"docker rm" requires at least 1 argument.', 1);
  let code = 0;
  for (const ref of args) {
    const rec = findRecord(dockerDir, ref);
    if (!rec) {
      // Since docker 23 the CLI ignores "no such container" with --force.
      if (!force) {
        process.stderr.write(`Error response from daemon: No such container: ${ref}\n`);
        code = 1;
      }
      continue;
    }
    if (rec.State.Running && !force) {
      process.stderr.write(`Error response from daemon: cannot remove container "${rec.Name}": container is running: stop the container before removing or force remove\n`);
      code = 1;
      continue;
    }
    if (rec.State.Running) await stopOne(dockerDir, rec, 0, 'SIGKILL');
    removeRecord(dockerDir, rec.Name.slice(1));
    console.log(ref);
  }
  return code;
}

