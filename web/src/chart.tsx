// The per-day chart (uPlot): spend as bars on the left axis, tokens as a line on the right.
// Loaded on its own, only by the overview page, so the other pages do not carry uPlot (its
// small stylesheet is in the main bundle: esbuild does not attach CSS to lazy chunks).
// uPlot's own legend is off: it speaks English ("Time") whatever the page's language, so the
// page draws its legend itself, and the figures for a day are in the by-day list beside it.

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Lang } from './i18n.js';
import { locale, usd } from './format.js';

export interface DayPoint {
  /** UTC midnight, seconds. */
  t: number;
  spend: number;
  tokens: number;
}

const DAY_S = 86_400;
const SPEND = { stroke: '#0b6e4f', fill: 'rgba(11,110,79,0.35)' };
const TOKENS = '#c2571a';

/**
 * Room for the longest tick label, measured in the axis's own font (sub-cent spends have many
 * digits; a guess per character clipped them on a phone), plus the tick and the gap.
 */
function labelWidth(u: uPlot, values: string[] | null, axis: number, cycle: number): number {
  const a = u.axes[axis] as uPlot.Axis & { _size?: number };
  // uPlot asks again while the layout settles; past the first rounds the size stays.
  if (cycle > 1 && a._size) return a._size;
  const font = Array.isArray(a.font) ? a.font[0] : a.font;
  u.ctx.save();
  if (typeof font === 'string') u.ctx.font = font;
  const widest = Math.max(0, ...(values ?? []).map((v) => u.ctx.measureText(v).width));
  u.ctx.restore();
  return Math.ceil(widest / devicePixelRatio + (a.ticks?.size ?? 10) + (a.gap ?? 5) + 6);
}

export default function DayChart({
  points,
  labels,
  lang,
}: {
  points: DayPoint[];
  labels: { spend: string; tokens: string };
  lang: Lang;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const width = () => Math.max(260, el.clientWidth);
    const data: uPlot.AlignedData = [points.map((p) => p.t), points.map((p) => p.spend), points.map((p) => p.tokens)];
    const day = new Intl.DateTimeFormat(locale(lang), { month: 'short', day: 'numeric', timeZone: 'UTC' });
    const count = new Intl.NumberFormat(locale(lang), { notation: 'compact' });
    const plot = new uPlot(
      {
        width: width(),
        height: 240,
        legend: { show: false },
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: {
          // Half a day either side, so the first and last bars are drawn whole.
          x: { time: true, range: (_u, min, max) => [min - DAY_S / 2, max + DAY_S / 2] },
          usd: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
          tok: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        series: [
          {},
          {
            label: labels.spend,
            scale: 'usd',
            stroke: SPEND.stroke,
            fill: SPEND.fill,
            paths: uPlot.paths.bars!({ size: [0.6, 48] }),
          },
          { label: labels.tokens, scale: 'tok', stroke: TOKENS, width: 2, points: { size: 6 } },
        ],
        axes: [
          { values: (_u, vals) => vals.map((v) => day.format(v * 1000)) },
          { scale: 'usd', values: (_u, vals) => vals.map((v) => usd(lang, v)), size: labelWidth },
          {
            scale: 'tok',
            side: 1,
            grid: { show: false },
            values: (_u, vals) => vals.map((v) => count.format(v)),
            size: labelWidth,
          },
        ],
      },
      data,
      el,
    );
    const onResize = () => plot.setSize({ width: width(), height: 240 });
    addEventListener('resize', onResize);
    return () => {
      removeEventListener('resize', onResize);
      plot.destroy();
    };
  }, [points, labels.spend, labels.tokens, lang]);
  return (
    <figure class="chart-box">
      <div ref={box} class="chart" role="img" aria-label={`${labels.spend}, ${labels.tokens}`} />
      <figcaption class="legend" data-testid="chart-legend">
        <span>
          <i style={{ background: SPEND.fill, borderColor: SPEND.stroke }} />
          {labels.spend}
        </span>
        <span>
          <i style={{ background: TOKENS, borderColor: TOKENS }} />
          {labels.tokens}
        </span>
      </figcaption>
    </figure>
  );
}
