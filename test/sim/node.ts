/**
 * One simulated node as the test sees it: its addresses and paths, the controls that make it misbehave, and the
 * records (requests, start.sh calls, docker calls) that prove what happened on it.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readControl, writeControl } from './control.js';
import type { FailureMode, NodeControl } from './control.js';
import { readImages, readVolumes, writeImages, writeVolumes } from './docker-state.js';
import { NodeRecords } from './node-records.js';
export type { RequestRecord } from './node-records.js';
import { availableGiB, readWatermark, renderMeminfo, rewriteInPlace } from './memory.js';
import type { MemorySettings } from './memory.js';
import type { NodePaths } from './paths.js';
import { CONTAINER_NAME } from './paths.js';
import { killNamespaces, mountNamespace, mountTag, processesIn, signalPid } from './procs.js';
import { startSshd } from './sshd.js';
import { startStray } from './stray.js';
import type { StrayOptions, StrayServer } from './stray.js';

export type StopMode = 'ok' | 'fail' | 'hang' | 'noop';

/** A simulated DGX Spark node. */
export class SimNode extends NodeRecords {
  /** Every mount namespace this node's sshd ever had (containers outlive an sshd restart). */
  readonly namespaces = new Set<string>();
  private sshd: ChildProcess | null = null;
  private wasRunning = false;
  private stoppedAt: number | null = null;
  /** Called after the sshd got a new namespace (the sim updates its registry entry). */
  onRestart: (() => void) | null = null;

  constructor(
    readonly name: string,
    /** Loopback address of the node's sshd, e.g. 127.0.0.20. */
    readonly address: string,
    readonly sshPort: number,
    /** The vLLM port (env PORT) of this node; the server binds 127.0.0.1 (BIND). */
    readonly vllmPort: number,
    override readonly paths: NodePaths,
    private memory: MemorySettings,
    private readonly authorizedKeys: string,
    private readonly loginShell?: string,
  ) {
    super(paths);
  }

  get recipeDir(): string {
    return this.paths.recipeDir;
  }
  get envPath(): string {
    return this.paths.envPath;
  }
  get hfHome(): string {
    return this.paths.hfHome;
  }
  get containerName(): string {
    return CONTAINER_NAME;
  }

  /** What this node's mounts show in /proc/PID/mountinfo (see procs.ts). */
  private get tag(): string {
    return mountTag(path.dirname(path.dirname(this.paths.root)), this.name);
  }

  /** Starts (or restarts) the node's sshd in a fresh mount namespace. */
  async startSshd(): Promise<void> {
    if (this.sshd && this.sshd.exitCode === null && this.sshd.signalCode === null) return;
    this.sshd = await startSshd({ name: this.name, address: this.address, port: this.sshPort, paths: this.paths, authorizedKeys: this.authorizedKeys, loginShell: this.loginShell });
    const ns = mountNamespace(this.sshd.pid ?? -1);
    if (ns) this.namespaces.add(ns);
    this.onRestart?.();
  }

  /** Kills the sshd listener and every ssh session (the node becomes unreachable); containers keep running. */
  async stopSshd(): Promise<void> {
    this.killSshSessions();
    const child = this.sshd;
    this.sshd = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    signalPid(child.pid ?? -1);
    await exited;
  }

