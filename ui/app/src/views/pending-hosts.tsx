// The hosts an incarnation's committed state has not reached yet (issue 30, docs/runs.md "Failure
// budget"): a run within its failure budget committed and left its failed and unknown hosts
// pending; the converger brings each in when its soul comes back. Shown only when there are some,
// so a healthy incarnation's page stays short.
import { enc } from '../api';
import { Ago, Link, StatusBadge } from '../components';

export interface PendingHost {
  sid: string;
  status: 'failed' | 'unknown';
  reason: string | null;
  apply_id: string;
  since: string;
}

export function PendingHosts({ incarnation, hosts }: { incarnation: string; hosts: PendingHost[] }) {
  if (hosts.length === 0) return null;
  return (
    <section class="pending-hosts" aria-label="Pending hosts" data-testid="pending-hosts">
      <h3>
        Pending hosts <span class="tag">{hosts.length}</span>
      </h3>
      <p class="muted hint">
        The last runs committed without these hosts (within their failure budget); each is brought in when its soul
        comes back, or by the next run.
      </p>
      <table>
        <thead>
          <tr>
            <th>Host</th>
            <th>Outcome</th>
            <th>Reason</th>
            <th>Left by run</th>
            <th>Since</th>
          </tr>
        </thead>
        <tbody>
          {hosts.map((h) => (
            <tr key={h.sid} data-sid={h.sid}>
              <td>{h.sid}</td>
              <td>
                <StatusBadge status={h.status} />
              </td>
              <td>{h.reason ?? <span class="muted">—</span>}</td>
              <td>
                <Link href={`/ui/incarnations/${enc(incarnation)}/runs/${enc(h.apply_id)}`}>{h.apply_id}</Link>
              </td>
              <td>
                <Ago at={h.since} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
