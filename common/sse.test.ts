import assert from 'node:assert/strict';
import { takeSseEvents } from './sse';

describe('SSE frames', () => {
  it('takes complete frames with id, event and JSON data, keeps the unfinished one, skips comments', () => {
    const { events, rest } = takeSseEvents(
      'retry: 1000\n\nevent: phase\ndata: {"phase":"rendering"}\n\n: keep-alive\n\nid: 7\nevent: host\ndata: {"sid":"a.example.com"}\n\nid: 8\nevent: ho',
    );
    assert.deepEqual(events, [
      { event: 'phase', data: { phase: 'rendering' } },
      { id: '7', event: 'host', data: { sid: 'a.example.com' } },
    ]);
    assert.equal(rest, 'id: 8\nevent: ho');
    const next = takeSseEvents(`${rest}st\ndata: {"sid":"b.example.com"}\n\n`);
    assert.deepEqual(next.events, [{ id: '8', event: 'host', data: { sid: 'b.example.com' } }]);
    assert.equal(next.rest, '');
  });
});
