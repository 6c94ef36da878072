// keeper_drifted_hosts{incarnation}: hosts whose last drift check found them no longer matching the
// committed state (docs/drift.md). Read from PostgreSQL when scraped, so every keeper reports the
// same numbers whichever keeper ran the check.
import client from 'prom-client';
import type { Knex } from 'knex';
import { driftCounts } from '../db/repos/drift';

export function registerDriftMetric(registry: client.Registry, db: Knex): void {
  new client.Gauge({
    name: 'keeper_drifted_hosts',
    help: 'Hosts that drifted from the committed state at the last drift check, per incarnation with checks on',
    labelNames: ['incarnation'],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const r of await driftCounts(db)) this.set({ incarnation: r.name }, r.drifted);
      } catch {
        // The database not answering shows on keeper_dependency_up; the gauge is left empty meanwhile.
      }
    },
  });
}
