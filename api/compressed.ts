// Static text the keeper serves (the web UI's assets and shell, the /docs bundle: 3.5 MB of
// JavaScript) goes out compressed when the client accepts it: Brotli, else gzip, else as is. Each
// file is compressed once and kept in memory with its size and mtime (a rebuild while the keeper
// runs is picked up), so a request costs a stat, not a compression. Small bodies go out as they are.
import fs from 'node:fs';
import zlib from 'node:zlib';
import type { Request, Response } from 'express';

export type Encoding = 'br' | 'gzip' | 'identity';

/** Below this a compressed body saves less than its headers cost. */
const MIN_BYTES = 1024;

/**
 * The best encoding the `Accept-Encoding` header allows: Brotli, then gzip (RFC 9110 12.5.3, with
 * q-values; `q=0` refuses one; `*` stands for any not named).
 */
export function chooseEncoding(header: string | undefined): Encoding {
  if (!header) return 'identity';
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qp ? Number(qp.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const weight = (enc: string) => q.get(enc) ?? q.get('*') ?? 0;
  if (weight('br') > 0 && weight('br') >= weight('gzip')) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return 'identity';
}

interface Entry {
  mtimeMs: number;
  size: number;
  raw: Buffer;
  encoded: Partial<Record<'br' | 'gzip', Buffer>>;
}

const cache = new Map<string, Entry>();

function encode(raw: Buffer, enc: 'br' | 'gzip'): Buffer {
  // Quality 9 / level 9: a few hundred ms once for the largest file, paid by its first request.
  return enc === 'br'
    ? zlib.brotliCompressSync(raw, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9 } })
    : zlib.gzipSync(raw, { level: 9 });
}

/** Sends `body` in the best encoding the request accepts; `key` names it in the cache. */
export function sendEncoded(req: Request, res: Response, key: string, entry: Omit<Entry, 'encoded'>): void {
  let cached = cache.get(key);
  if (!cached || cached.mtimeMs !== entry.mtimeMs || cached.size !== entry.size) {
    cached = { ...entry, encoded: {} };
    cache.set(key, cached);
  }
  res.vary('Accept-Encoding');
  const enc = cached.raw.length < MIN_BYTES ? 'identity' : chooseEncoding(req.get('accept-encoding'));
  let body = cached.raw;
  if (enc !== 'identity') {
    body = cached.encoded[enc] ??= encode(cached.raw, enc);
    res.setHeader('Content-Encoding', enc);
  }
  res.setHeader('Content-Length', String(body.length));
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Reads `file` (when changed since it was cached) and sends it encoded; false when it is no file. */
export function sendFileEncoded(req: Request, res: Response, file: string): boolean {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return false;
  }
  if (!st.isFile()) return false;
  const cached = cache.get(file);
  const raw = cached && cached.mtimeMs === st.mtimeMs && cached.size === st.size ? cached.raw : fs.readFileSync(file);
  sendEncoded(req, res, file, { mtimeMs: st.mtimeMs, size: st.size, raw });
  return true;
}