  /**
   * Freezes (SIGSTOP) or thaws the sshd listener: new connections are accepted by the kernel but get no banner,
   * so clients hit their handshake timeout; open sessions keep working.
   */
  freezeSshd(frozen = true): void {
    if (this.sshd?.pid) signalPid(this.sshd.pid, frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Drops every open ssh connection (SIGKILL to the per-connection sshd processes), like a lost link. */
  killSshSessions(): void {
    for (const pid of processesIn(this.namespaces, this.tag)) {
      if (pid === this.sshd?.pid) continue;
      try {
        if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sshd') signalPid(pid);
      } catch {
        /* gone */
      }
    }
  }

  /** Kills everything of the node (sessions, containers, start.sh) and then its sshd. */
  async kill(): Promise<void> {
    const listener = this.sshd?.pid;
    const others = new Set(this.namespaces);
    for (let i = 0; i < 20; i++) {
      const pids = processesIn(others, this.tag).filter((p) => p !== listener);
      if (pids.length === 0) break;
      pids.forEach((p) => signalPid(p));
      await new Promise((r) => setTimeout(r, 20));
    }
    await this.stopSshd();
    killNamespaces(others, this.tag);
  }

  /** Live pids of the node (its sshd, sessions, containers, detached scripts). */
  processes(): number[] {
    return processesIn(this.namespaces, this.tag);
  }

  /** Runs a bash script inside the node's mount namespace (sees the node's /proc/meminfo and tools). */
  exec(script: string): string {
    const pid = this.sshd?.pid;
    if (!pid) throw new Error(`sim node ${this.name}: sshd is not running`);
    return execFileSync('nsenter', ['-t', String(pid), '-m', '-u', 'bash', '-s'], { input: script, encoding: 'utf8', env: { ...process.env, PATH: `${this.paths.binDir}:${process.env.PATH ?? ''}` } });
  }

  /**
   * Starts a stray old vLLM outside docker that shares the node's vLLM port (SO_REUSEPORT, same user): listening at
   * once, or bound now and listening once the node's container runs (`listen: 'after-start'`). See stray.ts.
   */
  async startStray(opts: StrayOptions = {}): Promise<StrayServer> {
    const pid = this.sshd?.pid;
    if (!pid) throw new Error(`sim node ${this.name}: sshd is not running`);
    return startStray(pid, this.paths.state, this.paths.dockerDir, this.vllmPort, opts);
  }

  /** Changes the memory model (e.g. `{ pinnedAvailableGiB: 50 }`: memory never frees). */
  setMemory(patch: Partial<MemorySettings>): void {
    this.memory = { ...this.memory, ...patch };
    this.tick(Date.now());
  }
  /** Sets vm.watermark_scale_factor as the node shows it (a higher factor lowers MemAvailable). */
  setWatermark(factor: number): void {
    rewriteInPlace(this.paths.watermark, `${factor}\n`); // the bind mount pins the inode: never replace the file
    this.tick(Date.now());
  }
  /** MemAvailable the node shows now, in GiB. */
  memAvailableGiB(): number {
    const m = /MemAvailable:\s+(\d+) kB/.exec(fs.readFileSync(this.paths.meminfo, 'utf8'));
    return Number(m?.[1] ?? 0) / (1024 * 1024);
  }

  /** Recomputes and rewrites the node's /proc/meminfo (called by the sim's timer). */
  tick(now: number): void {
    const running = this.containers().some((c) => c.State.Running);
    if (this.wasRunning && !running) this.stoppedAt = now;
    this.wasRunning = running;
    const avail = availableGiB(this.memory, running, this.stoppedAt, readWatermark(this.paths.watermark), now);
    rewriteInPlace(this.paths.meminfo, renderMeminfo(this.memory.totalGiB, avail));
  }

  /** Failure mode of the next container start. */
  setFailure(failure: FailureMode): void {
    writeControl(this.paths.state, { failure });
  }
  /** Time the next started vLLM takes to listen. */
  setReadyDelay(ms: number): void {
    writeControl(this.paths.state, { readyDelayMs: ms });
  }
  /** Any other control (slowMs, nvidiaSmiHidesContainers, dockerDown, dockerSlowMs). */
  setControl(patch: Partial<NodeControl>): NodeControl {
    return writeControl(this.paths.state, patch);
  }
  /** The node's current controls. */
  control(): NodeControl {
    return readControl(this.paths.state);
  }
  /** Whether `sudo -n` succeeds on the node. */
  setSudo(ok: boolean): void {
    const f = path.join(this.paths.state, 'sudo-ok');
    if (ok) fs.writeFileSync(f, '');
    else fs.rmSync(f, { force: true });
  }
  /** How the recipe's stop.sh behaves: ok, fail (exit 1), hang (never returns), noop (exit 0, container stays). */
  setStopMode(mode: StopMode): void {
    fs.writeFileSync(path.join(this.paths.state, 'stop-mode'), `${mode}\n`);
  }
  /** Makes `image` absent, so `docker image inspect` fails and `docker run` cannot pull it. */
  removeImage(image: string): void {
    writeImages(this.paths.dockerDir, readImages(this.paths.dockerDir).filter((i) => i !== image));
  }
  /** Makes `image` present ("pulled") on the node. */
  addImage(image: string): void {
    writeImages(this.paths.dockerDir, [...new Set([...readImages(this.paths.dockerDir), image])]);
  }

  /** Runs the node's docker with `args` inside the node (e.g. `pause vllm-qwen38`); returns its stdout. */
  docker(...args: string[]): string {
    return this.exec(`docker ${args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')}`);
  }
  /** The restart policy the recipe's next `docker run` gets (`--restart X`); null: none (docker's default "no"). */
  setRestartPolicy(policy: string | null): void {
    const f = path.join(this.paths.state, 'restart-policy');
    if (policy) fs.writeFileSync(f, `${policy}\n`);
    else fs.rmSync(f, { force: true });
  }
  /** Makes a volume named `name` exist (so `docker inspect NAME` finds a volume). */
  addVolume(name: string): void {
    writeVolumes(this.paths.dockerDir, [...new Set([...readVolumes(this.paths.dockerDir), name])]);
  }
  /** The daemon's /etc/docker/daemon.json log settings for containers created from now on; null: the default. */
  setDaemonLogConfig(cfg: { driver?: string; opts?: Record<string, string> } | null): void {
    const f = path.join(this.paths.dockerDir, 'daemon.json');
    if (!cfg) fs.rmSync(f, { force: true });
    else fs.writeFileSync(f, JSON.stringify({ ...(cfg.driver ? { 'log-driver': cfg.driver } : {}), ...(cfg.opts ? { 'log-opts': cfg.opts } : {}) }));
  }
  /** Drops all log lines of the container up to and including "Application startup complete." (log rotation). */
  rotateLog(container = CONTAINER_NAME): void {
    const rec = this.containers().find((c) => c.Name === `/${container}`);
    if (!rec) throw new Error(`sim node ${this.name}: no container ${container}`);
    const lines = fs.readFileSync(rec.LogPath, 'utf8').split('\n').filter((l) => l !== '');
    const cut = lines.findIndex((l) => l.includes('Application startup complete.'));
    const filler = JSON.stringify({ stream: 'stdout', log: 'INFO 00-00 00:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 812.4 tokens/s (log rotated by the simulator)\n', time: new Date().toISOString() });
    fs.writeFileSync(rec.LogPath, [filler, ...lines.slice(cut + 1)].join('\n') + '\n');
  }
}
