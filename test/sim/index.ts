/**
 * The DGX Spark node simulator (test-only). `startSim` brings up N nodes, each a real sshd on its own loopback
 * address with its own host key and mount namespace, its own real Docker engine (dockerd, engine.ts) with the sim
 * image imported, a simulated vLLM (in a real container), nvidia-smi, GPU hook and sudo, a recipe lookalike and
 * simulated memory; `stop()` ends every process it started. See docs/SIMULATOR.md.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_CONTROL } from './control.js';
import { killEngine } from './engine.js';
import { buildImageTar, imageTemplate } from './image.js';
import { buildNodeTree } from './layout.js';
import { DEFAULT_MEMORY } from './memory.js';
import type { MemorySettings } from './memory.js';
import { SimNode } from './node.js';
import { writeNodesJson } from './nodes-json.js';
import type { NodesJsonOptions } from './nodes-json.js';
import { nodePaths } from './paths.js';
import { pickPort } from './ports.js';
import { killNamespaces, mountTag } from './procs.js';
import { forgetSim, registerSim, reapStaleSims, updateEntry } from './registry.js';
import { writeKnownHosts, writeSshConfig } from './ssh-files.js';
import type { HostEntry, KnownHostsOptions } from './ssh-files.js';

export { SimNode } from './node.js';
export type { RequestRecord, StopMode } from './node.js';
export type { FailureMode, NodeControl } from './control.js';
export type { MemorySettings } from './memory.js';
export type { NodesJsonOptions } from './nodes-json.js';
export type { KnownHostsOptions } from './ssh-files.js';
export { CONTAINER_NAME, DEFAULT_IMAGE, MODEL_ID, PROFILE_IMAGE, RECIPE_NAME } from './paths.js';

const execFileP = promisify(execFile);

export interface SimOptions {
  /** Node count (named spark1..sparkN) or the node names. */
  nodes: number | string[];
  /** Sim directory (created; kept after stop). Default: a new temp dir, removed by stop(). */
  dir?: string;
  /** Default time a started vLLM takes to listen (per node: setReadyDelay). Default 300 ms. */
  readyDelayMs?: number;
  /** start.sh's readiness poll interval in seconds (the real recipe polls every 5 s). Default 0.2. */
  readyPollS?: number;
  memory?: Partial<MemorySettings>;
  /** Last octet of the first node's address (127.0.0.X). Default 20. */
  firstAddress?: number;
  /** root's login shell per node, e.g. `{ spark2: '/bin/sh' }` (spark2's is zsh; sshd runs the command with it). */
  loginShells?: Record<string, string>;
  /** Memory model update interval. Default 100 ms. */
  tickMs?: number;
}

