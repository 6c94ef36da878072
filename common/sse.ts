// Server-Sent Events frames as the keeper writes them (api/routes/run-events.ts): `id:`, `event:`
// and one `data:` line of JSON, frames ending with a blank line; lines starting with `:` are
// comments (keep-alives). One parser for every reader: keeperctl, the web UI and the tests. Pure
// (no Node or DOM API), so the browser bundle can take it too.

export interface SseEvent {
  id?: string;
  event: string;
  data: unknown;
}

/** Splits the complete frames off `buffer`: their events, and the text of the unfinished frame. */
export function takeSseEvents(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  let rest = buffer;
  let end: number;
  while ((end = rest.indexOf('\n\n')) >= 0) {
    const frame = rest.slice(0, end);
    rest = rest.slice(end + 2);
    const e: { id?: string; event?: string; data?: unknown } = {};
    for (const line of frame.split('\n')) {
      if (line.startsWith('id: ')) e.id = line.slice(4);
      else if (line.startsWith('event: ')) e.event = line.slice(7);
      else if (line.startsWith('data: ')) {
        const text = line.slice(6);
        try {
          e.data = JSON.parse(text);
        } catch {
          e.data = text;
        }
      }
    }
    if (e.event) events.push(e as SseEvent);
  }
  return { events, rest };
}
