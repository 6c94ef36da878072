// Whether this keeper can reach every registered service source (issue 33). Keepers of a cluster
// share one task queue, so any of them may render any run: a repository one keeper cannot fetch
// (a `file://` path on another machine, a host its network cannot reach, a credential it cannot
// read) locks the runs that keeper renders. Each keeper therefore loads every registered source
// the way a render does, at start and every CHECK_EVERY_MS after, and reports the ones it cannot
// reach: a log line each, `keeper_sources_unreachable`, and the `sources` detail of /readyz.
// It does not make the keeper unready: its other services still run, and a failure is per source.
import type { Knex } from 'knex';
import client from 'prom-client';
import type { Logger } from '../common/logger';
import { serviceSources } from '../db/repos/services';
import type { Component } from '../platform/component';
import { displayGitUrl } from '../scenario/load/git-policy';
import type { RunService } from './start/service';

export const CHECK_EVERY_MS = 60 * 60 * 1000;

export interface SourceReach {
  /** When the last check ended; null until the first one has. */
  checked_at: string | null;
  checked: number;
  unreachable: { service: string; git: string; reason: string }[];
}

export interface SourceReachComponent extends Component {
  report(): SourceReach;
  /** Runs one check now (tests, and a registration that wants the answer at once). */
  check(): Promise<SourceReach>;
}

export function sourceReachComponent(deps: {
  db: Knex;
  runs: Pick<RunService, 'load'>;
  registry: client.Registry;
  log: Logger;
  everyMs?: number;
}): SourceReachComponent {
  let last: SourceReach = { checked_at: null, checked: 0, unreachable: [] };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<SourceReach> | undefined;
  let stopped = false;
  const gauge = new client.Gauge({
    name: 'keeper_sources_unreachable',
    help: 'Registered service sources this keeper could not load at its last check (docs/production.md)',
    registers: [deps.registry],
  });

  async function checkOnce(): Promise<SourceReach> {
    const sources = await serviceSources(deps.db);
    const unreachable: SourceReach['unreachable'] = [];
    for (const s of sources) {
      if (stopped) break;
      try {
        await deps.runs.load(s);
      } catch (err) {
        const reason = (err as Error).message;
        unreachable.push({ service: s.name, git: displayGitUrl(s.git), reason });
        deps.log.warn('service source unreachable from this keeper: runs it renders will lock', {
          service: s.name,
          git: displayGitUrl(s.git),
          reason,
        });
      }
    }
    last = { checked_at: new Date().toISOString(), checked: sources.length, unreachable };
    gauge.set(unreachable.length);
    return last;
  }

  function check(): Promise<SourceReach> {
    running ??= checkOnce().finally(() => {
      running = undefined;
    });
    return running;
  }

  const background = () =>
    void check().catch((err: Error) => {
      if (!stopped) deps.log.warn('service source check failed', { error: err.message });
    });

  return {
    name: 'service source check',
    async start() {
      // In the background: a slow repository must not hold the keeper's start.
      background();
      timer = setInterval(background, deps.everyMs ?? CHECK_EVERY_MS);
      timer.unref();
    },
    async stop() {
      // Not awaited: a fetch may take up to services.git.timeout, and a stopping keeper must not wait
      // for it; the loop ends at the next source.
      stopped = true;
      if (timer) clearInterval(timer);
    },
    report: () => last,
    check,
  };
}
