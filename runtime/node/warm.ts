/**
 * A transport that keeps one `bash -s` started ahead on its link, so the next step's script goes to a shell that
 * already runs instead of waiting for a new one. Opening an ssh exec channel costs a round trip and the node's sshd
 * forking a session, its login shell and `bash -s`: 16-26 ms on loopback (measured in the verify step, issue 28),
 * paid by every step of a deploy and by the readiness probe that the server's startup line triggers. The spare is
 * the same remote command, `bash -s`, waiting on its stdin: it runs nothing until a step writes its script, and goes
 * with its channel (EOF, a closed link, close()).
 *
 * Only the worker's pool uses it (runtime/node/connect.ts NodePool): a CLI command that runs one script per node
 * (status, smoke) would start a shell for nothing.
 */
import type { Channel, Transport } from './transport.js';
import type { NodeTarget } from './types.js';

export class WarmTransport implements Transport {
  /** The shell started ahead (a failed start is dropped at the next exec, as a dead shell is: Channel.ended). */
  private spare: Promise<Channel> | null = null;
  private closing = false;

  constructor(private readonly inner: Transport) {}

  get target(): NodeTarget {
    return this.inner.target;
  }

  get alive(): boolean {
    return this.inner.alive;
  }

  /** The spare shell when it is still open, else a new one; then the next spare starts. */
  async exec(): Promise<Channel> {
    const s = this.spare;
    this.spare = null;
    let ch = s ? await s.catch(() => null) : null;
    if (ch?.ended()) {
      ch.kill();
      ch = null;
    }
    // A spare can still die unseen between this look and its script: the session runs the script again if it did.
    if (ch) ch.startedAhead = true;
    ch ??= await this.inner.exec();
    this.prime();
    return ch;
  }

  drift(target: NodeTarget): Promise<string | null> {
    return this.inner.drift(target);
  }

  async close(): Promise<void> {
    this.closing = true;
    const s = this.spare;
    this.spare = null;
    if (s) void s.then((ch) => ch.kill(), () => undefined);
    await this.inner.close();
  }

  /** Starts the next spare shell, unless the link is down or closing (an exec then opens one as before). */
  private prime(): void {
    if (this.closing || !this.inner.alive || this.spare) return;
    const spare = this.inner.exec();
    spare.catch(() => undefined); // a link that dropped meanwhile: the next exec opens a shell and says so
    this.spare = spare;
  }
}
