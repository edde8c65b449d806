/**
 * The small part of Go's text/template that scripts pass to `docker --format`: `{{.A.B}}`, `{{json .X}}`,
 * `{{"text"}}` (Go string escapes), `{{range .X}}...{{end}}`. Like the docker CLI, only the table formatters
 * (ps, images) turn a literal `\t`/`\n` into a tab/newline; `docker inspect --format` prints them as typed.
 * A field that does not exist is an error, as in Go ("can't evaluate field").
 */
import type { ContainerRecord } from './docker-state.js';

/** Thrown for a template the simulator does not understand, so a script never gets silently wrong output. */
export class TemplateError extends Error {}

function lookup(root: unknown, pathExpr: string): unknown {
  if (pathExpr === '.') return root;
  let cur: unknown = root;
  for (const key of pathExpr.replace(/^\./, '').split('.')) {
    if (cur === null || typeof cur !== 'object' || !(key in cur)) {
      throw new TemplateError(`template: :1: executing "" at <${pathExpr}>: can't evaluate field ${key}`);
    }
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

function show(value: unknown): string {
  if (value === undefined || value === null) return '<no value>';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(show).join(' ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b));
  return `map[${entries.map(([k, v]) => `${k}:${show(v)}`).join(' ')}]`;
}

function action(expr: string, root: unknown): string {
  const e = expr.trim();
  const json = /^json\s+(\.[\w.]*)$/.exec(e);
  if (json) return JSON.stringify(lookup(root, json[1]!) ?? null);
  if (/^"(?:[^"\\]|\\.)*"$/.test(e)) return JSON.parse(e) as string;
  if (/^\.[\w.]*$/.test(e)) return show(lookup(root, e));
  throw new TemplateError(`template: unsupported action {{${e}}} (pulse docker simulator)`);
}

/** Renders `format` against `root` like `docker ... --format`; `table` = the ps/images formatter's escapes. */
export function renderTemplate(format: string, root: unknown, table = false): string {
  const fmt = table ? format.replace(/\\t/g, '\t').replace(/\\n/g, '\n') : format;
  const withRanges = fmt.replace(/\{\{\s*range\s+(\.[\w.]*)\s*\}\}([\s\S]*?)\{\{\s*end\s*\}\}/g, (_m, p: string, body: string) => {
    const items = lookup(root, p);
    if (!Array.isArray(items)) return '';
    return items.map((item) => renderTemplate(body, item, table)).join('');
  });
  return withRanges.replace(/\{\{([\s\S]*?)\}\}/g, (_m, expr: string) => action(expr, root));
}

/** The STATUS column of docker ps (State.String() in moby daemon/container/state.go). */
export function statusText(rec: ContainerRecord, now = Date.now()): string {
  const ago = (iso: string) => humanDuration(now - Date.parse(iso));
  const s = rec.State;
  if (s.Running) {
    if (s.Paused) return `Up ${ago(s.StartedAt)} (Paused)`;
    if (s.Restarting) return `Restarting (${s.ExitCode}) ${ago(s.FinishedAt)} ago`;
    return `Up ${ago(s.StartedAt)}`;
  }
  if (s.Status === 'removing') return 'Removal In Progress';
  if (s.Dead) return 'Dead';
  if (s.Status === 'created') return 'Created';
  return `Exited (${s.ExitCode}) ${ago(s.FinishedAt)} ago`;
}

function humanDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 1) return 'Less than a second';
  if (s < 60) return `${s} second${s === 1 ? '' : 's'}`;
  const m = Math.round(s / 60);
  if (m < 60) return m === 1 ? 'About a minute' : `${m} minutes`;
  const h = Math.round(m / 60);
  return h === 1 ? 'About an hour' : `${h} hours`;
}

/** The fields `docker ps --format` offers for one container. */
export function psRow(rec: ContainerRecord, now = Date.now()): Record<string, unknown> {
  return {
    ID: rec.Id.slice(0, 12),
    Names: rec.Name.slice(1),
    Image: rec.Config.Image,
    Command: JSON.stringify([rec.Path, ...rec.Args].join(' ').slice(0, 20) + '…'),
    CreatedAt: rec.Created,
    RunningFor: humanDuration(now - Date.parse(rec.Created)) + ' ago',
    Status: statusText(rec, now),
    State: rec.State.Status,
    Ports: '',
    Mounts: rec.Mounts.map((m) => m.Source).join(','),
    Labels: '',
    Networks: rec.HostConfig.NetworkMode,
  };
}
