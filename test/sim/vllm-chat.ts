/**
 * POST /v1/chat/completions of the simulated vLLM, as vllm/entrypoints/openai serving_chat.py and protocol.py
 * answer it: `model` may be left out (the first served name answers); an unknown model is a 404 NotFoundError;
 * the usage block has `prompt_tokens_details` (null unless --enable-prompt-tokens-details). A thinking model
 * (node control `reasoningParser`, or `--reasoning-parser`) writes `<think>…</think>` before its answer, and the
 * reasoning parser of the release splits it off; when `max_tokens` runs out while it thinks, finish_reason is
 * "length" and, with the current qwen3 parser, `content` is null and all the text is reasoning.
 */
import { errorBody } from './vllm-release.js';
import type { ReleaseTraits } from './vllm-release.js';

export interface ChatSetup {
  traits: ReleaseTraits;
  /** The served names (--served-model-name, else the model); the first is the name responses carry. */
  served: string[];
  maxModelLen: number;
  /** `qwen3`, `deepseek_r1` or null (no reasoning parser: the model does not think). */
  reasoningParser: string | null;
}

export interface ChatAnswer {
  status: number;
  body: unknown;
  model: string | undefined;
}

const THINKING = 'Okay, the user asks whether I am up. I should answer in one short sentence and nothing more. '.repeat(6).trim();
const ANSWER = 'Yes, I am up and ready to help.';

/** The sim's tokenizer: one token per word (and one per think tag). */
const words = (s: string): string[] => s.split(/\s+/).filter((w) => w !== '');

interface ParsedRequest {
  model?: unknown;
  messages?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
}

/** What the model generates for one request: its raw text (tags included), the token count and why it stopped. */
function generate(thinks: boolean, maxTokens: number): { text: string; tokens: number; finish: 'stop' | 'length' } {
  const all = [...(thinks ? ['<think>', ...words(THINKING), '</think>'] : []), ...words(ANSWER)];
  const n = Math.min(all.length, Math.max(0, maxTokens));
  const out = all.slice(0, n);
  const text = out.join(' ').replace('<think> ', '<think>\n').replace(' </think> ', '\n</think>\n\n').replace(/ <\/think>$/, '\n</think>');
  return { text, tokens: n, finish: n < all.length ? 'length' : 'stop' };
}

/** The reasoning parser's split of the raw text: [reasoning, content] (vllm/reasoning/*_reasoning_parser.py). */
function split(t: ReleaseTraits, parser: string | null, text: string): [string | null, string | null] {
  if (parser === null) return [null, text];
  const hasStart = text.includes('<think>');
  const hasEnd = text.includes('</think>');
  if (parser === 'qwen3' && t.qwen3NeedsBothTags && !(hasStart && hasEnd)) return [null, text];
  const body = hasStart ? text.slice(text.indexOf('<think>') + '<think>'.length) : text;
  if (!hasEnd) return [body.replace(/^\n/, ''), null];
  const [reasoning = '', ...rest] = body.split('</think>');
  const content = rest.join('</think>');
  return [reasoning.replace(/^\n/, ''), content === '' ? null : content.replace(/^\n+/, '')];
}

/** Answers one chat completion request body. */
export function chatCompletion(setup: ChatSetup, raw: string): ChatAnswer {
  const { traits: t } = setup;
  let req: ParsedRequest;
  try {
    req = JSON.parse(raw) as ParsedRequest;
  } catch {
    return { status: 400, body: errorBody(t, 'Expecting value: line 1 column 1 (char 0)', 'BadRequestError', 400), model: undefined };
  }
  const model = typeof req.model === 'string' ? req.model : undefined;
  if (!Array.isArray(req.messages)) {
    return { status: 400, body: errorBody(t, "[{'type': 'missing', 'loc': ('body', 'messages'), 'msg': 'Field required'}]", 'BadRequestError', 400), model };
  }
  if (model !== undefined && model !== '' && !setup.served.includes(model)) {
    return { status: 404, body: errorBody(t, `The model \`${model}\` does not exist.`, 'NotFoundError', 404), model };
  }
  const promptTokens = Math.max(1, Math.ceil(JSON.stringify(req.messages).length / 4));
  const asked = typeof req.max_completion_tokens === 'number' ? req.max_completion_tokens : req.max_tokens;
  const maxTokens = typeof asked === 'number' ? asked : setup.maxModelLen - promptTokens;
  const out = generate(setup.reasoningParser !== null, maxTokens);
  const [reasoning, content] = split(t, setup.reasoningParser, out.text);
  const message: Record<string, unknown> = { role: 'assistant', content, refusal: null, annotations: null, audio: null, function_call: null, tool_calls: [] };
  if (t.dropsEmptyToolCalls) delete message['tool_calls'];
  message[t.reasoningField] = reasoning;
  const body = {
    id: `chatcmpl-sim${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: setup.served[0],
    choices: [{ index: 0, message, logprobs: null, finish_reason: out.finish, stop_reason: null, token_ids: null }],
    service_tier: null,
    system_fingerprint: null,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens + out.tokens, completion_tokens: out.tokens, prompt_tokens_details: null },
    prompt_logprobs: null,
    prompt_token_ids: null,
    kv_transfer_params: null,
  };
  return { status: 200, body, model };
}

/**
 * The answer of a request with `"stream": true` as serving_chat.py's chat_completion_stream_generator sends it: a
 * first chunk with the role, one `chat.completion.chunk` per token (its delta), one with the finish reason, then
 * `data: [DONE]`. Each item is one server-sent event's data.
 */
export function streamChunks(answer: ChatAnswer): string[] {
  const b = answer.body as { id: string; created: number; model: string; choices: { message: Record<string, unknown>; finish_reason: string }[] };
  const choice = b.choices[0];
  const chunk = (delta: Record<string, unknown>, finish: string | null): string =>
    JSON.stringify({ id: b.id, object: 'chat.completion.chunk', created: b.created, model: b.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const content = typeof choice?.message['content'] === 'string' ? (choice.message['content'] as string) : '';
  const tokens = content.split(/(?<= )/).filter((t) => t !== '');
  return [chunk({ role: 'assistant', content: '' }, null), ...tokens.map((t) => chunk({ content: t }, null)), chunk({}, choice?.finish_reason ?? 'stop'), '[DONE]'];
}

/** Whether a request body asks for a stream (`"stream": true`); a body that is no JSON does not. */
export function wantsStream(raw: string): boolean {
  try {
    return (JSON.parse(raw) as { stream?: unknown }).stream === true;
  } catch {
    return false;
  }
}
