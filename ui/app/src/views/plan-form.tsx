// "Make a plan" on the incarnation page: pick the operation (the service version's operations when
// the keeper can list them, else typed) and its input, as the run form does (input-editor.tsx):
// one field per declared input, prefilled with the last run's input, the raw JSON one click away.
// An empty raw input sends none, and the keeper plans with the input of the last committed run.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Busy, ErrorBox } from '../components';
import { useAction } from '../hooks';
import { useInputEditor, useLastInput, useOperations } from '../input-editor';
import { navigate } from '../router';
import { planHref } from './plan';

/** `upgrade` is not a scenario (it migrates state): the keeper refuses to plan it. */
const plannable = (op: string | undefined) => (op && op !== 'upgrade' ? op : undefined);

export function PlanForm({
  name,
  service,
  version,
  lastOperation,
  lastRunId,
}: {
  name: string;
  service: string;
  version: string | null;
  lastOperation: string | undefined;
  lastRunId: string | undefined;
}) {
  // The operations of the version the incarnation runs; a keeper that cannot list them leaves a text field.
  const ops = useOperations(service, version);
  const last = useLastInput(name, lastRunId);
  const names = (ops.data ?? []).map((o) => o.name);
  const [chosen, setChosen] = useState<string>();
  const action = useAction();
  const fallback = plannable(lastOperation);
  const known = (op: string | undefined): op is string =>
    op !== undefined && (names.length === 0 || names.includes(op));
  const operation = known(chosen) ? chosen : known(fallback) ? fallback : (names[0] ?? '');
  const inputs = ops.data?.find((o) => o.name === operation.trim())?.inputs;
  const editor = useInputEditor('plan-', inputs, last.data ?? {}, (err) => void action.run(() => Promise.reject(err)));

  const submit = async (e: Event) => {
    e.preventDefault();
    const r = await action.run(() => {
      const body: { operation: string; input?: Record<string, unknown> } = { operation: operation.trim() };
      const input = editor.value();
      if (input !== undefined) body.input = input;
      return api<{ plan_id: string }>('POST', `/v1/incarnations/${enc(name)}/plans`, body);
    });
    if (r) navigate(planHref(name, r.plan_id));
  };
  const set = (e: Event) => {
    setChosen((e.target as HTMLInputElement | HTMLSelectElement).value);
    editor.reset();
  };
  // noValidate: the fields' own checks answer ("input root: required", as the API words it); the
  // browser's validation bubble would stop the submit before them, worded per browser.
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Make a plan" noValidate>
      <h3>Make a plan</h3>
      <p class="muted hint">
        See what an operation would change on every host before anything changes; then apply exactly that.
      </p>
      {names.length > 0 ? (
        <label>
          Operation{' '}
          <select name="plan-operation" value={operation} onChange={set}>
            {names.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      ) : (
        <label>
          Operation <input name="plan-operation" required value={operation} placeholder="update" onInput={set} />
        </label>
      )}
      {editor.view}
      <button type="submit" disabled={action.busy || operation.trim() === ''}>
        Plan
      </button>
      <Busy busy={action.busy} label="Starting the plan…" />
      <ErrorBox error={action.error} />
    </form>
  );
}
