/**
 * vLLM's KV cache report, read from container log lines in any release's shape (vllm/v1/core/kv_cache_utils.py):
 * current releases write one line, `GPU KV cache size: N tokens, Maximum concurrency for M tokens per request:
 * X.XXx`; older ones write the size and the concurrency as two lines. Every line may carry a process prefix,
 * `(EngineCore_DP0 pid=N)`, which 0.10 and 0.11 wrap in ANSI colour codes (the node script drops the ESC bytes,
 * leaving `[1;36m`), then the logger's `INFO 12-02 09:20:05 [file.py:N]`. The device word is `GPU` on CUDA.
 */

const SIZE = /(\S+(?: \+ host)?) KV cache size: ([\d,]+) tokens/;
const CONCURRENCY = /Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x/;

/**
 * The one canonical line, `GPU KV cache size: N tokens, Maximum concurrency for M tokens per request: X.XXx`
 * (without the concurrency part when no line has it), from the size line and the concurrency line (the same line
 * in current releases); null when no line has the size.
 */
export function kvCacheSummary(lines: (string | null | undefined)[]): string | null {
  const texts = lines.filter((l): l is string => typeof l === 'string' && l !== '');
  const size = texts.map((l) => SIZE.exec(l)).find((m) => m !== null);
  if (!size) return null;
  const conc = texts.map((l) => CONCURRENCY.exec(l)).find((m) => m !== null);
  const head = `${size[1]} KV cache size: ${size[2]} tokens`;
  return conc ? `${head}, Maximum concurrency for ${conc[1]} tokens per request: ${conc[2]}x` : head;
}


/** The numbers of a KV cache line (any shape above), for `status --json`: null where the line has none. */
export function kvCacheNumbers(line: string | null): { tokens: number | null; concurrency: number | null; concurrencyForTokens: number | null } {
  const int = (v: string | undefined): number | null => (v === undefined ? null : Number(v.replace(/,/g, '')));
  const size = line ? SIZE.exec(line) : null;
  const conc = line ? CONCURRENCY.exec(line) : null;
  return { tokens: int(size?.[2]), concurrency: conc?.[2] === undefined ? null : Number(conc[2]), concurrencyForTokens: int(conc?.[1]) };
}
