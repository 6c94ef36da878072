// The keeper's Temporal connection: one native connection from config.temporal (with temporal.tls
// when it is set, runs/tls.ts), shared by the API's client (which starts runs) and the workers
// (runs/worker.ts). Sharing it is what lets a run's workflow start eagerly (runs/client.ts): the
// server hands the first workflow task back in the answer to the start, to this keeper's own worker,
// instead of through the matching service's queue.
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from '../common/logger';
import type { Component } from '../platform/component';
import type { KeeperConfig } from '../platform/config/types';
import { installTemporalRuntime } from './runtime-logger';
import { checkSearchAttributes } from './temporal-setup';
import { temporalTlsOptions } from './tls';

/** Holds the client once connected; the API answers 503 while `client` is undefined. */
export interface TemporalClientHolder {
  client: Client | undefined;
  /** The connection under `client`, for the workers; set and cleared with it. */
  connection: NativeConnection | undefined;
  namespace: string;
  taskQueue: string;
  uiUrl: string;
}

export function createTemporalClientHolder(config: KeeperConfig): TemporalClientHolder {
  return {
    client: undefined,
    connection: undefined,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.task_queue,
    uiUrl: config.temporal.ui_url,
  };
}

export function temporalClientComponent(config: KeeperConfig, holder: TemporalClientHolder, log: Logger): Component {
  let connection: NativeConnection | undefined;
  return {
    name: 'temporal client',
    async start() {
      installTemporalRuntime(log); // before the first native connection: the SDK's logs go to ours
      const tls = temporalTlsOptions(config.temporal.tls);
      connection = await NativeConnection.connect({ address: config.temporal.address, ...(tls ? { tls } : {}) });
      // A namespace without the keeper's search attributes would fail every run at its start:
      // refuse to start instead, naming them and the command that registers them (issue 33).
      try {
        await checkSearchAttributes(connection, config.temporal.namespace);
      } catch (err) {
        await connection.close();
        connection = undefined;
        throw err;
      }
      holder.connection = connection;
      holder.client = new Client({ connection, namespace: config.temporal.namespace });
    },
    // Listed before the workers, so stopped after them: the connection outlives its last user.
    async stop() {
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
