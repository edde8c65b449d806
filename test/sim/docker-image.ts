/** `docker image inspect|ls` of the simulator: an image "exists" when the node's image list names it (references compared as the daemon does). */
import crypto from 'node:crypto';
import { renderTemplate } from './docker-format.js';
import { DockerExit } from './docker-args.js';

export function imageInfo(ref: string): Record<string, unknown> {
  const id = `sha256:${crypto.createHash('sha256').update(ref).digest('hex')}`;
  return { Id: id, RepoTags: [ref], RepoDigests: [], Created: '2026-09-20T08:00:00Z', Size: 21474836480, Architecture: 'arm64', Os: 'linux' };
}

/**
 * An image reference as the daemon compares it (distribution/reference normalize.go ParseNormalizedNamed, then
 * TagNameOnly): no domain means docker.io, a one-part docker.io name is under library/, index.docker.io is
 * docker.io, no tag and no digest means :latest. `vllm-qwen38:t`, `docker.io/library/vllm-qwen38:t` and
 * `index.docker.io/library/vllm-qwen38:t` are one image. null: not a valid reference (e.g. upper case).
 */
export function normalizeRef(ref: string): string | null {
  const at = ref.indexOf('@');
  const [named, digest] = at >= 0 ? [ref.slice(0, at), ref.slice(at)] : [ref, ''];
  const colon = named.lastIndexOf(':');
  const [name, tag] = colon > named.lastIndexOf('/') ? [named.slice(0, colon), named.slice(colon + 1)] : [named, ''];
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  const hasDomain = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase());
  let domain = hasDomain ? first : 'docker.io';
  let path = hasDomain ? name.slice(slash + 1) : name;
  if (domain === 'index.docker.io') domain = 'docker.io';
  if (domain === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  if (!/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(path)) return null;
  if (tag !== '' && !/^[\w][\w.-]{0,127}$/.test(tag)) return null;
  return `${domain}/${path}${tag !== '' ? `:${tag}` : digest === '' ? ':latest' : ''}${digest}`;
}

/** Whether `ref` names one of `images` (each compared as the daemon compares references). */
export function hasImage(images: string[], ref: string): boolean {
  const want = normalizeRef(ref);
  return want !== null && images.some((i) => normalizeRef(i) === want);
}

/** Runs `docker image <sub>`; returns the exit code. */
export function imageCommand(images: string[], args: string[]): number {
  const [sub, ...rest] = args;
  const fi = rest.findIndex((a) => a === '--format' || a === '-f');
  const format = fi >= 0 ? rest.splice(fi, 2)[1] : undefined;
  if (sub === 'inspect') {
    const found = rest.filter((r) => hasImage(images, r)).map(imageInfo);
    if (format !== undefined) found.forEach((i) => console.log(renderTemplate(format, i)));
    else console.log(JSON.stringify(found, null, 4));
    for (const r of rest.filter((x) => !hasImage(images, x))) process.stderr.write(`Error response from daemon: No such image: ${r}\n`);
    return found.length === rest.length && rest.length > 0 ? 0 : 1;
  }
  if (sub === 'ls') {
    for (const ref of images) {
      const [repo, tag = 'latest'] = ref.split(/:(?=[^:/]*$)/);
      const info = { Repository: repo, Tag: tag, ID: (imageInfo(ref).Id as string).slice(7, 19), Size: '20GB' };
      console.log(format !== undefined ? renderTemplate(format, info, true) : `${info.Repository}   ${info.Tag}   ${info.ID}   ${info.Size}`);
    }
    return 0;
  }
  throw new DockerExit(`docker image ${sub ?? ''}: not supported by the pulse docker simulator`, 125);
}
