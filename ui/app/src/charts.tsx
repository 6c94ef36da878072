// Small charts as hand-written inline SVG (issue 35): bars (stacked or grouped) and a line. No chart
// library: these four pictures need a scale, rectangles and a polyline, which is less code than any
// library's adapter (0 KB of dependencies; docs/ui.md "Overview"). Every mark carries its values in
// data attributes and a <title> (a hover tooltip and what a screen reader reads), and the whole
// chart has an accessible name and a text summary, so the numbers are never only in the picture.
const W = 360;
const H = 140;
const PAD = { top: 8, right: 8, bottom: 20, left: 34 };

export interface Series {
  name: string;
  cls: string;
}
export interface Point {
  label: string;
  values: number[];
  title?: string;
  tick?: string;
}

/** A rounded-up axis maximum (1, 2, 5 x 10^n), so the gridline labels read as round numbers. */
export function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function Axis({ max, unit }: { max: number; unit?: string }) {
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
  return (
    <g class="axis" aria-hidden="true">
      {[0, max / 2, max].map((v) => (
        <g key={v}>
          <line x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} />
          <text x={PAD.left - 4} y={y(v) + 4} text-anchor="end">
            {fmt(v)}
            {unit ?? ''}
          </text>
        </g>
      ))}
    </g>
  );
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1));

function Legend({ series }: { series: Series[] }) {
  if (series.length < 2) return null;
  return (
    <p class="legend">
      {series.map((s) => (
        <span key={s.name}>
          <i class={`swatch ${s.cls}`} />
          {s.name}
        </span>
      ))}
    </p>
  );
}

/** Bars per point: stacked (parts of one total) or side by side (e.g. median and p95). */
export function BarChart({
  id,
  title,
  series,
  points,
  stacked = false,
  unit,
  scale = 1,
  empty,
}: {
  id: string;
  title: string;
  series: Series[];
  points: Point[];
  stacked?: boolean;
  unit?: string;
  scale?: number;
  empty: string;
}) {
  const totals = points.map((p) => (stacked ? p.values.reduce((a, b) => a + b, 0) : Math.max(0, ...p.values)) / scale);
  const max = niceMax(Math.max(0, ...totals));
  const plotH = H - PAD.top - PAD.bottom;
  const slot = (W - PAD.left - PAD.right) / Math.max(1, points.length);
  const barW = Math.max(1, (slot * 0.8) / (stacked ? 1 : series.length));
  return (
    <figure class="chart" data-testid={`chart-${id}`}>
      <figcaption>{title}</figcaption>
      {points.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title}>
          <Axis max={max} unit={unit} />
          {points.map((p, i) => {
            let base = 0;
            const x0 = PAD.left + i * slot + slot * 0.1;
            return (
              <g key={p.label} data-point={p.label} data-values={p.values.join(',')}>
                <title>
                  {p.title ??
                    `${p.label}: ${series.map((s, j) => `${s.name} ${fmt(p.values[j] / scale)}${unit ?? ''}`).join(', ')}`}
                </title>
                {series.map((s, j) => {
                  const h = (p.values[j] / scale / max) * plotH;
                  const x = stacked ? x0 : x0 + j * barW;
                  const y = PAD.top + plotH - (stacked ? base + h : h);
                  if (stacked) base += h;
                  return h > 0 ? <rect key={s.name} class={s.cls} x={x} y={y} width={barW} height={h} /> : null;
                })}
                {i % Math.ceil(points.length / 6) === 0 && (
                  <text class="tick" x={x0} y={H - 6}>
                    {p.tick ?? p.label}
                  </text>
                )}
              </g>
            );
          })}
        </svg>
      )}
      <Legend series={series} />
    </figure>
  );
}

/** One series as a line with a dot per point. */
export function LineChart({ id, title, points, empty }: { id: string; title: string; points: Point[]; empty: string }) {
  const max = niceMax(Math.max(0, ...points.map((p) => p.values[0])));
  const plotH = H - PAD.top - PAD.bottom;
  const step = (W - PAD.left - PAD.right) / Math.max(1, points.length - 1);
  const xy = points.map((p, i) => [PAD.left + i * step, PAD.top + plotH * (1 - p.values[0] / max)] as const);
  return (
    <figure class="chart" data-testid={`chart-${id}`}>
      <figcaption>{title}</figcaption>
      {points.length === 0 ? (
        <p class="muted">{empty}</p>
      ) : (
        <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title}>
          <Axis max={max} />
          <polyline class="line" points={xy.map(([x, y]) => `${x},${y}`).join(' ')} />
          {points.map((p, i) => (
            <g key={p.label} data-point={p.label} data-values={String(p.values[0])}>
              <title>{p.title ?? `${p.label}: ${p.values[0]}`}</title>
              <circle cx={xy[i][0]} cy={xy[i][1]} r={2.5} />
              {i % 6 === 0 && (
                <text class="tick" x={xy[i][0]} y={H - 6} text-anchor="middle">
                  {p.tick ?? p.label}
                </text>
              )}
            </g>
          ))}
        </svg>
      )}
    </figure>
  );
}
