/** `docker image inspect|ls` of the simulator: an image "exists" when it is in the node's image list. */
import crypto from 'node:crypto';
import { renderTemplate } from './docker-format.js';
import { DockerExit } from './docker-args.js';

export function imageInfo(ref: string): Record<string, unknown> {
  const id = `sha256:${crypto.createHash('sha256').update(ref).digest('hex')}`;
  return { Id: id, RepoTags: [ref], RepoDigests: [], Created: '2026-09-20T08:00:00Z', Size: 21474836480, Architecture: 'arm64', Os: 'linux' };
}

/** Runs `docker image <sub>`; returns the exit code. */
export function imageCommand(images: string[], args: string[]): number {
  const [sub, ...rest] = args;
  const fi = rest.findIndex((a) => a === '--format' || a === '-f');
  const format = fi >= 0 ? rest.splice(fi, 2)[1] : undefined;
  if (sub === 'inspect') {
    const found = rest.filter((r) => images.includes(r)).map(imageInfo);
    if (format !== undefined) found.forEach((i) => console.log(renderTemplate(format, i)));
    else console.log(JSON.stringify(found, null, 4));
    for (const r of rest.filter((x) => !images.includes(x))) process.stderr.write(`Error response from daemon: No such image: ${r}\n`);
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
