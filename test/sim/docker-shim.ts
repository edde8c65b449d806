/**
 * The monitor of one simulated container: the stand-in for containerd-shim plus the daemon's exit handling
 * (moby daemon/monitor.go handleContainerExit, daemon/internal/restartmanager). It starts the container process
 * in its own process group, records its exit as docker does (ExitCode, or 128 + the signal number), and applies
 * the restart policy: RestartCount++, state `restarting` during the back-off (100 ms, doubling, at most 1 min,
 * reset after a run of 10 s or more), then a new process. A `docker stop`/`kill` cancels the restart manager
 * (the manual-stop sidecar). argv: dockerDir name id. Runs detached; SIM_STATE is the node's state dir.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { containerEnv } from './docker-run.js';
import type { ContainerRecord } from './docker-state.js';
import { SIDE, containerDir, dockerNow, loadRecord, removeRecord, sidePath, updateRecord } from './docker-state.js';
import { SIM_DIST } from './paths.js';
import { bindThenExec } from './vllm-bind.js';

const [dockerDir = '', name = '', id = ''] = process.argv.slice(2);
const stateDir = process.env.SIM_STATE ?? '';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Any non-vLLM command runs under a node wrapper that carries the container id in its argv (the sim's pid-reuse
// guard) and ends with its child's status; it ignores the stop signals, which reach its child through the group.
const WRAP = `const c=require('child_process').spawn(process.argv[2],process.argv.slice(3),{stdio:'inherit'});
for(const s of ['SIGTERM','SIGINT','SIGHUP'])process.on(s,()=>undefined);
c.on('error',()=>process.exit(127));c.on('exit',(code,sig)=>process.exit(code??128+(require('os').constants.signals[sig]||9)));`;

function argvOf(rec: ContainerRecord): string[] {
  const [cmd, ...rest] = rec.Config.Cmd;
  if (cmd === 'vllm') return bindThenExec([process.execPath, path.join(SIM_DIST, 'vllm.js'), `--sim-id=${rec.Id}`, ...rest]);
  return [process.execPath, '-e', WRAP, rec.Id, ...rec.Config.Cmd];
}

/** Starts the container process (own session and group, stdio to raw.log); resolves with its exit status. */
function startTask(rec: ContainerRecord): { pid: number; exited: Promise<number> } {
  const out = fs.openSync(path.join(containerDir(dockerDir, name), 'raw.log'), 'a');
  const [prog, ...args] = argvOf(rec);
  const child = spawn(prog!, args, { detached: true, stdio: ['ignore', out, out], env: containerEnv(rec, stateDir), cwd: '/' });
  fs.closeSync(out);
  const exited = new Promise<number>((resolve) => {
    child.once('error', () => resolve(127));
    child.once('exit', (code, sig) => resolve(code ?? 128 + (sig ? (os.constants.signals[sig] ?? 9) : 9)));
  });
  return { pid: child.pid ?? 0, exited };
}

const manuallyStopped = () => fs.existsSync(sidePath(dockerDir, name, SIDE.manualStop));

/** ShouldRestart of the restart manager; the back-off is the caller's. */
function shouldRestart(rec: ContainerRecord, exitCode: number): boolean {
  const p = rec.HostConfig.RestartPolicy;
  if (manuallyStopped()) return false;
  if (p.Name === 'always' || p.Name === 'unless-stopped') return true;
  if (p.Name === 'on-failure') return exitCode !== 0 && (p.MaximumRetryCount === 0 || rec.RestartCount < p.MaximumRetryCount);
  return false;
}

async function main(): Promise<void> {
  fs.writeFileSync(sidePath(dockerDir, name, SIDE.shim), String(process.pid));
  let backoff = 0;
  for (;;) {
    const rec = loadRecord(dockerDir, name, false);
    if (!rec || rec.Id !== id) return;
    const task = startTask(rec);
    const startedMs = Date.now();
    await updateRecord(dockerDir, name, (r) => {
      r.State = { ...r.State, Running: true, Paused: false, Restarting: false, Pid: task.pid, ExitCode: 0, Error: '', StartedAt: dockerNow(startedMs) };
    });
    const code = await task.exited;
    const at = dockerNow();
    fs.writeFileSync(path.join(containerDir(dockerDir, name), 'exit.json'), JSON.stringify({ code, at }));
    const now = loadRecord(dockerDir, name, false);
    if (!now) return;
    if (Date.now() - startedMs >= 10_000) backoff = 0;
    backoff = backoff === 0 ? 100 : Math.min(backoff * 2, 60_000);
    if (!shouldRestart(now, code)) {
      const done = await updateRecord(dockerDir, name, (r) => {
        r.State = { ...r.State, Running: false, Paused: false, Restarting: false, Pid: 0, ExitCode: code, FinishedAt: at };
      });
      if (done?.HostConfig.AutoRemove) removeRecord(dockerDir, name);
      return;
    }
    await updateRecord(dockerDir, name, (r) => {
      r.RestartCount += 1;
      r.State = { ...r.State, Running: true, Paused: false, Restarting: true, Pid: 0, ExitCode: code, FinishedAt: at };
    });
    // The back-off; a docker stop during it cancels the restart (ExitOnNext), as the restart manager does.
    for (const until = Date.now() + backoff; Date.now() < until; ) {
      if (manuallyStopped()) {
        await updateRecord(dockerDir, name, (r) => {
          r.State = { ...r.State, Running: false, Restarting: false, Pid: 0 };
        });
        return;
      }
      await sleep(20);
    }
  }
}

await main();
