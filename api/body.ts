// Reading a JSON request body, hardened (issue 3, item 7): at most 1 MiB (413), only
// `application/json` or `application/*+json` (415), identity encoding only, valid UTF-8, and at most
// 32 levels of nesting (400). The depth is checked on the raw text before JSON.parse, so a deeply
// nested body costs one linear scan and never a deep recursion anywhere after it.
import express, { type NextFunction, type Request, type Response } from 'express';
import { problems } from './problems';

export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_JSON_DEPTH = 32;

const readRaw = express.raw({ type: () => true, limit: MAX_BODY_BYTES, inflate: false });
const utf8 = new TextDecoder('utf-8', { fatal: true });
const JSON_TYPE = /^application\/(?:[a-z0-9.+-]+\+)?json$/;

/** True when the JSON text nests arrays/objects deeper than `max` (strings are skipped). */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** Checks the Content-Type of a request that carries a body; throws the 415 problem if it is not JSON. */
export function checkJsonContentType(header: string | undefined): void {
  if (header === undefined) throw problems.unsupportedMediaType('a request body needs Content-Type: application/json');
  const [type, ...params] = header.split(';').map((s) => s.trim().toLowerCase());
  if (!JSON_TYPE.test(type))
    throw problems.unsupportedMediaType(`Content-Type ${type} is not accepted; send application/json`);
  for (const p of params) {
    const [k, v] = p.split('=').map((s) => s.trim().replace(/^"|"$/g, ''));
    if (k === 'charset' && v !== 'utf-8' && v !== 'utf8')
      throw problems.unsupportedMediaType(`charset ${v} is not accepted; send UTF-8`);
  }
}

/** Parses a body already read into a Buffer; undefined for an empty body. */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    throw problems.invalid('the request body is not valid UTF-8');
  }
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
    throw problems.invalid(`the request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch {
    throw problems.invalid('the request body is not valid JSON');
  }
}

function announcesBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const len = req.headers['content-length'];
  return len !== undefined && len !== '0';
}

/** Middleware: leaves the parsed body (or undefined for none) in `res.locals.body`. */
export function jsonBody(req: Request, res: Response, next: NextFunction): void {
  if (!announcesBody(req)) {
    res.locals.body = undefined;
    return next();
  }
  try {
    checkJsonContentType(req.headers['content-type']);
  } catch (err) {
    return next(err);
  }
  readRaw(req, res, (err?: unknown) => {
    if (err) return next(err);
    try {
      res.locals.body = parseJsonBody(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
      next();
    } catch (e) {
      next(e);
    }
  });
}
