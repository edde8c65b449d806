/**
 * Creates one node's file tree: recipe lookalike, HF cache, triton cache parent, MTP shard r2, the node's bin dir
 * (docker client, GPU hook, nvidia-smi, sudo), the memory files and the node's ssh host key.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeControl } from './control.js';
import type { NodeControl } from './control.js';
import { DOCKER_CLIENT, enginePaths } from './engine.js';
import { renderMeminfo } from './memory.js';
import type { MemorySettings } from './memory.js';
import type { NodePaths } from './paths.js';
import { SIM_ASSETS, SIM_DIST } from './paths.js';

const execFileP = promisify(execFile);

/** Copies a text asset, replacing @SIM_STATE@ with the node's sim state dir (and @NAME@ placeholders from `vars`). */
function installAsset(src: string, dst: string, stateDir: string, vars: Record<string, string> = {}): void {
  fs.mkdirSync(path.dirname(dst), { recursive: true });
  let text = fs.readFileSync(src, 'utf8').replaceAll('@SIM_STATE@', stateDir);
  for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`@${k}@`, v);
  fs.writeFileSync(dst, text);
  fs.chmodSync(dst, fs.statSync(src).mode & 0o777);
}

function installRecipe(p: NodePaths, dir: string): void {
  const src = path.join(SIM_ASSETS, 'recipe');
  for (const rel of ['start.sh', 'stop.sh', '.env.sample', 'mtp.py', 'files/chat-template/chat_template.jinja', 'files/mtp/draft_vocab.json']) {
    installAsset(path.join(src, rel), path.join(dir, rel), p.state);
  }
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
}

function installModel(p: NodePaths): void {
  fs.mkdirSync(p.modelSnapshot, { recursive: true });
  const files: Record<string, string> = {
    'config.json': JSON.stringify({ architectures: ['Qwen3NextForCausalLM'], model_type: 'qwen3_next', max_position_embeddings: 524288 }),
    'generation_config.json': JSON.stringify({ temperature: 0.7 }),
    'tokenizer.json': JSON.stringify({ version: '1.0', model: { type: 'BPE' } }),
    'tokenizer_config.json': JSON.stringify({ model_max_length: 524288 }),
    'model.safetensors.index.json': JSON.stringify({ weight_map: { 'lm_head.weight': 'model-00001-of-00001.safetensors' } }),
    'model-00001-of-00001.safetensors': 'simulated weights',
  };
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(p.modelSnapshot, name), text);
  const repo = path.dirname(path.dirname(p.modelSnapshot));
  fs.mkdirSync(path.join(repo, 'refs'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'refs', 'main'), path.basename(p.modelSnapshot));
}

/**
 * The node's bin dir (its /usr/local/bin): the real docker client behind a recording line (assets/bin/docker; the
 * client itself is linked under the node's docker dir, where the node's mount namespace still sees it), the stand-in
 * GPU hook (also on the node's dockerd PATH), and the simulated nvidia-smi and sudo.
 */
function installBin(name: string, p: NodePaths): void {
  fs.mkdirSync(p.binDir, { recursive: true });
  const client = path.join(p.dockerDir, 'cli', 'docker');
  fs.mkdirSync(path.dirname(client), { recursive: true });
  try {
    fs.linkSync(fs.realpathSync(DOCKER_CLIENT), client);
  } catch {
    fs.copyFileSync(fs.realpathSync(DOCKER_CLIENT), client);
    fs.chmodSync(client, 0o755);
  }
  const smi = `#!/bin/bash\n# pulse simulator nvidia-smi (test/sim)\nexport SIM_STATE='${p.state}'\nexec '${process.execPath}' '${path.join(SIM_DIST, 'nvidia-smi.js')}' "$@"\n`;
  fs.writeFileSync(path.join(p.binDir, 'nvidia-smi'), smi, { mode: 0o755 });
  const vars = { DOCKER_CLIENT: client, DOCKER_SOCK: enginePaths(p.dockerDir).sock, NODE: name };
  for (const tool of ['sudo', 'docker', 'nvidia-container-runtime-hook']) installAsset(path.join(SIM_ASSETS, 'bin', tool), path.join(p.binDir, tool), p.state, vars);
}

export interface NodeSetup {
  memory: MemorySettings;
  control: NodeControl;
  readyPollS: number;
}

/** Builds the whole tree of one node and generates its host key; returns the public host key line. */
export async function buildNodeTree(name: string, p: NodePaths, setup: NodeSetup): Promise<string> {
  for (const d of [p.root, p.state, p.sshDir, p.homeState, p.dockerDir, path.dirname(p.tritonCache), path.dirname(p.mtpShardR2)]) {
    fs.mkdirSync(d, { recursive: true });
  }
  installRecipe(p, p.recipeDir);
  // The two-node recipe is only rendered (tp2 is render-only); a copy of the lookalike keeps its paths real.
  installRecipe(p, p.dualRecipeDir);
  installModel(p);
  installBin(name, p);
  fs.writeFileSync(p.mtpShardR2, 'simulated MTP shard r2');
  writeControl(p.state, setup.control);
  fs.writeFileSync(p.meminfo, renderMeminfo(setup.memory.totalGiB, setup.memory.idleAvailableGiB));
  fs.writeFileSync(p.watermark, '10\n');
  fs.writeFileSync(path.join(p.state, 'sudo-ok'), '');
  fs.writeFileSync(path.join(p.state, 'stop-mode'), 'ok\n');
  fs.writeFileSync(path.join(p.state, 'ready-poll-s'), `${setup.readyPollS}\n`);
  for (const f of ['start-calls', 'stop-calls', 'requests.jsonl', 'docker-calls.jsonl', 'gpu-containers.jsonl', 'listening.jsonl']) fs.writeFileSync(path.join(p.state, f), '');
  const key = path.join(p.sshDir, 'ssh_host_ed25519_key');
  await execFileP('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `pulse-sim-${name}`, '-f', key]);
  return fs.readFileSync(`${key}.pub`, 'utf8').trim();
}
