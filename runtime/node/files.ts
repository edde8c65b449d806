/**
 * Reading the operator's ssh files (identity files, known_hosts) without letting them stop the process: a FIFO or a
 * device named as a file would block a synchronous read, and with it every step of the worker, for ever. The file
 * is opened non-blocking, and only a regular file of at most `maxBytes` is read.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';

/** 1 MiB: far above any key or known_hosts file an operator keeps. */
const MAX_BYTES = 1 << 20;

/** The bytes of a regular file; throws (code ENOENT, EACCES, ..., or EFTYPE/EFBIG) for anything else. */
export function readRegularFile(file: string, maxBytes = MAX_BYTES): Buffer {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'EFTYPE' });
    if (st.size > maxBytes) throw Object.assign(new Error(`${file} is larger than ${maxBytes} bytes`), { code: 'EFBIG' });
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
