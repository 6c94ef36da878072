// One form field per declared input of an operation (issue 35), from the service version's input
// schema (GET /v1/services/{name}/versions/{version}): text, number, checkbox, list (one item a
// line) and map (key=value a line) editors, defaults shown, required marked, secret inputs as
// password fields that take a value or a `secretstore:` reference. Empty optional fields are left
// out, so the keeper applies their defaults. The raw JSON stays one click away.
export interface InputInfo {
  name: string;
  type: string;
  required: boolean;
  secret: boolean;
  default?: unknown;
}
export type FieldValues = Record<string, string | boolean>;

const asLine = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const fromLine = (s: string): unknown => {
  try {
    const v = JSON.parse(s);
    return typeof v === 'object' && v !== null ? s : v;
  } catch {
    return s;
  }
};

/** The fields' text for an input object (the last run's input, or JSON typed by hand). */
export function fieldsOf(inputs: InputInfo[], input: Record<string, unknown>): FieldValues {
  const out: FieldValues = {};
  for (const i of inputs) {
    const v = input[i.name];
    if (i.type === 'boolean') out[i.name] = typeof v === 'boolean' ? v : i.default === true;
    else if (v === undefined || v === null) out[i.name] = '';
    // A secret is shown again only as the reference it was given as, never as a value.
    else if (i.secret) out[i.name] = typeof v === 'string' && v.startsWith('secretstore:') ? v : '';
    else if (i.type === 'list' && Array.isArray(v)) out[i.name] = v.map(asLine).join('\n');
    else if (i.type === 'map' && typeof v === 'object')
      out[i.name] = Object.entries(v as Record<string, unknown>)
        .map(([k, x]) => `${k}=${asLine(x)}`)
        .join('\n');
    else out[i.name] = asLine(v);
  }
  return out;
}

/**
 * The input object the fields describe; an Error naming the input and the rule when one is wrong.
 * The keeper merges a run's or plan's input over the last one (docs/runs.md), so an optional field
 * the operator emptied, or a checkbox put back to its default, is sent as `null` when the last
 * input had it: left out, the last value would stay. An empty secret field is left out: the
 * stored reference stays, and a secret's value is never read back.
 */
export function inputOf(
  inputs: InputInfo[],
  values: FieldValues,
  last: Record<string, unknown> = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const had = (name: string) => last[name] !== undefined && last[name] !== null;
  for (const i of inputs) {
    const v = values[i.name];
    if (i.type === 'boolean') {
      if (i.required || v !== (i.default === true)) out[i.name] = v === true;
      else if (had(i.name)) out[i.name] = null;
      continue;
    }
    const text = typeof v === 'string' ? v : '';
    if (text.trim() === '') {
      if (i.secret && had(i.name)) continue;
      if (i.required) throw new Error(`input ${i.name}: required (it has no default)`);
      if (had(i.name)) out[i.name] = null;
      continue;
    }
    if (i.type === 'integer' || i.type === 'number') {
      const n = Number(text);
      if (!Number.isFinite(n) || (i.type === 'integer' && !Number.isInteger(n)))
        throw new Error(`input ${i.name}: must be ${i.type === 'integer' ? 'an integer' : 'a number'}`);
      out[i.name] = n;
    } else if (i.type === 'list') {
      out[i.name] = text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '')
        .map(fromLine);
    } else if (i.type === 'map') {
      const m: Record<string, unknown> = {};
      for (const line of text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '')) {
        const eq = line.indexOf('=');
        if (eq <= 0) throw new Error(`input ${i.name}: each line must be key=value ("${line}" is not)`);
        m[line.slice(0, eq).trim()] = fromLine(line.slice(eq + 1).trim());
      }
      out[i.name] = m;
    } else out[i.name] = text;
  }
  return out;
}

export function InputFields({
  inputs,
  values,
  onChange,
}: {
  inputs: InputInfo[];
  values: FieldValues;
  onChange(v: FieldValues): void;
}) {
  const set = (name: string, v: string | boolean) => onChange({ ...values, [name]: v });
  const text = (e: Event) => (e.target as HTMLInputElement).value;
  return (
    <div class="input-fields" data-testid="input-fields">
      {inputs.map((i) => {
        const label = (
          <>
            {i.name}
            {i.required && (
              <abbr class="required" title="required">
                {' '}
                *
              </abbr>
            )}{' '}
            <small class="muted">{i.secret ? 'secret' : i.type}</small>
          </>
        );
        const hint = i.default !== undefined && !i.secret ? `default: ${asLine(i.default)}` : undefined;
        const v = values[i.name];
        if (i.type === 'boolean') {
          return (
            <label key={i.name} class="check">
              <input
                type="checkbox"
                name={`input-${i.name}`}
                checked={v === true}
                onChange={(e) => set(i.name, (e.target as HTMLInputElement).checked)}
              />{' '}
              {label}
            </label>
          );
        }
        if (i.secret) {
          return (
            <label key={i.name}>
              {label}
              <input
                type="password"
                name={`input-${i.name}`}
                required={i.required}
                autocomplete="off"
                value={String(v ?? '')}
                placeholder="a value, or secretstore:path#field"
                onInput={(e) => set(i.name, text(e))}
              />
            </label>
          );
        }
        if (i.type === 'list' || i.type === 'map') {
          return (
            <label key={i.name}>
              {label}
              <textarea
                name={`input-${i.name}`}
                rows={3}
                value={String(v ?? '')}
                onInput={(e) => set(i.name, text(e))}
                placeholder={`${i.type === 'list' ? 'one item a line' : 'key=value, one a line'}${hint ? `; ${hint}` : ''}`}
              />
            </label>
          );
        }
        const common = {
          name: `input-${i.name}`,
          required: i.required,
          value: String(v ?? ''),
          placeholder: hint,
          onInput: (e: Event) => set(i.name, text(e)),
        };
        return (
          <label key={i.name}>
            {label}
            {i.type === 'integer' || i.type === 'number' ? (
              <input type="number" step={i.type === 'number' ? 'any' : '1'} {...common} />
            ) : (
              <input type="text" {...common} />
            )}
          </label>
        );
      })}
    </div>
  );
}
