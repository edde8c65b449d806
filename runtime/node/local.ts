/** `host: local`: `bash -s` as a detached child (its own process group, so abort can kill the whole group). */
import { spawn } from 'node:child_process';
import { PulseError } from '../errors.js';
import type { Channel, Transport } from './transport.js';
import type { NodeTarget } from './types.js';

/** Start `bash -s` locally; the caller writes the script to stdin. */
export function spawnLocalBash(): Promise<Channel> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-s'], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    child.once('error', (e) => reject(new PulseError('unreachable', `local: cannot start bash: ${e.message}`, { cause: e })));
    child.once('spawn', () => {
      const pid = child.pid as number;
      const done = new Promise<{ code: number | null; signal: string | null }>((res) => {
        child.once('close', (code, signal) => res({ code, signal }));
      });
      child.stdin.on('error', () => undefined); // EPIPE when the script exits before reading everything
      const kill = (): void => {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      };
      const ended = (): boolean => child.exitCode !== null || child.signalCode !== null;
      resolve({ stdin: child.stdin, stdout: child.stdout, stderr: child.stderr, done, kill, ended });
    });
  });
}

/** The local host as a transport: every exec is a fresh child; there is no link to drop. */
export class LocalTransport implements Transport {
  private closed = false;
  constructor(readonly target: NodeTarget) {}
  get alive(): boolean {
    return !this.closed;
  }
  /** Start one local `bash -s`. */
  exec(): Promise<Channel> {
    if (this.closed) return Promise.reject(new PulseError('internal', `${this.target.name}: session closed`));
    return spawnLocalBash();
  }
  /** Only a node that nodes.json still calls local runs here. */
  async drift(target: NodeTarget): Promise<string | null> {
    return target.host === 'local' ? null : `nodes.json no longer makes ${target.name} the local host`;
  }
  /** Nothing to tear down: each script is its own child. */
  async close(): Promise<void> {
    this.closed = true;
  }
}
