// The search attributes every run carries, so an operator finds it in the Temporal Web UI by
// incarnation, operation or service ref (scripts/stack.sh registers them as Keyword).
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

export const KeeperIncarnation = defineSearchAttributeKey('KeeperIncarnation', SearchAttributeType.KEYWORD);
export const KeeperOperation = defineSearchAttributeKey('KeeperOperation', SearchAttributeType.KEYWORD);
export const KeeperServiceRef = defineSearchAttributeKey('KeeperServiceRef', SearchAttributeType.KEYWORD);
export const KeeperService = defineSearchAttributeKey('KeeperService', SearchAttributeType.KEYWORD);

export function runSearchAttributes(run: {
  incarnation: string;
  operation: string;
  service: string;
  serviceRef: string;
}): SearchAttributePair[] {
  return [
    { key: KeeperIncarnation, value: run.incarnation },
    { key: KeeperOperation, value: run.operation },
    { key: KeeperService, value: run.service },
    { key: KeeperServiceRef, value: `${run.service}@${run.serviceRef}` },
  ];
}
