/**
 * The screen side of a followed deploy: one live line on a terminal that always fits its width (cut, never
 * wrapped, so a rewrite clears all of it), redrawn on a resize; text that came from a node or a server stripped of
 * control characters; colour for state words on a terminal (never with NO_COLOR, never off a terminal).
 */

/** Where the printer writes: process.stdout / process.stderr, or a test's sink. */
export interface Out {
  write(s: string): unknown;
  isTTY?: boolean;
  /** The terminal's width (a tty.WriteStream keeps it current on SIGWINCH). */
  columns?: number;
  on?(event: 'resize', listener: () => void): unknown;
  off?(event: 'resize', listener: () => void): unknown;
}

/** A terminal narrower than this still gets a line of this width (the terminal cuts it, nothing wraps). */
const MIN_WIDTH = 20;
const DEFAULT_WIDTH = 80;

// ESC [ ... final (CSI), ESC ] ... BEL/ST (OSC), and any other ESC + one byte; then every other C0/C1 control.
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?/g;
const CONTROLS = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/g;

/** `s` without escape sequences or control characters (a newline stays; a tab or CR becomes a space). */
export function plainText(s: string): string {
  return s.replace(ESCAPES, '').replace(CONTROLS, (c) => (c === '\t' || c === '\r' ? ' ' : ''));
}

/** Number of columns `s` takes (one per code point: pulse's own marks and bars are all narrow). */
export function columnsOf(s: string): number {
  return Array.from(s).length;
}

/** `s` cut to `width` columns, the last one an ellipsis when something was cut. */
export function cut(s: string, width: number): string {
  const chars = Array.from(s);
  if (chars.length <= width) return s;
  return width <= 0 ? '' : `${chars.slice(0, width - 1).join('')}…`;
}

export type Tone = 'ok' | 'bad' | 'warn' | 'dim';
const SGR: Record<Tone, string> = { ok: '32', bad: '31', warn: '33', dim: '2' };

/** Colour on a terminal unless NO_COLOR is set (any value, https://no-color.org); never off a terminal. */
export function colourOn(out: Pick<Out, 'isTTY'>, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(out.isTTY) && !env['NO_COLOR'];
}

/** `text` in the tone's colour when `on`, else unchanged. */
export function paint(on: boolean, tone: Tone, text: string): string {
  return on ? `\x1b[${SGR[tone]}m${text}\x1b[0m` : text;
}

/**
 * The one live line on a terminal. Its text is cut to the width minus one column (no autowrap, so `\r` + erase
 * always clears all of it). After a narrowing resize a reflowing terminal (tmux, VTE, iTerm2, kitty) shows the old
 * line on more rows: the next draw erases those rows. What a terminal pushed out of reach on the resize (tmux keeps
 * the cursor's row and moves the rows above it to the history) stays there once per narrowing, never per update; a
 * terminal that cuts lines instead (xterm) loses the printed row above the live line once per narrowing.
 */
export class LiveLine {
  private shown: string | null = null;
  private shownAt = 0;
  private last: string | ((width: number) => string) | null = null;
  private readonly onResize = (): void => {
    if (this.shown !== null && this.last !== null) this.show(this.last);
  };

  constructor(private readonly out: Out) {
    out.on?.('resize', this.onResize);
  }

  private width(): number {
    const c = this.out.columns;
    return Math.max(MIN_WIDTH, typeof c === 'number' && c > 0 ? c : DEFAULT_WIDTH);
  }

  /**
   * The bytes that remove the live line at the terminal's current width ('' when none is shown): erase-line on each
   * of its rows, never erase-display (tmux's scroll-on-clear would push the screen into the history).
   */
  private erase(width: number): string {
    if (this.shown === null) return '';
    const rows = width < this.shownAt ? Math.max(1, Math.ceil(columnsOf(plainText(this.shown)) / width)) : 1;
    if (rows === 1) return '\r\x1b[2K';
    const up = `\x1b[${rows - 1}A`;
    return `${up}\r${'\x1b[2K\x1b[1B'.repeat(rows - 1)}\x1b[2K${up}`;
  }

  /**
   * Draws (or redraws) the live line; `text` may hold colour, which does not count toward the width. A function is
   * asked for the text at the width it gets (and again after a resize), so it can leave parts out instead of being cut.
   */
  show(text: string | ((width: number) => string)): void {
    const width = this.width();
    const line = fitColoured(typeof text === 'function' ? text(width - 1) : text, width - 1);
    this.out.write(this.erase(width) + line);
    this.shown = line;
    this.shownAt = width;
    this.last = text;
  }

  /** Removes the live line, so a plain line can take its row. */
  clear(): void {
    if (this.shown === null) return;
    this.out.write(this.erase(this.width()));
    this.shown = null;
  }

  /** Stops following resizes (the follow ended). */
  close(): void {
    this.out.off?.('resize', this.onResize);
  }
}

/** `text` cut to `width` visible columns, keeping its colour sequences (and closing an open one). */
export function fitColoured(text: string, width: number): string {
  const plain = plainText(text);
  if (columnsOf(plain) <= width) return text;
  if (plain === text) return cut(text, width);
  let out = '';
  let visible = 0;
  for (const part of text.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith('\x1b[')) {
      out += part;
      continue;
    }
    for (const ch of Array.from(part)) {
      if (visible === width - 1) return `${out}…\x1b[0m`;
      out += ch;
      visible += 1;
    }
  }
  return `${out}\x1b[0m`;
}
