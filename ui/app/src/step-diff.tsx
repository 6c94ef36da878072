// What one step would change (in a plan) or changed (in a run report): a file's content as a
// unified diff, its mode, owner and group; a package's version from -> to. The keeper shows no
// content of a file that holds or will hold a secret (`content.secret`), and every content hash is
// its keyed digest (docs/secrets.md "Diffs and hashes"): this says so in words instead of showing
// an empty diff.
import { UnifiedDiff } from './unified-diff';

interface Hash {
  digest?: string;
  size?: number;
}
interface Change {
  from?: unknown;
  to?: unknown;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const short = (h: Hash | undefined) =>
  h?.digest ? `${h.digest.slice(0, 12)}…${h.size === undefined ? '' : ` (${h.size} bytes)`}` : 'none';
const shown = (v: unknown) => (v === null || v === undefined ? 'none' : String(v));

/** mode/owner/group come as {from, to} on an existing file, as the plain value on a new one. */
function Attribute({ label, value }: { label: string; value: unknown }) {
  if (value === undefined || value === null) return null;
  if (isObject(value)) {
    const c = value as Change;
    return (
      <li data-testid={`diff-${label}`}>
        {label} <code>{shown(c.from)}</code> → <code>{shown(c.to)}</code>
      </li>
    );
  }
  return (
    <li data-testid={`diff-${label}`}>
      {label} <code>{String(value)}</code>
    </li>
  );
}

function Content({ content, created }: { content: Record<string, unknown>; created: boolean }) {
  if (typeof content.unified === 'string') return <UnifiedDiff text={content.unified} />;
  const before = isObject(content.before) ? (content.before as Hash) : undefined;
  const after = isObject(content.after) ? (content.after as Hash) : undefined;
  const why =
    content.secret === true
      ? 'secret content changed'
      : typeof content.unified_withheld === 'string'
        ? `diff withheld (the file is ${content.unified_withheld})`
        : 'diff withheld (the file may hold a secret)';
  return (
    <p class="withheld" data-testid="diff-withheld">
      {why}: content {created ? 'new' : short(before)} → {short(after)}
    </p>
  );
}

export function StepDiff({ diff }: { diff: unknown }) {
  if (!isObject(diff)) return null;
  if (typeof diff.package === 'string') {
    return (
      <p class="package-diff" data-testid="diff-package">
        package <code>{diff.package}</code>: <code>{diff.from == null ? 'not installed' : String(diff.from)}</code> →{' '}
        <code>{diff.to == null ? 'none' : String(diff.to)}</code>
      </p>
    );
  }
  const created = diff.created === true;
  return (
    <div class="step-diff">
      {created && <p class="muted">new file</p>}
      {isObject(diff.content) && <Content content={diff.content} created={created} />}
      {(diff.mode !== undefined || diff.owner !== undefined || diff.group !== undefined) && (
        <ul class="attributes">
          <Attribute label="mode" value={diff.mode} />
          <Attribute label="owner" value={diff.owner} />
          <Attribute label="group" value={diff.group} />
        </ul>
      )}
    </div>
  );
}
