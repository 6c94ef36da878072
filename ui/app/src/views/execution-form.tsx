// "Run a module" (/ui/executions, issue 34, docs/executions.md "In /ui"): one module of the core
// library, picked among those the operator's role may run, its parameters as JSON, and the target
// (covens, SIDs, a `where` over the stored facts). The selection is counted live as the target is
// typed, by the keeper's own selection (POST /v1/executions/preview), so the count is the hosts the
// execution will reach. Above the confirmation threshold the form asks for a checkbox, as the API
// asks for `confirm: true`. Accepted, it opens the live result page.
import { useEffect, useState } from 'preact/hooks';
import { api, Problem } from '../api';
import { Busy, ErrorBox, parseInput, splitList } from '../components';
import { useAction } from '../hooks';
import { navigate } from '../router';
import { Granted } from '../permissions';

interface Selection {
  selected: number;
  sids: string[];
  modules: string[];
  confirm_above: number;
}

const EXAMPLES: Record<string, string> = {
  'core.cmd.run': '{"argv": ["uptime"]}',
  'core.service.restarted': '{"name": "nginx"}',
  'core.pkg.installed': '{"name": "curl"}',
  'core.file.present': '{"path": "/tmp/hello", "content": "hello\\n"}',
};

const PREVIEW_DELAY_MS = 300;

export function ExecutionForm() {
  const [module, setModule] = useState('');
  const [params, setParams] = useState('');
  const [covens, setCovens] = useState('');
  const [sids, setSids] = useState('');
  const [where, setWhere] = useState('');
  const [dryRun, setDryRun] = useState(false);
  const [confirm, setConfirm] = useState(false);
  const [selection, setSelection] = useState<Selection>();
  const [previewError, setPreviewError] = useState<unknown>();
  const action = useAction();

  const target = () => ({
    ...(splitList(covens).length ? { covens: splitList(covens) } : {}),
    ...(splitList(sids).length ? { sids: splitList(sids) } : {}),
    ...(where.trim() ? { where: where.trim() } : {}),
  });

  // The live count: asked again a moment after the target stops changing; an older answer never
  // overwrites a newer one.
  useEffect(() => {
    let current = true;
    const timer = window.setTimeout(async () => {
      try {
        const s = await api<Selection>('POST', '/v1/executions/preview', { target: target() });
        if (!current) return;
        setSelection(s);
        setPreviewError(undefined);
        setModule((m) => m || s.modules[0] || '');
      } catch (err) {
        if (current) setPreviewError(err);
      }
    }, PREVIEW_DELAY_MS);
    return () => {
      current = false;
      window.clearTimeout(timer);
    };
  }, [covens, sids, where]);

  const needsConfirm = selection !== undefined && selection.selected > selection.confirm_above;
  const submit = async (e: Event) => {
    e.preventDefault();
    const r = await action.run(() => {
      let p: Record<string, unknown>;
      try {
        p = parseInput(params);
      } catch {
        throw new Error('params: must be a JSON object, e.g. {"argv": ["uptime"]}');
      }
      return api<{ id: string }>('POST', '/v1/executions', {
        module,
        params: p,
        target: target(),
        dry_run: dryRun,
        confirm: needsConfirm && confirm,
      });
    });
    if (r) navigate(`/ui/executions/${encodeURIComponent(r.id)}`);
  };

  const count = () => {
    if (previewError)
      return previewError instanceof Problem ? previewError.detail : String((previewError as Error).message);
    if (!selection) return 'counting…';
    if (Object.keys(target()).length === 0) return 'name covens, SIDs or a where';
    const shown = selection.sids.slice(0, 5).join(', ');
    const more = selection.selected > 5 ? `, … ${selection.selected - 5} more` : '';
    return `${selection.selected} host${selection.selected === 1 ? '' : 's'} selected${shown ? `: ${shown}${more}` : ''}`;
  };

  return (
    <section aria-label="Run a module">
      <h2>Run a module</h2>
      <p class="hint">
        One module of the core library on the hosts the target selects, outside any incarnation (docs/executions.md).
        Secrets as <code>secretstore:&lt;path&gt;#&lt;field&gt;</code> references only.
      </p>
      <Granted permission="executions:run" what="run modules">
        <form class="inline-form" onSubmit={submit} aria-label="Start an execution">
          <label>
            Module{' '}
            <select name="module" value={module} onChange={(e) => setModule((e.target as HTMLSelectElement).value)}>
              {(selection?.modules ?? []).map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
            {selection && selection.modules.length === 0 && <span> your role may run no module</span>}
          </label>
          <label>
            Parameters (JSON){' '}
            <textarea
              name="params"
              rows={3}
              value={params}
              placeholder={EXAMPLES[module] ?? '{}'}
              onInput={(e) => setParams((e.target as HTMLTextAreaElement).value)}
            />
          </label>
          <fieldset>
            <legend>Target</legend>
            <label>
              Covens{' '}
              <input
                name="covens"
                value={covens}
                placeholder="web, db"
                onInput={(e) => setCovens((e.target as HTMLInputElement).value)}
              />
            </label>
            <label>
              SIDs{' '}
              <input
                name="sids"
                value={sids}
                placeholder="web-1.example.org"
                onInput={(e) => setSids((e.target as HTMLInputElement).value)}
              />
            </label>
            <label>
              Where{' '}
              <input
                name="where"
                value={where}
                placeholder='soulprint.self.os_release == "12"'
                onInput={(e) => setWhere((e.target as HTMLInputElement).value)}
              />
            </label>
            <p class="selection" data-testid="selection" aria-live="polite">
              {count()}
            </p>
          </fieldset>
          <label class="check">
            <input
              type="checkbox"
              name="dry_run"
              checked={dryRun}
              onChange={(e) => setDryRun((e.target as HTMLInputElement).checked)}
            />{' '}
            Check mode (dry run: nothing changes)
          </label>
          {needsConfirm && (
            <label class="check">
              <input
                type="checkbox"
                name="confirm"
                required
                checked={confirm}
                onChange={(e) => setConfirm((e.target as HTMLInputElement).checked)}
              />{' '}
              Run on {selection!.selected} hosts (more than {selection!.confirm_above})
            </label>
          )}
          <button type="submit" disabled={action.busy || !module}>
            Run
          </button>
          <Busy busy={action.busy} label="Starting…" />
          <ErrorBox error={action.error} />
        </form>
      </Granted>
    </section>
  );
}
