/**
 * Another local user cannot take over the operator's worker (issue 27, item 3). A real second user (a throwaway
 * account made here with useradd, removed after) runs its own Temporal dev server, as an attacker on the controller
 * host would, and plants what the attack needs: a state dir of its own (or a group/other-writable one) whose
 * temporal/server.json names that server, a server.json in the operator's own dir naming it, a worker log that is a
 * link to its file. The operator (root, as in CI) runs the real CLI against a simulated node each time: the
 * planted state dir is refused in one line saying how to fix it and nothing runs (no workflow on the attacker's
 * server, the node's .env untouched, no file written in the dir); a server.json naming another user's server is
 * not trusted (pulse starts its own, and the deploy runs there); a linked worker log is refused and its target
 * stays empty.
 * The two cases that need no second user run in every run, root or not: a group/other-writable state dir of the
 * operator's own (its planted server.json names a listener of this test, which must see no connection) and a linked
 * worker log (the link's target is the operator's own file there, the attacker's under root).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, chownSync, lchownSync, constants, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { Connection, Client } from '@temporalio/client';
import { startDevArgs, stopEmbeddedServer, temporalBinary } from '../../cli/deploy-client/embedded-server.js';
import type { Sim } from '../sim/index.js';
import { killEmbeddedServerOnExit, removeDir, runCli, tempDir } from '../helpers/cli.js';
import { freePortPair } from '../sim/ports.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { until } from '../helpers/until.js';

const canRun = process.getuid?.() === 0 && existsSync('/usr/sbin/useradd') && existsSync('/usr/bin/setpriv');
const skip = canRun ? false : 'needs root, useradd and setpriv (a real second local user)';

const user = `pulse-evil-${randomBytes(3).toString('hex')}`;
let uid = -1;
let gid = -1;
let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};
/** The attacker's own folder (its server's database, its files). */
let evilDir = '';
let evilPort = 0;
let evilServer: ChildProcess | null = null;
const extraDirs: string[] = [];
/** A stand-in for a planted server where no second user exists: a TCP listener that counts who connects. */
let decoy: Server | null = null;
let decoyPort = 0;
let decoyConnections = 0;

function asUser(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ChildProcess {
  return spawn('/usr/bin/setpriv', ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', '--', cmd, ...args], {
    cwd: opts.cwd, env: opts.env ?? { PATH: '/usr/bin:/bin', HOME: evilDir }, stdio: ['ignore', 'ignore', 'ignore'], detached: true,
  });
}

