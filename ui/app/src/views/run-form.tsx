// "Run an operation" on the incarnation page: the operation (suggesting the operations of the
// version the incarnation runs), one field per input of the chosen operation prefilled with the
// last run's input (input-editor.tsx), and the run's failure budget (`max_failed`, docs/runs.md
// "Failure budget"): left empty, the scenario's applies; the keeper refuses one above it.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Busy, ErrorBox } from '../components';
import { useAction } from '../hooks';
import { useInputEditor, useLastInput, useOperations } from '../input-editor';

/** A count of hosts or a percentage ("5%"), as the API takes it; undefined when empty. */
export function maxFailedOf(text: string): number | string | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (/^[0-9]{1,9}$/.test(t)) return Number(t);
  if (/^(100|[1-9]?[0-9])%$/.test(t)) return t;
  throw new Error(
    `max_failed: must be a number of hosts (e.g. 2) or a percentage of the hosts (e.g. "5%"), not "${t}"`,
  );
}

export function RunOperation({
  name,
  service,
  version,
  lastRunId,
  disabled,
  onAccepted,
}: {
  name: string;
  service: string;
  version: string | null;
  lastRunId: string | undefined;
  disabled: boolean;
  onAccepted(applyId: string): void;
}) {
  const ops = useOperations(service, version);
  const last = useLastInput(name, lastRunId);
  const [operation, setOperation] = useState('');
  const [maxFailed, setMaxFailed] = useState('');
  const action = useAction();
  const inputs = ops.data?.find((o) => o.name === operation.trim())?.inputs;
  const editor = useInputEditor('', inputs, last.data ?? {}, (err) => void action.run(() => Promise.reject(err)));
  const submit = async (e: Event) => {
    e.preventDefault();
    const r = await action.run(() => {
      const body: Record<string, unknown> = { operation: operation.trim(), input: editor.value() };
      const budget = maxFailedOf(maxFailed);
      if (budget !== undefined) body.max_failed = budget;
      return api<{ apply_id: string }>('POST', `/v1/incarnations/${enc(name)}/runs`, body);
    });
    if (r) onAccepted(r.apply_id);
  };
  // noValidate: the fields' own checks answer ("input root: required", as the API words it); the
  // browser's validation bubble would stop the submit before them, worded per browser.
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Run an operation" noValidate>
      <label>
        Operation{' '}
        <input
          name="operation"
          required
          value={operation}
          placeholder="scale"
          list="run-operations"
          onInput={(e) => {
            setOperation((e.target as HTMLInputElement).value);
            editor.reset();
          }}
        />
      </label>
      <datalist id="run-operations">
        {(ops.data ?? []).map((o) => (
          <option key={o.name} value={o.name} />
        ))}
      </datalist>
      {editor.view}
      <label>
        Failure budget (max_failed){' '}
        <input
          name="max_failed"
          value={maxFailed}
          placeholder="the scenario's; e.g. 1 or 5%"
          onInput={(e) => setMaxFailed((e.target as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" disabled={disabled || action.busy}>
        Run
      </button>
      <Busy busy={action.busy} label="Starting the run…" />
      <ErrorBox error={action.error} />
    </form>
  );
}
