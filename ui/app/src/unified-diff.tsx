// A `diff -u` text as the keeper sends it (a plan's file step), shown line by line: additions and
// removals colored, file headers and hunk headers set apart, so an operator reads it like a review.
// The text is rendered as text nodes only: a file's content never becomes markup.

type LineKind = 'header' | 'hunk' | 'add' | 'del' | 'context';

function kindOf(line: string): LineKind {
  // The two file headers start with the same characters as a removal/addition; they come first.
  if (line.startsWith('--- ') || line.startsWith('+++ ')) return 'header';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  return 'context';
}

export function UnifiedDiff({ text }: { text: string }) {
  const lines = text.replace(/\n$/, '').split('\n');
  return (
    <pre class="unified-diff" data-testid="unified-diff">
      {/* Each line is a block (style.css), so no newline characters are needed between them. */}
      {lines.map((line, i) => (
        <span key={i} class={`line ${kindOf(line)}`}>
          {line === '' ? ' ' : line}
        </span>
      ))}
    </pre>
  );
}
