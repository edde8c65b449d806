/**
 * `smoke`: one short chat completion through the node's server, run on the node itself (the key stays there). A
 * protected node is refused without --yes before anything is sent.
 */
import { PulseError } from '../errors.js';
import { failureOf } from '../node/outcome.js';
import { probeHost } from '../steps/inputs.js';
import type { NodeConfig } from '../config/nodes.js';
import type { NodeSession } from '../node/types.js';

export const SMOKE_PROMPT = 'Reply with one short sentence: are you up?';

export interface SmokeResult {
  node: string;
  ok: boolean;
  model: string | null;
  httpStatus: number | null;
  latencyS: number | null;
  tokens: { prompt: number | null; completion: number | null; total: number | null };
  /** The first line of the reply's content (null: the server gave none, e.g. max_tokens were spent thinking). */
  reply: string | null;
  /** The first line of the reasoning a reasoning parser split off (`reasoning`, or `reasoning_content` before). */
  reasoning: string | null;
  /** Why generation stopped: "stop", "length" (max_tokens reached), ... */
  finishReason: string | null;
  error: string | null;
}

/** Refuse a protected node without --yes (before any connection is made). */
export function checkSmokeAllowed(name: string, node: NodeConfig, yes: boolean): void {
  if (node.protected && !yes) throw new PulseError('refused', `${name} is protected: smoke sends a request to its server and needs --yes`);
}

interface Completion {
  choices?: { message?: { content?: unknown; reasoning?: unknown; reasoning_content?: unknown }; finish_reason?: unknown }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown };
  model?: unknown;
  /** vLLM >= 0.10.1: {error: {message, type, param, code}}; the auth middleware: {error: "Unauthorized"}. */
  error?: { message?: unknown } | string;
  /** vLLM before 0.10.1: {object: "error", message, type, param, code}. */
  message?: unknown;
}

const n = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const firstLine = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? (v.trim().split('\n')[0] ?? '') : null);

function parseBody(b64: string): Completion | null {
  try {
    const body = JSON.parse(Buffer.from(b64, 'base64').toString('utf8')) as unknown;
    return body !== null && typeof body === 'object' ? (body as Completion) : null;
  } catch {
    return null;
  }
}

/** The error text of a vLLM error body in any release's shape, or null. */
function errorText(body: Completion | null): string | null {
  if (typeof body?.error === 'string') return body.error;
  if (typeof body?.error?.message === 'string') return body.error.message;
  return typeof body?.message === 'string' ? body.message : null;
}

/** Why the answer fails, or null: only an HTTP error, no choices, or no generated token fail a server. */
function verdict(code: number | null, body: Completion | null, completion: number | null, texts: (string | null)[]): string | null {
  if (code !== 200) {
    const why = errorText(body);
    if (code === 401) return `HTTP 401 ${why ?? 'Unauthorized'}: the server wants a key that the node .env does not give (API_KEY)`;
    return code ? `HTTP ${code}${why ? `: ${why}` : ''}` : null;
  }
  if (!Array.isArray(body?.choices) || body.choices.length === 0) return 'the answer has no choices';
  const generated = completion !== null ? completion > 0 : texts.some((t) => t !== null);
  return generated ? null : 'the server generated no tokens';
}

/**
 * Run the smoke script over `session` and judge it. A server passes when it answered HTTP 200 with a choice and
 * generated tokens: a reasoning model whose max_tokens ran out while it thought (content null, finish_reason
 * "length") is healthy, so the result says what came back (content, reasoning, finish reason) instead of failing.
 */
export async function runSmoke(session: NodeSession, name: string, node: NodeConfig): Promise<SmokeResult> {
  const recipes = Object.entries(node.recipes).map(([n, r]) => `${n}\t${r.dir}\t${r.container}`).join('\n');
  const result = await session.run('smoke', {
    env: { PULSE_RECIPES: recipes, PULSE_PROBE_HOST: probeHost(node.env.BIND), PULSE_PORT: node.env.PORT, PULSE_SMOKE_PROMPT: SMOKE_PROMPT, PULSE_SMOKE_MAX_TOKENS: '32' },
  });
  const failure = failureOf(result);
  if (failure) throw failure;
  const model = result.records.find((r) => r.kind === 'smoke-model')?.['name'];
  const rec = result.records.filter((r) => r.kind === 'smoke').at(-1) ?? { kind: 'smoke' };
  const code = n(rec['httpStatus']);
  const body = parseBody(typeof rec['body_b64'] === 'string' ? rec['body_b64'] : '');
  const choice = Array.isArray(body?.choices) ? body.choices[0] : undefined;
  const reply = firstLine(choice?.message?.content);
  const reasoning = firstLine(choice?.message?.reasoning ?? choice?.message?.reasoning_content);
  const tokens = { prompt: n(body?.usage?.prompt_tokens), completion: n(body?.usage?.completion_tokens), total: n(body?.usage?.total_tokens) };
  const detail = typeof rec['detail'] === 'string' && rec['detail'] ? rec['detail'] : null;
  const why = verdict(code, body, tokens.completion, [reply, reasoning]) ?? (code ? null : (detail ?? 'no answer from the server'));
  return {
    node: name, ok: why === null, model: typeof body?.model === 'string' ? body.model : typeof model === 'string' ? model : null,
    httpStatus: code === 0 ? null : code, latencyS: n(rec['seconds']), tokens, reply, reasoning,
    finishReason: typeof choice?.finish_reason === 'string' ? choice.finish_reason : null, error: why,
  };
}
