// The per-host transport choice: a stream host is waited for until this keeper holds its stream,
// handed back as moved when another keeper holds it or none appears; a push (SSH) host is opened,
// and one that cannot be reached is unreachable with the reason, nothing run on it.
import assert from 'node:assert/strict';
import type { StepSender } from './deps';
import { hostTransports, type TransportDeps } from './dispatch-transport';

function deps(o: {
  connected?: string[];
  holders?: Record<string, string>;
  pushed?: string[];
  openFails?: string;
}): TransportDeps & { closed: string[] } {
  const closed: string[] = [];
  const sessions: StepSender = {
    isConnected: (sid) => (o.connected ?? []).includes(sid),
    sendStep: async () => {
      throw new Error('not used');
    },
  };
  return {
    closed,
    sessions,
    kid: 'k1',
    reconnectGraceMs: 0,
    locate: async (sids) => sids.map((s) => o.holders?.[s] ?? null),
    ...(o.pushed
      ? {
          push: {
            owns: async (sids: string[]) => new Set(sids.filter((s) => o.pushed!.includes(s))),
            open: async (sid: string) => {
              if (o.openFails) throw new Error(o.openFails);
              return {
                ...sessions,
                close: async () => {
                  closed.push(sid);
                },
              };
            },
          },
        }
      : {}),
  };
}

const signal = new AbortController().signal;

describe('dispatch transport', () => {
  it('sends to a host whose stream this keeper holds, through the sessions', async () => {
    const d = deps({ connected: ['h1'] });
    const t = await hostTransports(d, ['h1']);
    assert.equal(await t.arrive('h1', signal), 'here');
    const ch = await t.open('h1', signal);
    assert.ok('sender' in ch && ch.sender === d.sessions);
  });

  it('hands a host back as moved when another keeper holds its stream, or none appears within the grace', async () => {
    const t = await hostTransports(deps({ holders: { h1: 'k2' } }), ['h1', 'h2']);
    assert.equal(await t.arrive('h1', signal), 'moved');
    assert.equal(await t.arrive('h2', signal), 'moved');
  });

  it('opens a push host without waiting for a stream, and closes its channel', async () => {
    const d = deps({ pushed: ['ssh1'] });
    const t = await hostTransports(d, ['ssh1', 'h1']);
    assert.equal(await t.arrive('ssh1', signal), 'here');
    const ch = await t.open('ssh1', signal);
    assert.ok('sender' in ch && ch.sender !== d.sessions);
    await ch.close();
    assert.deepEqual(d.closed, ['ssh1']);
  });

  it('a push host that cannot be reached is unreachable with the reason', async () => {
    const t = await hostTransports(deps({ pushed: ['ssh1'], openFails: 'host key changed' }), ['ssh1']);
    assert.deepEqual(await t.open('ssh1', signal), { unreachable: 'host key changed; nothing was run on this host' });
  });
});
