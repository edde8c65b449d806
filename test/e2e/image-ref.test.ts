/**
 * Image references as the docker daemon compares them (distribution/reference: no domain is docker.io, a one-part
 * name is under library/, no tag is :latest), through the CLI on a simulated node: pulse hands IMAGE to docker as
 * the profile writes it, so a profile that names the node's image in its long form passes preflight and starts, and
 * one that leaves the tag off asks for :latest, which the node does not have, and is refused by preflight. A GPU
 * probe whose command the image lacks ends as docker run does (127, the daemon's words), which status shows.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PROFILE_IMAGE, type Sim } from '../sim/index.js';
import { runCli } from '../helpers/cli.js';
import { startSimCli, stopSimCli } from '../helpers/sim-cli.js';
import { REPO_ROOT } from '../helpers/paths.js';

let sim: Sim | null = null;
let dir = '';
let env: NodeJS.ProcessEnv = {};

/** A profiles dir whose best.env names the image as `image`. */
async function profilesWith(image: string, name: string): Promise<string> {
  const profiles = path.join(dir, name);
  await cp(path.join(REPO_ROOT, 'runtime/qwen38/profiles'), profiles, { recursive: true });
  const best = await readFile(path.join(profiles, 'best.env'), 'utf8');
  await writeFile(path.join(profiles, 'best.env'), best.replace(`IMAGE=${PROFILE_IMAGE}`, `IMAGE=${image}`));
  return profiles;
}

before(async () => ({ sim, dir, env } = await startSimCli('pulse-image-ref-', { nodes: ['simA'], readyDelayMs: 200 })));

after(() => stopSimCli(sim, dir));

test('IMAGE=docker.io/library/<the node\'s image>: preflight finds it and up starts it', async () => {
  const e = { ...env, PULSE_PROFILES_DIR: await profilesWith(`docker.io/library/${PROFILE_IMAGE}`, 'long') };
  const pre = await runCli(['model', 'up', 'best', '--node', 'simA', '--dry-run', '--preflight'], e);
  assert.equal(pre.code, 0, pre.stdout + pre.stderr);
  const up = await runCli(['model', 'up', 'best', '--node', 'simA'], e);
  assert.equal(up.code, 0, up.stdout + up.stderr);
  assert.equal(sim!.node('simA').containers().find((c) => c.State.Running)?.Config.Image, `docker.io/library/${PROFILE_IMAGE}`);
});

test('a GPU probe whose command is not in the image: docker run exits 127 with the daemon\'s words, and status shows both', async () => {
  const nodes = path.join(dir, 'nodes-probe.json');
  sim!.writeNodesJson(nodes, {
    protected: [],
    transform: (json) => {
      const n = (json.nodes as Record<string, { gpuProbe: string }>).simA!;
      n.gpuProbe = n.gpuProbe.replace('nvidia-smi', 'no-such-smi');
      return json;
    },
  });
  const r = await runCli(['model', 'status', '--node', 'simA', '--gpu-probe', '--no-http', '--json'], { ...env, PULSE_NODES: nodes });
  const probe = (JSON.parse(r.stdout) as { nodes: { gpuProbe: { ran: boolean; exitCode: number; output: string } }[] }).nodes[0]!.gpuProbe;
  assert.equal(probe.ran, true, r.stdout + r.stderr);
  assert.equal(probe.exitCode, 127);
  assert.match(probe.output, /exec: "no-such-smi": executable file not found in \$PATH/);
});

test('IMAGE without a tag means :latest, which the node does not have: preflight refuses it', async () => {
  const e = { ...env, PULSE_PROFILES_DIR: await profilesWith('vllm-qwen38', 'untagged') };
  const pre = await runCli(['model', 'up', 'best', '--node', 'simA', '--dry-run', '--preflight'], e);
  assert.notEqual(pre.code, 0, pre.stdout);
  assert.match(pre.stdout + pre.stderr, /image vllm-qwen38 is not on the node/);
});
