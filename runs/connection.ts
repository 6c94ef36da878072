// The keeper's Temporal connection: one native connection from config.temporal (with temporal.tls
// when it is set, runs/tls.ts), shared by the API's client (which starts runs) and the workers
// (runs/worker.ts). Sharing it is what lets a run's workflow start eagerly (runs/client.ts): the
// server hands the first workflow task back in the answer to the start, to this keeper's own worker,
// instead of through the matching service's queue. Temporal away at start does not stop the keeper:
// it connects when Temporal answers (issue 45).
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from '../common/logger';
import type { Component } from '../platform/component';
import type { KeeperConfig } from '../platform/config/types';
import { installTemporalRuntime } from './runtime-logger';
import { checkSearchAttributes, isSetupError } from './temporal-setup';
import { temporalTlsOptions } from './tls';

/** Holds the client once connected; the API answers 503 while `client` is undefined. */
export interface TemporalClientHolder {
  client: Client | undefined;
  /** The connection under `client`, for the workers; set and cleared with it. */
  connection: NativeConnection | undefined;
  namespace: string;
  taskQueue: string;
  uiUrl: string;
  /**
   * Calls `fn` once the connection is open: at once when it already is, else when the keeper
   * connects (Temporal away at start, issue 45). The workers and the retention schedule start so.
   */
  whenConnected(fn: (connection: NativeConnection) => void): void;
}

export function createTemporalClientHolder(config: KeeperConfig): TemporalClientHolder {
  const waiting: ((connection: NativeConnection) => void)[] = [];
  const holder: TemporalClientHolder & { connected(c: NativeConnection): void } = {
    client: undefined,
    connection: undefined,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.task_queue,
    uiUrl: config.temporal.ui_url,
    whenConnected(fn) {
      if (holder.connection) fn(holder.connection);
      else waiting.push(fn);
    },
    connected(connection) {
      holder.connection = connection;
      holder.client = new Client({ connection, namespace: config.temporal.namespace });
      for (const fn of waiting.splice(0)) fn(connection);
    },
  };
  return holder;
}

/** How long start waits for Temporal before the keeper starts without it (and connects later). */
export const TEMPORAL_START_WAIT_MS = 10_000;
/** Between two attempts to connect while Temporal is away. */
export const TEMPORAL_RETRY_MS = 2000;

/**
 * The keeper's connection to Temporal. The spec's minimum core is the database and the cache
 * (issue 45): a keeper whose Temporal is away still starts and serves souls, the registry,
 * operators and onboarding, refusing runs, plans and executions with a 503 naming Temporal, and
 * connects by itself once Temporal answers (then the workers and the retention schedule start, no
 * restart). A namespace without the keeper's search attributes is different: an operator's step
 * fixes it, so at start it stops the keeper with that step (issue 33); found later, it is logged and
 * tried again.
 */
export function temporalClientComponent(config: KeeperConfig, holder: TemporalClientHolder, log: Logger): Component {
  let connection: NativeConnection | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let warned = false;
  const set = holder as TemporalClientHolder & { connected(c: NativeConnection): void };

  /** One attempt: resolves once connected, rejects with why not. */
  async function connectOnce(): Promise<void> {
    const tls = temporalTlsOptions(config.temporal.tls);
    const c = await NativeConnection.connect({ address: config.temporal.address, ...(tls ? { tls } : {}) });
    try {
      // A namespace without the keeper's search attributes would fail every run at its start.
      await checkSearchAttributes(c, config.temporal.namespace);
    } catch (err) {
      await c.close().catch(() => undefined);
      throw err;
    }
    if (stopped) {
      await c.close().catch(() => undefined);
      return;
    }
    connection = c;
    set.connected(c);
    if (warned)
      log.info('temporal: connected; runs, plans and executions are served again', {
        address: config.temporal.address,
      });
  }

  function retryLater(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      void connectOnce().catch((err: Error) => {
        if (isSetupError(err))
          log.error('temporal: the namespace cannot be used; runs stay refused until it is set up', {
            error: err.message,
          });
        retryLater();
      });
    }, TEMPORAL_RETRY_MS);
  }

  return {
    name: 'temporal client',
    async start() {
      installTemporalRuntime(log); // before the first native connection: the SDK's logs go to ours
      let late: NodeJS.Timeout | undefined;
      const first = connectOnce();
      const waited = await Promise.race([
        first.then(
          () => ({ ok: true as const }),
          (err: Error) => ({ ok: false as const, err }),
        ),
        new Promise<{ ok: false; err: Error }>((resolve) => {
          late = setTimeout(
            () => resolve({ ok: false, err: new Error(`no answer within ${TEMPORAL_START_WAIT_MS / 1000} s`) }),
            TEMPORAL_START_WAIT_MS,
          );
        }),
      ]).finally(() => clearTimeout(late));
      if (waited.ok) return;
      // Refuse to start on a namespace that is not set up, naming the command that sets it up (issue 33).
      if (isSetupError(waited.err)) throw waited.err;
      warned = true;
      log.warn(
        'temporal: not answering; the keeper serves without it (runs, plans and executions are refused with 503) and connects when it answers',
        { address: config.temporal.address, error: waited.err.message },
      );
      // A first attempt still under way may yet connect; otherwise try again every TEMPORAL_RETRY_MS.
      void first.catch(() => retryLater());
    },
    // Listed before the workers, so stopped after them: the connection outlives its last user.
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // An attempt under way is not awaited (against a frontend that never answers it may not end);
      // one that ends after this closes its connection itself (connectOnce checks `stopped`).
      holder.client = undefined;
      holder.connection = undefined;
      await connection?.close();
    },
  };
}

/**
 * Whether Temporal answers for this keeper: connected, and the frontend describes the keeper's
 * namespace within 2 s (a namespace that is missing is as fatal to runs as a frontend that is down).
 * For /readyz (issue 33).
 */
export async function temporalAnswers(holder: TemporalClientHolder): Promise<boolean> {
  const connection = holder.connection;
  if (!connection) return false;
  // The gRPC deadline alone does not bound the call: with the frontend's port closed the native
  // client keeps reconnecting, and /readyz took 6-9 s to answer on the production rehearsal (issue
  // 33). The answer is `down` after 2 s whatever the call is still doing.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), 2000);
  });
  const call = connection
    .withDeadline(Date.now() + 2000, () =>
      connection.workflowService.describeNamespace({ namespace: holder.namespace }),
    )
    .then(
      () => true,
      () => false,
    );
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where the Web UI shows a run: the report links here (issue 7, item 5). */
export function runUiUrl(uiUrl: string, namespace: string, applyId: string): string {
  const base = uiUrl.replace(/\/+$/, '');
  return `${base}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(applyId)}`;
}
