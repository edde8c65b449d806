/**
 * The closing block of up, rollback and down says what the node now serves and whether its gateway endpoint takes
 * traffic: profile, served model name, max_model_len and the address where the server answers from the publish
 * step's record, and `gateway endpoint: enabled` or `disabled: <the gateway backend file's reason>`; the same in
 * --json (`serves`). The sim's servers listen on BIND=127.0.0.1, so the address is that loopback port on the node
 * (`at 127.0.0.1:PORT on simB`), never the gateway URL's host (127.0.0.2x for simB), where nothing listens.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Sim } from '../sim/index.js';
import type { DeployResult } from '../../runtime/model/index.js';
import { runCli } from '../helpers/cli.js';
import { savedNodeState, startSimCli, stopSimCli } from '../helpers/sim-cli.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

/** The node's endpoint as the gateway backend file names it. */
async function endpoint(node = 'simA'): Promise<{ baseUrl: string; enabled: boolean; reason?: string }> {
  const f = JSON.parse(await readFile(path.join(dir, 'state', 'gateway-backends.json'), 'utf8')) as { models: { endpoints: { name: string; baseUrl: string; enabled: boolean; reason?: string }[] }[] };
  const e = f.models[0]?.endpoints.find((x) => x.name === node);
  assert.ok(e, `the gateway file names ${node}`);
  return e;
}

const hostPort = (url: string): string => new URL(url).host;
/** Where the sim's server of `node` answers: its BIND (127.0.0.1) and PORT, on that node. */
const listenAt = (node: string): string => `at 127.0.0.1:${sim!.node(node).vllmPort} on ${node}`;
const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

before(async () => ({ sim, dir, env } = await startSimCli('pulse-closing-', { nodes: ['simA', 'simB'], readyDelayMs: 200 })));
after(() => stopSimCli(sim, dir));

test('after up: the profile, its served name, max_model_len and host:port, and the endpoint enabled', async () => {
  const r = await runCli(['model', 'up', 'best', '--node', 'simA'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const s = await savedNodeState(dir, 'simA');
  assert.ok(s.servedModelName && s.maxModelLen, 'the verify step read the served name and max_model_len');
  assert.match(r.stdout, new RegExp(`^up best on simA: ok, node up\\n {2}serving: best as ${esc(s.servedModelName)} \\(max_model_len ${s.maxModelLen}\\) ${esc(listenAt('simA'))}\\n {2}gateway endpoint: enabled$`, 'm'), r.stdout);
});

test('after up on a loopback node: the address where its server answers (127.0.0.1 on that node), not the gateway URL\'s host', async () => {
  const r = await runCli(['model', 'up', 'best', '--node', 'simB'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const urlHost = hostPort((await endpoint('simB')).baseUrl);
  assert.notEqual(urlHost, `127.0.0.1:${sim!.node('simB').vllmPort}`, 'the sim gives simB a gateway URL on its own address');
  assert.match(r.stdout, new RegExp(`^ {2}serving: best as \\S+ \\(max_model_len \\d+\\) ${esc(listenAt('simB'))}$`, 'm'), r.stdout);
  assert.doesNotMatch(r.stdout, new RegExp(esc(urlHost)), r.stdout);
});

test('after rollback: what the restored .env serves; --json carries it as `serves`', async () => {
  const up = await runCli(['model', 'up', 'datagen', '--node', 'simA'], env);
  assert.equal(up.code, 0, up.stdout + up.stderr);
  assert.match(up.stdout, /^ {2}serving: datagen as \S+ \(max_model_len \d+\) at 127\.0\.0\.1:\d+ on simA$/m, up.stdout);
  const r = await runCli(['model', 'rollback', '--node', 'simA', '--json'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const res = JSON.parse(r.stdout) as DeployResult;
  const s = await savedNodeState(dir, 'simA');
  const e = await endpoint();
  assert.deepEqual(res.serves, { state: 'up', profile: 'best', servedModelName: s.servedModelName, maxModelLen: s.maxModelLen, endpoint: { url: e.baseUrl, enabled: true, reason: null }, listen: { bind: '127.0.0.1', port: String(sim!.node('simA').vllmPort), loopback: true } });
  const text = await runCli(['model', 'rollback', '--node', 'simA'], env);
  assert.equal(text.code, 0, text.stdout + text.stderr);
  assert.match(text.stdout, /^ {2}serving: datagen as \S+ \(max_model_len \d+\) at 127\.0\.0\.1:\d+ on simA\n {2}gateway endpoint: enabled$/m, text.stdout);
});

test('after down: nothing serves; the endpoint disabled with the gateway file\'s reason, or kept enabled by its fallback', async () => {
  const b = await runCli(['model', 'down', '--node', 'simB'], env);
  assert.equal(b.code, 0, b.stdout + b.stderr);
  const eb = await endpoint('simB');
  assert.equal(eb.enabled, false);
  assert.match(b.stdout, new RegExp(`^down on simB: ok, node down\\n {2}serving: nothing \\(node down\\) ${esc(listenAt('simB'))}\\n {2}gateway endpoint: disabled: ${esc(eb.reason ?? '')}$`, 'm'), b.stdout);
  // simA, the last endpoint: the gateway file keeps it enabled (a model with no enabled endpoint is refused), and says why.
  const r = await runCli(['model', 'down', '--node', 'simA'], env);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const e = await endpoint();
  assert.equal(e.enabled, true);
  assert.match(e.reason ?? '', /^kept enabled by the fallback: state down since /);
  assert.match(r.stdout, new RegExp(`^down on simA: ok, node down\\n(.*\\n)* {2}serving: nothing \\(node down\\) ${esc(listenAt('simA'))}\\n {2}gateway endpoint: enabled \\(${esc(e.reason ?? '')}\\)$`, 'm'), r.stdout);
});
