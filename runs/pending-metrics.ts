// keeper_incarnation_pending_hosts{incarnation}: hosts an incarnation's committed state has not
// reached (failed or unknown in a run that committed within its failure budget, docs/runs.md).
// Read from PostgreSQL when scraped, so every keeper reports the same numbers.
import client from 'prom-client';
import type { Knex } from 'knex';
import { pendingCounts } from '../db/repos/pending-hosts';

export function registerPendingHostsMetric(registry: client.Registry, db: Knex): void {
  new client.Gauge({
    name: 'keeper_incarnation_pending_hosts',
    help: 'Hosts left pending by a run that committed within its failure budget, per incarnation',
    labelNames: ['incarnation'],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const [incarnation, n] of await pendingCounts(db)) this.set({ incarnation }, n);
      } catch {
        // The database not answering shows on keeper_dependency_up; the gauge is left empty meanwhile.
      }
    },
  });
}
