/**
 * A stray old vLLM server on a simulated node: started by hand outside docker by the same user (root, like the
 * containers' processes), it binds the node's vLLM port with SO_REUSEPORT as vLLM does (vllm-bind.ts), so the kernel
 * lets it share the port with the container pulse starts and hands each connection to one of them. It is the
 * simulated vLLM itself (it answers /v1/models and records its requests as container `stray-N`), a real process in
 * the node's mount namespace (the node's stop() kills it), and shows in /proc/net/tcp as real sockets do: not at all
 * while it is only bound, LISTEN once it listens.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SIM_DIST } from './paths.js';
import { bindThenExec } from './vllm-bind.js';

export interface StrayOptions {
  /** `now`: listens at once; `after-start`: bound now, listens only once the node's container runs (a stray that was
   * still loading when pulse checked the port). */
  listen?: 'now' | 'after-start';
  /** The name it serves (default qwen38, the profiles' name: it passes a model check) and its max_model_len. */
  servedModelName?: string;
  maxModelLen?: number;
  /** Address it binds (default 127.0.0.1, the sim nodes' BIND). */
  host?: string;
}

export interface StrayServer {
  pid: number;
  id: string;
  stop(): void;
}

let strays = 0;

/** Starts a stray server inside the node whose sshd is `sshdPid`; resolves once its socket is bound. */
export async function startStray(sshdPid: number, stateDir: string, port: number, opts: StrayOptions = {}): Promise<StrayServer> {
  const id = `stray-${process.pid}-${++strays}`;
  const dir = path.join(stateDir, id);
  fs.mkdirSync(dir, { recursive: true });
  const serve = ['serve', 'Qwen/Qwen3.8-Flash-Next', '--host', opts.host ?? '127.0.0.1', '--port', String(port)];
  serve.push('--served-model-name', opts.servedModelName ?? 'qwen38', '--max-model-len', String(opts.maxModelLen ?? 524288));
  const argv = bindThenExec([process.execPath, path.join(SIM_DIST, 'vllm.js'), `--sim-id=${id}`, ...serve]);
  const env: NodeJS.ProcessEnv = { ...process.env, SIM_STATE: stateDir, SIM_READY_DELAY_MS: '0' };
  if (opts.listen === 'after-start') env.SIM_LISTEN_AFTER = '1';
  const out = fs.openSync(path.join(dir, 'raw.log'), 'a');
  const child = spawn('nsenter', ['-t', String(sshdPid), '-m', '-u', '--', ...argv], { detached: true, stdio: ['ignore', out, out], env, cwd: '/' });
  fs.closeSync(out);
  child.unref();
  const pid = child.pid ?? 0;
  // Bound: its log has the version line (vllm.js logs it after the bind and before anything loads).
  const logged = () => fs.readFileSync(path.join(dir, 'raw.log'), 'utf8').includes('API server version');
  for (let i = 0; i < 500 && !logged(); i++) {
    if (child.exitCode !== null) throw new Error(`stray server exited: ${fs.readFileSync(path.join(dir, 'raw.log'), 'utf8')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return {
    pid,
    id,
    stop: () => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    },
  };
}
