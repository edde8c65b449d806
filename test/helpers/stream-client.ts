/**
 * A client of a node's server as a user's would be: one streamed chat completion (`"stream": true`), read to its
 * end. `complete` says whether it got vLLM's `data: [DONE]` (a stop that cut it ends the stream before that).
 */
import http from 'node:http';

export interface StreamOutcome {
  complete: boolean;
  chunks: number;
  status: number;
  /** Why it ended early: a refused connection, a reset, a stream cut short. */
  error: string | null;
}

/** Streams one chat completion from `host:port` (with `key` as a bearer token when given); never rejects. */
export function streamChat(port: number, opts: { host?: string; key?: string; model?: string } = {}): Promise<StreamOutcome> {
  const body = JSON.stringify({ ...(opts.model ? { model: opts.model } : {}), messages: [{ role: 'user', content: 'are you up?' }], max_tokens: 64, stream: true });
  return new Promise((resolve) => {
    const out: StreamOutcome = { complete: false, chunks: 0, status: 0, error: null };
    const req = http.request({
      host: opts.host ?? '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}) },
    }, (res) => {
      out.status = res.statusCode ?? 0;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
        out.chunks = (text.match(/^data: /gm) ?? []).length;
      });
      const settle = (): void => {
        out.complete = /^data: \[DONE\]$/m.test(text);
        if (!out.complete && out.error === null) out.error = 'the stream ended before data: [DONE]';
        resolve(out);
      };
      res.on('end', settle);
      res.on('close', settle);
      res.on('error', (e) => {
        out.error = e.message;
        settle();
      });
    });
    req.on('error', (e) => {
      out.error = e.message;
      resolve(out);
    });
    req.end(body);
  });
}
