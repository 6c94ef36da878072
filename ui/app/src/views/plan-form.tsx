// "Make a plan" on the incarnation page: pick the operation (the service version's operations when
// the keeper can list them, else typed), optionally give the input, and open the plan being made.
// Without an input the keeper plans with the input of the last committed run, so a plan of "the
// same again" needs nothing typed.
import { useState } from 'preact/hooks';
import { api, enc } from '../api';
import { Busy, ErrorBox, parseInput } from '../components';
import { useAction, usePoll } from '../hooks';
import { navigate } from '../router';
import { planHref } from './plan';

interface VersionDetail {
  operations: { name: string }[];
}

/** `upgrade` is not a scenario (it migrates state): the keeper refuses to plan it. */
const plannable = (op: string | undefined) => (op && op !== 'upgrade' ? op : undefined);

export function PlanForm({
  name,
  service,
  version,
  lastOperation,
}: {
  name: string;
  service: string;
  version: string | null;
  lastOperation: string | undefined;
}) {
  // The operations of the version the incarnation runs; a keeper that cannot list them leaves a text field.
  const ops = usePoll(
    async () =>
      version === null
        ? []
        : (await api<VersionDetail>('GET', `/v1/services/${enc(service)}/versions/${enc(version)}`)).operations.map(
            (o) => o.name,
          ),
    300_000,
    [service, version],
  );
  const names = ops.data ?? [];
  const [chosen, setChosen] = useState<string>();
  const [input, setInput] = useState('');
  const action = useAction();
  const fallback = plannable(lastOperation);
  const known = (op: string | undefined): op is string =>
    op !== undefined && (names.length === 0 || names.includes(op));
  const operation = known(chosen) ? chosen : known(fallback) ? fallback : (names[0] ?? '');

  const submit = async (e: Event) => {
    e.preventDefault();
    const body: { operation: string; input?: Record<string, unknown> } = { operation: operation.trim() };
    const r = await action.run(async () => {
      if (input.trim() !== '') body.input = parseInput(input);
      return api<{ plan_id: string }>('POST', `/v1/incarnations/${enc(name)}/plans`, body);
    });
    if (r) navigate(planHref(name, r.plan_id));
  };
  const set = (e: Event) => setChosen((e.target as HTMLInputElement | HTMLSelectElement).value);
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Make a plan">
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
      <label>
        Input (JSON){' '}
        <input
          name="plan-input"
          value={input}
          placeholder="the last run's input"
          onInput={(e) => setInput((e.target as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" disabled={action.busy || operation.trim() === ''}>
        Plan
      </button>
      <Busy busy={action.busy} label="Starting the plan…" />
      <ErrorBox error={action.error} />
    </form>
  );
}
