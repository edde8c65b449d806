/**
 * The readiness wait as one line (issue 18 items 2, 3): the step, a bar of the time waited against the estimate
 * from earlier starts, the server's own phase (or its log's last line while no phase is known), and the time:
 *
 *   7/9 readiness on spark2  ▕████████▌     ▏ 61%  loading weights 23/38  9m12s of ~15m
 *
 * fitted to a width by leaving out the least useful parts first (the bar, then the estimate), never wrapped; the
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

function timeWords(w: WaitProgress, e: ReadinessEstimate | null, long: boolean): string {
  if (e && e.estimateS !== null) return `${duration(w.elapsedS)} of ${about(e.estimateS)}`;
  if (e && long) return `${duration(w.elapsedS)}, first start of this profile here`;
  return `${duration(w.elapsedS)} of ${duration(w.timeoutS)} budget`;
}

/** The line's variants from the fullest to the shortest; the first that fits `width` columns is shown. */
export function waitLineVariants(i: WaitLineInput): string[] {
  const share = shareOf(i.wait, i.estimate);
  const words = serverWords(i.wait);
  const pct = share === null ? null : `${Math.floor(share * 100)}%`;
  const out: string[] = [];
  if (pct !== null) out.push(`${i.name}  ${bar(share ?? 0)} ${pct}  ${words}  ${timeWords(i.wait, i.estimate, true)}`);
  if (pct !== null) out.push(`${i.name}  ${pct}  ${words}  ${timeWords(i.wait, i.estimate, true)}`);
  else out.push(`${i.name}  ${words}  ${timeWords(i.wait, i.estimate, true)}`);
  out.push(`${i.name}  ${words}  ${duration(i.wait.elapsedS)}`);
  out.push(`${i.name}  ${words}`);
  return out;
}

/** The fullest variant that fits `width` columns (the shortest one cut to it when none does). */
export function waitLine(i: WaitLineInput, width: number): string {
  const variants = waitLineVariants(i);
  const fit = variants.find((v) => columnsOf(v) <= width);
  return fit ?? cut(variants.at(-1) ?? '', width);
}

/** Off a terminal: the same words without the bar, one line. */
export function plainWaitLine(i: WaitLineInput): string {
  const share = shareOf(i.wait, i.estimate);
  const pct = share === null ? '' : ` ${Math.floor(share * 100)}%,`;
  return `  … ${i.name}:${pct} ${serverWords(i.wait)}, ${timeWords(i.wait, i.estimate, true)}`;
}
