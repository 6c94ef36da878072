// Small pieces shared by the views: the error box (the problem's message), progress, the copy
// button, the confirmation dialog, status badges, times and in-app links.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Problem } from './api';
import { navigate } from './router';

export function ErrorBox({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  const p = error instanceof Problem ? error : undefined;
  const message = p ? p.detail : error instanceof Error ? error.message : String(error);
  return (
    <div class="error" role="alert">
      <strong>{p && p.status > 0 ? `${p.status} ${p.title}: ` : ''}</strong>
      {message}
      {p && p.errors.length > 0 && (
        <ul>
          {p.errors.map((e) => (
            <li key={e.path}>
              <code>{e.path}</code> {e.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Busy({ busy, label = 'Working…' }: { busy: boolean; label?: string }) {
  return busy ? (
    <span class="busy" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </span>
  ) : null;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <button type="button" onClick={copy}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text' : label}
    </button>
  );
}

export function ConfirmDialog(props: {
  title: string;
  children: ComponentChildren;
  confirm: string;
  /** The label of the button that closes the dialog without acting (default "Cancel"). */
  dismiss?: string;
  onConfirm(): void;
  onCancel(): void;
}) {
  return (
    <div class="overlay">
      <div class="dialog" role="dialog" aria-modal="true" aria-label={props.title}>
        <h3>{props.title}</h3>
        <div>{props.children}</div>
        <div class="actions">
          <button type="button" class="danger" onClick={props.onConfirm}>
            {props.confirm}
          </button>
          <button type="button" onClick={props.onCancel}>
            {props.dismiss ?? 'Cancel'}
          </button>
        </div>
      </div>
    </div>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status}</span>;
}

/** "12s ago" with the exact time on hover; "never" for null. */
export function Ago({ at, now = new Date() }: { at: string | null | undefined; now?: Date }) {
  if (!at) return <span class="muted">never</span>;
  const s = Math.max(0, Math.round((now.getTime() - new Date(at).getTime()) / 1000));
  const text =
    s < 60
      ? `${s}s ago`
      : s < 3600
        ? `${Math.floor(s / 60)}m ago`
        : s < 86400
          ? `${Math.floor(s / 3600)}h ago`
          : new Date(at).toLocaleString();
  return (
    <time dateTime={at} title={at}>
      {text}
    </time>
  );
}

export function Link({ href, children, class: cls }: { href: string; children: ComponentChildren; class?: string }) {
  return (
    <a
      href={href}
      class={cls}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

export function splitList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** The JSON object typed into an "Input" field; a clear message instead of a request when it is not one. */
export function parseInput(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text.trim() === '' ? '{}' : text);
  } catch {
    throw new Error('the input is not valid JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new Error('the input must be a JSON object, e.g. {"greeting": "hello"}');
  return v as Record<string, unknown>;
}

/** Previous / page N / Next over a keyset-paged list. */
export function PagerBar({
  page,
  hasPrevious,
  nextCursor,
  onPrevious,
  onNext,
  label,
  previousLabel = 'Previous',
  nextLabel = 'Next',
}: {
  page: number;
  hasPrevious: boolean;
  nextCursor: string | null | undefined;
  onPrevious(): void;
  onNext(cursor: string): void;
  label: string;
  /** Newest-first streams read better as "Newer" / "Older". */
  previousLabel?: string;
  nextLabel?: string;
}) {
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={!hasPrevious} onClick={onPrevious}>
        {previousLabel}
      </button>
      <span data-testid={`${label}-page`}>page {page}</span>
      <button type="button" disabled={!nextCursor} onClick={() => nextCursor && onNext(nextCursor)}>
        {nextLabel}
      </button>
    </nav>
  );
}
