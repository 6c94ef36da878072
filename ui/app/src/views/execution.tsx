// An execution's live result page (/ui/executions/{id}, issue 34): the request as recorded (module,
// params with secrets as references, target, who asked), a line per host as it answers (followed
// over the execution's Server-Sent Events, as keeperctl exec does), the answers grouped by identical
// status and output (1,000 identical answers are one group with a count), and the summary once the
// `end` event says every host answered or timed out.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, enc, followEvents } from '../api';
import { ErrorBox, StatusBadge } from '../components';

interface ExecHost {
  sid: string;
  status: string;
  output: string;
}

interface Execution {
  id: string;
  aid: string;
  module: string;
  params: Record<string, unknown>;
  target: Record<string, unknown>;
  dry_run: boolean;
  status: string;
  selected: number;
  summary: { ok: number; changed: number; failed: number; unknown: number } | null;
  hosts: ExecHost[];
}

const ORDER = ['failed', 'unknown', 'changed', 'ok'];

export function ExecutionPage({ id }: { id: string }) {
  const path = `/v1/executions/${enc(id)}`;
  const [e, setE] = useState<Execution>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    const ac = new AbortController();
    const load = async () => {
      try {
        const first = await api<Execution>('GET', path);
        if (ac.signal.aborted) return;
        // Hosts come from the events (the stream replays every answer from the first), so none is doubled.
        setE({ ...first, hosts: first.status === 'done' ? first.hosts : [] });
        if (first.status === 'done') return;
        await followEvents(
          `${path}/events`,
          (ev) => {
            if (ev.event === 'host')
              setE((x) => (x ? { ...x, hosts: [...x.hosts.filter((h) => h.sid !== ev.data.sid), ev.data] } : x));
            if (ev.event === 'end') setE((x) => (x ? { ...x, status: ev.data.status, summary: ev.data.summary } : x));
            return ev.event === 'end';
          },
          ac.signal,
        );
      } catch (err) {
        if (!ac.signal.aborted) setError(err);
      }
    };
    void load();
    return () => ac.abort();
  }, [path]);

  const groups = useMemo(() => {
    const by = new Map<string, { status: string; output: string; sids: string[] }>();
    for (const h of e?.hosts ?? []) {
      const key = `${h.status}\n${h.output}`;
      const g = by.get(key) ?? by.set(key, { status: h.status, output: h.output, sids: [] }).get(key)!;
      g.sids.push(h.sid);
    }
    return [...by.values()].sort(
      (a, b) => ORDER.indexOf(a.status) - ORDER.indexOf(b.status) || b.sids.length - a.sids.length,
    );
  }, [e]);

  if (!e) return <ErrorBox error={error} />;
  const s = e.summary;
  return (
    <section aria-label={`Execution ${id}`}>
      <h2>
        Execution <code>{id}</code>
      </h2>
      <ErrorBox error={error} />
      <p>
        <code>{e.module}</code>
        {e.dry_run ? ' (check mode)' : ''} on {e.selected} host{e.selected === 1 ? '' : 's'}, asked by {e.aid}:{' '}
        <StatusBadge status={e.status} />
      </p>
      <p>
        Parameters <code>{JSON.stringify(e.params)}</code> · target <code>{JSON.stringify(e.target)}</code>
      </p>
      <p class="summary" data-testid="summary" aria-live="polite">
        {s
          ? `ok ${s.ok}, changed ${s.changed}, failed ${s.failed}, unknown ${s.unknown}`
          : `${e.hosts.length} of ${e.selected} answered…`}
      </p>
      <h3>Hosts</h3>
      <table aria-label="Hosts">
        <thead>
          <tr>
            <th>SID</th>
            <th>Status</th>
            <th>Output</th>
          </tr>
        </thead>
        <tbody>
          {e.hosts.map((h) => (
            <tr key={h.sid}>
              <td>{h.sid}</td>
              <td>
                <StatusBadge status={h.status} />
              </td>
              <td>
                <code>{h.output.split('\n')[0]}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Output by identical answer</h3>
      {groups.map((g) => (
        <div class="output-group" key={`${g.status}\n${g.output}`} data-testid="output-group">
          <p>
            <strong>
              {g.sids.length} host{g.sids.length === 1 ? '' : 's'} {g.status}
            </strong>{' '}
            ({g.sids.join(', ')})
          </p>
          <pre>{g.output}</pre>
        </div>
      ))}
    </section>
  );
}
