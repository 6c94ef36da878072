// Reading a run's Server-Sent Events stream in a test, the way a client does (fetch, the stream
// parsed by common/sse.ts), until a chosen event or the end of the stream.
import { takeSseEvents } from '../../common/sse';

export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

/** Reads the stream at `url` until `stop` says so or the stream ends. */
export async function readRunEvents(
  url: string,
  token: string,
  stop: (e: SseEvent) => boolean = () => false,
): Promise<SseEvent[]> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` }, signal: ac.signal });
  if (res.status !== 200 || !res.body) throw new Error(`the event stream answered ${res.status}: ${await res.text()}`);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  const events: SseEvent[] = [];
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const taken = takeSseEvents(buf + dec.decode(value, { stream: true }));
      buf = taken.rest;
      for (const e of taken.events as SseEvent[]) {
        events.push(e);
        if (stop(e)) {
          ac.abort();
          return events;
        }
      }
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  }
  return events;
}
