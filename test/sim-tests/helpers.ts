/** Test helpers for the simulator tests: run a script on a sim node with the real ssh client. */
import { spawn } from 'node:child_process';
import type { Sim } from '../sim/index.js';

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
