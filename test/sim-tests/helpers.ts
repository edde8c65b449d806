/** Test helpers for the simulator tests: run a script on a sim node with the real ssh client. */
import { spawn } from 'node:child_process';
import type { Sim } from '../sim/index.js';
import { PROFILE_IMAGE } from '../sim/index.js';

export interface ShellResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `ssh -F <sim config> <alias> bash -s` with `script` on stdin (async, so the sim's memory timer keeps running). */
export function sshScript(sim: Sim, alias: string, script: string, configPath = sim.sshConfigPath): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('ssh', ['-F', configPath, alias, 'bash', '-s'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(script);
  });
}

/** Polls `check` every 50 ms until it returns true or `ms` passes; returns the last result. */
export async function eventually(check: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** A .env like the ones pulse renders, for a node of the sim. */
export function renderEnv(sim: Sim, node: string, extra: Record<string, string> = {}): string {
  const n = sim.node(node);
  const keys: Record<string, string> = {
    IMAGE: PROFILE_IMAGE,
    MODEL: 'Qwen/Qwen3.8-Flash-Next',
    SERVED_MODEL_NAME: 'qwen38',
    MAX_MODEL_LEN: '524288',
    GPU_MEMORY_UTILIZATION: '0.85',
    KV_CACHE_DTYPE: 'fp8',
    MTP_K: '6',
    CHAT_TEMPLATE: 'files/chat-template/chat_template.jinja',
    MTP_DRAFT_VOCAB: 'files/mtp/draft_vocab.json',
    READY_TIMEOUT_S: '30',
    HF_HOME: n.hfHome,
    BIND: '127.0.0.1',
    PORT: String(n.vllmPort),
    REQUIRE_IDLE_GPU: '1',
    EXTRA_DOCKER_ARGS: `\n  -e VLLM_MTP_DRAFT_FP8=1\n  -v ${n.paths.mtpShardR2}:/mtp-shard-r2:ro\n`,
    ...extra,
  };
  return Object.entries(keys).map(([k, v]) => `${k}="${v}"`).join('\n') + '\n';
}

/** The way pulse starts the recipe: setsid + env -i, detached from the ssh session. */
export function startScript(sim: Sim, node: string): string {
  const r = sim.node(node).recipeDir;
  return `setsid env -i bash ${r}/start.sh >${r}/logs/pulse-up-test.log 2>&1 </dev/null; echo "rc=$?"`;
}
