/**
 * What differs between the vLLM releases the simulator can be (the node control `vllmRelease`). Each trait is
 * read from that release's source (docs/SIMULATOR.md "Fidelity", vLLM table, names the files):
 * - 0.10.0: errors are flat `{object:"error",message,type,param,code}`; the KV cache in two lines; only the
 *   EngineCore process prefixes its output (`_add_prefix`, ANSI cyan, every line it writes).
 * - 0.11.0: errors nested `{error:{message,type,param,code}}` (since 0.10.1); two KV lines; `decorate_logs`
 *   prefixes every line of the APIServer and the EngineCore_DP0 process (ANSI cyan, tty or not);
 *   `reasoning_content`; the qwen3 reasoning parser needs both `<think>` and `</think>`.
 * - 0.33.0 (current): nested errors; one KV line; the prefix is part of the logger format (no colour without a
 *   tty), so uvicorn's lines and tracebacks carry none; `reasoning`; the qwen3 parser starts in reasoning.
 */

export type VllmRelease = '0.10.0' | '0.11.0' | '0.33.0';
export const CURRENT_RELEASE: VllmRelease = '0.33.0';

export type Process = 'APIServer' | 'EngineCore';

export interface ReleaseTraits {
  version: string;
  nestedErrors: boolean;
  kvCacheOneLine: boolean;
  /** The prefix of one line written by `proc` (`logger`: a vLLM logger record; else a raw write). */
  prefix(proc: Process, pid: number, logger: boolean): string;
  reasoningField: 'reasoning_content' | 'reasoning';
  /** The qwen3 parser gives everything to `content` unless both think tags are in the output. */
  qwen3NeedsBothTags: boolean;
  /** An empty `tool_calls` list is left out of the message. */
  dropsEmptyToolCalls: boolean;
  /** `[file:line]` of the KV cache line(s). */
  kvSource: [string, string];
  /** `--max-model-len auto` (or -1) lets the server pick (human_readable_int_or_auto, current releases). */
  maxModelLenAuto: boolean;
}

const cyan = (s: string) => `\x1b[1;36m${s}\x1b[0;0m `;

const TRAITS: Record<VllmRelease, ReleaseTraits> = {
  '0.10.0': {
    version: '0.10.0',
    nestedErrors: false,
    kvCacheOneLine: false,
    prefix: (proc, pid) => (proc === 'EngineCore' ? cyan(`(EngineCore_0 pid=${pid})`) : ''),
    reasoningField: 'reasoning_content',
    qwen3NeedsBothTags: true,
    dropsEmptyToolCalls: false,
    kvSource: ['kv_cache_utils.py:833', 'kv_cache_utils.py:837'],
    maxModelLenAuto: false,
  },
  '0.11.0': {
    version: '0.11.0',
    nestedErrors: true,
    kvCacheOneLine: false,
    prefix: (proc, pid) => cyan(`(${proc === 'EngineCore' ? 'EngineCore_DP0' : proc} pid=${pid})`),
    reasoningField: 'reasoning_content',
    qwen3NeedsBothTags: true,
    dropsEmptyToolCalls: false,
    kvSource: ['kv_cache_utils.py:1087', 'kv_cache_utils.py:1091'],
    maxModelLenAuto: false,
  },
  '0.33.0': {
    version: '0.33.0',
    nestedErrors: true,
    kvCacheOneLine: true,
    prefix: (proc, pid, logger) => (logger ? `(${proc} pid=${pid}) ` : ''),
    reasoningField: 'reasoning',
    qwen3NeedsBothTags: false,
    dropsEmptyToolCalls: true,
    kvSource: ['kv_cache_utils.py:1147', 'kv_cache_utils.py:1147'],
    maxModelLenAuto: true,
  },
};

/** The traits of `release` (the current release for anything unknown). */
export function traitsOf(release: string | undefined): ReleaseTraits {
  return TRAITS[(release ?? CURRENT_RELEASE) as VllmRelease] ?? TRAITS[CURRENT_RELEASE];
}

/** An OpenAI-style error body as the release writes it (vllm/entrypoints/openai/protocol.py ErrorResponse). */
export function errorBody(t: ReleaseTraits, message: string, type: string, code: number): unknown {
  return t.nestedErrors ? { error: { message, type, param: null, code } } : { object: 'error', message, type, param: null, code };
}
