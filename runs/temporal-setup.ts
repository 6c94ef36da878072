// What a Temporal namespace must hold before a keeper may use it (issue 33): the four Keyword
// search attributes every run carries (runs/search-attributes.ts). A run started on a namespace
// without them fails at start, long after the keeper said it was ready; so the keeper checks them
// when it connects and refuses to start, naming what is missing, and `keeper temporal-setup` (the
// documented operator step, docs/production.md) registers them (and the namespace, if it is absent).
import type { NativeConnection } from '@temporalio/worker';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { KeeperIncarnation, KeeperOperation, KeeperService, KeeperServiceRef } from './search-attributes';

const KEYWORD = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

/** The keeper's search attributes, all Keyword. */
export const KEEPER_SEARCH_ATTRIBUTES = [KeeperIncarnation, KeeperOperation, KeeperServiceRef, KeeperService].map(
  (k) => k.name,
);

/** A decoded enum may come back as its number or its name; both mean Keyword here. */
function isKeyword(v: unknown): boolean {
  return v === KEYWORD || v === 'INDEXED_VALUE_TYPE_KEYWORD';
}

/** The keeper's search attributes the namespace lacks (or holds with another type than Keyword). */
export async function missingSearchAttributes(connection: NativeConnection, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  return KEEPER_SEARCH_ATTRIBUTES.filter((name) => !isKeyword(customAttributes?.[name]));
}

export class MissingSearchAttributesError extends Error {
  constructor(namespace: string, missing: string[]) {
    super(
      `the Temporal namespace ${namespace} lacks the keeper's search attributes ${missing.join(', ')} (type Keyword); ` +
        'register them once per namespace with: keeper temporal-setup --config=<keeper.yml> (docs/production.md)',
    );
    this.name = 'MissingSearchAttributesError';
  }
}

export class NamespaceMissingError extends Error {
  constructor(namespace: string) {
    super(
      `the Temporal namespace ${namespace} (config temporal.namespace) does not exist; create it with: keeper temporal-setup --config=<keeper.yml> (docs/production.md)`,
    );
    this.name = 'NamespaceMissingError';
  }
}

/** A namespace the keeper cannot use as it is (an operator's step fixes it), unlike a frontend that is away. */
export const isSetupError = (err: unknown): boolean =>
  err instanceof MissingSearchAttributesError || err instanceof NamespaceMissingError;

/** Throws MissingSearchAttributesError when the namespace lacks any of them. */
export async function checkSearchAttributes(connection: NativeConnection, namespace: string): Promise<void> {
  let missing: string[];
  try {
    missing = await missingSearchAttributes(connection, namespace);
  } catch (err) {
    if ((err as { code?: number }).code !== 5) throw err;
    throw new NamespaceMissingError(namespace);
  }
  if (missing.length > 0) throw new MissingSearchAttributesError(namespace, missing);
}

export interface SetupReport {
  namespaceCreated: boolean;
  added: string[];
}

/**
 * Creates the namespace (with `retentionDays`) when it does not exist, then adds the search
 * attributes it lacks. Idempotent: a second call changes nothing and reports nothing added.
 */
export async function setupTemporalNamespace(
  connection: NativeConnection,
  namespace: string,
  retentionDays: number,
): Promise<SetupReport> {
  let namespaceCreated = false;
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (err) {
    if ((err as { code?: number }).code !== 5) throw err; // 5: NOT_FOUND
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs(retentionDays * 86_400_000),
    });
    namespaceCreated = true;
  }
  // A namespace just created reaches every service's cache within seconds (NOT_FOUND until then).
  const missing = await whileNotFound(() => missingSearchAttributes(connection, namespace));
  if (missing.length > 0) {
    await whileNotFound(() =>
      connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((name) => [name, KEYWORD])),
      }),
    );
  }
  return { namespaceCreated, added: missing };
}

async function whileNotFound<T>(fn: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if ((err as { code?: number }).code !== 5 || Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
