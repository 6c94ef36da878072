// Services: the catalog and registration. A service's version is its git ref.
import { useState } from 'preact/hooks';
import { api, listAll } from '../api';
import { Ago, Busy, ErrorBox } from '../components';
import { useAction, usePoll } from '../hooks';
import { DeleteService, ServiceVersions } from './service-actions';
import { Granted } from '../permissions';

export interface Service {
  name: string;
  git: string;
  ref: string;
  created_by: string | null;
  created_at: string;
}

function RegisterService({ onDone }: { onDone(): void }) {
  const [form, setForm] = useState({ name: '', git: '', ref: '' });
  const action = useAction();
  const field = (k: keyof typeof form, label: string, placeholder: string) => (
    <label>
      {label}{' '}
      <input
        name={k}
        required
        value={form[k]}
        placeholder={placeholder}
        onInput={(e) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value })}
      />
    </label>
  );
  const submit = async (e: Event) => {
    e.preventDefault();
    const ok = await action.run(() =>
      api<Service>('POST', '/v1/services', { name: form.name.trim(), git: form.git.trim(), ref: form.ref.trim() }),
    );
    if (ok) {
      setForm({ name: '', git: '', ref: '' });
      onDone();
    }
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Register a service">
      <h3>Register a service</h3>
      {field('name', 'Name', 'nginx')}
      {field('git', 'Git URL', 'https://git.example.com/ops/nginx.git')}
      {field('ref', 'Ref (version)', 'v1.4.0')}
      <button type="submit" disabled={action.busy}>
        Register
      </button>
      <Busy busy={action.busy} label="Registering…" />
      <ErrorBox error={action.error} />
    </form>
  );
}

export function Services() {
  const services = usePoll(() => listAll<Service>('/v1/services'), 10_000);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section>
      <h2>Services</h2>
      <Granted permission="services:create" what="register services">
        <RegisterService onDone={services.refresh} />
      </Granted>
      <ErrorBox error={services.error} />
      {!services.data && !services.error && <Busy busy label="Loading…" />}
      {services.data && (
        <table class="grid" data-testid="services-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Git</th>
              <th>Ref (version)</th>
              <th>Registered by</th>
              <th>Registered</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {services.data.length === 0 && (
              <tr>
                <td colSpan={6} class="muted">
                  The catalog is empty.
                </td>
              </tr>
            )}
            {services.data.map((s) => [
              <tr key={s.name} data-service={s.name}>
                <td>{s.name}</td>
                <td>
                  <code>{s.git}</code>
                </td>
                <td>{s.ref}</td>
                <td>{s.created_by ?? '—'}</td>
                <td>
                  <Ago at={s.created_at} />
                </td>
                <td>
                  <button type="button" onClick={() => setOpen(open === s.name ? null : s.name)}>
                    {open === s.name ? 'Hide versions' : 'Versions'}
                  </button>{' '}
                  <Granted permission="services:delete" what="delete services" quiet>
                    <DeleteService name={s.name} onDone={services.refresh} />
                  </Granted>
                </td>
              </tr>,
              open === s.name && (
                <tr key={`${s.name}-versions`}>
                  <td colSpan={6}>
                    <ServiceVersions name={s.name} />
                  </td>
                </tr>
              ),
            ])}
          </tbody>
        </table>
      )}
    </section>
  );
}
