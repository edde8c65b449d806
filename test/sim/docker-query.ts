/** The read-only docker subcommands of the simulator: ps, inspect (logs: docker-logs.ts). */
import { DockerExit, takeAll, takeFlag, takeOption } from './docker-args.js';
import { TemplateError, psRow, renderTemplate } from './docker-format.js';
import { hasImage, imageInfo } from './docker-image.js';
import type { ContainerRecord } from './docker-state.js';
import { findRecord, listRecords, readImages, readVolumes } from './docker-state.js';

function filterMatch(rec: ContainerRecord, filter: string): boolean {
  const [key, value = ''] = filter.split(/=(.*)/s) as [string, string?];
  if (key === 'name') return new RegExp(value).test(rec.Name) || new RegExp(value).test(rec.Name.slice(1));
  if (key === 'status') {
    if (!STATES.includes(value)) throw new DockerExit(`Error response from daemon: invalid filter 'status=${value}': invalid container state: ${value}`, 1);
    return rec.State.Status === value;
  }
  if (key === 'id') return rec.Id.startsWith(value);
  if (key === 'ancestor') return rec.Config.Image === value;
  throw new DockerExit(`invalid filter '${key}' (pulse docker simulator supports name, status, id, ancestor)`, 125);
}

const STATES = ['created', 'running', 'paused', 'restarting', 'removing', 'exited', 'dead'];

/** `docker ps`. */
export function ps(dockerDir: string, args: string[]): number {
  const all = takeFlag(args, ['-a', '--all']);
  const quiet = takeFlag(args, ['-q', '--quiet']);
  takeFlag(args, ['--no-trunc']);
  const filters = takeAll(args, ['--filter', '-f']);
  const format = takeOption(args, ['--format']);
  if (args.length) throw new DockerExit(`docker ps: unsupported arguments: ${args.join(' ')}`, 125);
  // A status filter shows stopped containers too (moby daemon/list.go sets All for it).
  const showAll = all || filters.some((f) => f.startsWith('status='));
  const recs = listRecords(dockerDir).filter((r) => (showAll || r.State.Running) && filters.every((f) => filterMatch(r, f)));
  const rows = recs.map((r) => psRow(r));
  if (quiet) rows.forEach((r) => console.log(r.ID));
  else if (format !== undefined) rows.forEach((r) => console.log(renderTemplate(format, r, true)));
  else {
    console.log('CONTAINER ID   IMAGE   COMMAND   CREATED   STATUS   PORTS   NAMES');
    rows.forEach((r) => console.log([r.ID, r.Image, r.Command, r.RunningFor, r.Status, r.Ports, r.Names].join('   ')));
  }
  return 0;
}

/**
 * `docker inspect` / `docker container inspect`. The first looks a name up as a container, then as an image, a
 * volume, a network (docker/cli cli/command/system/inspect.go, inspectAll): `docker inspect vllm-qwen38` succeeds
 * for an image `vllm-qwen38:latest`. A --format template that fails on an image or volume fails the command
 * (the raw-map fallback runs with missingkey=error). `docker container inspect` asks for a container only.
 */
export function inspect(dockerDir: string, args: string[], kind: 'object' | 'container'): number {
  const format = takeOption(args, ['--format', '-f']);
  const type = kind === 'container' ? 'container' : takeOption(args, ['--type']);
  takeFlag(args, ['-s', '--size']);
  if (!args.length) throw new DockerExit(`"docker ${kind === 'container' ? 'container ' : ''}inspect" requires at least 1 argument.`, 1);
  const out: string[] = [];
  const errors: string[] = [];
  for (const ref of args) {
    const rec = type === undefined || type === 'container' ? findRecord(dockerDir, ref) : null;
    const other = rec ? null : otherObject(dockerDir, ref, type);
    if (!rec && !other) {
      errors.push(kind === 'container' || type === 'container' ? `Error response from daemon: No such container: ${ref}` : `Error: No such object: ${ref}`);
      continue;
    }
    if (!format || format === 'json') {
      out.push(JSON.stringify(rec ?? other));
      continue;
    }
    try {
      out.push(renderTemplate(format, rec ?? other));
    } catch (err) {
      if (!(err instanceof TemplateError) || rec) throw err;
      const key = /can't evaluate field (\w+)/.exec(err.message)?.[1] ?? '?';
      errors.push(`template parsing error: template: :1: executing "" at <${format}>: map has no entry for key "${key}"`);
    }
  }
  // Like the docker CLI: json is one array; a template with nothing rendered still prints one empty line.
  if (!format) console.log(JSON.stringify(out.map((o) => JSON.parse(o) as unknown), null, 4));
  else if (format === 'json') console.log(`[${out.join(',')}]`);
  else console.log(out.join('\n'));
  for (const e of errors) process.stderr.write(`${e}\n`);
  return errors.length ? 1 : 0;
}

/** An image, volume or network of that name, as `docker inspect` finds it after the containers. */
function otherObject(dockerDir: string, ref: string, type: string | undefined): Record<string, unknown> | null {
  const want = (t: string) => type === undefined || type === t;
  const imageRef = /:[^/]*$/.test(ref) || ref.includes('@') ? ref : `${ref}:latest`;
  if (want('image') && hasImage(readImages(dockerDir), imageRef)) return imageInfo(imageRef);
  if (want('volume') && readVolumes(dockerDir).includes(ref)) {
    return { CreatedAt: '2026-09-20T08:00:00Z', Driver: 'local', Labels: null, Mountpoint: `/var/lib/docker/volumes/${ref}/_data`, Name: ref, Options: null, Scope: 'local' };
  }
  if (want('network') && ['bridge', 'host', 'none'].includes(ref)) return { Name: ref, Id: ref.padEnd(64, '0'), Scope: 'local', Driver: ref === 'none' ? 'null' : ref };
  return null;
}
