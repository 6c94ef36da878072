// The input of a run or a plan (issue 35): the chosen operation's declared inputs as fields
// (input-fields.tsx), prefilled with the incarnation's last input, and the raw JSON one click away.
// Shared by "Run an operation" and "Make a plan" so both forms read and check input the same way.
import { useState } from 'preact/hooks';
import { api, enc } from './api';
import { parseInput } from './components';
import { usePoll } from './hooks';
import { fieldsOf, inputOf, InputFields, type FieldValues, type InputInfo } from './input-fields';

export interface Operation {
  name: string;
  inputs: InputInfo[];
}

/** The operations (with their inputs) of the version an incarnation runs; none without a version. */
export function useOperations(service: string, version: string | null) {
  return usePoll(
    async () =>
      version === null
        ? []
        : (await api<{ operations: Operation[] }>('GET', `/v1/services/${enc(service)}/versions/${enc(version)}`))
            .operations,
    300_000,
    [service, version],
  );
}

/** The input of the incarnation's last run, as stored: secrets only as their `secretstore:` reference. */
export function useLastInput(name: string, lastRunId: string | undefined) {
  return usePoll(
    async () =>
      lastRunId
        ? ((
            await api<{ input?: Record<string, unknown> }>(
              'GET',
              `/v1/incarnations/${enc(name)}/runs/${enc(lastRunId)}`,
            )
          ).input ?? {})
        : {},
    300_000,
    [name, lastRunId],
  );
}

export interface InputEditor {
  /** The input to send, or undefined for none (the keeper then takes the last input); throws on a wrong field. */
  value(): Record<string, unknown> | undefined;
  /** Back to the last input's values (another operation was chosen). */
  reset(): void;
  /** The fields or the raw JSON, and the switch between them. */
  view: preact.JSX.Element;
}

/**
 * `inputs` undefined: the keeper could not list the operation's inputs, so raw JSON is the only
 * editor. An empty raw input sends none, which the keeper reads as "the last input again".
 */
export function useInputEditor(
  id: string,
  inputs: InputInfo[] | undefined,
  last: Record<string, unknown>,
  onError: (err: unknown) => void,
): InputEditor {
  const [edited, setEdited] = useState<FieldValues>();
  const [raw, setRaw] = useState<string>();
  const values = edited ?? (inputs ? fieldsOf(inputs, last) : {});
  const rawMode = raw !== undefined || inputs === undefined;
  const value = () => {
    if (!rawMode) return inputOf(inputs!, values, last);
    return (raw ?? '').trim() === '' ? undefined : parseInput(raw!);
  };
  const toRaw = () => {
    let v: Record<string, unknown> = {};
    try {
      v = inputOf(inputs!, values, last);
    } catch {
      /* keep what parses */
    }
    setRaw(JSON.stringify(v));
  };
  const toFields = () => {
    try {
      setEdited(fieldsOf(inputs!, parseInput(raw ?? '{}')));
      setRaw(undefined);
    } catch (err) {
      onError(err);
    }
  };
  const view = (
    <>
      {rawMode ? (
        <label class="raw-input">
          Input (JSON){' '}
          <textarea
            name={`${id}input`}
            rows={2}
            value={raw ?? ''}
            placeholder="the last input"
            onInput={(e) => setRaw((e.target as HTMLTextAreaElement).value)}
          />
        </label>
      ) : (
        <InputFields inputs={inputs!} values={values} onChange={setEdited} />
      )}
      {inputs !== undefined && (
        <button type="button" class="link" onClick={rawMode ? toFields : toRaw}>
          {rawMode ? 'Edit as fields' : 'Edit as JSON'}
        </button>
      )}
    </>
  );
  return {
    value,
    reset: () => {
      setEdited(undefined);
      setRaw(undefined);
    },
    view,
  };
}
