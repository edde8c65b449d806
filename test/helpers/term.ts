/**
 * A small terminal for tests: applies what a line printer sends (text, CR, LF, ESC[nA, ESC[nB, ESC[K, ESC[2K, ESC[J, SGR)
 * on a grid of the given width with xterm's autowrap (a full row wraps at the next character), and keeps every
 * row (no scrolling off), so leftovers of a rewritten line stay visible. Any other control or escape sequence
 * throws: a printer must not send what this test terminal does not know.
 */
export class TestTerminal {
  readonly rows: string[][] = [[]];
  private r = 0;
  private c = 0;
  private pendingWrap = false;

  constructor(readonly width: number) {}

  private row(): string[] {
    while (this.rows.length <= this.r) this.rows.push([]);
    return this.rows[this.r]!;
  }

  private put(ch: string): void {
    if (this.pendingWrap) {
      this.r += 1;
      this.c = 0;
      this.pendingWrap = false;
    }
    const row = this.row();
    while (row.length < this.c) row.push(' ');
    row[this.c] = ch;
    if (this.c === this.width - 1) this.pendingWrap = true;
    else this.c += 1;
  }

  private csi(params: string, final: string): void {
    const n = params === '' ? 0 : Number(params);
    if (final === 'm') return; // colour: no effect on the text
    if (final === 'A') {
      this.r = Math.max(0, this.r - Math.max(1, n));
      this.pendingWrap = false;
      return;
    }
    if (final === 'B') {
      this.r += Math.max(1, n);
      this.row();
      this.pendingWrap = false;
      return;
    }
    if (final === 'K') {
      const row = this.row();
      if (n === 2) row.length = 0;
      else if (n === 0) row.length = Math.min(row.length, this.c);
      else throw new Error(`ESC[${params}K not supported`);
      return;
    }
    if (final === 'J' && n === 0) {
      this.row().length = Math.min(this.row().length, this.c);
      this.rows.length = this.r + 1;
      return;
    }
    throw new Error(`unexpected escape sequence ESC[${params}${final}`);
  }

  /** Applies the bytes a program wrote (a pty turns \n into \r\n; a bare \n moves down only). */
  write(data: string): this {
    const chars = Array.from(data);
    for (let i = 0; i < chars.length; i++) {
      const ch = chars[i]!;
      if (ch === '\r') {
        this.c = 0;
        this.pendingWrap = false;
      } else if (ch === '\n') {
        this.r += 1;
        this.pendingWrap = false;
        this.row();
      } else if (ch === '\x1b') {
        const rest = chars.slice(i + 1, i + 24).join('');
        const m = /^\[([0-9;?]*)([@-~])/.exec(rest);
        if (!m) throw new Error(`unexpected escape ${JSON.stringify(rest.slice(0, 6))}`);
        this.csi(m[1]!, m[2]!);
        i += m[0].length;
      } else if (ch < ' ' || ch === '\x7f') {
        throw new Error(`unexpected control character ${JSON.stringify(ch)}`);
      } else {
        this.put(ch);
      }
    }
    return this;
  }

  /** The screen as text rows, trailing spaces and trailing empty rows dropped. */
  lines(): string[] {
    const out = this.rows.map((r) => r.join('').trimEnd());
    while (out.length > 0 && out[out.length - 1] === '') out.pop();
    return out;
  }
}