/** A running simulator. */
export class Sim {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    readonly dir: string,
    readonly nodes: SimNode[],
    readonly sshConfigPath: string,
    readonly knownHostsPath: string,
    readonly identityPath: string,
    private readonly hosts: HostEntry[],
    /** A host key no node has, for "changed host key" tests. */
    readonly foreignHostKey: string,
    /** The sim made `dir` (a temp dir) and removes it on stop. */
    readonly ownsDir: boolean,
  ) {}

  /** The node called `name` (throws for an unknown name). */
  node(name: string): SimNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`sim: no node ${name} (have ${this.nodes.map((x) => x.name).join(', ')})`);
    return n;
  }

  /** Writes a nodes.json for the sim nodes. */
  writeNodesJson(file: string, opts: NodesJsonOptions = {}): void {
    writeNodesJson(file, this.nodes, opts);
  }

  /** Writes another known_hosts (hashed, missing or wrong keys) for host-key tests. */
  writeKnownHosts(file: string, opts: KnownHostsOptions = {}): void {
    writeKnownHosts(file, this.hosts, opts);
  }

  /** Writes another ssh config for the same nodes, e.g. pointing at a known_hosts from writeKnownHosts. */
  writeSshConfig(file: string, knownHostsFile: string): void {
    writeSshConfig(file, this.hosts, this.identityPath, knownHostsFile);
  }

  /** Environment for production code against this sim (PULSE_SSH_CONFIG). */
  env(): Record<string, string> {
    return { PULSE_SSH_CONFIG: this.sshConfigPath };
  }

  /** @internal starts the memory model timer. */
  startTimer(tickMs: number): void {
    this.timer = setInterval(() => this.tick(), tickMs);
    this.timer.unref();
  }

  private tick(): void {
    const now = Date.now();
    for (const n of this.nodes) {
      try {
        n.tick(now);
      } catch {
        /* a node mid-teardown: next tick */
      }
    }
  }

  /** Ends every process of the sim (sshd, sessions, containers, timers); removes the dir if the sim made it. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all(this.nodes.map((n) => n.kill()));
    forgetSim(this);
    if (this.ownsDir) fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** Synchronous last-resort kill (process exit): no waiting; removes the dir if the sim made it. */
  killSync(): void {
    if (this.timer) clearInterval(this.timer);
    const all = new Set<string>();
    for (const n of this.nodes) n.namespaces.forEach((ns) => all.add(ns));
    for (const n of this.nodes) killEngine(n.cgroupKey);
    killNamespaces(all, mountTag(this.dir));
    if (this.ownsDir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

function nodeNames(nodes: number | string[]): string[] {
  return typeof nodes === 'number' ? Array.from({ length: nodes }, (_, i) => `spark${i + 1}`) : nodes;
}

/** Starts a simulator with the given nodes; stop it with `sim.stop()` (or `stopAllSims()` in an after hook). */
export async function startSim(opts: SimOptions): Promise<Sim> {
  reapStaleSims();
  const ownsDir = !opts.dir;
  const dir = opts.dir ? path.resolve(opts.dir) : fs.mkdtempSync(path.join(os.tmpdir(), 'pulse-sim-'));
  const sshDir = path.join(dir, 'ssh');
  fs.mkdirSync(sshDir, { recursive: true, mode: 0o700 });
  const identity = path.join(sshDir, 'id_ed25519');
  const foreign = path.join(sshDir, 'foreign_host_key');
  fs.rmSync(identity, { force: true });
  fs.rmSync(`${identity}.pub`, { force: true });
  fs.rmSync(foreign, { force: true });
  fs.rmSync(`${foreign}.pub`, { force: true });
  await Promise.all([
    execFileP('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'pulse-sim-client', '-f', identity]),
    execFileP('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'pulse-sim-foreign', '-f', foreign]),
  ]);
  const authorizedKeys = path.join(sshDir, 'authorized_keys');
  fs.copyFileSync(`${identity}.pub`, authorizedKeys);
  const memory = { ...DEFAULT_MEMORY, ...opts.memory };
  const control = { ...DEFAULT_CONTROL, readyDelayMs: opts.readyDelayMs ?? DEFAULT_CONTROL.readyDelayMs };
  const first = opts.firstAddress ?? 20;
  const names = nodeNames(opts.nodes);
  const imageTar = buildImageTar();
  const template = await imageTemplate(imageTar);
  const built = await Promise.all(
    names.map(async (name, i) => {
      const address = `127.0.0.${first + i}`;
      const paths = nodePaths(dir, name);
      fs.rmSync(paths.root, { recursive: true, force: true });
      const hostKey = await buildNodeTree(name, paths, { memory, control, readyPollS: opts.readyPollS ?? 0.2 });
      const node = new SimNode(name, address, await pickPort(address), await pickPort('127.0.0.1'), paths, memory, authorizedKeys, opts.loginShells?.[name]);
      return { node, hostKey };
    }),
  );
  const nodes = built.map((b) => b.node);
  const hosts = built.map((b) => ({ alias: b.node.name, address: b.node.address, port: b.node.sshPort, hostKey: b.hostKey }));
  const sshConfigPath = path.join(sshDir, 'config');
  const knownHostsPath = path.join(sshDir, 'known_hosts');
  writeKnownHosts(knownHostsPath, hosts);
  writeSshConfig(sshConfigPath, hosts, identity, knownHostsPath);
  const sim = new Sim(dir, nodes, sshConfigPath, knownHostsPath, identity, hosts, fs.readFileSync(`${foreign}.pub`, 'utf8').trim(), ownsDir);
  registerSim(sim);
  try {
    // Each node's engine first (its socket is what the node's sshd namespace mounts), then the sshd.
    await Promise.all(nodes.map(async (n) => {
      await n.startEngine(imageTar, template);
      await n.startSshd();
    }));
    for (const n of nodes) n.onRestart = () => updateEntry(sim);
    updateEntry(sim);
  } catch (err) {
    await sim.stop();
    throw err;
  }
  sim.startTimer(opts.tickMs ?? 100);
  return sim;
}

export { stopAllSims } from './registry.js';