/** Runs a command as the attacker to its end. */
function asUserSync(cmd: string, args: string[]): { status: number | null; out: string } {
  const r = spawnSync('/usr/bin/setpriv', ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', '--', cmd, ...args], { encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** The workflows on the attacker's server: what root's commands would have run there. */
async function evilWorkflows(): Promise<string[]> {
  const connection = await Connection.connect({ address: `127.0.0.1:${evilPort}` });
  try {
    const ids: string[] = [];
    for await (const w of new Client({ connection }).workflow.list()) ids.push(w.workflowId);
    return ids;
  } finally {
    await connection.close();
  }
}

/** What the attacker plants: a server.json naming its own server (default: the second user's), as pulse writes one. */
function serverJson(stateDir: string, port = evilPort, pid = evilServer?.pid): string {
  const t = path.join(stateDir, 'temporal');
  return JSON.stringify({
    pid, ip: '127.0.0.1', port, uiPort: port + 1000, address: `127.0.0.1:${port}`,
    dbFile: path.join(t, 'dev.db'), logFile: path.join(t, 'server.log'), startedAt: new Date().toISOString(),
  });
}

/** The node's .env and its backups: an up that ran changes both. */
function nodeFiles(): string {
  const node = (sim as Sim).node('simA');
  return [readFileSync(node.envPath, 'utf8'), ...readdirSync(node.recipeDir).filter((f) => f.startsWith('.env.pulse-bak-')).sort()].join('\n');
}

function nodeUntouched(before: string): void {
  assert.equal(nodeFiles(), before, 'the node .env and its backups are unchanged: no up ran');
}

before(async () => {
  ({ sim, dir, env } = await startSimCli('pulse-local-user-', { nodes: ['simA'], readyDelayMs: 200 }));
  writeFileSync(sim.node('simA').envPath, 'MAX_NUM_SEQS=2\n');
  decoy = createServer((socket) => {
    decoyConnections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => decoy!.listen(0, '127.0.0.1', resolve));
  decoyPort = (decoy.address() as { port: number }).port;
  if (!canRun) return;
  const made = spawnSync('/usr/sbin/useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', user], { encoding: 'utf8' });
  assert.equal(made.status, 0, made.stderr);
  uid = Number(spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim());
  gid = Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim());
  // The attacker's own folder and its own Temporal server (the pinned binary, copied when the attacker cannot reach it).
  evilDir = await tempDir('pulse-evil-home-');
  extraDirs.push(evilDir);
  chownSync(evilDir, uid, gid);
  let bin = temporalBinary();
  if (asUserSync('/usr/bin/test', ['-x', bin]).status !== 0) {
    const copy = path.join(evilDir, 'temporal');
    copyFileSync(bin, copy);
    chmodSync(copy, 0o755);
    bin = copy;
  }
  evilPort = await freePortPair();
  const db = path.join(evilDir, 'evil.db');
  evilServer = asUser(bin, startDevArgs(db, evilPort), { cwd: evilDir });
  await until('the attacker\'s Temporal server answers', async () => {
    try {
      await evilWorkflows();
      return true;
    } catch {
      return false;
    }
  }, 60_000);
  accessSync(evilDir, constants.R_OK);
});

after(async () => {
  await new Promise((resolve) => (decoy ? decoy.close(resolve) : resolve(undefined)));
  if (evilServer?.pid) {
    try {
      process.kill(-evilServer.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const d of extraDirs) {
    for (const s of [d, path.join(d, 'state')]) await stopEmbeddedServer(s).catch(() => undefined);
    await removeDir(d);
  }
  await stopSimCli(sim, dir);
  if (canRun) spawnSync('/usr/sbin/userdel', [user]);
});

/** Runs up and status with PULSE_STATE_DIR=d: both refused (exit 4) with `why` in one line, nothing written in d. */
async function refusedStateDir(d: string, why: RegExp): Promise<void> {
  const before = readdirSync(d).concat(readdirSync(path.join(d, 'temporal'))).sort();
  const r = await runCli(['model', 'up', 'best', '--node', 'simA'], { ...env, PULSE_STATE_DIR: d });
  assert.equal(r.code, 4, `refused (exit 4): ${r.stdout}${r.stderr}`);
  assert.match(r.stderr, why);
  assert.equal(r.stderr.trim().split('\n').filter((l) => /state dir/.test(l)).length, 1, `one line: ${r.stderr}`);
  assert.deepEqual(readdirSync(d).concat(readdirSync(path.join(d, 'temporal'))).sort(), before, 'nothing written in the dir (no worker.json, no log)');
  // status reads server.json too: refused the same way, never a look at the planted server.
  const s = await runCli(['model', 'status', '--no-http'], { ...env, PULSE_STATE_DIR: d });
  assert.equal(s.code, 4, s.stdout + s.stderr);
  assert.match(s.stderr, why);
}

test('a group/other-writable state dir of the operator\'s own, with a planted server.json: refused, nothing run (any user)', async () => {
  const envBefore = nodeFiles();
  const open = path.join(await tempDir('pulse-open-state-'), 'state');
  extraDirs.push(path.dirname(open));
  mkdirSync(path.join(open, 'temporal'), { recursive: true });
  writeFileSync(path.join(open, 'temporal', 'server.json'), serverJson(open, decoyPort, process.pid));
  for (const p of [open, path.join(open, 'temporal')]) chmodSync(p, 0o777);
  if (canRun) chownSync(path.join(open, 'temporal', 'server.json'), uid, gid);
  await refusedStateDir(open, new RegExp(`state dir ${open} is writable by group or others \\(mode 0777\\).*run \`chmod go-w ${open}\``));
  assert.equal(decoyConnections, 0, 'nothing connected to the server the planted server.json names');
  nodeUntouched(envBefore);
});

// The case above is mode 0777 only: a check that refused other-writable dirs but let a group-writable one through
// (0775: anyone in the operator's group may plant server.json) passed it. Group-writable alone is refused too.
test('a state dir writable by its group only (0775), with a planted server.json: refused, nothing run (any user)', async () => {
  const envBefore = nodeFiles();
  const open = path.join(await tempDir('pulse-group-state-'), 'state');
  extraDirs.push(path.dirname(open));
  mkdirSync(path.join(open, 'temporal'), { recursive: true });
  writeFileSync(path.join(open, 'temporal', 'server.json'), serverJson(open, decoyPort, process.pid));
  for (const p of [open, path.join(open, 'temporal')]) chmodSync(p, 0o775);
  await refusedStateDir(open, new RegExp(`state dir ${open} is writable by group or others \\(mode 0775\\).*run \`chmod go-w ${open}\``));
  assert.equal(decoyConnections, 0, 'nothing connected to the server the planted server.json names');
  nodeUntouched(envBefore);
});

test('the attacker\'s own state dir with its server.json: refused, nothing run', { skip }, async () => {
  const envBefore = nodeFiles();
  // The attacker's own state dir, left open for the operator (PULSE_STATE_DIR pointed at it: a shared script, a
  // copied shell profile). (A group/other-writable dir of root's own: the test above, in every run.)
  const theirs = path.join(evilDir, 'state');
  mkdirSync(path.join(theirs, 'temporal'), { recursive: true });
  writeFileSync(path.join(theirs, 'temporal', 'server.json'), serverJson(theirs));
  for (const p of [theirs, path.join(theirs, 'temporal')]) chmodSync(p, 0o777);
  for (const p of [theirs, path.join(theirs, 'temporal'), path.join(theirs, 'temporal', 'server.json')]) chownSync(p, uid, gid);
  await refusedStateDir(theirs, new RegExp(`state dir ${theirs} belongs to ${user} \\(uid ${uid}\\), not to you \\(root \\(uid 0\\)\\).*use a directory of your own`));
  assert.deepEqual(await evilWorkflows(), [], 'no workflow reached the attacker\'s server');
  nodeUntouched(envBefore);
});

test('a server.json in the operator\'s own dir that names another user\'s server is not trusted: pulse starts its own', { skip }, async () => {
  const envBefore = nodeFiles();
  const own = path.join(await tempDir('pulse-own-state-'), 'state');
  extraDirs.push(path.dirname(own));
  killEmbeddedServerOnExit(own);
  mkdirSync(path.join(own, 'temporal'), { recursive: true, mode: 0o700 });
  // Everything as pulse writes it (the user's own file, 0600, this dir's database and log): only the pid and port are the attacker's.
  writeFileSync(path.join(own, 'temporal', 'server.json'), serverJson(own), { mode: 0o600 });
  const r = await runCli(['model', 'up', 'best', '--node', 'simA'], { ...env, PULSE_STATE_DIR: own, PULSE_TEMPORAL_PORT: String(await freePortPair()) });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(await evilWorkflows(), [], 'the deploy did not run on the attacker\'s server');
  const info = JSON.parse(readFileSync(path.join(own, 'temporal', 'server.json'), 'utf8')) as { pid: number; port: number };
  assert.notEqual(info.port, evilPort);
  assert.equal(statSync(`/proc/${info.pid}`).uid, 0, 'server.json now names the server pulse started, as root');
  assert.notEqual(nodeFiles(), envBefore, 'the up ran, on root\'s own server');
  await stopEmbeddedServer(own);
});

test('a worker log that is a link (to another user\'s file, under root) is refused before anything starts; the file stays empty', async () => {
  const envBefore = nodeFiles();
  const own = path.join(await tempDir('pulse-linked-log-'), 'state');
  extraDirs.push(path.dirname(own));
  killEmbeddedServerOnExit(own);
  mkdirSync(path.join(own, 'logs'), { recursive: true, mode: 0o700 });
  // Under root the attacker's file; otherwise one of the operator's own (the refusal is the link, whoever owns its target).
  const target = path.join(canRun ? evilDir : path.dirname(own), 'collect.log');
  writeFileSync(target, '');
  if (canRun) chownSync(target, uid, gid);
  chmodSync(target, 0o666);
  symlinkSync(target, path.join(own, 'logs', 'worker.log'));
  const r = await runCli(['model', 'up', 'best', '--node', 'simA'], { ...env, PULSE_STATE_DIR: own, PULSE_TEMPORAL_PORT: String(await freePortPair()) });
  assert.equal(r.code, 4, r.stdout + r.stderr);
  assert.match(r.stderr, new RegExp(`${path.join(own, 'logs', 'worker.log')} is a symbolic link: pulse never follows one`));
  assert.equal(readFileSync(target, 'utf8'), '', 'nothing was written through the link');
  assert.ok(lstatSync(path.join(own, 'logs', 'worker.log')).isSymbolicLink());
  nodeUntouched(envBefore);
});

test('a state dir reached through another user\'s symbolic link, or under another user\'s directory, is refused', { skip }, async () => {
  // The operator's own good dir, but named through a link the attacker owns (in sticky /tmp it may re-point it at will).
  const own = path.join(await tempDir('pulse-linked-state-'), 'state');
  extraDirs.push(path.dirname(own));
  mkdirSync(own, { mode: 0o700 });
  const link = path.join(path.dirname(path.dirname(own)), `pulse-evil-link-${randomBytes(3).toString('hex')}`);
  extraDirs.push(link);
  symlinkSync(own, link);
  lchownSync(link, uid, gid);
  const viaLink = await runCli(['model', 'status', '--no-http'], { ...env, PULSE_STATE_DIR: link });
  assert.equal(viaLink.code, 4, viaLink.stdout + viaLink.stderr);
  assert.match(viaLink.stderr, new RegExp(`state dir ${link}: ${link} is a symbolic link of ${user} \\(uid ${uid}\\), who could point it elsewhere`));
  // Root's own 0700 dir inside a directory the attacker owns: they could move it away and put theirs in its place.
  const inside = path.join(evilDir, 'root-state');
  mkdirSync(inside, { mode: 0o700 });
  const under = await runCli(['model', 'status', '--no-http'], { ...env, PULSE_STATE_DIR: inside });
  assert.equal(under.code, 4, under.stdout + under.stderr);
  assert.match(under.stderr, new RegExp(`state dir ${inside}: the directory above it, ${evilDir}, belongs to ${user} \\(uid ${uid}\\), who could replace the state dir`));
});
