// `keeper run`: the server process. Opens the runtime, refuses to start on an empty operator
// registry (interface spec 4.4), then starts its components: the Operator API listener (with
// /readyz), the metrics listener, and the parts later layers add (hub, workers).
import express from 'express';
import type { Logger } from '../common/logger';
import { createHubComponents, type Hub } from '../hub';
import { createApiApp, createApiFallback, problemErrorHandler } from '../api';
import { mcpComponents } from '../mcp';
import { createUiRouter } from '../ui/server';
import type { ScenarioPort } from '../runs/activities/scenario-port';
import { createRunComponents } from '../runs/components';
import { convergeComponent } from '../runs/converge';
import { temporalAnswers } from '../runs/connection';
import { createSshTransport } from '../hub/ssh/transport';
import { startAll, type Component } from '../platform/component';
import type { KeeperConfig } from '../platform/config/types';
import { kidClaim } from './kid-claim';
import { httpComponent } from '../platform/listen';
import { createMetrics, type Metrics } from '../platform/metrics';
import { registerDriftMetric } from '../runs/drift-metrics';
import { registerPendingHostsMetric } from '../runs/pending-metrics';
import { sourceReachComponent } from '../runs/source-reach';
import { readinessHandler, secretStoreAnswers } from './readiness';
import { openRuntime, StartupError, type RuntimeWithCache } from '../platform/runtime';
import { VERSION } from '../common/version';

export interface RunningKeeper {
  runtime: RuntimeWithCache;
  metrics: Metrics;
  /** Souls: `hub.sessions` is the dispatch API (sendStep) for the workers. */
  hub: Hub;
  stop(): Promise<void>;
}

export const EMPTY_REGISTRY_MESSAGE =
  'the operators registry is empty: create the first operator with keeper init --archon=<AID> --config=<path> --credential-out=<path>, then start the keeper';

/** What tests may replace; production passes nothing. */
export interface KeeperOverrides {
  scenario?: ScenarioPort;
}

export async function startKeeper(
  config: KeeperConfig,
  log: Logger,
  overrides: KeeperOverrides = {},
): Promise<RunningKeeper> {
  const runtime = await openRuntime(config, log);
  try {
    const [{ count }] = await runtime.db('archons').count<{ count: string }[]>({ count: '*' });
    if (Number(count) === 0) throw new StartupError(EMPTY_REGISTRY_MESSAGE);
    const metrics = createMetrics(config.kid, VERSION);
    const hub = createHubComponents(runtime, metrics);
    // Incarnation runs: the API starts workflows through `runs.temporal`; the workers dispatch through the hub.
    // The API checks a run against its service before starting it, with the same engine the workers use.
    // Push mode: hosts registered with transport ssh are reached by this keeper over SSH (docs/ssh.md).
    const ssh = createSshTransport({
      db: runtime.db,
      log,
      secrets: runtime.scenarioSecrets,
      maxSessions: config.ssh.max_sessions,
      connectTimeoutMs: config.ssh.connect_timeout_ms,
      commandTimeoutMs: config.ssh.command_timeout_ms,
      soulCommand: config.ssh.soul_command,
      stateDir: config.ssh.state_dir,
    });
    const runs = createRunComponents({ runtime, sessions: hub.sessions, push: ssh, scenario: overrides.scenario });
    registerDriftMetric(metrics.registry, runtime.db);
    registerPendingHostsMetric(metrics.registry, runtime.db);
    // Every keeper checks it can load every registered source: any of them may render any run.
    const sources = sourceReachComponent({ db: runtime.db, runs: runs.service, registry: metrics.registry, log });
    // Every run starts through runs.service: the API (and MCP through its routes), the converger, drift repair.
    const apiDeps = { runtime, metrics, runs: runs.service, ssh };

    const app = express();
    app.disable('x-powered-by');
    // Ready once every component has started (the listener opens before the rest), not before.
    let started = false;
    app.get(
      '/readyz',
      readinessHandler(runtime.db, runtime.cache, metrics, {
        temporalAnswers: () => temporalAnswers(runs.temporal),
        secretStoreAnswers: () => secretStoreAnswers(config.secretstore.addr),
        started: () => started,
        details: () => ({ sources: sources.report() }),
      }),
    );
    app.use('/ui', createUiRouter({ log }));
    app.use(createApiApp(apiDeps));
    // Keep last on this listener: 404 and errors as RFC 9457 problems, never express's HTML or a stack.
    app.use(createApiFallback(log));
    // Errors raised by app-level handlers (/readyz, /ui) skip the routers above; answer them as problems too.
    app.use(problemErrorHandler(log));

    const metricsApp = express();
    metricsApp.disable('x-powered-by');
    metricsApp.get('/metrics', async (_req, res) => {
      res.set('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics());
    });

    const components: Component[] = [
      // First: a second live keeper with this kid must be refused before it opens any listener.
      kidClaim(runtime.cache, config.kid, log, config.temporal.task_queue),
      httpComponent('operator API', config.listen.openapi.addr, app),
      httpComponent('metrics', config.listen.metrics.addr, metricsApp),
      ...hub.components,
      ...runs.components,
      // New souls get the ready incarnations of their covens (runs/converge.ts); after the workers.
      convergeComponent({ db: runtime.db, runs: runs.service }, config.kid, log),
      sources,
      // Only when listen.mcp is configured (interface spec 4.3: removing the block turns MCP off).
      ...mcpComponents(apiDeps),
    ];
    const stopComponents = await startAll(components);
    started = true;
    log.info('keeper started', {
      kid: config.kid,
      openapi: config.listen.openapi.addr,
      metrics: config.listen.metrics.addr,
      version: VERSION,
    });
    return {
      runtime,
      metrics,
      hub,
      async stop() {
        await stopComponents();
        await runtime.close();
        log.info('keeper stopped', { kid: config.kid });
      },
    };
  } catch (err) {
    await runtime.close();
    throw err;
  }
}
