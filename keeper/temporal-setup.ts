// `keeper temporal-setup --config=<keeper.yml>`: the operator step that readies a Temporal namespace
// for the keeper (docs/production.md): the namespace from temporal.namespace (created with a
// retention if absent) and the keeper's search attributes. Needs only temporal.* of the config (the
// secrets store and database are not touched), so it runs before the first `keeper run`.
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../platform/config/load';
import { setupTemporalNamespace } from '../runs/temporal-setup';
import { temporalTlsOptions } from '../runs/tls';

export async function temporalSetup(configPath: string, retentionDays: number): Promise<void> {
  if (!Number.isInteger(retentionDays) || retentionDays < 1) {
    throw new Error(`--retention-days: must be a whole number of days, 1 or more (got ${retentionDays})`);
  }
  const config = loadConfig(configPath);
  const { address, namespace } = config.temporal;
  const tls = temporalTlsOptions(config.temporal.tls);
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect({ address, ...(tls ? { tls } : {}) });
  } catch (err) {
    throw new Error(`cannot connect to Temporal at ${address} (temporal.address): ${(err as Error).message}`);
  }
  try {
    const report = await setupTemporalNamespace(connection, namespace, retentionDays);
    const lines = [
      report.namespaceCreated
        ? `namespace ${namespace} created (retention ${retentionDays} days)`
        : `namespace ${namespace} exists`,
      report.added.length > 0
        ? `search attributes registered: ${report.added.join(', ')} (Keyword)`
        : 'search attributes already registered',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await connection.close();
  }
}
