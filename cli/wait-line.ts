/**
 * The readiness wait as one line (issue 18 items 2, 3): the step, a bar of the time waited against the estimate
 * from earlier starts, the server's own phase (or its log's last line while no phase is known), and the time:
 *
 *   7/9 readiness on spark2  ▕████████▌     ▏ 61%  loading weights 23/38  9m12s of 35m00s, usually ~15m
 *
 * with `no change for 24s` after the phase when the server has not moved for STALL_S; the time is always against
 * the wait's deadline (`--timeout-s`). Fitted to a width by leaving out the least useful parts first (the bar, the
 * estimate, the stall), never the deadline while the step's name and the phase fit; never wrapped; the
 * live line (cli/live-line.ts) cuts whatever is still too long. Off a terminal the same words come without the bar.
 */
import type { ReadinessEstimate, WaitProgress } from '../runtime/model/index.js';
import { duration } from '../runtime/format.js';
import { about } from '../runtime/vllm/readiness-eta.js';
import { columnsOf, cut, plainText } from './live-line.js';

const BAR_CELLS = 14;
const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/** `▕████████▌     ▏` for a share 0..1 (one cell of eight steps each). */
export function bar(share: number, cells = BAR_CELLS): string {
  const eighths = Math.round(Math.min(1, Math.max(0, share)) * cells * 8);
  const full = Math.floor(eighths / 8);
  const part = EIGHTHS[eighths % 8] ?? '';
  return `▕${'█'.repeat(full)}${part}${' '.repeat(Math.max(0, cells - full - (part ? 1 : 0)))}▏`;
}

/** True when the wait line has something beyond the plain wait (a phase, a log line or an estimate). */
export function hasServerView(p: WaitProgress, estimate: ReadinessEstimate | null): boolean {
  return p.step === 'readiness' && (!!p.phase || !!p.lastLine || estimate !== null);
}

/** What the server is doing: its phase's words, else its log's last line, else the last probe's answer. */
export function serverWords(p: WaitProgress): string {
  const text = p.phase?.words ?? p.lastLine ?? p.lastAnswer ?? '-';
  return plainText(text).replace(/\s+/g, ' ').trim() || '-';
}

export interface WaitLineInput {
  /** The running step's line, e.g. `7/9 readiness on spark2`. */
  name: string;
  wait: WaitProgress;
  estimate: ReadinessEstimate | null;
}

/** The share of the estimate waited (below 100 % while waiting: 99 % at most), or null without an estimate. */
function shareOf(w: WaitProgress, e: ReadinessEstimate | null): number | null {
  if (!e || e.estimateS === null || e.estimateS <= 0) return null;
  return Math.min(0.99, w.elapsedS / e.estimateS);
}

/** A wait whose server has not moved (phase, log line) for this long says so on its line. */
export const STALL_S = 20;

/** `no change for 24s` when the server's phase and log have not moved for STALL_S or more, else null. */
export function stallWords(w: WaitProgress): string | null {
  if (typeof w.movedAtS !== 'number') return null;
  const still = w.elapsedS - w.movedAtS;
  return still >= STALL_S ? `no change for ${duration(still)}` : null;
}

/** The time waited against the deadline (`--timeout-s`), and, when `long`, what it usually takes here. */
function timeWords(w: WaitProgress, e: ReadinessEstimate | null, long: boolean): string {
  const t = `${duration(w.elapsedS)} of ${duration(w.timeoutS)}`;
  if (!long || !e) return t;
  return e.estimateS !== null ? `${t}, usually ${about(e.estimateS)}` : `${t}, first start of this profile here`;
}

/** The line's variants from the fullest to the shortest; the first that fits `width` columns is shown. */
export function waitLineVariants(i: WaitLineInput): string[] {
  const share = shareOf(i.wait, i.estimate);
  const words = serverWords(i.wait);
  const stall = stallWords(i.wait);
  const still = stall ? `  ${stall}` : '';
  const pct = share === null ? null : `${Math.floor(share * 100)}%`;
  const long = timeWords(i.wait, i.estimate, true);
  const short = timeWords(i.wait, i.estimate, false);
  const out: string[] = [];
  if (pct !== null) out.push(`${i.name}  ${bar(share ?? 0)} ${pct}  ${words}${still}  ${long}`);
  if (pct !== null) out.push(`${i.name}  ${pct}  ${words}${still}  ${long}`);
  else out.push(`${i.name}  ${words}${still}  ${long}`);
  if (pct !== null) out.push(`${i.name}  ${pct}  ${words}${still}  ${short}`);
  out.push(`${i.name}  ${words}${still}  ${short}`);
  return out;
}

/**
 * The fullest variant that fits `width` columns; else the phase's words cut so that the stall and the deadline
 * still fit (they say more at 3 a.m. than the end of a long phase name); else the shortest, cut.
 */
export function waitLine(i: WaitLineInput, width: number): string {
  const variants = waitLineVariants(i);
  const fit = variants.find((v) => columnsOf(v) <= width);
  if (fit) return fit;
  const stall = stallWords(i.wait);
  const tail = `${stall ? `  ${stall}` : ''}  ${timeWords(i.wait, i.estimate, false)}`;
  const room = width - columnsOf(i.name) - 2 - columnsOf(tail);
  if (room >= 12) return `${i.name}  ${cut(serverWords(i.wait), room)}${tail}`;
  return cut(`${i.name}  ${serverWords(i.wait)}`, width);
}

/** Off a terminal: the same words without the bar, one line. */
export function plainWaitLine(i: WaitLineInput): string {
  const share = shareOf(i.wait, i.estimate);
  const pct = share === null ? '' : ` ${Math.floor(share * 100)}%,`;
  const stall = stallWords(i.wait);
  return `  … ${i.name}:${pct} ${serverWords(i.wait)}${stall ? ` (${stall})` : ''}, ${timeWords(i.wait, i.estimate, true)}`;
}
