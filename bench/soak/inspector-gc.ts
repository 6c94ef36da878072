// A full collection forced in another Node process, for the soak's forced mode (bench only): the
// process is started with `--inspect=127.0.0.1:PORT` and this sends it HeapProfiler.collectGarbage
// over the inspector's WebSocket. No production code path is involved: the keeper and the soul see an
// ordinary mark-sweep, which their `gc` observer counts and measures (common/heap-after-gc.ts).
//
// The WebSocket is the few lines the protocol needs (RFC 6455: one masked text frame out, unmasked
// frames in), so it runs in the test runner as well as in the bench, without Node's experimental
// WebSocket flag and without a dependency.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';

/** The node flag that opens the inspector on `port`, loopback only. */
export const inspectFlag = (port: number) => `--inspect=127.0.0.1:${port}`;

/** The debugger WebSocket URL of the process whose inspector listens on `port`. */
async function debuggerUrl(port: number): Promise<string> {
  const r = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(10_000) }).catch(
    (err: Error) => {
      throw new Error(`inspector on port ${port}: ${(err.cause as Error | undefined)?.message ?? err.message}`);
    },
  );
  const targets = (await r.json()) as { webSocketDebuggerUrl?: string }[];
  const url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
  if (!url) throw new Error(`inspector on port ${port}: no debugger target`);
  return url;
}

function upgrade(url: string): Promise<Socket> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64'),
      },
      timeout: 10_000,
    });
    req.on('upgrade', (_res, socket) => resolve(socket));
    req.on('response', (res) => reject(new Error(`inspector: no upgrade (${res.statusCode})`)));
    req.on('timeout', () => req.destroy(new Error('inspector: upgrade timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** One client text frame: FIN, opcode 1, masked as RFC 6455 requires of a client. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = crypto.randomBytes(4);
  const head =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length])
      : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const body = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([head, mask, body]);
}

/** The text of each complete server frame at the start of `buf`, and the bytes left over. */
function readFrames(buf: Buffer): { texts: string[]; rest: Buffer } {
  const texts: string[] = [];
  let at = 0;
  for (;;) {
    if (buf.length - at < 2) break;
    let len = buf[at + 1]! & 0x7f;
    let head = 2;
    if (len === 126) {
      if (buf.length - at < 4) break;
      len = buf.readUInt16BE(at + 2);
      head = 4;
    } else if (len === 127) {
      if (buf.length - at < 10) break;
      len = Number(buf.readBigUInt64BE(at + 2));
      head = 10;
    }
    if (buf.length - at < head + len) break;
    if ((buf[at]! & 0x0f) === 1) texts.push(buf.subarray(at + head, at + head + len).toString());
    at += head + len;
  }
  return { texts, rest: buf.subarray(at) };
}

/**
 * Sends `method` to the process whose inspector listens on `port` and resolves when it answers;
 * `onEvent` sees every notification it sends meanwhile (a heap snapshot arrives as chunk events).
 */
async function inspectorCall(
  port: number,
  method: string,
  timeoutMs: number,
  onEvent?: (method: string, params: unknown) => void,
): Promise<void> {
  const socket = await upgrade(await debuggerUrl(port));
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let buf: Buffer = Buffer.alloc(0);
      timer = setTimeout(
        () => reject(new Error(`inspector on port ${port}: no answer to ${method} in ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      socket.on('data', (d: Buffer) => {
        const { texts, rest } = readFrames(Buffer.concat([buf, d]));
        buf = rest;
        for (const t of texts) {
          const msg = JSON.parse(t) as { id?: number; method?: string; params?: unknown; error?: { message: string } };
          if (msg.method && onEvent) onEvent(msg.method, msg.params);
          if (msg.id !== 1) continue;
          if (msg.error) reject(new Error(`${method}: ${msg.error.message}`));
          else resolve();
        }
      });
      socket.on('error', reject);
      socket.on('close', () => reject(new Error(`inspector on port ${port}: closed before answering`)));
      socket.write(textFrame(JSON.stringify({ id: 1, method })));
    });
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}

/**
 * Forces a full collection in the process whose inspector listens on `port`, and resolves when the
 * process answers that it is done (the collection ran synchronously in it).
 */
export function collectGarbage(port: number): Promise<void> {
  return inspectorCall(port, 'HeapProfiler.collectGarbage', 30_000);
}

/**
 * Writes a V8 heap snapshot of the process whose inspector listens on `port` to `file` (the
 * `.heapsnapshot` JSON DevTools reads; bench/soak/heap-diff.ts compares two). Taking one runs a
 * full collection first, so it holds only what is live; on an 80 MB heap under load it takes tens
 * of seconds, hence the long timeout.
 */
export async function takeHeapSnapshot(port: number, file: string): Promise<void> {
  const fd = fs.openSync(file, 'w');
  try {
    await inspectorCall(port, 'HeapProfiler.takeHeapSnapshot', 600_000, (method, params) => {
      if (method === 'HeapProfiler.addHeapSnapshotChunk') fs.writeSync(fd, (params as { chunk: string }).chunk);
    });
  } finally {
    fs.closeSync(fd);
  }
}
