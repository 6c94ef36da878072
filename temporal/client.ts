// The keeper's Temporal client: one gRPC connection from config.temporal, shared by the API (which
// starts runs) and nothing else; the workers open their own native connection (temporal/worker.ts).
// Both use temporal.tls when it is set (temporal/tls.ts).
import { Client, Connection } from '@temporalio/client';
import type { Component } from '../keeper/component';
import type { KeeperConfig } from '../keeper/config/types';
import { temporalTlsOptions } from './tls';

/** Holds the client once connected; the API answers 503 while `client` is undefined. */
export interface TemporalClientHolder {
  client: Client | undefined;
  namespace: string;
  taskQueue: string;
  uiUrl: string;
}

export function createTemporalClientHolder(config: KeeperConfig): TemporalClientHolder {
  return { client: undefined, namespace: config.temporal.namespace, taskQueue: config.temporal.task_queue, uiUrl: config.temporal.ui_url };
}

export function temporalClientComponent(config: KeeperConfig, holder: TemporalClientHolder): Component {
  let connection: Connection | undefined;
  return {
    name: 'temporal client',
    async start() {
      const tls = temporalTlsOptions(config.temporal.tls);
      connection = await Connection.connect({ address: config.temporal.address, connectTimeout: '10s', ...(tls ? { tls } : {}) });
      holder.client = new Client({ connection, namespace: config.temporal.namespace });
    },
    async stop() {
      holder.client = undefined;
      await connection?.close();
    },
  };
}

/** Where the Web UI shows a run: the report links here (issue 7, item 5). */
export function runUiUrl(uiUrl: string, namespace: string, applyId: string): string {
  const base = uiUrl.replace(/\/+$/, '');
  return `${base}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(applyId)}`;
}
