// Ledger keys come off the wire (apply_id is the keeper's workflow id), and apply_id becomes a file
// name, so it is checked against a pattern that can never leave the ledger directory: no path
// separators, no leading dot (so never ".", "..", or our own ".lock").
export const APPLY_ID_PATTERN = /^[A-Za-z0-9_:-][A-Za-z0-9._:-]{0,199}$/;

export class InvalidStepKeyError extends Error {
  override readonly name = 'InvalidStepKeyError';
}

export function assertApplyId(applyId: unknown): asserts applyId is string {
  if (typeof applyId !== 'string' || !APPLY_ID_PATTERN.test(applyId)) {
    throw new InvalidStepKeyError(
      `apply_id ${JSON.stringify(applyId)} is not valid (must match ${APPLY_ID_PATTERN.source})`,
    );
  }
}

export function assertStepIndex(index: unknown): asserts index is number {
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) {
    throw new InvalidStepKeyError(`step index ${JSON.stringify(index)} is not valid (must be an integer >= 0)`);
  }
}
