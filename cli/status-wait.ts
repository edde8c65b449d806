/**
 * What `status` waits for, on a terminal, while it waits: one live line naming the nodes that have not answered yet,
 * what each is doing (connecting, running its status script) and the bound it keeps for that, and the nodes that
 * answered. Without it a node whose sshd accepts but never talks left a blank screen until its connect timed out.
 * The line is cleared before the table prints; off a terminal, with --json or --watch nothing is drawn.
 */
import type { NodePhase } from '../runtime/status/collect.js';
import { LiveLine, type Out } from './live-line.js';

/** A wait shorter than this draws nothing (a fleet that answers at once leaves no flicker). */
const FIRST_DRAW_MS = 700;
const REDRAW_MS = 1000;

interface Pending {
  phase: Exclude<NodePhase, 'done'>;
  since: number;
  boundMs: number;
}

const PHASE_WORDS: Record<Pending['phase'], string> = { connect: 'connecting', script: 'running its status script' };

export class StatusWait {
  private readonly pending = new Map<string, Pending>();
  private readonly answered: string[] = [];
  private readonly line: LiveLine;
  private readonly timers: NodeJS.Timeout[];
  private readonly started: number;
  private drawn = false;
  private ended = false;

  /** `temporalMs`: how long status waits for Temporal's answer about the deploys in progress. */
  constructor(out: Out, private readonly temporalMs: number, private readonly now: () => number = Date.now) {
    this.line = new LiveLine(out);
    this.started = now();
    this.timers = [setInterval(() => this.draw(), REDRAW_MS), setTimeout(() => this.draw(), FIRST_DRAW_MS)];
    for (const t of this.timers) t.unref();
  }

  /** collectStatus's onPhase. */
  readonly onPhase = (node: string, phase: NodePhase, boundMs: number): void => {
    if (phase === 'done') {
      this.pending.delete(node);
      this.answered.push(node);
    } else this.pending.set(node, { phase, since: this.now(), boundMs });
    if (this.drawn) this.draw();
  };

  /** The line's words, e.g. `waiting for spark3 (connecting, 4 s of at most 15 s); answered: spark1, spark2`. */
  text(): string {
    const t = this.now();
    const each = [...this.pending].map(([n, p]) => `${n} (${PHASE_WORDS[p.phase]}, ${Math.floor((t - p.since) / 1000)} s of at most ${Math.round(p.boundMs / 1000)} s)`);
    const done = this.answered.length > 0 ? `; done: ${this.answered.join(', ')}` : '';
    if (each.length > 0) return `waiting for ${each.join(', ')}${done}`;
    return `waiting for Temporal (the deploys in progress, ${Math.floor((t - this.started) / 1000)} s of at most ${Math.round(this.temporalMs / 1000)} s)${done}`;
  }

  private draw(): void {
    if (this.ended) return;
    this.drawn = true;
    this.line.show(this.text());
  }

  /** Stop drawing and remove the line (the table takes its row). */
  end(): void {
    for (const t of this.timers) clearTimeout(t);
    this.ended = true;
    this.line.clear();
    this.line.close();
  }
}
