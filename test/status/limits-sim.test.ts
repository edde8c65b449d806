/**
 * The protected-node limits, proven at the simulated server: its request log shows no request from status or smoke
 * without --yes, and its docker log shows no GPU probe. Also smoke pass/fail and the GPU probe on unprotected nodes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { StatusReport } from '../../runtime/status/types.js';
import { SECRET_KEY, runSimCli, settleRequests, startServer, startStatusSim, writePulseEnv } from './sim-helpers.js';
import type { CliResult } from '../helpers/cli.js';
import type { StatusSim } from './sim-helpers.js';

let s: StatusSim;
const outputs: string[] = [];

async function cli(args: string[]): Promise<CliResult> {
  const r = await runSimCli(s, args);
  outputs.push(r.stdout, r.stderr);
  return r;
}

/** Requests the node's simulated vLLM received, as "METHOD path". */
function requests(node: string): string[] {
  return s.sim.node(node).requests().map((r) => `${r.method} ${r.path}`);
}

describe('protected-node limits, smoke and the GPU probe on simulated nodes', () => {
  before(async () => {
    s = await startStatusSim(3);
    for (const x of s.sim.nodes) writePulseEnv(x);
    startServer(s.sim.node('spark1'));
    startServer(s.sim.node('spark2'));
    await Promise.all([settleRequests(s.sim.node('spark1')), settleRequests(s.sim.node('spark2'))]);
  });
  after(async () => {
    await s?.stop();
  });

  test('status sends no HTTP request to a protected node without --yes, with or without --node', async () => {
    const before1 = requests('spark1').length; // start.sh's own readiness polls
    const before2 = requests('spark2').length;
    const all = await cli(['model', 'status', '--json']);
    assert.equal(all.code, 0, all.stderr);
    const one = await cli(['model', 'status', '--node', 'spark1']);
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, /not checked: protected node, no HTTP request without --yes/);
    assert.equal(requests('spark1').length, before1, 'the protected server saw no request');
    assert.deepEqual(requests('spark2').slice(before2), ['GET /v1/models', 'GET /health'], 'the unprotected server was asked once (its models and its engine)');
    const report = JSON.parse(all.stdout) as StatusReport;
    const p = report.nodes.find((n) => n.node === 'spark1');
    assert.equal(p?.container?.running, true, 'the rest is still shown: container');
    assert.equal(p?.env?.profile, 'best', 'the rest is still shown: .env');
    assert.ok(p?.kvCache.line, 'the rest is still shown: KV cache line');
    assert.ok(p?.memory, 'the rest is still shown: memory');
  });

  test('status --yes asks the protected server (with its key); --no-http asks nobody', async () => {
    const before1 = requests('spark1').length;
    const yes = await cli(['model', 'status', '--node', 'spark1', '--yes', '--json']);
    assert.equal(yes.code, 0, yes.stderr);
    assert.deepEqual(requests('spark1').slice(before1), ['GET /v1/models', 'GET /health']);
    assert.equal(s.sim.node('spark1').requests().at(-2)?.authorized, true, 'the key from the node .env was sent');
    assert.equal((JSON.parse(yes.stdout) as StatusReport).nodes[0]?.health.httpStatus, 200);
    const counts = ['spark1', 'spark2'].map((n) => requests(n).length);
    const none = await cli(['model', 'status', '--no-http', '--yes', '--wide']);
    assert.equal(none.code, 0);
    assert.match(none.stdout, /not checked: --no-http/);
    assert.deepEqual(['spark1', 'spark2'].map((n) => requests(n).length), counts);
  });

  test('smoke refuses a protected node without --yes; nothing reaches its server', async () => {
    const before1 = requests('spark1').length;
    const r = await cli(['model', 'smoke', '--node', 'spark1']);
    assert.equal(r.code, 4);
    assert.match(r.stderr, /spark1 is protected: smoke .* needs --yes/);
    assert.equal(requests('spark1').length, before1);
  });

  test('smoke passes on a healthy node: model, latency, tokens, first line of the reply; key sent', async () => {
    const before2 = requests('spark2').length;
    const r = await cli(['model', 'smoke', '--node', 'spark2']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /smoke spark2: PASS/);
    assert.match(r.stdout, /model +qwen38/);
    assert.match(r.stdout, /latency +\d+ ms +\(HTTP 200\)/);
    assert.match(r.stdout, /tokens +prompt \d+, completion \d+, total \d+/);
    assert.match(r.stdout, /reply +\S+/);
    const sent = s.sim.node('spark2').requests().slice(before2);
    assert.deepEqual(sent.map((x) => [x.method, x.path, x.authorized]), [['POST', '/v1/chat/completions', true]]);
    const json = await cli(['model', 'smoke', '--node', 'spark1', '--yes', '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).ok, true);
  });

  test('smoke fails (non-zero) on a node whose server does not run', async () => {
    const r = await cli(['model', 'smoke', '--node', 'spark3']);
    assert.equal(r.code, 9, r.stdout + r.stderr);
    assert.match(r.stdout, /smoke spark3: FAIL/);
  });

  test('--gpu-probe refuses a protected node without --yes, also over the fleet; with --yes it probes every node and shows each result', async () => {
    const refused = await cli(['model', 'status', '--node', 'spark1', '--gpu-probe']);
    assert.equal(refused.code, 4);
    assert.match(refused.stderr, /spark1 is protected: status --gpu-probe .* needs --yes/);
    assert.equal(s.sim.node('spark1').gpuProbeCalls().length, 0);

    // RUNTIME.md: the protected limits hold also when status has no --node: refused, nothing probed anywhere
    const fleet = await cli(['model', 'status', '--gpu-probe', '--no-http']);
    assert.equal(fleet.code, 4, fleet.stdout + fleet.stderr);
    assert.match(fleet.stderr, /spark1 is protected: add --yes\n {2}or name the node with --node to probe only another node/);
    assert.deepEqual(s.sim.nodes.map((n) => n.gpuProbeCalls().length), [0, 0, 0]);
    const two = await cli(['model', 'status', '--node', 'spark2', '--gpu-probe', '--no-http', '--json']);
    assert.equal(two.code, 0, two.stderr);
    assert.equal((JSON.parse(two.stdout) as StatusReport).nodes[0]?.gpuProbe?.exitCode, 0);
    const all = await cli(['model', 'status', '--gpu-probe', '--no-http', '--yes']);
    assert.equal(all.code, 0, all.stderr);
    assert.deepEqual(s.sim.nodes.map((n) => n.gpuProbeCalls().length), [1, 2, 1]);
    // the fleet table shows each node's probe result under it
    for (const n of ['spark1', 'spark2', 'spark3']) assert.match(all.stdout, new RegExp(`^${n} +gpu probe exit 0`, 'm'), all.stdout);

    const yes = await cli(['model', 'status', '--node', 'spark1', '--gpu-probe', '--yes', '--no-http']);
    assert.equal(yes.code, 0, yes.stderr);
    assert.equal(s.sim.node('spark1').gpuProbeCalls().length, 2);
    assert.match(yes.stdout, /gpu probe +exit 0/);
  });

  test('the GPU probe runs only when asked', async () => {
    const counts = s.sim.nodes.map((n) => n.gpuProbeCalls().length);
    await cli(['model', 'status', '--yes']);
    assert.deepEqual(s.sim.nodes.map((n) => n.gpuProbeCalls().length), counts);
  });

  test('a configured Temporal server that does not answer costs only the deploy column', async () => {
    const r = await runSimCli(s, ['model', 'status', '--no-http', '--json'], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as StatusReport;
    assert.equal(report.allAnswered, true);
    assert.match(report.notes.join('\n'), /deploys in progress are not shown: .*(reach|answer)/);
    assert.ok(report.nodes.every((n) => n.deploy === null));
  });

  test('--verbose shows the raw records on stderr; --json on stdout stays parseable', async () => {
    const r = await cli(['model', 'status', '--node', 'spark2', '--verbose', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^spark2: @pulse \{"kind":"container"/m);
    assert.match(r.stderr, /^spark2: @pulse \{"kind":"health"/m);
    JSON.parse(r.stdout);
  });

  test('an unknown --node is a config error naming the known nodes (exit 3, as in every command)', async () => {
    const r = await cli(['model', 'status', '--node', 'spark9']);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /unknown node "spark9"; known nodes: spark1, spark2, spark3/);
  });

  test('a node that accepts the connection but never answers is cut off and does not hide the others', async () => {
    // A TCP server that accepts and stays silent: the ssh handshake can never finish.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      const dir = path.join(s.sim.dir, 'hung');
      mkdirSync(dir, { recursive: true });
      const sshConfig = path.join(dir, 'ssh_config');
      writeFileSync(sshConfig, `${readFileSync(s.sim.sshConfigPath, 'utf8')}\nHost hung\n  HostName 127.0.0.1\n  Port ${port}\n  User root\n  IdentityFile ${s.sim.identityPath}\n  BatchMode yes\n`);
      const nodes = JSON.parse(readFileSync(s.nodesFile, 'utf8')) as { nodes: Record<string, Record<string, unknown>> };
      nodes.nodes['hung'] = { ...nodes.nodes['spark3'], ssh: 'hung', protected: false };
      const nodesFile = path.join(dir, 'nodes.json');
      writeFileSync(nodesFile, JSON.stringify(nodes));
      // 8 s: long enough for the good nodes on a loaded 2-core machine (2 s cut spark1 and spark2 off under a load of
      // 19), still far below the 45 s default, so the hung node is cut off by this budget and no other.
      const r = await runSimCli({ ...s, nodesFile }, ['model', 'status', '--no-http', '--json'], { PULSE_SSH_CONFIG: sshConfig, PULSE_STATUS_TIMEOUT_S: '8' });
      assert.equal(r.code, 6, r.stderr);
      const report = JSON.parse(r.stdout) as StatusReport;
      assert.deepEqual(report.nodes.map((n) => [n.node, n.answered]), [['spark1', true], ['spark2', true], ['spark3', true], ['hung', false]]);
      assert.match(report.nodes[3]?.error ?? '', /hung: connect: no answer within 8 s/);
    } finally {
      silent.close();
    }
  });

  test('no secret appears in any output', () => {
    for (const out of outputs) assert.ok(!out.includes(SECRET_KEY));
  });
});
